"""Offer tables: the snapshot's offers as column arrays, built once per snapshot version.

The engine evaluates every (offer × card count) candidate with array arithmetic over these columns,
never a Python loop per offer. Text columns (GPU, region, city, vendor) are integer codes into small
vocabularies, so a request's filters become one table lookup. Reference prices the line items and the
summary compare against are resolved here too:

- ``same_vendor_card_hour``: the same vendor's cheapest card-hour offer for the same GPU (a bundle's
  discount is shown against it);
- ``market_card_hour``: the cheapest card-hour offer for the same GPU anywhere (a term package's
  break-even falls back to it when its vendor sells no card-hours).

Rows past ``offer_count`` are combined plans (``model.plans.PlanRow``: a vendor's term packages plus its
card-hours, priced per count when its packages come in several unit sizes), one row each, described by
their longest-period package's offer; ``kind_code`` says
``MIXED_CODE``. ``plan_counts`` and ``sells`` list the card counts each row sells (``sold_counts``), the
ones quoted when a request names none: per sales shape (``shape_sells``; a few hundred shapes, where a
(counts, rows) matrix took 25 MB at 96,000 offers), each row's shape given by ``sales_shape``.

Arrays are read-only: one snapshot serves concurrent requests. What requests of one shape share is kept
beside them in ``memos`` (``base.memo``), by the floors that work it out: each offer's speed over a
reference GPU, each request shape's job-independent evaluation arrays, a returned quote's offer parts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from schemas.offer import Offer, pricing_kind
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen
from service.quote.base.memo import Memos
from service.quote.model.billing import BillingTerms, sold_counts
from service.quote.model.plans import PlanArrays, PlanRow, build_plans
from service.quote.model.pricing import KIND_CODES, MIXED_CODE, CardHourRate, offer_terms, rule_of
from service.quote.model.scaling import ColumnKey, column_keys

__all__ = ["NO_OFFER", "OfferTables", "build_offer_tables"]

NO_OFFER = -1


@dataclass(frozen=True, slots=True)
class OfferTables:
    """Column arrays over the snapshot's offers: index i of every array describes ``offers[i]``."""

    offers: tuple[Offer, ...]  # per row: the offer, or a plan's longest-period package
    terms: tuple[BillingTerms, ...]
    offer_count: int  # rows before this are offers, from it on plans
    plans: tuple[PlanRow, ...]
    plan_arrays: PlanArrays
    plan_counts: tuple[int, ...]  # every count some row sells, ascending
    shape_sells: BoolArray  # (plan_counts, sales shapes): whether rows of each shape sell each count
    sales_shape: IntArray  # (rows,) each row's sales shape
    count_step: FloatArray  # cards come in steps of this (bundles, nodes), for the deadline's count
    count_floor: FloatArray  # fewest cards worth renting (a node offer's minimum nodes)
    gpu_names: tuple[str, ...]
    region_names: tuple[str, ...]
    city_names: tuple[str, ...]
    vendor_names: tuple[str, ...]
    machine_sizes: tuple[int, ...]
    gpu_code: IntArray
    region_code: IntArray
    city_code: IntArray
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
    # Spot capacity the vendor can take back (``BillingTerms.interruptible``), and the interruptions per
    # machine-month its vendor states (NaN: not stated, the request's default range applies).
    interruptible: BoolArray
    spot_stated_per_month: FloatArray
    available_cards: FloatArray  # +inf when the vendor does not say
    most_units: FloatArray  # the most units rentable in all, across rentals (+inf: bounded per rental)
    gpu_memory_gb: FloatArray
    fetched_at_s: FloatArray  # POSIX seconds
    lead_time_h: FloatArray  # hours from booking to the cards being ready (0 when the vendor says none)
    same_vendor_card_hour: IntArray  # index of the reference offer, or NO_OFFER
    market_card_hour: IntArray
    # Each row's speed-up column (``_scaling.column_keys``): the distinct (machine size, interconnect).
    scaling_keys: tuple[ColumnKey, ...]
    scaling_code: IntArray
    # The rows ordered by speed-up column, and where each column's rows start in that order
    # (``_deadline`` searches each column's rows at once).
    scaling_order: IntArray
    scaling_starts: IntArray
    # Memory of each GPU model the offers carry, sorted by GPU id (the last offer's figure for a model).
    memory_by_gpu: Mapping[str, float]
    # What requests share, kept by the floors above (``base.memo.MemoSlot``).
    memos: Memos = field(default_factory=Memos, init=False, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.offers)

    @property
    def sells(self) -> BoolArray:
        """``(plan_counts, rows)``: whether each row sells each count (made anew on each read)."""
        sells: BoolArray = self.shape_sells.take(self.sales_shape, axis=1)
        return sells

    def sells_at(self, count_at: IntArray, rows: IntArray) -> BoolArray:
        """Whether rows ``rows`` sell the counts at positions ``count_at`` of ``plan_counts``, pair by pair."""
        sold: BoolArray = self.shape_sells[count_at, self.sales_shape.take(rows)]
        return sold


