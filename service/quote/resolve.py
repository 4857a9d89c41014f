"""Request checks that need the catalog or the snapshot, and the request reduced to what the engine uses.

Decoding already rejected malformed fields; here names are resolved by the service's one name resolver
(``service.names``: its case rule, its known names, its messages), with errors naming the body's fields
(``gpus``, ``regions``, ``cities``, ``vendors``, ``workload.reference_gpu``, ``workload.speed_ratios``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import get_args

import msgspec

from adapters.gpus import GpuCatalog
from adapters.models import UnknownModelName, resolve_model
from schemas.quote import QuotePricingKind, QuoteRequest, Range, Task, Workload
from schemas.vendor import VendorStatus
from service.errors import InvalidRequest
from service.names import BODY_FIELDS, KnownNames, NameQuery, resolve_gpu, resolve_names, resolve_place
from service.quote.jobs import JOB_KINDS, Job, JobKind, ModelSize
from service.quote.model.interruptions import DEFAULT_CHECKPOINT_INTERVAL_H, DEFAULT_RESTART_MINUTES
from service.quote.model.memory import PRECISION_BYTES, bytes_per_param_at, memory_needed_gb
from service.quote.model.scaling import ScalingCurve, curve_from_override
from service.quote.model.sizing import DEFAULT_MFU, FLOPS_PER_PARAM_TOKEN, TokenSizing, job_flops
from service.quote.model.tables import OfferTables

__all__ = ["ResolvedRequest", "RiskTerms", "resolve_gpu", "resolve_request"]


class RiskTerms(msgspec.Struct, frozen=True, gc=False):
    """How the request takes interruptions: whether spot capacity is quoted, and what one costs.

    ``lost_hours`` is what one interruption adds to the job's hours: half the checkpoint interval and
    the restart for a job that loses work (``JobKind.loses_work``), nothing for a serving job, whose
    replica is down for ``restart_h`` instead.
    """

    allow_spot: bool
    checkpoint_interval_h: float
    restart_h: float
    checkpoint_h: float | None  # the time one checkpoint takes to write, when given
    lost_hours: float


def risk_terms(request: QuoteRequest, kind: JobKind) -> RiskTerms:
    """The request's ``allow_spot`` (left out: the job kind's default) and its checkpoint and restart
    figures (left out: ``model.interruptions``' defaults)."""
    workload = request.workload
    interval_h = workload.checkpoint_interval_h or DEFAULT_CHECKPOINT_INTERVAL_H
    restart_minutes = (
        DEFAULT_RESTART_MINUTES if workload.restart_minutes is None else workload.restart_minutes
    )
    restart_h = restart_minutes / 60
    checkpoint_minutes = workload.checkpoint_minutes
    return RiskTerms(
        allow_spot=kind.spot_by_default if request.allow_spot is None else request.allow_spot,
        checkpoint_interval_h=interval_h,
        restart_h=restart_h,
        checkpoint_h=None if checkpoint_minutes is None else checkpoint_minutes / 60,
        lost_hours=interval_h / 2 + restart_h if kind.loses_work else 0.0,
    )


class ResolvedRequest(msgspec.Struct, frozen=True):
    request: QuoteRequest
    # Requested, sorted, without repeats; None: every count each offer sells (chosen by ``evaluate``).
    card_counts: tuple[int, ...] | None
    reference_gpu: str | None
    speed_ratios: Mapping[str, float]  # catalog id → the caller's measured speed over ``reference_gpu``
    gpus: frozenset[str] | None
    regions: frozenset[str] | None
    cities: frozenset[str] | None
    vendors: frozenset[str] | None
    pricing: frozenset[QuotePricingKind] | None
    curve: ScalingCurve
    memory_needed_gb: float | None
    memory_check_incomplete: bool
    # The memory checked is the least any task needs: a model was named, its task was not (``_memory_needed``).
    memory_floor: bool
    model_params_b: float | None  # in all (what memory is sized on)
    # ``workload.kind`` (``jobs``) and the job it describes: its hours, task and replicas.
    kind: JobKind
    job: Job
    risk: RiskTerms
    data_city: str | None = None  # canonical city where the data lives, ``workload.data_city``


_SPEED_RATIOS = "workload.speed_ratios"


def _speed_ratios(
    ratios: Mapping[str, float] | None, reference_gpu: str | None, catalog: GpuCatalog
) -> dict[str, float]:
    """The caller's measured ratios by catalog id; two spellings of one model must agree. A ratio for the
    reference GPU itself other than 1 is a 422: its hours are the caller's own, never converted, so the
    ratio would be ignored."""
    if not ratios:
        return {}
    if reference_gpu is None:
        raise InvalidRequest(_SPEED_RATIOS, "speed ratios are relative to workload.reference_gpu: give it")
    resolved: dict[str, float] = {}
    for name, ratio in ratios.items():
        gpu = resolve_gpu(name, catalog, field=_SPEED_RATIOS)
        if resolved.setdefault(gpu, ratio) != ratio:
            raise InvalidRequest(_SPEED_RATIOS, f"two different ratios for {gpu} ({name!r} is one spelling)")
        if gpu == reference_gpu and ratio != 1:
            raise InvalidRequest(
                f"{_SPEED_RATIOS}.{name}",
                f"{gpu} is workload.reference_gpu, the card the hours were measured on: its ratio is 1; "
                "leave it out or give the other GPUs' ratios",
            )
    return resolved


def resolve_request(
    request: QuoteRequest,
    tables: OfferTables,
    vendor_ids: Iterable[str],
    catalog: GpuCatalog,
    bytes_per_param: Mapping[Task, float],
    *,
    known: KnownNames | None = None,
) -> ResolvedRequest:
    """The request with its names resolved and its limits prepared.

    ``known`` is where valid regions, cities and vendors come from (``service.names.KnownNames``: the configured
    vendors, the stored statuses and the snapshot's offers). Left out, it is the snapshot's part of that:
    ``vendor_ids`` and the offers in ``tables``.
    """
    if known is None:
        known = KnownNames(
            statuses=[VendorStatus(vendor=vendor) for vendor in vendor_ids], offers=tables.offers
        )
    workload = request.workload
    reference_gpu = (
        resolve_gpu(workload.reference_gpu, catalog, field="workload.reference_gpu")
        if workload.reference_gpu is not None
        else None
    )
    speed_ratios = _speed_ratios(workload.speed_ratios, reference_gpu, catalog)
    names = resolve_names(
        NameQuery(
            gpus=request.gpus or (),
            regions=request.regions or (),
            cities=request.cities or (),
            vendors=request.vendors or (),
        ),
        known=known,
        catalog=catalog,
        fields=BODY_FIELDS,
    )
    card_counts = None if request.card_counts is None else tuple(sorted(set(request.card_counts)))
    kind = JOB_KINDS[workload.kind]
    task = kind.check(workload)
    params_b, active_b = _params_b(workload)
    sizing = None if workload.tokens is None else _sizing(workload, task, active_b)
    job = kind.job(workload, task, sizing, _model_size(params_b, active_b, workload))
    memory_needed, memory_floor = _memory_needed(params_b, task, workload, bytes_per_param)
    if card_counts is not None:
        kind.check_counts(tables, job, card_counts, memory_needed, names.gpus)
    data_city = _data_city(workload, known)
    return ResolvedRequest(
        request=request,
        card_counts=card_counts,
        reference_gpu=reference_gpu,
        speed_ratios=speed_ratios,
        gpus=names.gpus,
        regions=names.regions,
        cities=names.cities,
        vendors=names.vendors,
        pricing=frozenset(request.pricing) if request.pricing else None,
        curve=curve_from_override(request.scaling),
        memory_needed_gb=memory_needed,
        memory_check_incomplete=memory_needed is None and (params_b is not None or task is not None),
        memory_floor=memory_floor,
        model_params_b=params_b,
        kind=kind,
        job=job,
        risk=risk_terms(request, kind),
        data_city=data_city,
    )


def _data_city(workload: Workload, known: KnownNames) -> str | None:
    """The city ``workload.data_city`` names, as an id (``service.names.resolve_place``): any city, since
    data is often kept where no vendor rents cards, and every offer then waits for the copy. A size with
    no city is a 422: the copy time cannot be worked out."""
    if workload.data_city is None:
        if workload.dataset_gb is not None:
            raise InvalidRequest(
                "workload.dataset_gb", "the copy time needs the city the data is in: give data_city too"
            )
        return None
    if not workload.data_city.strip():
        raise InvalidRequest("workload.data_city", "is empty: give the city the data is in")
    return resolve_place(workload.data_city, known.cities)


# ``model`` and ``model_params_b`` may both be given when they name the same size, to 1 %.
_PARAMS_AGREE = 0.01


def _params_b(workload: Workload) -> tuple[float | None, float | None]:
    """Billions of parameters: in all (the memory check) and active per token (a mixture-of-experts
    model's; its FLOPs): the named model's, else ``model_params_b`` for both."""
    if workload.model is None:
        return workload.model_params_b, workload.model_params_b
    try:
        model = resolve_model(workload.model)
    except UnknownModelName as error:
        raise InvalidRequest("workload.model", error.reason) from error
    given = workload.model_params_b
    if given is not None and abs(given - model.params_total_b) > _PARAMS_AGREE * model.params_total_b:
        raise InvalidRequest(
            "workload.model",
            f"{model.id} has {model.params_total_b:g}B parameters, but model_params_b is {given:g}; "
            "give one of them, or both agreeing within 1 %",
        )
    return model.params_total_b, model.params_active_b or model.params_total_b


def _model_size(params_b: float | None, active_b: float | None, workload: Workload) -> ModelSize:
    """The model's parameters and its weights' GB at the job's precision (bf16 when not given)."""
    weight_bytes = PRECISION_BYTES[workload.precision or "bf16"]
    return ModelSize(
        params_b=params_b,
        active_params_b=active_b,
        weight_gb=None if params_b is None else params_b * weight_bytes,
    )


def _sizing(workload: Workload, task: Task | None, active_b: float | None) -> TokenSizing:
    """The FLOPs of a job given by its tokens (``model.sizing``); a 422 naming what it still needs."""
    assert workload.tokens is not None
    if active_b is None:
        raise InvalidRequest(
            "workload.tokens", "sizing by tokens needs the model: give workload.model or model_params_b"
        )
    if task is None:
        raise InvalidRequest(
            "workload.task",
            "sizing by tokens needs the task (full_finetune, pretrain, lora, qlora or inference): it sets "
            "the FLOPs per token",
        )
    if workload.reference_gpu is not None or workload.speed_ratios:
        raise InvalidRequest(
            "workload.reference_gpu",
            "a job given by its tokens is sized on each GPU's own peak compute: there is nothing to convert",
        )
    mfu = DEFAULT_MFU if workload.mfu is None else Range(workload.mfu, workload.mfu, workload.mfu)
    return TokenSizing(
        flops=job_flops(task, active_b, workload.tokens),
        flops_per_param_token=FLOPS_PER_PARAM_TOKEN[task],
        active_params_b=active_b,
        tokens=workload.tokens,
        mfu=mfu,
        mfu_from_caller=workload.mfu is not None,
    )


def _memory_needed(
    params_b: float | None,
    task: Task | None,
    workload: Workload,
    bytes_per_param: Mapping[Task, float],
) -> tuple[float | None, bool]:
    """GB the model needs for its task; for a named model without a task, the least any task needs (a
    4-bit QLoRA or int4 inference: never one 24 GB card for a 72B model unsaid), flagged as such."""
    if params_b is None:
        return None, False
    if task is not None:
        return memory_needed_gb(params_b, task, bytes_per_param, precision=workload.precision), False
    floor = min(bytes_per_param_at(each, workload.precision, bytes_per_param) for each in get_args(Task))
    return params_b * floor, True
