"""Bound pruning: on a large table, bill only the rows that can reach what a response returns.

A response returns the top ``limit`` candidates by its ranking, the cheapest, the fastest, the single
card and, when the recommendation is spot, the best plan without it; every other candidate only counts
in ``excluded``, which needs no figures when the request sets no deadline and no budget (filters,
capacity, memory and stale prices are judged per cell without billing). So each row gets two lower
bounds, over every count it can be quoted at:

- time: hours ≥ ``H`` / the largest speed-up at a count it can supply, + copy;
- cost: renting ``n`` cards bills at least ``n / unit cards`` units at the unit rate for at least the
  wall-clock hours, ``H / s(n) + copy``, so cost ≥ rate per card-hour × (``H`` × min over n of
  ``n / s(n)`` + copy), and at least the unit rate × the units its fewest cards rent (at least the
  offer's minimum: a one-card job on a 4-card bundle pays the bundle) × the time bound billed as the
  offer bills (whole granules, its minimum: a short job on a month package pays the month), whatever
  fees add.

A few rows with the smallest bounds per key are billed first (with the rows tied with the last of them:
rows alike share bounds), and the smallest by the ranking's key among the rows without the spot risk, with
every combined plan and the cells of the products it combines at its counts (``Layout.plan_cells``: a plan
is quoted only where it beats each of them); their k-th best key is then at least the true k-th best, so a
row whose bound is past it can never be returned, and every row whose bound is within it is billed (at
most once more): of its cells, the candidates whose own expected hours, or cost before fees (fees only
add), can reach a threshold (``evaluation._cells_within_thresholds``), every cell of a combined plan's
row. A row's bound is its least cell's: a 235B model's full fine-tune at 96,000 offers kept rows holding
150,000 cells, and 24,000 are billed (6,700 of them the plans' and the products they combine, billed with
every pruned evaluation). A row that reaches the hours' threshold alone, when the ranking is not by time,
can only be returned as the fastest candidate: of it only the cells within that threshold are billed (its
fastest cells when it is seeded: ``evaluation._fastest_cells``). The single card is found by its own
one-card costs (``cheapest_single_card``) and only the one-card cells of the rows at its cost are billed
for it: a model one big card holds alone and small cards hold together makes it far dearer than the
ranking's top, and every small-card row's bound under its cost (137,000 cells for a 34B model's LoRA at
96,000 offers, billed whole when its cost widened the cost threshold). When the recommendation is spot,
the best plan without the risk is returned too: rows without the risk are kept up to its key, the spot
rows only up to the k-th best. Every cell is still judged, so ``excluded`` and the offers that qualify are
the whole table's (by row: ``evaluate.row_judge``). Independent runs, placed in pieces over several
rentals of one offer, are pruned the same way on their grid of candidates before their own layout is built
(``evaluate.placed``: a row supplies at most its most units in all, ``placed_row_speedups``); a serving
job and small tables are evaluated whole.

With a deadline or a budget, ``excluded`` needs to know which cells are past each limit, and the bounds
say that of whole rows: a row whose least hours (least cost) are past the deadline (budget) however they
are shown has every cell past it. The rows past every limit the request sets are left unbilled and their
cells judged past without figures (``rows_within_reach``); the others are billed whole, as before. A
limit the fastest or cheapest counts can barely meet puts most of a large table out of reach (2,000
GPU-hours in a day leaves the clusters). A loose one keeps most rows: then every cell's expected hours
and cost are worked out by themselves and judged, the thresholds above are read exactly off every
candidate within the limits, and only the rows that can reach them are billed, at their candidates that
can (the single card at its own cell), with every row up to the first candidate free of risk
(``evaluation._ranked_within_limits``).

A limit judged on the high end (its confidence) sets rows apart the same way, a row's least expected
hours and cost being at most its high end's, and the bill then holds the high end of every billed cell;
when most rows are within reach, the whole layout is billed. A deadline so loose that it leaves no cell
out (every matching row's slowest hours as it judges them, expected or high, within it however shown)
changes nothing the judgement counts: the request is pruned as one without it, and the billed cells'
high ends are judged against it, when the first candidate free of risk is among the rows billed
(``evaluation._deadline_passes_nothing``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import numpy as np

from schemas.quote import QuoteRequest
from service.quote.base.arrays import (
    BoolArray,
    FloatArray,
    IntArray,
    frozen,
    kth_least,
    unique_sorted,
    whole_positions,
)
from service.quote.base.memo import Memos, MemoSlot
from service.quote.base.paths import FastPaths
from service.quote.evaluate.fewest import fewest_positions
from service.quote.evaluate.judge import past_however_shown
from service.quote.evaluate.layout import Layout
from service.quote.evaluate.losses import reads_every_high_end
from service.quote.jobs import SpeedupRule
from service.quote.model.billing import BILLING_TOLERANCE, billed_hours
from service.quote.model.scaling import ScalingColumns
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = [
    "HoldingTerms",
    "RowBounds",
    "RowSpeedups",
    "SafeRows",
    "SingleCard",
    "Thresholds",
    "bounds_at",
    "cheapest_single_card",
    "holding_terms",
    "kept_rows",
    "key_thresholds",
    "placed_row_speedups",
    "prunes",
    "prunes_but_for_limits",
    "prunes_by_limits",
    "row_bounds",
    "row_speedups",
    "rows_within_reach",
    "safe_rows",
    "seed_count",
    "seed_rows",
    "seeds_within",
    "thresholds_of",
    "widened",
]

# Float noise between a bound and the billed figure it bounds (relative, and in CNY or hours).
_MARGIN = 1e-9
# Rows billed first per key beyond the response's quotes.
_SEED_EXTRA = 16
# Every how many rows ``_smallest`` samples to bound the least values.
_SAMPLE_STEP = 16
# A seed key's rows tied with the last one picked are picked too, up to this many times the rows asked
# for: rows alike (same GPU, capability and rates) share a bound, and every one of them at or under a
# threshold is billed anyway (at 96,000 offers, 81 rows share the least hours of a short job).
_TIED_SEEDS = 8


def _may_prune(tables: OfferTables, resolved: ResolvedRequest, layout: Layout, fast: FastPaths) -> bool:
    return (
        fast.bound_pruning
        and tables.size >= fast.prune_from_rows
        and resolved.kind.kind == "batch"
        and layout.machines is None
    )


def prunes(tables: OfferTables, resolved: ResolvedRequest, layout: Layout, fast: FastPaths) -> bool:
    """Whether the request may be evaluated pruned (module docstring)."""
    return (
        _may_prune(tables, resolved, layout, fast)
        and layout.dense > layout.one_card_column
        and not reads_every_high_end(resolved.request)
    )


def prunes_but_for_limits(
    tables: OfferTables, resolved: ResolvedRequest, layout: Layout, fast: FastPaths
) -> bool:
    """Whether the request would be evaluated pruned but for its limits and the confidences they are
    judged with: how one whose deadline leaves no cell out is (``evaluation._deadline_passes_nothing``)."""
    return _may_prune(tables, resolved, layout, fast) and layout.dense > layout.one_card_column


def prunes_by_limits(tables: OfferTables, resolved: ResolvedRequest, layout: Layout, fast: FastPaths) -> bool:
    """Whether the request may be evaluated billing only the rows that can meet its limits: a deadline
    or a budget, each judged on the expected figures or on the high end (module docstring)."""
    request = resolved.request
    return _may_prune(tables, resolved, layout, fast) and (
        request.deadline_hours is not None or request.budget_cny is not None
    )


@dataclass(frozen=True, slots=True)
class RowBounds:
    """Per row, lower bounds of every candidate's expected cost and hours; +inf (or NaN) for a row no
    candidate of which can qualify."""

    cost: FloatArray
    hours: FloatArray
    # The value bounds worked out, by time value (the seeds and the kept rows read the same)
    _values: dict[float, FloatArray] = field(default_factory=dict, compare=False, repr=False)

    def ranked(self, request: QuoteRequest) -> FloatArray:
        """The bound of the request's ranking key: cost, hours, or value."""
        if request.rank_by == "cost":
            return self.cost
        return self.hours if request.rank_by == "time" else self.value(request.time_value_cny_per_hour)

    def value(self, time_value_cny_per_hour: float | None) -> FloatArray:
        if time_value_cny_per_hour is None:
            return self.cost
        found = self._values.get(time_value_cny_per_hour)
        if found is None:
            with np.errstate(invalid="ignore"):  # an unreachable row: +inf (or NaN) either way
                found = self._values[time_value_cny_per_hour] = (
                    self.cost + time_value_cny_per_hour * self.hours
                )
        return found


