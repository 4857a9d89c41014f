"""Request checks that need the catalog or the snapshot, and the request reduced to what the engine uses.

Decoding already rejected malformed fields; here names are resolved by the service's one name resolver
(``service.names``: its case rule, its known names, its messages), with errors naming the body's fields
(``gpus``, ``regions``, ``vendors``, ``workload.reference_gpu``, ``workload.speed_ratios``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from adapters.gpus import GpuCatalog
from adapters.models import UnknownModelName, resolve_model
from schemas.offer import PricingKind
from schemas.quote import QuoteRequest, Task, Workload
from schemas.vendor import VendorStatus
from service.errors import InvalidRequest
from service.names import BODY_FIELDS, KnownNames, NameQuery, resolve_gpu, resolve_names
from service.quote._memory import memory_needed_gb
from service.quote._scaling import ScalingCurve, curve_from_override
from service.quote._tables import OfferTables

__all__ = ["ResolvedRequest", "resolve_gpu", "resolve_request"]


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    request: QuoteRequest
    card_counts: tuple[int, ...]  # requested, sorted, without repeats
    evaluated_counts: tuple[int, ...]  # requested plus one card, which the summary compares against
    reference_gpu: str | None
    speed_ratios: Mapping[str, float]  # catalog id → the caller's measured speed over ``reference_gpu``
    gpus: frozenset[str] | None
    regions: frozenset[str] | None
    vendors: frozenset[str] | None
    pricing: frozenset[PricingKind] | None
    curve: ScalingCurve
    memory_needed_gb: float | None
    memory_check_incomplete: bool


_SPEED_RATIOS = "workload.speed_ratios"


def _speed_ratios(
    ratios: Mapping[str, float] | None, reference_gpu: str | None, catalog: GpuCatalog
) -> dict[str, float]:
    """The caller's measured ratios by catalog id; two spellings of one model must agree."""
    if not ratios:
        return {}
    if reference_gpu is None:
        raise InvalidRequest(_SPEED_RATIOS, "speed ratios are relative to workload.reference_gpu: give it")
    resolved: dict[str, float] = {}
    for name, ratio in ratios.items():
        gpu = resolve_gpu(name, catalog, field=_SPEED_RATIOS)
        if resolved.setdefault(gpu, ratio) != ratio:
            raise InvalidRequest(_SPEED_RATIOS, f"two different ratios for {gpu} ({name!r} is one spelling)")
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

    ``known`` is where valid regions and vendors come from (``service.names.KnownNames``: the configured
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
        NameQuery(gpus=request.gpus or (), regions=request.regions or (), vendors=request.vendors or ()),
        known=known,
        catalog=catalog,
        fields=BODY_FIELDS,
    )
    card_counts = tuple(sorted(set(request.card_counts)))
    params_b = _params_b(workload)
    memory_needed = (
        memory_needed_gb(params_b, workload.task, bytes_per_param, precision=workload.precision)
        if params_b is not None and workload.task is not None
        else None
    )
    return ResolvedRequest(
        request=request,
        card_counts=card_counts,
        evaluated_counts=tuple(sorted({1, *card_counts})),
        reference_gpu=reference_gpu,
        speed_ratios=speed_ratios,
        gpus=names.gpus,
        regions=names.regions,
        vendors=names.vendors,
        pricing=frozenset(request.pricing) if request.pricing else None,
        curve=curve_from_override(request.scaling),
        memory_needed_gb=memory_needed,
        memory_check_incomplete=memory_needed is None and (params_b is not None or workload.task is not None),
    )


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
