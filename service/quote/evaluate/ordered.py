"""Row bounds read in order: the rows a pruned evaluation reads, without a pass over every row.

A batch job given by its hours ``H`` on a reference GPU takes ``H / s`` hours on one card of a row whose
speed is ``s`` (``OneCardHours.divided``). A row's cost bound is at least those hours times the row's
time rate ``t`` (``pruning.row_bounds``: the card-hour rate at the least ``n / s(n)``), and its hours
bound is those hours over its fastest speed-up ``f``: past float noise, ``H`` times a figure of the row
alone, its key (``t / s`` and ``1 / s / f``). Where the job's hours pass every row's tolerated hours, a
row also bills at least a granule and its minimum at its billed rate, whatever ``H``: the cost's floor.
Rows sorted once by each key (per rule, memory need and conversion: ``RowOrder``), the rows whose bounds
can be within a figure are a prefix of an order, found by one search, less the rows whose floor is past
it; only those rows' bounds are worked out (``pruning.bounds_at``: the same operations on the same
figures as over every row, so the same bounds).

A pruned evaluation asks three things of the bounds: the rows with the least of each key (its seeds),
the rows within the least single-card cost, and the rows within its thresholds. ``OrderedBounds``
answers each over the rows that can be within the figure asked, so each answer is the one ``pruning``
gives over every row (``WholeBounds``), worked out over a few hundred rows rather than 96,000. The seeds'
figures (at least the ``count``-th least of each key) are the last request's of the order, scaled by the
job's hours, or read off a few rows with the least bounds; a figure that fewer than ``count`` rows are
within is no such figure, and is read again.

It applies where the bounds are a product of ``H`` and a row's figures: no extra hours (a copy between
cities adds the same hours to every count), hours that pass every row's tolerated hours (else a short
job's cost bound drops its card-hour part), no ranking by value (its key mixes the two), most rows
matching (a row left out by a filter has infinite bounds, read like any other: where most are, their
orders' prefixes would be mostly such rows, and every row's bounds are worked out instead), and no
figure that could make a NaN (checked once per order). An order is sorted the second time its rule, memory need and
conversion are asked for: a shape asked once pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import numpy as np

from schemas.quote import QuoteRequest
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen, kth_least, unique_sorted
from service.quote.base.memo import MemoSlot, found_by_identity, kept_by_identity
from service.quote.evaluate.pruning import (
    HoldingTerms,
    RowBounds,
    RowSpeedups,
    SafeRows,
    Thresholds,
    bounds_at,
    kept_rows,
    seed_count,
    seed_rows,
    seeds_within,
)
from service.quote.model.tables import OfferTables

__all__ = ["OrderedBounds", "RowOrder", "WholeBounds", "ordered_bounds"]

# How far past float noise a key's product with the job's hours may fall short of the bound it stands
# for (a few roundings of each: far below this).
_KEY_MARGIN = 1e-9
# The rows read first for a seed figure: this many times the seeds, of the first this many times as
# many rows by key and by floor.
_FIRST_READ = 4
# A seed figure taken from the last request's is widened by this share past its growth with the hours.
_HINT_MARGIN = 0.05

_COST, _HOURS = 0, 1


@dataclass(frozen=True, slots=True)
class _Ordered:
    """Rows ascending by a key (a figure over the job's hours, past float noise), and, for a key whose
    rows have a floor (a figure none is under whatever the hours), the same rows ascending by it."""

    rows: IntArray
    keys: FloatArray
    by_floor: IntArray | None

    def within(self, figure: float, job_hours: float, floors: FloatArray) -> IntArray:
        """The rows (in key order) whose figure can be within ``figure``: a prefix, less the rows whose
        floor (``floors``: every row's) is past it."""
        key = figure / job_hours * (1.0 + _KEY_MARGIN) if figure > 0 else figure
        prefix = self.rows[: int(np.searchsorted(self.keys, key, side="right"))]
        if self.by_floor is None:
            return prefix
        found: IntArray = prefix[~(floors.take(prefix) > figure)]
        return found

    def first(self, count: int, job_hours: float, least: Callable[[IntArray], FloatArray]) -> IntArray:
        """Rows read first for a figure's ``count``-th least: ``_FIRST_READ`` times as many rows as that,
        those with the least lower bounds of the cost (``least``: at some rows, for the job's hours)
        among the first rows by key and by floor (a long job's least cost follows the key, a short one's the
        floor: a day package's is past an hour's cost, however low its key)."""
        chosen = _FIRST_READ * count
        if self.by_floor is None:
            return self.rows[:chosen]
        read = _FIRST_READ * chosen
        pool = unique_sorted(np.concatenate((self.rows[:read], self.by_floor[:read])), runs=False)
        if pool.size <= chosen:
            return pool
        found: IntArray = pool.take(np.argpartition(least(pool), chosen - 1)[:chosen])
        return found


@dataclass(frozen=True, slots=True)
class RowOrder:
    """Every row by its cost key and by its hours key, the rows without the spot risk by each again,
    each row's cost floor, and the largest speed (the least one-card hours are the job's hours over
    it)."""

    by_key: tuple[_Ordered, _Ordered]  # cost, hours
    safe_by_key: tuple[_Ordered, _Ordered]
    floors: FloatArray
    fastest_speed: float
    # The last seed figures per kind of seeding (how many, whether a safe key is seeded and which): the
    # job's hours, and the count-th least cost, hours and safe key found then. A guess the next request
    # checks (``OrderedBounds.seeds``): which rows seed the thresholds never changes an answer.
    hints: dict[Hashable, tuple[float, tuple[float, float, float]]] = field(default_factory=dict)


class WholeBounds:
    """Every row's bounds worked out (``pruning.row_bounds``), read as ``OrderedBounds`` reads its own."""

    __slots__ = ("bounds",)

    def __init__(self, bounds: RowBounds) -> None:
        self.bounds = bounds

    def seeds(self, request: QuoteRequest, safe: SafeRows) -> tuple[IntArray, IntArray]:
        return seed_rows(self.bounds, request, safe)

    def within_cost(self, cost: float) -> IntArray:
        """The rows (ascending) whose cost bound is not past ``cost`` (a NaN bound is not past it)."""
        return np.flatnonzero(~(self.bounds.cost > cost))

    def kept(
        self, thresholds: Thresholds, request: QuoteRequest, safe: SafeRows
    ) -> tuple[IntArray, IntArray]:
        return kept_rows(self.bounds, thresholds, request, safe)


class OrderedBounds:
    """The bounds of the rows a question reads, found by the job's hours along a ``RowOrder``;
    ``whole`` works out every row's, for a question whose figures are infinite."""

    __slots__ = (
        "_hours",
        "_least",
        "_matching",
        "_one_card_hours",
        "_order",
        "_speed",
        "_speeds",
        "_tables",
        "_terms",
        "_whole",
        "_whole_bounds",
    )

    def __init__(
        self,
        tables: OfferTables,
        speeds: tuple[RowSpeedups, HoldingTerms, RowOrder, FloatArray],
        hours: tuple[float, FloatArray],
        matching: BoolArray,
        whole: Callable[[], RowBounds],
    ) -> None:
        self._tables = tables
        self._speeds, self._terms, self._order, self._speed = speeds
        self._hours, self._one_card_hours = hours
        self._least = self._hours / self._order.fastest_speed  # every row's one-card hours' least
        self._matching = matching
        self._whole = whole
        self._whole_bounds: WholeBounds | None = None

    def covering(
        self, cost: float, hours: float, safe: tuple[int, float] | None = None
    ) -> tuple[IntArray, RowBounds]:
        """Rows (ascending) holding every row whose cost bound is within ``cost`` or whose hours bound is
        within ``hours``, and with ``safe`` (a key, 0 cost or 1 hours, and a figure) every row without
        the spot risk whose bound of that key is within that figure; and their bounds."""
        order, job_hours, floors = self._order, self._hours, self._order.floors
        found = [
            order.by_key[_COST].within(cost, job_hours, floors),
            order.by_key[_HOURS].within(hours, job_hours, floors),
        ]
        if safe is not None:
            found.append(order.safe_by_key[safe[0]].within(safe[1], job_hours, floors))
        rows = unique_sorted(np.concatenate(found), runs=False)
        return rows, self._bounds_at(rows)

    def _bounds_at(self, rows: IntArray) -> RowBounds:
        """The bounds of ``rows`` (``pruning.bounds_at``)."""
        hours = (self._one_card_hours, self._least)
        return bounds_at(self._tables, self._speeds, self._terms, hours, self._matching, rows)

    def every_row(self) -> WholeBounds:
        """Every row's bounds, worked out once (for a question whose figures are infinite)."""
        found = self._whole_bounds
        if found is None:
            found = self._whole_bounds = WholeBounds(self._whole())
        return found

    def seeds(self, request: QuoteRequest, safe: SafeRows) -> tuple[IntArray, IntArray]:
        """``pruning.seed_rows`` over every row, read over the rows within a figure of each key that at
        least ``count`` rows are within (so the ``count`` least are)."""
        count = seed_count(request)
        safe_key = None if not safe.any_spot else (_HOURS if request.rank_by == "time" else _COST)
        hint_key = (count, safe_key)
        hinted = self._hinted(hint_key)
        for given in (hinted, None) if hinted is not None else (None,):
            figures = self._read_first(count, safe, safe_key) if given is None else given
            if not all(figure < np.inf for figure in figures):
                break
            safe_figure = None if safe_key is None else (safe_key, figures[2])
            rows, bounds = self.covering(figures[0], figures[1], safe_figure)
            safe_at = safe.rows.take(rows)
            least = (
                _least_within(bounds.cost, count, None),
                _least_within(bounds.hours, count, None),
                -np.inf
                if safe_key is None
                else _least_within((bounds.cost, bounds.hours)[safe_key], count, safe_at),
            )
            # At least ``count`` rows within each figure: the ``count`` least of every row are within it.
            if all(found <= figure for found, figure in zip(least, figures, strict=True)):
                self._order.hints[hint_key] = (self._hours, least)
                whole, fastest = seeds_within(bounds, request, SafeRows(safe_at, safe.any_spot), least)
                return rows.take(whole), rows.take(fastest)
        return self.every_row().seeds(request, safe)

    def _hinted(self, hint_key: Hashable) -> tuple[float, float, float] | None:
        """The last seed figures of this kind, scaled by the job's hours (the hours bounds in proportion,
        the cost's about so: a short job's floors keep its cost from falling as far, and its figures are
        then read again), or None."""
        found = self._order.hints.get(hint_key)
        if found is None:
            return None
        last_hours, (cost, hours, safe) = found
        growth = self._hours / last_hours
        wider = growth * (1.0 + _HINT_MARGIN)
        return cost * wider, hours * growth * (1.0 + _KEY_MARGIN), safe * wider

    def _read_first(self, count: int, safe: SafeRows, safe_key: int | None) -> tuple[float, float, float]:
        """Seed figures read off a few rows with the least bounds of each key (``_Ordered.first``): each
        key's ``count``-th least among them, +inf with fewer."""
        order, job_hours = self._order, self._hours
        first = [ordered.first(count, job_hours, self._least_cost) for ordered in order.by_key]
        if safe_key is not None:
            first.append(order.safe_by_key[safe_key].first(count, job_hours, self._least_cost))
        rows = unique_sorted(np.concatenate(first), runs=False)
        bounds = self._bounds_at(rows)
        safe_least = -np.inf
        if safe_key is not None:
            safe_least = _least_within((bounds.cost, bounds.hours)[safe_key], count, safe.rows.take(rows))
        return _least_within(bounds.cost, count, None), _least_within(bounds.hours, count, None), safe_least

    def _least_cost(self, rows: IntArray) -> FloatArray:
        """At ``rows``, a lower bound of the cost bound: the key's share of it, and the floor."""
        terms, speed = self._terms, self._speed
        keys = terms.time_rate.take(rows) / speed.take(rows)
        least: FloatArray = np.maximum(keys * self._hours, self._order.floors.take(rows))
        return least

    def within_cost(self, cost: float) -> IntArray:
        """The rows (ascending) whose cost bound is not past ``cost``."""
        if not np.isfinite(cost):
            return self.every_row().within_cost(cost)
        rows, bounds = self.covering(cost, -np.inf)
        found: IntArray = rows[bounds.cost <= cost]
        return found

    def kept(
        self, thresholds: Thresholds, request: QuoteRequest, safe: SafeRows
    ) -> tuple[IntArray, IntArray]:
        """``pruning.kept_rows`` over every row, read over the rows within the thresholds."""
        wider = None if thresholds.safe_key is None else (thresholds.safe_key, thresholds.safe)
        figures = (thresholds.cost, thresholds.hours, -np.inf if wider is None else wider[1])
        if not all(figure < np.inf for figure in figures):
            return self.every_row().kept(thresholds, request, safe)
        rows, bounds = self.covering(thresholds.cost, thresholds.hours, wider)
        safe_at = SafeRows(safe.rows.take(rows), safe.any_spot)
        whole, fastest = kept_rows(bounds, thresholds, request, safe_at)
        return rows.take(whole), rows.take(fastest)


def _least_within(values: FloatArray, count: int, mask: BoolArray | None) -> float:
    """The ``count``-th least of ``values`` (where ``mask`` is set), +inf with fewer finite ones."""
    if mask is not None:
        values = values[mask]
    finite = values[np.isfinite(values)]
    return kth_least(finite, count) if finite.size >= count else np.inf


def ordered_bounds(
    tables: OfferTables,
    speeds: tuple[RowSpeedups, HoldingTerms],
    hours: tuple[tuple[float, FloatArray] | None, FloatArray, FloatArray | None],
    request: QuoteRequest,
    matching: BoolArray,
    whole: Callable[[], RowBounds],
) -> OrderedBounds | None:
    """The ``OrderedBounds`` of a request whose bounds are the job's hours times its rows' figures
    (module docstring; ``hours``: the job's hours and every row's speed, None for hours given whole, the
    expected one-card hours and the extra hours), once its order is sorted; None otherwise."""
    quotient, one_card_hours, extra_hours = hours
    if quotient is None or extra_hours is not None or request.rank_by == "value":
        return None
    job_hours, speed = quotient
    if not (np.isfinite(job_hours) and job_hours > 0) or np.count_nonzero(matching) < matching.size // 2:
        return None
    row_speeds, terms = speeds
    order = _row_order(tables, row_speeds, terms, speed)
    if order is None or not job_hours / order.fastest_speed > terms.untolerated_from:
        return None
    speeds_of = (row_speeds, terms, order, speed)
    return OrderedBounds(tables, speeds_of, (job_hours, one_card_hours), matching, whole)


def _row_order(
    tables: OfferTables, speeds: RowSpeedups, terms: HoldingTerms, speed: FloatArray
) -> RowOrder | None:
    """The order of the rows under ``speeds`` and ``terms`` at ``speed`` (per row), once it is sorted;
    None before, and where the figures could make a NaN (``_usable``). Sorting costs what some dozens of
    passes over every row cost, so an order is sorted once it has been asked for ``_SORTED_FROM``
    times since it was last sorted (a shape asked a few times, or one of many shapes taking turns,
    never pays for it)."""
    # The speeds are a row of the conversion's array, kept per conversion: a view, new at every request.
    held = (terms, speed if speed.base is None else speed.base)
    orders = _ORDERS.of(speeds.memos)
    found = found_by_identity(orders, held)
    if found is not None:
        return found if isinstance(found, RowOrder) else None
    asked = kept_by_identity(_ASKED.of(speeds.memos), held, lambda: [0])
    asked[0] += 1
    if asked[0] < _SORTED_FROM:
        return None
    asked[0] = 0
    made = kept_by_identity(orders, held, lambda: _sorted(tables, speeds, terms, speed))
    return made if isinstance(made, RowOrder) else None


def _sorted(
    tables: OfferTables, speeds: RowSpeedups, terms: HoldingTerms, speed: FloatArray
) -> RowOrder | bool:
    """The ``RowOrder``, or False where the figures could make a NaN (``_usable``). A row's cost floor:
    with its hours past its tolerated hours (as ``ordered_bounds`` asks), it bills at least a granule
    and its minimum, at its billed rate. Three sorts: the rows without the spot risk keep the order."""
    if not _usable(tables, speeds, terms, speed):
        return False
    with np.errstate(divide="ignore"):
        cost_keys = terms.time_rate / speed
        hours_keys = 1.0 / speed / speeds.fastest
    floors = np.maximum(tables.granularity_hours, tables.min_billed_hours) * terms.billed_rate
    safe = ~tables.interruptible
    by_cost, by_hours, by_floor = (np.argsort(keys) for keys in (cost_keys, hours_keys, floors))

    def ordered(rows: IntArray, keys: FloatArray, by_floors: IntArray | None) -> _Ordered:
        return _Ordered(
            frozen(rows), frozen(keys.take(rows)), None if by_floors is None else frozen(by_floors)
        )

    def safe_only(rows: IntArray) -> IntArray:
        found: IntArray = rows[safe.take(rows)]
        return found

    return RowOrder(
        by_key=(ordered(by_cost, cost_keys, by_floor), ordered(by_hours, hours_keys, None)),
        safe_by_key=(
            ordered(safe_only(by_cost), cost_keys, safe_only(by_floor)),
            ordered(safe_only(by_hours), hours_keys, None),
        ),
        floors=frozen(floors),
        fastest_speed=float(speed.max()),
    )


def _usable(tables: OfferTables, speeds: RowSpeedups, terms: HoldingTerms, speed: FloatArray) -> bool:
    """Whether no bound can be NaN: positive finite speeds (finite one-card hours, above 0), time rates
    that are numbers, at least 0 (+inf: no count of the row holds the model), finite speed-ups of at
    least 0, finite positive granules and finite minimums and billed rates of at least 0 (+inf hours
    then bill +inf, and no figure is 0 times +inf)."""

    def finite_from(figure: FloatArray, least: float, *, above: bool = False) -> bool:
        with np.errstate(invalid="ignore"):
            return bool((np.isfinite(figure) & ((figure > least) if above else (figure >= least))).all())

    with np.errstate(invalid="ignore"):
        time_rates = not np.isnan(terms.time_rate).any() and bool((terms.time_rate >= 0).all())
    return (
        time_rates
        and finite_from(speed, 0.0, above=True)
        and finite_from(speeds.fastest, 0.0)
        and finite_from(tables.granularity_hours, 0.0, above=True)
        and finite_from(tables.min_billed_hours, 0.0)
        and finite_from(terms.billed_rate, 0.0)
    )


# Per rule's speed-ups: how often each conversion and memory need was asked for since its order was last
# sorted, and the orders sorted (about 7 MB each at 96,000 offers).
_ASKED: MemoSlot[Hashable, tuple[tuple[object, ...], list[int]]] = MemoSlot("row orders asked for", size=16)
_ORDERS: MemoSlot[Hashable, tuple[tuple[object, ...], RowOrder | bool]] = MemoSlot("row orders", size=3)
# An order is sorted once it has been asked for this many times since it was last sorted.
_SORTED_FROM = 32