@dataclass(frozen=True, slots=True)
class RowSpeedups:
    """What the bounds take from a layout and a speed-up rule alone (kept per layout and rule:
    ``row_speedups``); what depends on the layout or the tables alone is shared by every rule."""

    fastest: FloatArray  # per row: the largest speed-up at a count the row can supply; 0: it supplies none
    supplied: BoolArray  # per row: whether it can supply one of the layout's counts (the layout's)
    rate_per_card_hour: FloatArray  # per row (the tables')
    # (counts, columns): min of n / s(n) over the layout's counts from each one up; the layout's cards
    ratio_from: FloatArray
    cards: FloatArray
    code: IntArray  # each row's column
    memos: Memos = field(default_factory=Memos, init=False, compare=False, repr=False)

    def least_ratio_holding(
        self, fewest: tuple[Hashable, FloatArray], tables: OfferTables | None = None
    ) -> FloatArray:
        """Per row, the least n / s(n) over the layout's counts that hold the model (at least the fewest
        cards of ``fewest``, a key and its array; a cell with fewer fails on memory, so no candidate):
        +inf where none does. With ``tables``, the fewest cards are placed among the counts per memory
        size where the key allows (``fewest_positions``)."""
        _, fewest_cards = fewest
        if fewest_cards.max(initial=0.0) <= self.cards[0]:
            least: FloatArray = self.ratio_from[0].take(self.code)
            return least
        if tables is None:
            at = whole_positions(self.cards, fewest_cards)
        else:
            at = fewest_positions(tables, self.cards, fewest)
        held = at < self.cards.size
        ratio: FloatArray = np.where(
            held, self.ratio_from[np.minimum(at, self.cards.size - 1), self.code], np.inf
        )
        return ratio


