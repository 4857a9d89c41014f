"""Offer tables: the snapshot's offers as column arrays, built once per snapshot version.

The engine evaluates every (offer × card count) candidate with array arithmetic over these columns,
never a Python loop per offer. Text columns (GPU, region, vendor) are integer codes into small
vocabularies, so a request's filters become one table lookup. Reference prices the line items and the
summary compare against are resolved here too:

- ``same_vendor_card_hour``: the same vendor's cheapest card-hour offer for the same GPU (a bundle's
  discount is shown against it);
- ``market_card_hour``: the cheapest card-hour offer for the same GPU anywhere (a term package's
  break-even falls back to it when its vendor sells no card-hours).

Arrays are read-only: one snapshot serves concurrent requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from schemas.offer import CardHourPricing, Offer, pricing_kind
from service.quote._billing import KIND_CODES, BillingTerms, billing_terms

__all__ = ["NO_OFFER", "OfferTables", "build_offer_tables"]

NO_OFFER = -1
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
_ArrayT = TypeVar("_ArrayT", bound="np.ndarray[Any, Any]")


@dataclass(frozen=True, slots=True)
class OfferTables:
    """Column arrays over the snapshot's offers: index i of every array describes ``offers[i]``."""

    offers: tuple[Offer, ...]
    terms: tuple[BillingTerms, ...]
    gpu_names: tuple[str, ...]
    region_names: tuple[str, ...]
    vendor_names: tuple[str, ...]
    machine_sizes: tuple[int, ...]
    gpu_code: IntArray
    region_code: IntArray
    vendor_code: IntArray
    kind_code: IntArray
    machine_code: IntArray
    # Order of the offer's id among all ids: the last tie-breaker, so equal quotes rank the same way
    # whatever order the store returned the offers in.
    id_order: IntArray
    unit_cards: FloatArray
    min_units: FloatArray
    max_units: FloatArray
    whole_units_only: BoolArray
    unit_rate_cny_per_hour: FloatArray
    granularity_hours: FloatArray
    min_billed_hours: FloatArray
    machine_cards: FloatArray
    spans_machines: BoolArray
    available_cards: FloatArray  # +inf when the vendor does not say
    gpu_memory_gb: FloatArray
    fetched_at_s: FloatArray  # POSIX seconds
    same_vendor_card_hour: IntArray  # index of the reference offer, or NO_OFFER
    market_card_hour: IntArray

    @property
    def size(self) -> int:
        return len(self.offers)


def _codes(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    vocabulary = tuple(sorted(set(values)))
    index = {value: code for code, value in enumerate(vocabulary)}
    return vocabulary, _frozen(np.array([index[value] for value in values], dtype=np.int64))


def _frozen(array: _ArrayT) -> _ArrayT:
    array.flags.writeable = False
    return array


def _floats(values: Sequence[float]) -> FloatArray:
    return _frozen(np.array(values, dtype=np.float64))


def _cheapest_card_hour(offers: Sequence[Offer], key_of: dict[int, tuple[str, ...]]) -> IntArray:
    """For each offer, the index of the cheapest card-hour offer sharing its key, or ``NO_OFFER``."""
    best: dict[tuple[str, ...], tuple[float, str, int]] = {}
    for index, offer in enumerate(offers):
        if isinstance(offer.pricing, CardHourPricing):
            candidate = (offer.pricing.cny_per_card_hour, offer.id, index)
            key = key_of[index]
            if key not in best or candidate < best[key]:
                best[key] = candidate
    return _frozen(
        np.array(
            [best[key_of[i]][2] if key_of[i] in best else NO_OFFER for i in range(len(offers))],
            dtype=np.int64,
        )
    )


def build_offer_tables(offers: Sequence[Offer]) -> OfferTables:
    """Prepare the snapshot's offers for vectorized evaluation (runs once per snapshot version)."""
    offers = tuple(offers)
    terms = tuple(billing_terms(offer.pricing) for offer in offers)
    gpu_names, gpu_code = _codes([offer.gpu for offer in offers])
    region_names, region_code = _codes([offer.region for offer in offers])
    vendor_names, vendor_code = _codes([offer.vendor for offer in offers])
    machine_sizes = tuple(sorted({term.machine_cards for term in terms}))
    machine_index = {size: code for code, size in enumerate(machine_sizes)}
    id_rank = {offer_id: rank for rank, offer_id in enumerate(sorted(offer.id for offer in offers))}
    return OfferTables(
        offers=offers,
        terms=terms,
        gpu_names=gpu_names,
        region_names=region_names,
        vendor_names=vendor_names,
        machine_sizes=machine_sizes,
        gpu_code=gpu_code,
        region_code=region_code,
        vendor_code=vendor_code,
        kind_code=_frozen(
            np.array([KIND_CODES[pricing_kind(offer.pricing)] for offer in offers], dtype=np.int64)
        ),
        machine_code=_frozen(np.array([machine_index[term.machine_cards] for term in terms], dtype=np.int64)),
        id_order=_frozen(np.array([id_rank[offer.id] for offer in offers], dtype=np.int64)),
        unit_cards=_floats([term.unit_cards for term in terms]),
        min_units=_floats([term.min_units for term in terms]),
        max_units=_floats([term.max_units for term in terms]),
        whole_units_only=_frozen(np.array([term.whole_units_only for term in terms], dtype=np.bool_)),
        unit_rate_cny_per_hour=_floats([term.unit_rate_cny_per_hour for term in terms]),
        granularity_hours=_floats([term.granularity_hours for term in terms]),
        min_billed_hours=_floats([term.min_billed_hours for term in terms]),
        machine_cards=_floats([term.machine_cards for term in terms]),
        spans_machines=_frozen(np.array([term.spans_machines for term in terms], dtype=np.bool_)),
        available_cards=_floats(
            [np.inf if offer.available_cards is None else offer.available_cards for offer in offers]
        ),
        gpu_memory_gb=_floats([offer.gpu_memory_gb for offer in offers]),
        fetched_at_s=_floats([offer.fetched_at.timestamp() for offer in offers]),
        same_vendor_card_hour=_cheapest_card_hour(
            offers, {i: (offer.vendor, offer.gpu) for i, offer in enumerate(offers)}
        ),
        market_card_hour=_cheapest_card_hour(offers, {i: (offer.gpu,) for i, offer in enumerate(offers)}),
    )
