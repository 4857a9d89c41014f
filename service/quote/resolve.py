"""Request checks that need the catalog or the snapshot, and the request reduced to what the engine uses.

Decoding already rejected malformed fields; here names are resolved by the service's one name resolver
(``service.names``: its case rule, its known names, its messages), with errors naming the body's fields
(``gpus``, ``regions``, ``cities``, ``vendors``, ``workload.reference_gpu``, ``workload.speed_ratios``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from adapters.gpus import GpuCatalog
from adapters.models import UnknownModelName, resolve_model
from schemas.quote import QuotePricingKind, QuoteRequest, Task, Workload
from schemas.vendor import VendorStatus
from service.errors import InvalidRequest
from service.names import BODY_FIELDS, KnownNames, NameQuery, resolve_gpu, resolve_names, resolve_place
from service.quote.jobs.serving import serving_layout
from service.quote.model.memory import memory_needed_gb, min_cards
from service.quote.model.scaling import ScalingCurve, curve_from_override
from service.quote.model.tables import OfferTables

__all__ = ["ResolvedRequest", "resolve_gpu", "resolve_request"]


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    request: QuoteRequest
    # Requested, sorted, without repeats; None: every count each offer sells (chosen by ``evaluate``).
    card_counts: tuple[int, ...] | None
    # Requested plus one card, which the summary compares against; (1,) when ``card_counts`` is None.
    evaluated_counts: tuple[int, ...]
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
    # ``workload.kind``: the job's hours (gpu_hours for batch, the wall-clock hours for serving), and for
    # serving the replicas; ``card_counts`` are then total cards, whole replicas on each offer
    # (``_candidates.serving_layout``), None for exactly ``replicas`` of them.
    serving: bool = False
    job_hours: float = 0.0
    replicas: int = 1
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
    job_hours = _job_hours(workload)
    serving = workload.kind == "serving"
    task = _serving_task(workload) if serving else workload.task
    params_b = _params_b(workload)
    memory_needed = (
        memory_needed_gb(params_b, task, bytes_per_param, precision=workload.precision)
        if params_b is not None and task is not None
        else None
    )
    if serving and card_counts is not None:
        _check_serving_counts(card_counts, memory_needed, tables, names.gpus, workload.replicas)
    data_city = _data_city(workload, known)
    return ResolvedRequest(
        request=request,
        card_counts=card_counts,
        evaluated_counts=tuple(sorted({1, *(card_counts or ())})),
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
        serving=serving,
        job_hours=job_hours,
        replicas=workload.replicas,
        data_city=data_city,
    )


def _job_hours(workload: Workload) -> float:
    """``gpu_hours`` for a batch job, ``hours`` for a serving one: exactly one of them, else 422."""
    given, missing = ("hours", "gpu_hours") if workload.kind == "serving" else ("gpu_hours", "hours")
    if getattr(workload, missing) is not None:
        raise InvalidRequest(
            f"workload.{missing}",
            f"a {workload.kind} workload takes workload.{given}, not workload.{missing}",
        )
    hours: float | None = getattr(workload, given)
    if hours is None:
        what = "wall-clock hours it stays up" if workload.kind == "serving" else "hours on one card"
        raise InvalidRequest(f"workload.{given}", f"required for a {workload.kind} workload ({what})")
    if workload.kind == "batch" and workload.replicas != 1:
        raise InvalidRequest("workload.replicas", "replicas are for a serving workload (workload.kind)")
    return hours


def _serving_task(workload: Workload) -> Task:
    """A serving job holds the model for inference; another task is a contradiction, and a 422."""
    if workload.task not in {None, "inference"}:
        raise InvalidRequest("workload.task", f"a serving workload runs inference, not {workload.task}")
    if workload.reference_gpu is not None or workload.speed_ratios:
        raise InvalidRequest(
            "workload.reference_gpu",
            "serving hours are wall-clock hours on any GPU: there is nothing to convert, leave it out",
        )
    return "inference"


def _check_serving_counts(
    card_counts: tuple[int, ...],
    memory_needed: float | None,
    tables: OfferTables,
    gpus: frozenset[str] | None,
    replicas: int,
) -> None:
    """Each ``card_counts`` total must hold whole replicas, at least ``replicas`` of them, on some offer
    (its cards per replica: ``_candidates.serving_layout``); else a 422 saying what they need.

    A 422 rather than a warning: a count that no offer can split into replicas would otherwise return
    nothing (or, before, silently another count), and the sentence tells the caller the count to ask for.
    """
    fewest = np.ones(tables.size) if memory_needed is None else min_cards(memory_needed, tables.gpu_memory_gb)
    layout = serving_layout(tables, fewest)
    rows = layout.hosts.copy()
    if gpus is not None:
        rows &= np.array(
            [tables.gpu_names[code] in gpus for code in tables.gpu_code.tolist()], dtype=np.bool_
        )
    sizes = sorted({int(cards) for cards in layout.replica_cards[rows].tolist()})
    if not sizes:
        return  # no offer hosts a replica at all: the evaluation says so (memory, capacity)
    for cards in card_counts:
        if any(cards % size == 0 and cards >= replicas * size for size in sizes):
            continue
        need = " or ".join(f"{replicas * size}" for size in sizes)
        per_replica = " or ".join(f"{size}" for size in sizes)
        label = "replica" if replicas == 1 else "replicas"
        if cards < replicas * sizes[0]:
            reason = f"{replicas} {label} of {per_replica} cards need {need} cards; {cards} is too few"
        else:
            reason = (
                f"{cards} cards are not whole replicas of {per_replica} cards; {replicas} {label} need "
                f"{need} cards (or a multiple of the cards per replica for more replicas)"
            )
        raise InvalidRequest("card_counts", reason)


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


def _params_b(workload: Workload) -> float | None:
    """Billions of parameters the memory check uses: the named model's total, else ``model_params_b``."""
    if workload.model is None:
        return workload.model_params_b
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
    return model.params_total_b