def row_speedups(
    layout: Layout, tables: OfferTables, rule: SpeedupRule, scaling: ScalingColumns
) -> RowSpeedups:
    """``RowSpeedups`` of ``layout`` under ``rule`` (whose columns are ``scaling``), made once."""
    return _ROW_SPEEDUPS.of(layout.memos).get(rule, lambda: _row_speedups(layout, tables, scaling))


def _most_at(layout: Layout, tables: OfferTables) -> IntArray:
    """Per row, the position among the layout's counts of the most cards it can supply (-1: none)."""

    def find() -> IntArray:
        most_cards = np.minimum(
            np.minimum(tables.max_units, tables.most_units) * tables.unit_cards, tables.available_cards
        )
        return frozen(whole_positions(layout.cards, most_cards, side="right") - 1)

    return _MOST_AT.of(layout.memos).get(0, find)


def _row_rates(tables: OfferTables) -> _RowRates:
    return _ROW_RATES.of(tables.memos).get(
        0,
        lambda: _RowRates(
            per_card_hour=frozen(tables.unit_rate_cny_per_hour / tables.unit_cards),
            tolerated_hours=frozen(BILLING_TOLERANCE * tables.granularity_hours),
        ),
    )


def _row_speedups(layout: Layout, tables: OfferTables, scaling: ScalingColumns) -> RowSpeedups:
    return _speedups_at(layout.cards, tables, scaling, _most_at(layout, tables), skip_unknown=False)


def placed_row_speedups(cards: FloatArray, tables: OfferTables, scaling: ScalingColumns) -> RowSpeedups:
    """``RowSpeedups`` at ``cards`` (a layout's counts, ``scaling`` the rule's speed-ups there) for jobs
    placed in pieces over several rentals of one offer (independent runs): a row supplies at most its
    stock and the cards of its most units in all (``max_units`` bounds one rental alone), and a count with
    no speed-up (fewer cards than one run takes: never placed) is left out of both bounds, where one
    rental's rule (``row_speedups``) would carry its NaN to every count below the next."""
    most_cards = np.minimum(tables.most_units * tables.unit_cards, tables.available_cards)
    most_at = whole_positions(cards, most_cards, side="right") - 1
    return _speedups_at(cards, tables, scaling, most_at, skip_unknown=True)


def _speedups_at(
    cards: FloatArray, tables: OfferTables, scaling: ScalingColumns, most_at: IntArray, *, skip_unknown: bool
) -> RowSpeedups:
    """``RowSpeedups`` at ``cards`` with each row's most cards at position ``most_at`` among them (-1:
    none); ``skip_unknown``: a NaN speed-up is left out of both accumulations rather than carried."""
    expected = scaling.expected  # (counts, columns)
    least, largest = (np.fmin, np.fmax) if skip_unknown else (np.minimum, np.maximum)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = cards[:, None] / expected
    ratio_from = least.accumulate(ratios[::-1], axis=0)[::-1]  # row 0: the least n / s(n) of all
    best = largest.accumulate(expected, axis=0)  # per column: the largest speed-up up to each count
    supplied = most_at >= 0
    fastest = np.where(supplied, best[np.maximum(most_at, 0), scaling.code], 0.0)
    return RowSpeedups(
        fastest=frozen(fastest),
        supplied=frozen(supplied),
        rate_per_card_hour=_row_rates(tables).per_card_hour,
        ratio_from=frozen(np.ascontiguousarray(ratio_from)),
        cards=cards,
        code=scaling.code,
    )


@dataclass(frozen=True, slots=True)
class _RowRates:
    """What the bounds take from the tables alone, per row."""

    per_card_hour: FloatArray  # CNY per card-hour of the unit rate
    tolerated_hours: FloatArray  # the billing tolerance's share of a granule


@dataclass(frozen=True, slots=True)
class HoldingTerms:
    """What the bounds take from a layout, a speed-up rule and a memory need alone, per row
    (``holding_terms``)."""

    # CNY per one-card hour at the least n / s(n) over the counts that hold the model, shrunk by the
    # billing tolerance (+inf where no count holds it)
    time_rate: FloatArray
    # CNY per billed hour at least: the rate per card-hour, and an offer's fewest units rented (the
    # tables' and the memory need's alone)
    billed_rate: FloatArray
    unreachable: IntArray  # the rows that supply none of the layout's counts
    # Every unreachable row bills +inf for +inf hours (``_billed_past_every_limit``): with positive
    # one-card hours, their bounds come out +inf without being set (hours over no speed-up are +inf)
    unreachable_priced: bool
    tolerated_hours: FloatArray  # the billing tolerance's share of a granule (the tables')
    # One-card hours above which every row's fastest hours pass its tolerated hours
    untolerated_from: float


