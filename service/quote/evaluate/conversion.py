"""Each offer's hours on one card: its speed over the request's reference GPU, as a range (low /
expected / high), dividing the caller's hours, or the job's FLOPs over its own peak (a job sized by tokens).

The catalog's range between the two models (``adapters.gpus.conversion_range``), or the caller's measured
ratio (``workload.speed_ratios``) at every end where given; 1 without a reference; NaN for a GPU the
catalog does not rate (its hours cannot be converted). Kept per snapshot by reference and ratios, and
each GPU's peak and memory bandwidth per snapshot and catalog (``gpu_facts``). The converted hours are
a ``model.one_card.OneCardHours``: the expected row divided for every offer, the low and high ones where
first read (most requests read them at the returned quotes alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from adapters.gpus import GpuCatalog, conversion_range
from service.quote.base.arrays import BoolArray, FloatArray, frozen
from service.quote.base.memo import MemoSlot
from service.quote.model.one_card import OneCardHours
from service.quote.model.sizing import one_card_hours
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["conversion_of", "gpu_facts", "known_hours", "one_card_hours_of"]


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
        ones = _unconverted(tables)
        return ones, ones
    converted = _conversion(tables, resolved, catalog, reference)
    return converted.factors, converted.fastest_first


def _unconverted(tables: OfferTables) -> FloatArray:
    """``(3, offers)`` of 1, read-only: the speeds of a job with nothing to convert, one per snapshot."""
    return _UNCONVERTED.of(tables.memos).get(0, lambda: frozen(np.ones((3, tables.size))))


_UNCONVERTED: MemoSlot[int, FloatArray] = MemoSlot("speeds of 1", size=1)


@dataclass(frozen=True, slots=True)
class _Conversion:
    """One reference GPU's conversion on a snapshot: each offer's speeds both ways, the offers whose
    three speeds are numbers other than 0, and the smallest magnitude among those (+inf without any)."""

    factors: FloatArray  # (3, offers) low / expected / high
    fastest_first: FloatArray  # (3, offers) high / expected / low
    rated: BoolArray
    smallest_speed: float


def _conversion(
    tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog, reference: str
) -> _Conversion:
    ratios = tuple(sorted(resolved.speed_ratios.items()))
    return _CONVERSIONS.of(tables.memos).get(
        (catalog, reference, ratios), lambda: _converted(tables, catalog, reference, dict(ratios))
    )


def _converted(
    tables: OfferTables, catalog: GpuCatalog, reference: str, ratios: Mapping[str, float]
) -> _Conversion:
    by_gpu = np.full((len(tables.gpu_names), 3), np.nan)
    for code, name in enumerate(tables.gpu_names):
        if name == reference:
            by_gpu[code] = 1.0
        elif name in ratios:
            by_gpu[code] = ratios[name]
        elif name in catalog:
            by_gpu[code] = conversion_range(catalog, reference, name)
    # One array, read both ways (a view each): what the hours divide by is each row's, fastest first.
    fastest_first: FloatArray = np.ascontiguousarray(by_gpu[tables.gpu_code, ::-1].T)
    fastest_first.flags.writeable = False  # shared by the requests with the same reference
    usable = ~np.isnan(fastest_first) & (fastest_first != 0)
    magnitudes = np.abs(fastest_first[usable])
    return _Conversion(
        factors=fastest_first[::-1],
        fastest_first=fastest_first,
        rated=frozen(usable[0] & usable[1] & usable[2]),
        smallest_speed=float(magnitudes.min()) if magnitudes.size else float(np.inf),
    )


# Each offer's speed over a reference GPU, by (catalog, reference GPU, measured ratios), per snapshot.
_CONVERSIONS: MemoSlot[tuple[GpuCatalog, str, tuple[tuple[str, float], ...]], _Conversion] = MemoSlot(
    "conversions", size=64
)


def one_card_hours_of(
    tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog
) -> tuple[FloatArray, OneCardHours]:
    """``(3, offers)`` each: the speed over the reference GPU (``conversion_of``) and the fewest / expected
    / most hours on one card of each offer's GPU. A job given by its tokens is sized on each GPU's own peak
    (``model.sizing``); NaN where the catalog does not rate a GPU (left out with the filters)."""
    sizing = resolved.job.sizing
    if sizing is not None:
        ones = _unconverted(tables)
        sized = one_card_hours(sizing.flops, gpu_facts(tables, catalog)[0], sizing.mfu)
        return ones, OneCardHours.of_rows(sized)
    conversion, fastest_first = conversion_of(tables, resolved, catalog)
    # Most hours on the lowest speed: rows low / expected / high of hours pair with high / expected / low.
    return conversion, OneCardHours.divided(resolved.job.hours, fastest_first)


def known_hours(
    tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog, hours: OneCardHours
) -> BoolArray:
    """``(offers,)``, a new array: whether every bound of an offer's one-card ``hours``
    (``one_card_hours_of``) is finite.

    Converted hours are the job's hours over each speed: finite wherever the speed is a number other
    than 0, unless the quotient overflows, and it overflows nowhere when it does not at the smallest
    such speed (a correctly rounded quotient only falls as the divisor grows). So the offers whose three
    speeds are such numbers are kept with the conversion, and the three rows are read only when the
    job's hours overflow somewhere. Without a reference every speed is 1, and every bound the job's
    hours.
    """
    reference = resolved.reference_gpu
    if resolved.job.sizing is None:
        if reference is None:  # every speed is 1: each bound is the job's hours, exactly
            return np.full(tables.size, bool(np.isfinite(resolved.job.hours)))
        converted = _conversion(tables, resolved, catalog, reference)
        with np.errstate(over="ignore", divide="ignore"):
            if np.isfinite(np.float64(resolved.job.hours) / converted.smallest_speed):
                return converted.rated.copy()
    known: BoolArray = np.isfinite(hours.expected)
    for bound in (0, 2):  # the low and high rows, each read where it is kept
        known &= np.isfinite(hours.row(bound))
    return known


def gpu_facts(tables: OfferTables, catalog: GpuCatalog) -> tuple[FloatArray, FloatArray]:
    """Each offer's GPU's peak dense BF16 TFLOPS and memory bandwidth (TB/s) by the catalog (NaN for a GPU
    it does not rate), kept per snapshot and catalog."""
    return _GPU_FACTS.of(tables.memos).get(catalog, lambda: _facts(tables, catalog))


def _facts(tables: OfferTables, catalog: GpuCatalog) -> tuple[FloatArray, FloatArray]:
    models = [catalog.get(name) if name in catalog else None for name in tables.gpu_names]
    peaks = np.array([np.nan if model is None else model.tflops_bf16 for model in models])[tables.gpu_code]
    bandwidth = np.array(
        [
            np.nan if model is None or model.bandwidth_tb_s is None else model.bandwidth_tb_s
            for model in models
        ]
    )[tables.gpu_code]
    peaks.flags.writeable = bandwidth.flags.writeable = False
    return peaks, bandwidth


_GPU_FACTS: MemoSlot[GpuCatalog, tuple[FloatArray, FloatArray]] = MemoSlot("gpu facts", size=4)
