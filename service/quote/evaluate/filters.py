"""The request's filters per offer: GPUs, regions, cities, vendors, pricing kinds, card memory and spot."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from service.quote.base.arrays import BoolArray
from service.quote.model.pricing import KIND_CODES
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["filter_mask"]


def _lookup(names: tuple[str, ...], chosen: frozenset[str] | None) -> npt.NDArray[np.bool_]:
    return np.array([chosen is None or name in chosen for name in names], dtype=np.bool_)


def filter_mask(tables: OfferTables, resolved: ResolvedRequest, mask: BoolArray) -> BoolArray:
    """``mask`` (the offers whose hours are known) within the request's filters: the ``matching`` stage
    of an evaluation (``_evaluate``), per offer."""
    if resolved.gpus is not None:
        mask &= _lookup(tables.gpu_names, resolved.gpus)[tables.gpu_code]
    if resolved.regions is not None:
        mask &= _lookup(tables.region_names, resolved.regions)[tables.region_code]
    if resolved.cities is not None:
        mask &= _lookup(tables.city_names, resolved.cities)[tables.city_code]
    if resolved.vendors is not None:
        mask &= _lookup(tables.vendor_names, resolved.vendors)[tables.vendor_code]
    if resolved.pricing is not None:
        kinds = np.array([kind in resolved.pricing for kind in (*KIND_CODES, "mixed")], dtype=np.bool_)
        mask &= kinds[tables.kind_code]
    minimum_memory = resolved.request.min_gpu_memory_gb
    if minimum_memory is not None:
        mask &= tables.gpu_memory_gb >= minimum_memory
    if not resolved.risk.allow_spot:
        mask &= ~tables.interruptible
    return mask