def _billed_rate(tables: OfferTables, fewest_key: Hashable, fewest_cards: FloatArray) -> FloatArray:
    """Per row, CNY per billed hour at least: the rate per card-hour, and the rate of an offer's fewest
    units rented (its minimum, or what its fewest cards that hold the model take), per memory need (kept
    by ``fewest_key``, what identifies ``fewest_cards``)."""

    def make() -> FloatArray:
        offers = slice(None, tables.offer_count)
        holding = np.where(np.isfinite(fewest_cards[offers]), np.maximum(fewest_cards[offers], 1.0), 1.0)
        units = np.maximum(tables.min_units[offers], np.ceil(holding / tables.unit_cards[offers]))
        rate = _row_rates(tables).per_card_hour
        billed_rate = rate.copy()
        np.maximum(rate[offers], units * tables.unit_rate_cny_per_hour[offers], out=billed_rate[offers])
        return frozen(billed_rate)

    return _BILLED_RATES.of(tables.memos).get(fewest_key, make)


def _holding_terms(
    tables: OfferTables, speeds: RowSpeedups, fewest: tuple[Hashable, FloatArray]
) -> HoldingTerms:
    fewest_key, fewest_cards = fewest
    tolerated = _row_rates(tables).tolerated_hours
    with np.errstate(invalid="ignore"):
        reached = tolerated * speeds.fastest
    unreachable = np.flatnonzero(~speeds.supplied)
    time_rate = (
        speeds.rate_per_card_hour * speeds.least_ratio_holding(fewest, tables) * (1.0 - BILLING_TOLERANCE)
    )
    billed_rate = _billed_rate(tables, fewest_key, fewest_cards)
    return HoldingTerms(
        time_rate=frozen(time_rate),
        billed_rate=billed_rate,
        unreachable=frozen(unreachable),
        unreachable_priced=_billed_past_every_limit(tables, billed_rate, unreachable),
        tolerated_hours=tolerated,
        untolerated_from=float(np.nanmax(reached, initial=0.0)) * (1.0 + _MARGIN) + _MARGIN,
    )


def _billed_past_every_limit(tables: OfferTables, billed_rate: FloatArray, rows: IntArray) -> bool:
    """Whether infinite hours on each of ``rows`` bill an infinite cost: a positive finite granule, a
    minimum that is a number, and a positive billed rate."""
    granularity, minimum = tables.granularity_hours.take(rows), tables.min_billed_hours.take(rows)
    with np.errstate(invalid="ignore"):
        billed = (
            (granularity > 0) & np.isfinite(granularity) & ~np.isnan(minimum) & (billed_rate.take(rows) > 0)
        )
    return bool(billed.all())


def row_bounds(
    tables: OfferTables,
    speeds: RowSpeedups,
    one_card_hours: FloatArray,
    extra_hours: FloatArray | None,
    matching: BoolArray,
    fewest: tuple[Hashable, FloatArray],
) -> RowBounds:
    """``RowBounds`` for the expected ``one_card_hours`` (module docstring), over the counts that hold
    the model (``fewest``: a memory need and its fewest cards per row)."""
    terms = holding_terms(tables, speeds, fewest)
    # The wall-clock hours of every count are at least those of the fastest count, and the card-hours
    # at least the one-card hours times the least n / s(n); each count rents at least the card-hours.
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = one_card_hours * terms.time_rate
        hours = one_card_hours / speeds.fastest
        if extra_hours is not None:
            cost += extra_hours * speeds.rate_per_card_hour * (1.0 - BILLING_TOLERANCE)
            hours += extra_hours
        # Every count's billed hours are at least the fastest count's, rounded as its offer bills them
        # (the rounding only rises with the hours): a short job on a day or month package pays a whole
        # period, and a short job on a 4-card bundle or a 2-node minimum pays the bundle or both nodes
        # (every count of an offer rents at least its fewest units: its minimum, or what the fewest cards
        # that hold the model take; combined plans keep the card-hour rate). Past the billing tolerance's
        # share of a granule, billed hours are also at least the wall-clock hours less that tolerance,
        # so the card-hour bound holds once shrunk by it (and only then: a shorter job can round down to
        # the minimum billed).
        least_hours = float(one_card_hours.min(initial=np.inf))  # NaN where some row's are unknown
        if not least_hours > terms.untolerated_from:
            cost[~(hours > terms.tolerated_hours)] = 0.0
        rounded = billed_hours(hours, tables.granularity_hours, tables.min_billed_hours)
        rounded *= terms.billed_rate
        np.maximum(cost, rounded, out=cost)
    if not (least_hours > 0 and terms.unreachable_priced):  # else +inf already (``HoldingTerms``)
        cost[terms.unreachable] = np.inf
        hours[terms.unreachable] = np.inf
    if not matching.all():
        cost[~matching] = np.inf
        hours[~matching] = np.inf
    return RowBounds(cost=cost, hours=hours)


