"""Request checks that need the catalog or the snapshot, and the request reduced to what the engine uses.

Decoding already rejected malformed fields; here names are resolved: a GPU is accepted by canonical id or
any spelling the catalog's normalizer places (``"RTX 4090"`` → ``rtx4090``); a region or vendor must be
one the service knows. A wrong name raises ``InvalidRequest`` naming the field and listing valid values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from adapters.gpus import GpuCatalog, UnknownGpuName
from schemas.offer import PricingKind
from schemas.quote import QuoteRequest, Task
from service.errors import InvalidRequest
from service.quote._memory import memory_needed_gb
from service.quote._scaling import ScalingCurve, curve_from_override
from service.quote._tables import OfferTables

__all__ = ["KNOWN_REGIONS", "ResolvedRequest", "resolve_gpu", "resolve_request"]

KNOWN_REGIONS = frozenset({"shenzhen", "jiangsu"})


@dataclass(frozen=True, slots=True)
class ResolvedRequest:
    request: QuoteRequest
    card_counts: tuple[int, ...]  # requested, sorted, without repeats
    evaluated_counts: tuple[int, ...]  # requested plus one card, which the summary compares against
    reference_gpu: str | None
    gpus: frozenset[str] | None
    regions: frozenset[str] | None
    vendors: frozenset[str] | None
    pricing: frozenset[PricingKind] | None
    curve: ScalingCurve
    memory_needed_gb: float | None
    memory_check_incomplete: bool


def resolve_gpu(name: str, catalog: GpuCatalog, *, field: str) -> str:
    """The canonical id for ``name``, or ``InvalidRequest`` listing the catalog's ids."""
    lowered = name.strip().lower()
    if lowered in catalog:
        return lowered
    try:
        return catalog.normalize(name)
    except UnknownGpuName:
        valid = ", ".join(sorted(catalog.models))
        raise InvalidRequest(field, f"unknown GPU {name!r}; valid: {valid}") from None


def _names(values: list[str] | None, known: Iterable[str], *, field: str, what: str) -> frozenset[str] | None:
    if not values:
        return None
    valid = frozenset(known)
    chosen = frozenset(value.strip().lower() for value in values)
    unknown = sorted(chosen - valid)
    if unknown:
        raise InvalidRequest(field, f"unknown {what} {unknown[0]!r}; valid: {', '.join(sorted(valid))}")
    return chosen


def resolve_request(
    request: QuoteRequest,
    tables: OfferTables,
    vendor_ids: Iterable[str],
    catalog: GpuCatalog,
    bytes_per_param: Mapping[Task, float],
) -> ResolvedRequest:
    workload = request.workload
    reference_gpu = (
        resolve_gpu(workload.reference_gpu, catalog, field="workload.reference_gpu")
        if workload.reference_gpu is not None
        else None
    )
    gpus = (
        frozenset(resolve_gpu(name, catalog, field="gpus") for name in request.gpus) if request.gpus else None
    )
    regions = _names(
        request.regions, KNOWN_REGIONS | set(tables.region_names), field="regions", what="region"
    )
    vendors = _names(
        request.vendors, set(vendor_ids) | set(tables.vendor_names), field="vendors", what="vendor"
    )
    card_counts = tuple(sorted(set(request.card_counts)))
    memory_needed = (
        memory_needed_gb(workload.model_params_b, workload.task, bytes_per_param)
        if workload.model_params_b is not None and workload.task is not None
        else None
    )
    return ResolvedRequest(
        request=request,
        card_counts=card_counts,
        evaluated_counts=tuple(sorted({1, *card_counts})),
        reference_gpu=reference_gpu,
        gpus=gpus,
        regions=regions,
        vendors=vendors,
        pricing=frozenset(request.pricing) if request.pricing else None,
        curve=curve_from_override(request.scaling),
        memory_needed_gb=memory_needed,
        memory_check_incomplete=memory_needed is None
        and (workload.model_params_b is not None or workload.task is not None),
    )
