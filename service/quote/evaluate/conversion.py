"""Each offer's speed over the request's reference GPU, as a range (low / expected / high).

The catalog's range between the two models (``adapters.gpus.conversion_range``), or the caller's measured
ratio (``workload.speed_ratios``) at every end where given; 1 without a reference; NaN for a GPU the
catalog does not rate (its hours cannot be converted). Kept per snapshot by reference and ratios.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from adapters.gpus import GpuCatalog, conversion_range
from service.quote.base.arrays import FloatArray
from service.quote.base.memo import MemoSlot
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["conversion_of"]


def conversion_of(
    tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog
) -> tuple[FloatArray, FloatArray]:
    """``(3, offers)``: each offer's low / expected / high speed over the reference GPU, and the same
    high / expected / low (the order the one-card hours bounds divide by).

    1 at every end without a reference; the caller's measured ratio at every end where given; NaN for a
    GPU the catalog does not rate (its hours cannot be converted, and it is dropped with the filters).
    """
    reference = resolved.reference_gpu
    if reference is None:
        ones = np.ones((3, tables.size))
        return ones, ones
    ratios = tuple(sorted(resolved.speed_ratios.items()))
    return _CONVERSIONS.of(tables.memos).get(
        (catalog, reference, ratios), lambda: _converted(tables, catalog, reference, dict(ratios))
    )


def _converted(
    tables: OfferTables, catalog: GpuCatalog, reference: str, ratios: Mapping[str, float]
) -> tuple[FloatArray, FloatArray]:
    by_gpu = np.full((len(tables.gpu_names), 3), np.nan)
    for code, name in enumerate(tables.gpu_names):
        if name == reference:
            by_gpu[code] = 1.0
        elif name in ratios:
            by_gpu[code] = ratios[name]
        elif name in catalog:
            by_gpu[code] = conversion_range(catalog, reference, name)
    factors: FloatArray = np.ascontiguousarray(by_gpu[tables.gpu_code].T)
    fastest_first: FloatArray = np.ascontiguousarray(factors[::-1])
    # Shared by the requests with the same reference.
    factors.flags.writeable = fastest_first.flags.writeable = False
    return factors, fastest_first


# Each offer's speed over a reference GPU, by (catalog, reference GPU, measured ratios), per snapshot.
_CONVERSIONS: MemoSlot[
    tuple[GpuCatalog, str, tuple[tuple[str, float], ...]], tuple[FloatArray, FloatArray]
] = MemoSlot("conversions", size=64)