def holding_terms(
    tables: OfferTables, speeds: RowSpeedups, fewest: tuple[Hashable, FloatArray]
) -> HoldingTerms:
    """The ``HoldingTerms`` of a rule's speed-ups and a memory need (its key and fewest cards), made once."""
    return _HOLDING_TERMS.of(speeds.memos).get(fewest[0], lambda: _holding_terms(tables, speeds, fewest))


def bounds_at(
    tables: OfferTables,
    speeds: RowSpeedups,
    terms: HoldingTerms,
    hours: tuple[FloatArray, float],
    matching: BoolArray,
    rows: IntArray,
) -> RowBounds:
    """``row_bounds`` at ``rows`` alone, for a job without extra hours whose one-card hours (every row's,
    and their least: ``hours``) pass every row's tolerated hours: per row, the same operations on the same
    figures, so the same bounds."""
    one_card_hours, least_hours = hours
    assert least_hours > terms.untolerated_from
    with np.errstate(divide="ignore", invalid="ignore"):
        one_card = one_card_hours.take(rows)
        cost = one_card * terms.time_rate.take(rows)
        hours_at = one_card / speeds.fastest.take(rows)
        rounded = billed_hours(
            hours_at, tables.granularity_hours.take(rows), tables.min_billed_hours.take(rows)
        )
        rounded *= terms.billed_rate.take(rows)
        np.maximum(cost, rounded, out=cost)
    past = ~matching.take(rows)
    if not (least_hours > 0 and terms.unreachable_priced):
        past |= ~speeds.supplied.take(rows)
    cost[past] = np.inf
    hours_at[past] = np.inf
    return RowBounds(cost=cost, hours=hours_at)


# Per layout, the bounds' speed-ups for the rules seen lately; per rule, its terms for the memory needs.
_ROW_SPEEDUPS: MemoSlot[SpeedupRule, RowSpeedups] = MemoSlot("row speed-ups", size=8, max_bytes=32 * 2**20)
_HOLDING_TERMS: MemoSlot[Hashable, HoldingTerms] = MemoSlot("holding terms", size=4)
# Per layout, the position of each row's most cards among its counts; per snapshot, the rates per row and
# the least billed rate per memory need (the last few needs, as ``evaluation`` keeps their fewest cards).
_MOST_AT: MemoSlot[int, IntArray] = MemoSlot("most cards at", size=1)
_ROW_RATES: MemoSlot[int, _RowRates] = MemoSlot("row rates", size=1)
_BILLED_RATES: MemoSlot[Hashable, FloatArray] = MemoSlot("billed rates", size=8)


def _smallest(
    values: FloatArray, count: int, kept_ins: tuple[BoolArray | None, ...] = (None,)
) -> list[IntArray]:
    """Per mask of ``kept_ins`` (None: every row), indices of ``count`` of the smallest finite ``values``
    where it is set (fewer when fewer are finite; which of equal values is free: any rows seed the
    thresholds soundly, the least ones tightly); the candidates of every mask found in one pass over
    every value."""
    # The count-th least of every ``_SAMPLE_STEP``-th value is at least the count-th least of all: the
    # values up to it hold the least ones, a few times ``count`` of them to partition instead of all.
    cuts: list[float | None] = []
    for kept_in in kept_ins:
        sample = values[::_SAMPLE_STEP]
        if kept_in is not None:
            sample = sample[kept_in[::_SAMPLE_STEP]]
        cut = float(np.partition(sample, count - 1)[count - 1]) if sample.size > count else None
        cuts.append(cut if cut is not None and np.isfinite(cut) else None)
    sampled = [cut for cut in cuts if cut is not None]
    # Every value within the widest cut, once: each cut's are among them, in the same order.
    near = np.flatnonzero(values <= max(sampled)) if sampled else None
    found = []
    for kept_in, cut in zip(kept_ins, cuts, strict=True):
        if cut is None or near is None:
            found.append(_least_finite(values, count, kept_in))
            continue
        within = near if len(sampled) == 1 else near[values.take(near) <= cut]
        if kept_in is not None:
            within = within[kept_in.take(within)]
        least: IntArray = within[np.argpartition(values.take(within), count - 1)[:count]]
        found.append(_with_ties(values, least, within, count))
    return found


def _least_finite(values: FloatArray, count: int, kept_in: BoolArray | None) -> IntArray:
    """``_smallest`` over every finite value (where the sample cannot bound them)."""
    usable = np.isfinite(values)
    if kept_in is not None:
        usable &= kept_in
    finite = np.flatnonzero(usable)
    if finite.size <= count:
        return finite
    chosen: IntArray = finite[np.argpartition(values[finite], count - 1)[:count]]
    return _with_ties(values, chosen, finite, count)