def _codes(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    vocabulary = tuple(sorted(set(values)))
    index = {value: code for code, value in enumerate(vocabulary)}
    return vocabulary, frozen(np.array([index[value] for value in values], dtype=np.int64))


def _floats(values: Sequence[float]) -> FloatArray:
    return frozen(np.array(values, dtype=np.float64))


def _card_hour_prices(rates: Sequence[CardHourRate | None]) -> FloatArray:
    """Each offer's price per card-hour, NaN where it is not priced per card-hour (a positive price
    otherwise: the schema's)."""
    return np.array(
        [math.nan if rate is None else rate.cny_per_card_hour for rate in rates], dtype=np.float64
    )


def _cheapest_card_hour(rates: FloatArray, key: IntArray, id_order: IntArray) -> IntArray:
    """For each offer, the index of the cheapest card-hour offer (``rates``) sharing its ``key`` (codes),
    the first by id among equal rates (``id_order``: the ids' ranks), or ``NO_OFFER``: one sort of the
    offers priced per card-hour by key, rate and id, the first of each key kept (a comparison per offer
    in Python, for this table and the market's, took 175 ms at 96,000 offers; these and the rates, 39)."""
    priced = np.flatnonzero(~np.isnan(rates))
    order = priced.take(np.lexsort((id_order.take(priced), rates.take(priced), key.take(priced))))
    sorted_keys = key.take(order)
    first = np.ones(order.size, dtype=np.bool_)
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    cheapest = np.full(int(key.max(initial=-1)) + 1, NO_OFFER, dtype=np.int64)
    cheapest[sorted_keys[first]] = order[first]
    found: IntArray = cheapest.take(key)
    return frozen(found)


def _with_no_plans(found: IntArray, plans: Sequence[object]) -> IntArray:
    """``found`` for the offers, and ``NO_OFFER`` for each combined plan's row after them."""
    return frozen(np.concatenate([found, np.full(len(plans), NO_OFFER, dtype=np.int64)]))


def _stock(offer: Offer) -> float:
    return np.inf if offer.available_cards is None else float(offer.available_cards)


def _plan_terms(row: PlanRow, terms: Sequence[BillingTerms]) -> BillingTerms:
    """A plan row's limits: what every part it combines can supply (within one machine)."""
    cards = min(terms[part].machine_cards for part in row.rows)
    plan = row.plans[-1]
    package = terms[plan.best_row]
    if len(row.plans) > 1:
        # Priced per count, in cards: at most what each part supplies in all.
        most_cards = min(terms[part].most_units * terms[part].unit_cards for part in row.rows)
        return BillingTerms(
            unit_cards=1,
            min_units=1,
            max_units=cards,
            whole_units_only=False,
            unit_rate_cny_per_hour=package.unit_rate_cny_per_hour / package.unit_cards,
            granularity_hours=package.granularity_hours,
            min_billed_hours=0.0,
            machine_cards=cards,
            spans_machines=False,
            most_units=most_cards,
        )
    return BillingTerms(
        unit_cards=package.unit_cards,
        min_units=1,
        max_units=cards if package.unit_cards == 1 else 1,
        whole_units_only=False,
        unit_rate_cny_per_hour=package.unit_rate_cny_per_hour,
        granularity_hours=package.granularity_hours,
        min_billed_hours=0.0,
        machine_cards=cards,
        spans_machines=False,
        most_units=package.most_units,
    )


def _sells(terms: Sequence[BillingTerms]) -> tuple[tuple[int, ...], BoolArray, IntArray]:
    """Every count any row sells, ascending; per (count, sales shape) whether rows of the shape sell it;
    each row's shape. Rows of one sales shape (what ``sold_counts`` reads) sell the same counts, so each
    shape's are worked out once (a membership test per cell took 2.7 s at 96,000 offers, of a few hundred
    shapes)."""
    rows_of: dict[tuple[int, int, int, bool, int, bool], list[int]] = {}
    for row, term in enumerate(terms):
        shape = (
            term.unit_cards,
            term.min_units,
            term.max_units,
            term.whole_units_only,
            term.machine_cards,
            term.spans_machines,
        )
        rows_of.setdefault(shape, []).append(row)
    sold = {shape: sold_counts(_sales_terms(*shape)) for shape in rows_of}
    counts = tuple(sorted(set().union(*sold.values())))
    position = {count: at for at, count in enumerate(counts)}
    matrix = np.zeros((len(counts), len(rows_of)), dtype=np.bool_)
    shape_of = np.zeros(len(terms), dtype=np.int64)
    for code, (shape, rows) in enumerate(rows_of.items()):
        matrix[sorted(position[count] for count in sold[shape]), code] = True
        shape_of[rows] = code
    return counts, frozen(matrix), frozen(shape_of)


def _sales_terms(
    unit_cards: int,
    min_units: int,
    max_units: int,
    whole_units_only: bool,
    machine_cards: int,
    spans_machines: bool,
) -> BillingTerms:
    """Terms with what ``sold_counts`` reads (the rest does not change the counts sold)."""
    return BillingTerms(
        unit_cards=unit_cards,
        min_units=min_units,
        max_units=max_units,
        whole_units_only=whole_units_only,
        unit_rate_cny_per_hour=0.0,
        granularity_hours=1.0,
        min_billed_hours=0.0,
        machine_cards=machine_cards,
        spans_machines=spans_machines,
    )


def build_offer_tables(offers: Sequence[Offer]) -> OfferTables:
    """Prepare the snapshot's offers for vectorized evaluation (runs once per snapshot version)."""
    real_offers = tuple(offers)
    terms_of_offers = [offer_terms(offer) for offer in real_offers]
    card_hour_rates = [rule_of(offer.pricing).card_hour_rate(offer.pricing) for offer in real_offers]
    plans = build_plans(real_offers, terms_of_offers, card_hour_rates)
    plan_ids = [f"{real_offers[plan.offer_row].id}+mixed" for plan in plans]
    offers = real_offers + tuple(real_offers[plan.offer_row] for plan in plans)
    terms = tuple(terms_of_offers + [_plan_terms(plan, terms_of_offers) for plan in plans])
    plan_counts, shape_sells, sales_shape = _sells(terms)
    gpu_names, gpu_code = _codes([offer.gpu for offer in offers])
    region_names, region_code = _codes([offer.region for offer in offers])
    city_names, city_code = _codes([offer.city for offer in offers])
    vendor_names, vendor_code = _codes([offer.vendor for offer in offers])
    machine_sizes = tuple(sorted({term.machine_cards for term in terms}))
    machine_index = {size: code for code, size in enumerate(machine_sizes)}
    row_ids = [offer.id for offer in real_offers] + plan_ids
    id_rank = {offer_id: rank for rank, offer_id in enumerate(sorted(row_ids))}
    kinds = [KIND_CODES[pricing_kind(offer.pricing)] for offer in real_offers] + [MIXED_CODE] * len(plans)
    real = len(real_offers)
    id_order = frozen(np.array([id_rank[row_id] for row_id in row_ids], dtype=np.int64))
    rates = _card_hour_prices(card_hour_rates)
    machine_cards = _floats([term.machine_cards for term in terms])
    scaling_keys, scaling_code = column_keys(machine_cards, [offer.interconnect for offer in offers])
    scaling_order = np.argsort(scaling_code, kind="stable")
    memory_by_gpu = {offer.gpu: float(offer.gpu_memory_gb) for offer in real_offers}
    return OfferTables(
        offers=offers,
        terms=terms,
        offer_count=len(real_offers),
        plans=plans,
        plan_arrays=PlanArrays.build(plans),
        plan_counts=plan_counts,
        shape_sells=shape_sells,
        sales_shape=sales_shape,
        count_step=_floats(
            [term.unit_cards if term.whole_units_only or term.spans_machines else 1 for term in terms]
        ),
        count_floor=_floats(
            [term.min_units * term.unit_cards if term.spans_machines else 1 for term in terms]
        ),
        gpu_names=gpu_names,
        region_names=region_names,
        city_names=city_names,
        vendor_names=vendor_names,
        machine_sizes=machine_sizes,
        gpu_code=gpu_code,
        region_code=region_code,
        city_code=city_code,
        vendor_code=vendor_code,
        kind_code=frozen(np.array(kinds, dtype=np.int64)),
        machine_code=frozen(np.array([machine_index[term.machine_cards] for term in terms], dtype=np.int64)),
        id_order=id_order,
        unit_cards=_floats([term.unit_cards for term in terms]),
        min_units=_floats([term.min_units for term in terms]),
        max_units=_floats([term.max_units for term in terms]),
        whole_units_only=frozen(np.array([term.whole_units_only for term in terms], dtype=np.bool_)),
        unit_rate_cny_per_hour=_floats([term.unit_rate_cny_per_hour for term in terms]),
        granularity_hours=_floats([term.granularity_hours for term in terms]),
        min_billed_hours=_floats([term.min_billed_hours for term in terms]),
        machine_cards=machine_cards,
        spans_machines=frozen(np.array([term.spans_machines for term in terms], dtype=np.bool_)),
        interruptible=frozen(np.array([term.interruptible for term in terms], dtype=np.bool_)),
        spot_stated_per_month=_floats(
            [
                np.nan if offer.spot_interruptions_per_month is None else offer.spot_interruptions_per_month
                for offer in offers
            ]
        ),
        available_cards=_floats(
            [_stock(offer) for offer in real_offers]
            + [min(_stock(real_offers[i]) for i in plan.rows) for plan in plans]
        ),
        most_units=_floats([term.most_units for term in terms]),
        gpu_memory_gb=_floats([offer.gpu_memory_gb for offer in offers]),
        fetched_at_s=_floats(
            [offer.fetched_at.timestamp() for offer in real_offers]
            + [min(real_offers[i].fetched_at.timestamp() for i in plan.rows) for plan in plans]
        ),
        lead_time_h=_floats(
            [offer.lead_time_h or 0.0 for offer in real_offers]
            + [max(real_offers[i].lead_time_h or 0.0 for i in plan.rows) for plan in plans]
        ),
        same_vendor_card_hour=_with_no_plans(
            _cheapest_card_hour(
                rates, vendor_code[:real] * len(gpu_names) + gpu_code[:real], id_order[:real]
            ),
            plans,
        ),
        market_card_hour=_with_no_plans(_cheapest_card_hour(rates, gpu_code[:real], id_order[:real]), plans),
        scaling_keys=scaling_keys,
        scaling_code=frozen(scaling_code),
        scaling_order=frozen(scaling_order),
        scaling_starts=frozen(np.searchsorted(scaling_code[scaling_order], np.arange(len(scaling_keys) + 1))),
        memory_by_gpu={gpu: memory_by_gpu[gpu] for gpu in sorted(memory_by_gpu)},
    )
