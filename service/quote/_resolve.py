"""Request checks that need the catalog or the snapshot, and the request reduced to what the engine uses.

Decoding already rejected malformed fields; here names are resolved by the service's one name resolver
(``service.names``: its case rule, its known names, its messages), with errors naming the body's fields
(``gpus``, ``regions``, ``vendors``, ``workload.reference_gpu``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from adapters.gpus import GpuCatalog
from schemas.offer import PricingKind
from schemas.quote import QuoteRequest, Task
from schemas.vendor import VendorStatus
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
    gpus: frozenset[str] | None
    regions: frozenset[str] | None
    vendors: frozenset[str] | None
    pricing: frozenset[PricingKind] | None
    curve: ScalingCurve
    memory_needed_gb: float | None
    memory_check_incomplete: bool


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
    names = resolve_names(
        NameQuery(gpus=request.gpus or (), regions=request.regions or (), vendors=request.vendors or ()),
        known=known,
        catalog=catalog,
        fields=BODY_FIELDS,
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
        gpus=names.gpus,
        regions=names.regions,
        vendors=names.vendors,
        pricing=frozenset(request.pricing) if request.pricing else None,
        curve=curve_from_override(request.scaling),
        memory_needed_gb=memory_needed,
        memory_check_incomplete=memory_needed is None
        and (workload.model_params_b is not None or workload.task is not None),
    )