def _with_ties(values: FloatArray, chosen: IntArray, pool: IntArray, count: int) -> IntArray:
    """``chosen`` and the rows of ``pool`` (which holds every row up to them) tied with the largest of
    them, unless that is more than ``_TIED_SEEDS`` times ``count`` rows."""
    tied: IntArray = pool[values.take(pool) <= values.take(chosen).max()]
    return tied if tied.size <= _TIED_SEEDS * count else chosen


def seed_count(request: QuoteRequest) -> int:
    """How many rows ``seed_rows`` picks per key (with the rows tied with the last)."""
    return 2 * request.limit + _SEED_EXTRA


def seed_rows(bounds: RowBounds, request: QuoteRequest, safe: SafeRows) -> tuple[IntArray, IntArray]:
    """The rows billed first: the smallest bounds per key, and per the ranking's key among the rows
    without the spot risk (the best plan without it is returned when the recommendation is spot). Two
    sets: the rows billed whole, and those seeded by their hours alone, whose fastest cells are billed
    (when the ranking is not by time, the hours' threshold is the fastest candidate's:
    ``key_thresholds``)."""
    count = seed_count(request)
    asked: list[tuple[FloatArray, BoolArray | None]] = [(bounds.cost, None)]
    if request.rank_by == "value":  # the only ranking whose thresholds read the value
        asked.append((bounds.value(request.time_value_cny_per_hour), None))
    if safe.any_spot:
        asked.append((bounds.ranked(request), safe.rows))
    asked.append((bounds.hours, None))
    # The keys that are the same array (the ranking's among the rows without the risk, and among all)
    # share their pass over every row.
    found: dict[int, IntArray] = {}
    for values in {id(values): values for values, _ in asked}.values():
        at = [index for index, (other, _) in enumerate(asked) if other is values]
        for index, rows in zip(at, _smallest(values, count, tuple(asked[i][1] for i in at)), strict=True):
            found[index] = rows
    picked = [found[index] for index in range(len(asked) - 1)]
    return _whole_and_fastest(picked, found[len(asked) - 1], request)


def _whole_and_fastest(
    picked: list[IntArray], by_hours: IntArray, request: QuoteRequest
) -> tuple[IntArray, IntArray]:
    """The seeds billed whole (``picked`` per key, and ``by_hours`` when the ranking is by time), and the
    rows seeded by their hours alone."""
    by_hours = by_hours.astype(np.int64)
    if request.rank_by == "time":
        picked.append(by_hours)
    whole = unique_sorted(np.concatenate(picked).astype(np.int64))
    if request.rank_by == "time":
        return whole, np.empty(0, dtype=np.int64)
    fastest: IntArray = by_hours[~_found_in(whole, by_hours)]
    return whole, fastest


def seeds_within(
    bounds: RowBounds, request: QuoteRequest, safe: SafeRows, least: tuple[float, float, float]
) -> tuple[IntArray, IntArray]:
    """``seed_rows`` where each key's ``count``-th least is known (``least``: the cost's, the hours' and
    the ranking key's among the rows without the spot risk, when any row has it): the rows within each,
    the least ``count`` of them where more than ``_TIED_SEEDS`` times as many are tied."""
    count = seed_count(request)

    def within(values: FloatArray, figure: float, mask: BoolArray | None) -> IntArray:
        hit = values <= figure
        rows = np.flatnonzero(hit if mask is None else hit & mask)
        if rows.size > _TIED_SEEDS * count:
            rows = np.sort(rows.take(np.argpartition(values.take(rows), count - 1)[:count]))
        return rows

    picked = [within(bounds.cost, least[0], None)]
    if safe.any_spot:
        picked.append(within(bounds.ranked(request), least[2], safe.rows))
    return _whole_and_fastest(picked, within(bounds.hours, least[1], None), request)


def _found_in(sorted_rows: IntArray, rows: IntArray) -> BoolArray:
    """Per row of ``rows``, whether it is in ``sorted_rows`` (ascending)."""
    if sorted_rows.size == 0:
        return np.zeros(rows.size, dtype=np.bool_)
    at = np.minimum(np.searchsorted(sorted_rows, rows), sorted_rows.size - 1)
    found: BoolArray = sorted_rows.take(at) == rows
    return found


@dataclass(frozen=True, slots=True)
class SafeRows:
    """The rows without the spot risk (``OfferTables.interruptible`` False), and whether any row has it."""

    rows: BoolArray
    any_spot: bool


def safe_rows(tables: OfferTables) -> SafeRows:
    """The tables' ``SafeRows``, made once."""

    def make() -> SafeRows:
        interruptible = tables.interruptible
        return SafeRows(rows=frozen(~interruptible), any_spot=bool(interruptible.any()))

    return _SAFE_ROWS.of(tables.memos).get(0, make)


_SAFE_ROWS: MemoSlot[int, SafeRows] = MemoSlot("rows without the spot risk", size=1)


@dataclass(frozen=True, slots=True)
class SingleCard:
    """The single card the summary compares, as far as a pruned evaluation needs it: its least expected
    cost over the rows that can be it (-inf: none but plans can), and the rows whose one-card cost is
    that least, past float noise (ascending): the only ones it can be, so their one-card cells alone are
    billed for it (``evaluation._pruned``), not every cell of each row whose cost bound is within it."""

    cost: float
    rows: IntArray


def cheapest_single_card(
    tables: OfferTables,
    one_card: tuple[int, FloatArray],
    scaling: ScalingColumns,
    rows: tuple[FloatArray, FloatArray | None, tuple[FloatArray, FloatArray] | None],
    runnable: BoolArray,
    bounds: tuple[Callable[[float], IntArray], IntArray],
) -> SingleCard:
    """The single-card comparison's ``SingleCard``, from the rows that can be it (combined plans are
    billed anyway: ``evaluate.row_judge``).

    ``one_card``: the one-card column, and the units each row's one-card cell rents; ``runnable``: per
    row, whether its one-card cell is runnable and rents one card or one machine as one unit (a cluster
    whose minimum bills many cards is no single card), combined plans aside; ``bounds``: the rows
    (ascending) whose cost bound is not past a figure, and the rows billed first. A row's one-card cost
    is at least its cost bound, so the least is found among the rows whose bound is within the least
    cost of the first rows that can be the comparison: the same least as over every row, costed for a
    few, each row's one-card cost worked out as ``figures.bill`` works it out (the same floats)."""
    one_card_hours, extra_hours, fees = rows
    column, units = one_card
    eligible = runnable
    if not eligible.any():
        return SingleCard(-np.inf, np.empty(0, dtype=np.int64))
    speedup = scaling.expected[column]

    def least_cost(at: IntArray) -> SingleCard:
        hours = one_card_hours.take(at) / speedup.take(scaling.code.take(at))
        if extra_hours is not None:
            hours += extra_hours.take(at)
        with np.errstate(invalid="ignore", over="ignore"):
            granularity, minimum = tables.granularity_hours.take(at), tables.min_billed_hours.take(at)
            rate = units.take(at) * tables.unit_rate_cny_per_hour.take(at)
            cost = billed_hours(hours, granularity, minimum) * rate
            if fees is not None:
                cost += fees[0].take(at) * hours + fees[1].take(at)
        least = float(cost.min())
        with np.errstate(invalid="ignore"):
            return SingleCard(least, np.sort(at[cost <= widened(least)]))

    within_cost, first = bounds
    first = first[eligible.take(first)]
    if first.size:
        least = least_cost(first).cost
        if np.isfinite(least):
            within = within_cost(widened(least))
            return least_cost(within[eligible.take(within)])
    return least_cost(np.flatnonzero(eligible))


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The keys no row past which can be returned: cost, hours and the ranking's value; and the ranking
    key's own for rows without the spot risk, which one more plan may be returned from (the best plan
    without the risk, when the recommendation is spot): past ``cost``, ``hours`` or ``value`` for that
    key alone (``safe_key``: 0, 1, 2), or None when it is no wider."""

    cost: float
    hours: float
    value: float
    safe_key: int | None = None
    safe: float = -np.inf


def key_thresholds(
    request: QuoteRequest,
    figures: tuple[FloatArray, FloatArray],
    qualifying: BoolArray,
    *,
    qualifying_everywhere: int | None,
    spot: BoolArray,
    single_cost: float,
    any_safe: bool,
) -> Thresholds | None:
    """The thresholds from the billed rows' candidates (``figures``: their expected cost and hours, and
    ``qualifying_everywhere`` how many candidates there are in all; None: the figures are every
    candidate's, whose thresholds then bound the rows to bill in full); None when they cannot settle
    which rows can be returned (fewer candidates than the response takes, or a spot recommendation with
    no plan without it among them)."""
    at = np.flatnonzero(qualifying)  # gathered by position: one pass over the mask, not one per array
    candidates = (figures[0].take(at), figures[1].take(at), spot.take(at) if any_safe else None)
    return thresholds_of(
        request, candidates, qualifying_everywhere=qualifying_everywhere, single_cost=single_cost
    )


def thresholds_of(
    request: QuoteRequest,
    candidates: tuple[FloatArray, FloatArray, BoolArray | None],
    *,
    qualifying_everywhere: int | None,
    single_cost: float,
) -> Thresholds | None:
    """``key_thresholds`` of the qualifying candidates' expected cost and hours, and whether each is spot
    (None: no candidate anywhere is without the spot risk)."""
    cost, hours, spot_at = candidates
    if cost.size == 0:
        return None
    rank_by, limit, time_value = request.rank_by, request.limit, request.time_value_cny_per_hour
    value = cost if time_value is None else cost + time_value * hours
    ranked = hours if rank_by == "time" else value if rank_by == "value" else cost
    if qualifying_everywhere is not None and cost.size < min(limit, qualifying_everywhere):
        return None
    k = min(limit, cost.size)
    everything = cost.size == qualifying_everywhere
    thresholds = [
        np.inf if everything else (kth_least(cost, k) if rank_by == "cost" else float(cost.min())),
        np.inf if everything else (kth_least(hours, k) if rank_by == "time" else float(hours.min())),
        np.inf if everything else (kth_least(value, k) if rank_by == "value" else -np.inf),
    ]
    thresholds[0] = max(thresholds[0], single_cost)
    key = {"cost": 0, "time": 1, "value": 2}[rank_by]
    wide = [widened(bound) for bound in thresholds]
    # The recommendation is spot when any candidate at the top key is (its tie-breakers aside); the
    # plan without the risk is then returned too, so a row without it is kept up to that plan's key.
    if spot_at is not None and spot_at[ranked == ranked.min()].any():
        safe = ~spot_at
        if not safe.any():
            return None
        safe_bound = widened(max(thresholds[key], float(ranked[safe].min())))
        if safe_bound > wide[key]:
            return Thresholds(wide[0], wide[1], wide[2], safe_key=key, safe=safe_bound)
    return Thresholds(wide[0], wide[1], wide[2])


def widened(bound: float) -> float:
    """``bound`` past float noise (an infinite one as it is)."""
    return bound + abs(bound) * _MARGIN + _MARGIN if np.isfinite(bound) else bound


def rows_within_reach(bounds: RowBounds, deadline_hours: float | None, budget_cny: float | None) -> IntArray:
    """The rows some cell of which may be within one of the limits set (None: no such limit): every row
    but those whose least hours are past the deadline and whose least cost is past the budget, however
    they are shown. Each of a row's cells takes at least its least hours (the same one-card hours over a
    speed-up no larger, plus the same copy) and costs at least its least cost (fees only add). Lead times
    are left out: they only add to what the deadline judges, and the single card is compared on its
    hours alone. A NaN bound is kept."""
    past = np.ones(bounds.hours.size, dtype=np.bool_)
    if deadline_hours is not None:
        past &= past_however_shown(bounds.hours, deadline_hours)
    if budget_cny is not None:
        past &= past_however_shown(bounds.cost, budget_cny)
    return np.flatnonzero(~past)


def kept_rows(
    bounds: RowBounds,
    thresholds: Thresholds,
    request: QuoteRequest,
    safe: SafeRows,
) -> tuple[IntArray, IntArray]:
    """Every row whose bounds can reach a threshold (the ranking key's wider one, ``Thresholds.safe``,
    for the rows without the spot risk alone), in two sets: the rows that can reach one by cost or
    value (or by hours when the ranking is by time), billed whole; and those that reach the hours'
    threshold alone, the fastest candidate's, of which only the cells within it can be returned."""
    reach: list[tuple[FloatArray, float, BoolArray | None]] = [(bounds.cost, thresholds.cost, None)]
    # A value within its threshold: none below -inf (the ranking is not by value), and every row within
    # an infinite one has its cost within the cost's, infinite too (every candidate was billed).
    if np.isfinite(thresholds.value):
        reach.append((bounds.value(request.time_value_cny_per_hour), thresholds.value, None))
    if thresholds.safe_key is not None:  # the ranking's key
        reach.append((bounds.ranked(request), thresholds.safe, safe.rows))
    if request.rank_by == "time":
        reach.append((bounds.hours, thresholds.hours, None))
    # One pass per array of bounds, however many of its thresholds (the ranking's key for all rows and
    # for those without the spot risk are one array).
    arrays = {id(values): values for values, _, _ in reach}
    whole = unique_sorted(
        np.concatenate(
            [
                _rows_within(values, [(limit, mask) for other, limit, mask in reach if other is values])
                for values in arrays.values()
            ]
        )
    )
    if request.rank_by == "time":
        return whole, np.empty(0, dtype=np.int64)
    by_hours = _rows_within(bounds.hours, [(thresholds.hours, None)])
    return whole, by_hours[~_found_in(whole, by_hours)]


def _rows_within(values: FloatArray, limits: list[tuple[float, BoolArray | None]]) -> IntArray:
    """The rows (ascending) whose ``values`` are within any of ``limits``, each for the rows its mask
    sets (None: every row): the rows within the widest found in one pass, each limit then read at those."""
    near = np.flatnonzero(values <= max(limit for limit, _ in limits))
    if len(limits) == 1 and limits[0][1] is None:
        return near
    at = values.take(near)
    kept = np.zeros(near.size, dtype=np.bool_)
    for limit, mask in limits:
        within = at <= limit
        kept |= within if mask is None else within & mask.take(near)
    found: IntArray = near[kept]
    return found
