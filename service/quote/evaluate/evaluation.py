"""Every (card count × offer) candidate a response can read evaluated and billed at once, cell by cell.

Each bound of speed-up, hours and cost (low / expected / high) is worked out here, once, for every
candidate; the quotes a response returns are gathered from these arrays, never billed again.

Stages, one word each (a candidate is one offer at one card count):

- ``matching`` (per offer): inside the request's gpus/regions/cities/vendors/pricing/min memory, and, when hours
  must be converted, its GPU is in the catalog. Failing this counts as ``filters``.
- ``possible``: matching, and the offer supplies exactly n cards (machine size, bundle multiples, node
  limits, stock: else ``capacity``) that hold the model (else ``memory``; both may count).
- ``runnable``: possible at a price the engine may use: fresh, or stale when no fresh candidate qualifies
  (``stale`` counts the stale ones left out, only when fresh candidates qualified).
- ``qualifying``: runnable, within the deadline and budget (``deadline``, ``budget``) and at a card count
  the caller asked for: the candidates ranked and returned.

Deadline and budget compare the expected figures as the response shows them (hours to 0.01 h, money to
the fen, rounded by the same ``cents_array`` that rounds the quotes), so a returned quote never shows a
figure past a limit. ``excluded`` counts only the card counts the caller asked for.

Hours on one card of an offer's GPU are a range too when they are converted from ``reference_gpu``: the
catalog's speed range between the two models (``adapters.gpus.conversion_range``), or the caller's
measured ratio (``workload.speed_ratios``) where given. The low bound pairs the optimistic conversion with
the optimistic scaling end, the high bound the pessimistic with the pessimistic; deadline and budget still
judge the expected figures, and a quote whose high end passes them says so.

The one-card column is always evaluated, asked for or not, so the summary can say what a single card
would cost and take.

Interruptions (``model.interruptions``: failing hardware, spot capacity taken back) leave the low and
expected bounds alone: the high end's hours add a bad-luck count of them, each the work since the last
checkpoint and a restart, and its cost is billed on those hours. A limit judged on the high end
(``deadline_confidence``, ``budget_confidence``) reads the high end of every candidate, so then it is
billed for every cell (``bounds.high_everywhere``) rather than for the returned quotes alone; a limit
judged on the expected figures reads the high ends of the candidates the response names (the
recommendation, and the top of the ranking among its plans with no risk of passing it: ``high_ok``),
billed for those alone (``_high_figures``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import msgspec
import numpy as np

from adapters.gpus import GpuCatalog
from schemas.quote import Excluded, QuoteRequest, RankBy
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen, unique_sorted
from service.quote.base.memo import MemoSlot
from service.quote.base.paths import FastPaths
from service.quote.evaluate.bounds import BoundTerms, bounds_at, high_everywhere
from service.quote.evaluate.conversion import gpu_facts, known_hours, one_card_hours_of
from service.quote.evaluate.fastest import fastest_speedups
from service.quote.evaluate.fewest import FewestKey
from service.quote.evaluate.fewest import fewest_cards as fewest_cards_of
from service.quote.evaluate.figures import (
    Figure,
    add_data_fees,
    bill,
    expected_figures,
    fees_per_offer,
    price_plan_cells,
    unknown_hours,
)
from service.quote.evaluate.filters import filter_mask
from service.quote.evaluate.judge import (
    BilledAt,
    FigureRows,
    HighWithin,
    judge,
    limit_rows,
    limits_of,
    single_card_eligible,
    within_however_shown,
)
from service.quote.evaluate.known import KnownCandidates
from service.quote.evaluate.layout import GatheredSpeedups, Layout, cached_layout
from service.quote.evaluate.locality import copy_hours, elsewhere
from service.quote.evaluate.losses import bills_every_high_end, loss_terms
from service.quote.evaluate.ordered import OrderedBounds, WholeBounds, ordered_bounds
from service.quote.evaluate.placed import PlacedRows, placed_rows, prunes_placed
from service.quote.evaluate.pruning import (
    RowBounds,
    RowSpeedups,
    Thresholds,
    cheapest_single_card,
    holding_terms,
    kept_rows,
    key_thresholds,
    prunes,
    prunes_but_for_limits,
    prunes_by_limits,
    row_bounds,
    row_speedups,
    rows_within_reach,
    safe_rows,
    thresholds_of,
    widened,
)
from service.quote.evaluate.row_judge import judged_by_row
from service.quote.jobs import AskedFor, CandidateRows, Candidates, SpeedupRule
from service.quote.jobs.deadline import prepare_deadline_counts
from service.quote.jobs.serving import replica_throughput
from service.quote.model.billing import billed_hours
from service.quote.model.interruptions import (
    DEFAULT_GPU_HOURS_BETWEEN_FAILURES,
    DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
    LossTerms,
    high_count_at_most,
)
from service.quote.model.one_card import OneCardHours
from service.quote.model.scaling import ScalingColumns
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["Evaluation", "Figure", "evaluate", "prepare_whole_billing"]


class Evaluation(msgspec.Struct, frozen=True):
    """Per-offer columns ``(offers,)``, and per billed cell (``cells``) the masks and figures.

    A cell is one offer at one card count; ``cells`` holds the billed ones as flat positions of the
    (counts × offers) grid, ascending (``_layout``): every candidate that can be quoted is among them.
    """

    counts: tuple[int, ...]
    cards: FloatArray  # (counts,) the same, as floats
    one_card_column: int
    cells: IntArray  # (cells,) flat (counts × offers) positions
    cell_offer: IntArray  # (cells,) the offer of each
    one_card_hours: OneCardHours  # low / expected / high hours on one card of each offer's GPU
    conversion: FloatArray  # (3, offers) low / expected / high speed over the reference GPU; 1 unconverted
    min_cards: FloatArray  # (offers,) memory minimum, 1 without a memory check
    stale: BoolArray  # (offers,)
    matching: BoolArray  # (offers,)
    # (Figure, cells): the low and high bounds' rows only where billed up front (``figures_at``: all)
    figures: FloatArray
    # Speed-ups as (counts × columns) tables and each offer's column (its machine size and interconnect),
    # with each column's curve and cross-node factor, for the figures and the notes.
    scaling: ScalingColumns
    runnable: BoolArray  # (cells,)
    qualifying: BoolArray  # (cells,)
    used_stale: bool
    excluded: Excluded
    bounds: BoundTerms  # what the low and high bounds of the returned cells are billed from
    losses: LossTerms  # what interrupts each candidate, and what an interruption adds to its hours
    # Whether a cell's high end is within every limit (None without a deadline or budget): plans with no
    # risk of passing them (``judge``), read at the qualifying cells a response names
    high_ok: HighWithin | None = None
    remote: BoolArray | None = None  # (offers,) outside ``workload.data_city``
    machines: FloatArray | None = None  # (cells,) the machines a placement takes (serving, runs)
    replica_tokens_per_s: FloatArray | None = None  # (3, offers) what one replica serves, for a target
    piece_cards: FloatArray | None = (
        None  # (offers,) the cards of one replica or run (``JobKind.piece_cards``)
    )
    # A pruned evaluation (``evaluate.pruning``) holds the cells of some offers only; every offer with a
    # qualifying cell, judged over all of them, is then given here.
    quoted_offers: BoolArray | None = None

    def one_card_at(self) -> tuple[slice | IntArray, IntArray]:
        """The one-card column's cells (positions among ``cells``, one run of them) and their offers: every
        offer's, in offer order (billed whole, ``_layout``), or those billed: the offers billed, pruned,
        or the rows whose one-card cell can be the single card (``LayoutInputs.one_card_rows``)."""
        offers = self.one_card_hours.size
        # The cells are ascending, so the column's are one run of them.
        first, end = np.searchsorted(
            self.cells, (self.one_card_column * offers, (self.one_card_column + 1) * offers)
        )
        if end - first == offers:
            return slice(int(first), int(end)), np.arange(offers)
        return slice(int(first), int(end)), self.cell_offer[first:end]

    def cell_at(self, columns: IntArray, offers: IntArray) -> IntArray:
        """The cells of offers ``offers`` at count columns ``columns`` (each a billed cell)."""
        return self.cells_at(columns * self.one_card_hours.size + offers)

    def cells_at(self, positions: IntArray) -> IntArray:
        """The cells at flat (counts × offers) ``positions`` (each a billed cell)."""
        if self.cells.size == len(self.counts) * self.one_card_hours.size:
            return positions  # every cell billed
        at: IntArray = np.searchsorted(self.cells, positions)
        return at

    def cell(self, column: int, offer: int) -> int:
        """The cell of offer ``offer`` at count column ``column`` (a billed cell)."""
        return int(np.searchsorted(self.cells, column * self.one_card_hours.size + offer))

    def figures_at(
        self,
        tables: OfferTables,
        columns: IntArray,
        offers: IntArray,
        speedups: tuple[FloatArray, FloatArray],
    ) -> FloatArray:
        """``(Figure, cells)``: every figure of offers ``offers`` at count columns ``columns``, whose
        high and low speed-ups the caller gathered as ``speedups``."""
        cells = self.cell_at(columns, offers)
        figures: FloatArray = self.figures.take(cells, axis=1)
        bounds_at(tables, self.bounds, figures, cells, offers, speedups, self.cards.take(columns))
        return figures

    def offers_qualifying(self) -> BoolArray:
        """``(offers,)``: whether any count of the offer qualifies."""
        if self.quoted_offers is not None:
            return self.quoted_offers
        quoted = np.zeros(self.one_card_hours.size, dtype=np.bool_)
        quoted[self.cell_offer[self.qualifying]] = True
        return quoted

    @property
    def hours_expected(self) -> FloatArray:
        hours: FloatArray = self.figures[Figure.HOURS_EXPECTED]
        return hours

    @property
    def cost_expected(self) -> FloatArray:
        cost: FloatArray = self.figures[Figure.COST_EXPECTED]
        return cost

    def limit_figures(self, request_rows: tuple[Figure, Figure]) -> tuple[FloatArray, FloatArray]:
        """``(cells,)`` hours and cost as the request's limits judge them (``judge.limit_rows``)."""
        hours_row, cost_row = request_rows
        return self.figures[hours_row], self.figures[cost_row]


_ALL_FAST = FastPaths()


def _stale(tables: OfferTables, now_s: float, price_max_age_s: float) -> BoolArray:
    """``(rows,)``: whether each price is older than ``price_max_age_s`` at ``now_s``. An age only falls
    as the fetch time grows, so when the oldest price is within the age (the usual case) none is past it:
    one read-only array of False per table, not a pass over every row."""
    oldest_s, none_stale = _OLDEST.of(tables.memos).get(
        0,
        lambda: (
            float(np.nanmin(tables.fetched_at_s, initial=np.inf)),
            frozen(np.zeros(tables.size, dtype=np.bool_)),
        ),
    )
    if not (now_s - oldest_s) > price_max_age_s:
        return none_stale
    stale: BoolArray = (now_s - tables.fetched_at_s) > price_max_age_s
    return stale


# Per table, its oldest fetch time and a row mask of False (no price stale).
_OLDEST: MemoSlot[int, tuple[float, BoolArray]] = MemoSlot("oldest price", size=1)


_NO_FIGURES: FloatArray = np.empty((len(Figure), 0))  # judged without limits: no figure is read


@dataclass(frozen=True, slots=True)
class _Request:
    """What every part of one evaluation reads: the request's per-offer figures and its layout."""

    tables: OfferTables
    resolved: ResolvedRequest
    conversion: FloatArray
    one_card_hours: OneCardHours
    matching: BoolArray
    stale: BoolArray
    fewest_cards: FloatArray
    fewest_key: FewestKey  # what is kept per memory need is kept by (``evaluate.fewest``)
    replica_tps: FloatArray | None
    layout: Layout
    scaling: ScalingColumns  # the rule's speed-ups at the layout's counts, per column
    remote: BoolArray
    extra_hours: FloatArray | None
    losses: LossTerms
    fees: tuple[FloatArray, FloatArray] | None
    rule: SpeedupRule

    @property
    def billed_losses(self) -> LossTerms | None:
        return self.losses if self.losses.lost_hours > 0 else None


@dataclass(frozen=True, slots=True)
class _Billed:
    """One layout's cells billed: their figures, which are quoted, and what their bounds need."""

    layout: Layout
    figures: FloatArray
    requested: BoolArray
    plan_keep: BoolArray | None
    bounds: BoundTerms


def _bill(job: _Request, layout: Layout, speedups: GatheredSpeedups | None = None) -> _Billed:
    """The figures of ``layout``'s cells (the request's own, or some of its rows', whose speed-ups are
    ``speedups``), and the combined plans there quoted only where they beat every product they combine."""
    tables, request = job.tables, job.resolved.request
    if speedups is None:
        speedups = layout.gathered(job.rule, tables)
    losses = job.billed_losses
    figures = bill(tables, layout, job.one_card_hours, speedups, job.extra_hours, losses)
    requested = layout.requested
    keep = None
    if layout.plans is not None:
        # Combined plans: the cheapest combination of packages and card-hours for the expected hours,
        # quoted only where it beats every product it combines on its own.
        keep = price_plan_cells(tables, layout.plans, figures, speedups)
        requested = requested.copy()
        requested[layout.plans.at] &= keep
    add_data_fees(figures, layout.cell_offer, job.fees, every_bound=layout.bounds_up_front)
    bounds = BoundTerms(
        billed=layout.bounds_up_front,
        one_card_hours=job.one_card_hours,
        extra_hours=job.extra_hours,
        fees=job.fees,
        plans=layout.plans,
        losses=losses,
    )
    if bills_every_high_end(request):
        low = layout.low_speedups(job.rule if layout is job.layout else None, speedups)
        high_everywhere(tables, bounds, figures, layout, low)
    return _Billed(layout, figures, requested, keep, bounds)


def _high_figures(job: _Request, billed: _Billed) -> Callable[[IntArray], FloatArray] | None:
    """The figures, high end billed, of the billed cells at some positions, as the returned quotes are
    billed (``bounds_at``), for ``judge`` to bill the candidates within its limits; None when ``billed``
    holds every cell's high end."""
    layout = billed.layout
    if billed.bounds.billed or bills_every_high_end(job.resolved.request):
        return None
    tables, figures, scaling = job.tables, billed.figures, job.scaling

    def at(positions: IntArray) -> FloatArray:
        offers = layout.cell_offer.take(positions)
        columns = layout.cells.take(positions) // tables.size
        speedup_at = scaling.at(columns, offers)
        chosen: FloatArray = figures.take(positions, axis=1)
        speedups = (scaling.high.take(speedup_at), scaling.low.take(speedup_at))
        bounds_at(tables, billed.bounds, chosen, positions, offers, speedups, layout.cards.take(columns))
        return chosen

    return at


def _leads_before(job: _Request, layout: Layout) -> FloatArray | None:
    """The lead times at ``layout``'s cells, which pass before the deadline's hours; None without a
    deadline or a lead time anywhere."""
    lead = job.tables.lead_time_h
    return layout.at_cells(lead) if job.resolved.request.deadline_hours is not None and lead.any() else None


def _billed_high_ends(job: _Request, billed: _Billed, before: FloatArray | None) -> HighWithin:
    """Whether the billed cells' high ends meet the request's limits, read at the cells asked for: billed
    for those cells (``_high_figures``), or read off the bill when it holds every billed cell's; ``before``:
    the lead times at the billed cells (``_leads_before``), which ``HighWithin.at`` reads."""
    figures = billed.figures
    high_figures = _high_figures(job, billed) or (lambda positions: figures.take(positions, axis=1))
    return HighWithin(limits_of(job.resolved.request, before), high_figures=high_figures)


def _judged(
    job: _Request,
    layout: Layout,
    figures: FigureRows,
    requested: BoolArray,
    high_figures: Callable[[IntArray], FloatArray] | None = None,
    *,
    lead_added: bool = False,
) -> tuple[BoolArray, BoolArray, bool, Excluded, HighWithin | None]:
    """``judge`` over ``layout``'s cells: the masks of the request's filters, capacity, memory and stale
    prices per cell; ``high_figures``: see ``judge``; ``lead_added``: the hours judged hold the lead
    times already."""
    tables, request, fewest_cards = job.tables, job.resolved.request, job.fewest_cards
    # An offer whose most cards cannot hold the model fails on memory at every count; per cell only
    # when some count below the most cards does not hold it.
    memory_ok = _per_cell(layout, fewest_cards <= tables.max_units * tables.unit_cards, True)
    if fewest_cards.max(initial=1.0) > layout.cards[0]:
        holds = layout.cell_cards >= layout.at_cells(fewest_cards)
        memory_ok = holds if memory_ok is None else memory_ok & holds
    return judge(
        request,
        figures,
        requested,
        (
            _per_cell(layout, job.matching, True),
            layout.supplies,
            memory_ok,
            _per_cell(layout, job.stale, False),
        ),
        None if lead_added else _leads_before(job, layout),
        high_figures,
    )


def _per_cell(layout: Layout, mask: BoolArray, usual: bool) -> BoolArray | None:
    """``mask`` (per offer) at each of ``layout``'s cells; None when every offer has the ``usual`` value
    (``judge`` takes None: nothing to gather)."""
    if mask.all() if usual else not mask.any():
        return None
    return layout.at_cells(mask)


def _evaluation(
    job: _Request,
    billed: _Billed,
    judged: tuple[BoolArray, BoolArray, bool, Excluded, HighWithin | None],
    *,
    quoted_offers: BoolArray | None = None,
) -> Evaluation:
    layout = billed.layout
    runnable, qualifying, used_stale, excluded, high_ok = judged
    return Evaluation(
        counts=layout.counts,
        cards=layout.cards,
        one_card_column=layout.one_card_column,
        cells=layout.cells,
        cell_offer=layout.cell_offer,
        one_card_hours=job.one_card_hours,
        conversion=job.conversion,
        min_cards=job.fewest_cards,
        stale=job.stale,
        matching=job.matching,
        figures=billed.figures,
        scaling=job.scaling,
        runnable=runnable,
        qualifying=qualifying,
        used_stale=used_stale,
        excluded=excluded,
        bounds=billed.bounds,
        losses=job.losses,
        high_ok=high_ok,
        remote=job.remote,
        machines=layout.machines,
        replica_tokens_per_s=job.replica_tps,
        piece_cards=job.resolved.kind.piece_cards(job.tables, job.resolved.job, job.fewest_cards),
        quoted_offers=quoted_offers,
    )


def _merged(first: IntArray, second: IntArray) -> IntArray:
    """The positions in either ascending array, ascending, once each."""
    return unique_sorted(np.concatenate((first, second)))


def _within(first: IntArray, second: IntArray) -> bool:
    """Whether every position of ``first`` is in ``second`` (each ascending, once each): their merge
    (``_merged``'s) then holds as many positions as ``second``. Faster than ``np.isin`` here, whose
    lookup table spans the positions' range (a million cells at 96,000 offers)."""
    return first.size <= second.size and _merged(second, first).size == second.size


# Past this share of a layout's cells, billing the rows the bounds keep (their cells gathered into a
# layout of their own, each billed cell by cell) costs more than billing the whole layout: a 235B model's
# full fine-tune at 96,000 offers kept 83 % of the cells, 0.35 s pruned against 0.1 s whole.
_WHOLE_BILL_SHARE = 0.25


def _requested_quoting_plans(layout: Layout, subset: _Billed) -> BoolArray:
    """``layout``'s requested cells, its combined plans kept only where the billed ``subset`` quotes
    them (where each beats every product it combines)."""
    requested = layout.requested
    if subset.plan_keep is not None and layout.plans is not None:
        requested = requested.copy()
        requested[layout.plans.at] &= subset.plan_keep
    return requested


def _cells_within_hours(job: _Request, rows: IntArray, within_hours: float) -> IntArray:
    """Positions (ascending) of the cells of ``rows`` whose expected hours, as ``bill`` works them out,
    are within ``within_hours`` (a NaN figure kept: not known to be slower)."""
    at, _ = job.layout.cells_by_row(rows, job.tables)
    _, hours = _expected_hours_at(job, at)
    with np.errstate(invalid="ignore"):
        kept: IntArray = at[~(hours > within_hours)]
    kept.sort()
    return kept


def _expected_hours_at(job: _Request, at: IntArray) -> tuple[IntArray, FloatArray]:
    """The rows of the layout's cells at positions ``at``, and their expected hours as ``bill`` works
    them out (the same floats)."""
    offers = job.layout.cell_offer.take(at)
    hours = np.divide(job.one_card_hours.expected.take(offers), job.layout.expected_speedups(job.scaling, at))
    if job.extra_hours is not None:
        hours += job.extra_hours.take(offers)
    return offers, hours


def _needed_beside(
    job: _Request,
    needed: IntArray,
    billed: IntArray,
    rows: tuple[IntArray, IntArray, IntArray],
    thresholds: Thresholds,
) -> IntArray:
    """The cells to bill (``needed``: every cell of the rows kept whole and those of the rows kept for
    their hours within it), with the one-card cells of the rows that can be the single card; when they
    are not all among the cells ``billed`` first, the cells ``_reaching_cells`` finds instead.
    ``rows``: the rows kept whole, those kept for their hours, and the single card's."""
    with_single = _merged(needed, job.layout.one_card_cells(rows[2], job.tables))
    return with_single if _within(with_single, billed) else _reaching_cells(job, rows, thresholds)


def _reaching_cells(
    job: _Request, rows: tuple[IntArray, IntArray, IntArray], thresholds: Thresholds
) -> IntArray:
    """Positions (ascending) of the cells that can be returned: of the rows kept whole (``rows``' first),
    their candidates that can reach a threshold (``_cells_within_thresholds``); of the rows kept for
    their hours, the cells within the hours' threshold; of the single card's rows, their one-card cells."""
    kept, kept_fastest, single = rows
    within = _merged(
        _cells_within_thresholds(job, kept, thresholds), job.layout.one_card_cells(single, job.tables)
    )
    return _merged(within, _fastest_cells(job, kept_fastest, thresholds.hours))


def _cells_within_thresholds(job: _Request, rows: IntArray, thresholds: Thresholds) -> IntArray:
    """Positions (ascending) of the cells of ``rows`` that can reach one of ``thresholds``: what billing
    them whole (``kept_rows``: each row has some cell whose bounds may) returns of them. A cell's expected
    hours and its cost before fees are worked out as ``bill`` works them out (the same floats); fees only
    add, so that cost is at most its billed one, and the value's and the ranking key's are read off them.
    Of the other cells, only candidates (asked for, supplied, holding the model) are kept; every cell of
    a combined plan's row is (its cost is its cheapest combination's), and a candidate with a figure
    unknown (NaN: not known to be past any)."""
    layout, tables, request = job.layout, job.tables, job.resolved.request
    at = layout.cells_of(rows, tables)
    offers, hours = _expected_hours_at(job, at)
    with np.errstate(invalid="ignore", over="ignore"):
        billed = billed_hours(
            hours, tables.granularity_hours.take(offers), tables.min_billed_hours.take(offers)
        )
        cost = billed * (layout.units.take(at) * tables.unit_rate_cny_per_hour.take(offers))
        kept = ~(cost > thresholds.cost) | ~(hours > thresholds.hours)
        if np.isfinite(thresholds.value):
            time_value = request.time_value_cny_per_hour
            kept |= ~((cost if time_value is None else cost + time_value * hours) > thresholds.value)
        if thresholds.safe_key is not None:
            ranked = _ranking_key(request, cost, hours)
            kept |= ~(ranked > thresholds.safe) & safe_rows(tables).rows.take(offers)
        # Only a candidate is returned: a cell asked for, supplied and holding the model (each judged
        # again when billed); a combined plan's row keeps every cell.
        kept &= layout.requested.take(at) & layout.supplies.take(at)
        kept &= ~(layout.cell_cards.take(at) < job.fewest_cards.take(offers))
        kept |= offers >= tables.offer_count
    found: IntArray = at[kept]
    return found


def _fastest_cells(job: _Request, rows: IntArray, within_hours: float | None) -> IntArray:
    """Positions (ascending) of the cells of ``rows`` that only their hours can return: those within
    ``within_hours``, or, None, each row's fastest cells. A row whose fastest hours are within it and
    whose next fastest are past it has its fastest cells alone within it; any other row's cells are
    timed one by one."""
    fastest = fastest_speedups(job.layout, job.rule, job.scaling, job.tables)
    by_row = job.layout.rows_order(job.tables)
    top = fastest.top(rows)
    unknown = np.isnan(top)
    if within_hours is None:
        found = fastest.of(rows[~unknown], by_row)
        return _merged(found, _cells_within_hours(job, rows[unknown], np.inf)) if unknown.any() else found
    one_card, extra = job.one_card_hours.expected.take(rows), None
    if job.extra_hours is not None:
        extra = job.extra_hours.take(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        hours, next_hours = one_card / top, one_card / fastest.runner_up(rows)
        if extra is not None:
            hours += extra
            next_hours += extra
        timed = unknown | ~(next_hours > within_hours) | np.isnan(hours)
        alone = ~timed & ~(hours > within_hours)
    found = fastest.of(rows[alone], by_row)
    return _merged(found, _cells_within_hours(job, rows[timed], within_hours)) if timed.any() else found


def _bounds_of(
    tables: OfferTables,
    hours: tuple[FloatArray, FloatArray | None],
    matching: BoolArray,
    fewest: tuple[FewestKey, FloatArray],
) -> Callable[[RowSpeedups], RowBounds]:
    """The rows' bounds (``pruning.row_bounds``) for the expected one-card and extra ``hours``, the rows
    matching and the memory need's fewest cards (with their key), from the speed-ups they take."""

    def of(speeds: RowSpeedups) -> RowBounds:
        return row_bounds(tables, speeds, hours[0], hours[1], matching, fewest)

    return of


def _row_bounds(job: _Request) -> RowBounds:
    """The bounds of every row of the job's layout (``pruning.row_bounds``)."""
    hours = (job.one_card_hours.expected, job.extra_hours)
    bounds_of = _bounds_of(job.tables, hours, job.matching, (job.fewest_key, job.fewest_cards))
    return bounds_of(row_speedups(job.layout, job.tables, job.rule, job.scaling))


def _bounds_read(job: _Request) -> OrderedBounds | WholeBounds:
    """The bounds a pruned evaluation reads: along the rows' order where they are the job's hours times
    the rows' figures (``evaluate.ordered``), else every row's worked out."""
    speeds = row_speedups(job.layout, job.tables, job.rule, job.scaling)
    terms = holding_terms(job.tables, speeds, (job.fewest_key, job.fewest_cards))
    hours = (job.one_card_hours.quotient(), job.one_card_hours.expected, job.extra_hours)
    request = job.resolved.request

    def whole() -> RowBounds:
        return _row_bounds(job)

    ordered = ordered_bounds(job.tables, (speeds, terms), hours, request, job.matching, whole)
    return ordered if ordered is not None else WholeBounds(whole())


def _pruned(
    job: _Request,
    placed: PlacedRows | None = None,
    *,
    deadline_passes_nothing: bool = False,
    row_order: bool = False,
) -> Evaluation | None:
    """The evaluation billing only the rows whose lower bounds can reach what the response returns
    (``evaluate.pruning``), every cell judged; None when the bounds cannot settle it, or keep more than
    ``_WHOLE_BILL_SHARE`` of the cells (then every row is billed). ``placed``: a placed job judged on its
    grid, whose layout holds some rows alone (``evaluate.placed``): ``job``'s layout is its, and is built
    wider when the thresholds keep rows it does not hold. ``deadline_passes_nothing``: the request's
    deadline leaves no cell out (``_deadline_passes_nothing``), so it is judged as without it, its high
    ends aside (``_high_ends_within``); None when nothing qualifies (the limits' own path says why).
    ``row_order``: the bounds read along the rows' order where they can be (``_bounds_read``)."""
    tables, layout, request = job.tables, job.layout, job.resolved.request
    safe = safe_rows(tables)
    if placed is None:
        bounds = _bounds_read(job) if row_order else WholeBounds(_row_bounds(job))
        rows, fastest_rows = bounds.seeds(request, safe)
        column = slice(layout.one_card_column * tables.size, (layout.one_card_column + 1) * tables.size)
        one_card = (layout.one_card_column, layout.units[column])
    else:
        bounds, (rows, fastest_rows) = WholeBounds(placed.bounds), placed.seeds
        one_card = (layout.one_card_column, placed.one_card_units)
    first = _merged(layout.cells_of(rows, tables), _fastest_cells(job, fastest_rows, None))
    if placed is not None:
        first = _merged(first, placed.timed_cells())
    at, seeded, speedups = layout.subset_with_plans(first, job.rule, tables)
    billed = _bill(job, seeded, speedups)
    judgement = judged_by_row(
        layout,
        tables,
        (job.matching, job.stale, job.fewest_cards),
        job.fewest_key,
        billed.plan_keep,
        None if placed is None else placed.row_counts(job.fewest_cards),
    )
    runnable, qualifying = judgement.at(billed.layout, billed.requested)
    if judgement.qualifying_count == 0:
        if deadline_passes_nothing:
            return None
        # Nothing to rank: what is said of it reads the judgement, never the figures (as in
        # ``_limits_pruned``), so the cells billed first stand.
        judged = (runnable, qualifying, judgement.used_stale, judgement.excluded, None)
        return _evaluation(job, billed, judged, quoted_offers=judgement.quoted)
    single = cheapest_single_card(
        tables,
        one_card,
        job.scaling,
        (job.one_card_hours.expected, job.extra_hours, job.fees),
        judgement.one_card_runnable,
        (bounds.within_cost, rows),
    )
    thresholds = key_thresholds(
        request,
        (billed.figures[Figure.COST_EXPECTED], billed.figures[Figure.HOURS_EXPECTED]),
        qualifying,
        qualifying_everywhere=judgement.qualifying_count,
        spot=tables.interruptible.take(billed.layout.cell_offer),
        # A placed job's layout holds some rows alone: the single card's rows are billed whole there.
        single_cost=-np.inf if placed is None else single.cost,
        any_safe=bool((judgement.quoted & safe.rows).any()),
    )
    if thresholds is None:
        return None
    kept, kept_fastest = bounds.kept(thresholds, request, safe)
    whole_cells = layout.cells.size
    if placed is not None:
        whole_cells = placed.whole_cells
        wider = placed.holding(kept, (kept_fastest, thresholds.hours))
        if wider is not None:  # the seeded cells' positions are the narrower layout's: billed anew
            job = replace(job, layout=wider.layout)
            layout, at = wider.layout, np.empty(0, dtype=np.int64)
    needed = _merged(layout.cells_of(kept, tables), _fastest_cells(job, kept_fastest, thresholds.hours))
    if placed is None:
        needed = _needed_beside(job, needed, at, (kept, kept_fastest, single.rows), thresholds)
    if not _within(needed, at):
        if needed.size + layout.plan_cells(tables).size > _WHOLE_BILL_SHARE * whole_cells:
            return None  # the bounds keep most rows: billing the whole layout costs less
        _, kept_layout, speedups = layout.subset_with_plans(needed, job.rule, tables)
        billed = _bill(job, kept_layout, speedups)
    runnable, qualifying = judgement.at(billed.layout, billed.requested)
    judged = (runnable, qualifying, judgement.used_stale, judgement.excluded, None)
    if deadline_passes_nothing:
        return _high_ends_within(job, billed, judged, thresholds, judgement.quoted)
    return _evaluation(job, billed, judged, quoted_offers=judgement.quoted)


def _deadline_passes_nothing(job: _Request) -> bool:
    """Whether the request's deadline, its only limit (its budget's confidence the expected figures),
    leaves no cell of the job's layout out: every matching row's slowest hours there, as the deadline
    judges them (expected, or the high end by its confidence), are within it however shown
    (``judge.within_however_shown``). The slowest are the one-card hours over the least speed-up among
    the layout's counts (the expected one, or the low one with the most hours interruptions can add:
    ``_most_lost_hours``), with the copy's and the lead time:
    each cell's hours are the same quotient over a speed-up at least that one, with hours added that are
    at most those, so never more. Then the cells it judges are the ones without it, and ``_pruned`` bills
    what the response returns (a loose deadline on a large table otherwise works out every cell's hours
    and cost, ``_ranked_within_limits``, or bills every cell, its high end too)."""
    request = job.resolved.request
    deadline = request.deadline_hours
    hours_row, cost_row = limit_rows(request)
    # A budget judged on the high end, even one lifted to find the nearest option past it, reads every
    # candidate's high cost, which the rows a pruned evaluation bills do not bound.
    if deadline is None or request.budget_cny is not None or cost_row == Figure.COST_HIGH:
        return False
    high = hours_row == Figure.HOURS_HIGH
    one_card_hours, lead = (
        (job.one_card_hours.row(2) if high else job.one_card_hours.expected),
        job.tables.lead_time_h,
    )
    # Most deadlines leave some cell out, and the slowest one-card job, when it matches, tells at once
    # (its hours are one cell's at most: one card's speed-up is 1).
    slowest_row = int(np.argmax(one_card_hours))  # the first NaN, if any
    if (
        job.matching[slowest_row]
        and not within_however_shown(
            one_card_hours[slowest_row : slowest_row + 1] + lead[slowest_row], deadline
        ).all()
    ):
        return False
    scaling, rows = job.scaling, np.flatnonzero(job.matching)
    speedups = scaling.low if high else scaling.expected
    columns = scaling.code.take(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        slowest = one_card_hours.take(rows) / speedups.min(axis=0).take(columns)
        losses = job.billed_losses
        if high and losses is not None:
            slowest += _most_lost_hours(losses, job.layout.cards, speedups, (one_card_hours, rows, columns))
    if job.extra_hours is not None:
        slowest += job.extra_hours.take(rows)
    slowest += lead.take(rows)
    return bool(rows.size) and bool(within_however_shown(slowest, deadline).all())


def _most_lost_hours(
    losses: LossTerms, cards: FloatArray, low: FloatArray, at: tuple[FloatArray, IntArray, IntArray]
) -> FloatArray:
    """Per row ``rows`` (``at``: the high end's one-card hours, the rows, their speed-up columns), at least
    the hours interruptions add to any of its cells' high end: ``n`` cards interrupt at most ``n`` times
    the hardware's and one machine's spot rate, over ``H / s(n)`` hours, a mean at most ``H`` times the
    most ``n / s(n)`` among the counts (``low``: the low speed-ups, counts × columns) times that sum (a
    billionth more, past float noise), and the high count never falls as the mean rises."""
    one_card_hours, rows, columns = at
    per_card = losses.per_card_hour + (losses.spot_per_hour[2].take(rows) if losses.any_spot else 0.0)
    most_card_hours = (cards[:, None] / low).max(axis=0).take(columns)
    means = one_card_hours.take(rows) * most_card_hours * per_card * (1 + 1e-9)
    lost: FloatArray = high_count_at_most(means) * losses.lost_hours
    return lost


def _high_ends_within(
    job: _Request,
    billed: _Billed,
    judged: tuple[BoolArray, BoolArray, bool, Excluded, HighWithin | None],
    thresholds: Thresholds,
    quoted: BoolArray,
) -> Evaluation | None:
    """``_pruned``'s evaluation of a request whose deadline passes no cell, with whether the billed
    cells' high ends meet it (``HighWithin``: billed for the cells read, as ``_limits_pruned`` does);
    None when the first candidate free of risk (its high end within the deadline, on capacity no one
    takes back: ``assemble.extras.safe_position``) may rank past the rows billed: past the ranking key's
    threshold, and past the wider one the rows without the spot risk are billed up to, when there is
    one (``Thresholds.safe``); the limits' own path then bills up to it (``_up_to_risk_free``). None too
    when no billed candidate is free of risk."""
    request, high_ok = job.resolved.request, _billed_high_ends(job, billed, _leads_before(job, billed.layout))
    runnable, qualifying, used_stale, excluded, _ = judged
    reached = _ranking_threshold(thresholds, request.rank_by)
    if thresholds.safe_key is not None:
        reached = max(reached, thresholds.safe)
    risk_free = _risk_free_key(job, billed, qualifying, high_ok)
    if risk_free is None or risk_free > reached:
        return None
    return _evaluation(
        job, billed, (runnable, qualifying, used_stale, excluded, high_ok), quoted_offers=quoted
    )


def _ranking_threshold(thresholds: Thresholds, rank_by: RankBy) -> float:
    """The threshold of the ranking's own key: every candidate with a key within it is billed."""
    if rank_by == "time":
        return thresholds.hours
    if rank_by == "value":
        return thresholds.value
    return thresholds.cost


def _limits_pruned(job: _Request) -> Evaluation | None:
    """The evaluation billing only the rows that can meet the request's deadline or budget
    (``pruning.rows_within_reach``), the other rows' cells judged past them without figures; every cell
    judged. When those rows hold more than ``_WHOLE_BILL_SHARE`` of the cells, the rows the ranking can
    return are billed instead (``_ranked_within_limits``). None when neither way bills few enough cells.
    With no cell qualifying, what is said of it reads the judgement (every cell's) and evaluates again
    with each limit lifted (``nearest``), never this evaluation's figures: it stands as well."""
    tables, layout, request = job.tables, job.layout, job.resolved.request
    bounds = _row_bounds(job)
    rows = rows_within_reach(bounds, request.deadline_hours, request.budget_cny)
    if layout.cell_count(rows, tables) > _WHOLE_BILL_SHARE * layout.cells.size:
        return _ranked_within_limits(job, bounds)
    at, within_reach, speedups = layout.subset_with_plans(layout.cells_of(rows, tables), job.rule, tables)
    billed = _bill(job, within_reach, speedups)
    requested = _requested_quoting_plans(layout, billed)
    # The figures the limits judge at every cell, the deadline's after the lead time as ``judge`` adds
    # it: the billed cells', and past the limits everywhere else (the lead gathered for those alone).
    before = _leads_before(job, billed.layout)
    # A limit judged on the high end (its confidence) reads it at every cell, as it reads whether each
    # cell's high end meets every limit: the bill holds the billed cells' (``_bill``).
    high_figures = _high_figures(job, billed)
    hours_row, cost_row = limit_rows(request)
    judged_rows: dict[Figure, FloatArray | BilledAt] = {}
    for rows_read, limit, added in (
        (
            {hours_row, Figure.HOURS_HIGH} if high_figures is None else {hours_row},
            request.deadline_hours,
            before,
        ),
        ({cost_row, Figure.COST_HIGH} if high_figures is None else {cost_row}, request.budget_cny, None),
    ):
        for row in rows_read if limit is not None else ():
            with unknown_hours():
                shown = billed.figures[row] if added is None else billed.figures[row] + added
            judged_rows[row] = BilledAt(at, shown, layout.cells.size)
    judged = _judged(job, layout, judged_rows, requested, high_figures, lead_added=True)
    runnable, qualifying, used_stale, excluded, high_ok = judged
    qualifying = qualifying[at]
    quoted = np.zeros(tables.size, dtype=np.bool_)
    quoted[billed.layout.cell_offer[qualifying]] = True
    if high_ok is not None:  # read at the billed cells' positions, not the layout's
        high_ok = _billed_high_ends(job, billed, before)
    return _evaluation(
        job, billed, (runnable[at], qualifying, used_stale, excluded, high_ok), quoted_offers=quoted
    )


def _ranked_within_limits(job: _Request, bounds: RowBounds) -> Evaluation | None:
    """A deadline or a budget that most rows can meet: every cell's expected hours and cost worked out
    by themselves (``figures.expected_figures``, the same floats as the figure block's) and judged, and
    the figure block billed only for the rows holding a candidate within what the response returns,
    read off those very figures (``evaluate.known``; off the rows' bounds where one is unknown). The
    thresholds here are exact: the k-th best key among every candidate within the limits, the cheapest
    and fastest of them, and the single card the summary compares (``_single_cards_within``).

    A response also names the first candidate in its ranking without a risk (its high end within every
    limit, on capacity no one takes back: ``assemble.extras.safe_position``), which may rank far below
    the top. Every candidate up to it is billed: the rows holding one whose ranking key reaches the
    least key among the billed risk-free candidates (``_risk_free_key``) are added. None (the whole
    layout billed) when the layout bills its bounds up front or reads its one-card column past the
    dense counts, when a limit is judged on the high end (these are the expected figures), when no
    cell qualifies, when no billed candidate is free of risk, or when the rows
    to bill hold more than ``_WHOLE_BILL_SHARE`` of the cells."""
    tables, layout, request = job.tables, job.layout, job.resolved.request
    if layout.bounds_up_front or layout.dense <= layout.one_card_column or bills_every_high_end(request):
        return None
    hours, cost, keep = expected_figures(
        tables,
        layout,
        (job.one_card_hours.expected, job.extra_hours),
        layout.gathered(job.rule, tables),
        job.fees,
    )
    requested = layout.requested
    if keep is not None and layout.plans is not None:
        requested = requested.copy()
        requested[layout.plans.at] &= keep
    figures = {Figure.HOURS_EXPECTED: _hours_with_leads(job, hours), Figure.COST_EXPECTED: cost}
    runnable, qualifying, used_stale, excluded, _ = _judged(
        job, layout, figures, requested, _unbilled_high, lead_added=True
    )
    at_qualifying = np.flatnonzero(qualifying)
    if at_qualifying.size == 0:
        return None
    offers = layout.cell_offer.take(at_qualifying)
    quoted = np.zeros(tables.size, dtype=np.bool_)
    quoted[offers] = True
    spot = tables.interruptible.take(offers) if bool((quoted & safe_rows(tables).rows).any()) else None
    candidates = (cost.take(at_qualifying), hours.take(at_qualifying), spot)
    single = _single_cards_within(job, runnable, hours, cost)
    known = KnownCandidates.of((candidates[0], candidates[1], offers), single)
    # The single card's rows, known by their own cost, are billed at their one-card cell alone; else
    # (a figure unknown) every row whose bound is within its cost is billed whole.
    single_cost = float(single[1].min()) if single[1].size and known is None else -np.inf
    thresholds = thresholds_of(request, candidates, qualifying_everywhere=None, single_cost=single_cost)
    if thresholds is None:
        return None
    risk_free = None
    if spot is not None:
        risk_free = _least_risk_free_key(job, at_qualifying, (candidates[0], candidates[1], spot))
    if risk_free is not None:
        thresholds = _reaching(thresholds, request.rank_by, risk_free)
    kept = _kept_by(job, bounds, known)
    single_rows = None if known is None else known.single_card_rows()
    found = _billed_ranked(job, (kept, single_rows), thresholds)
    if found is not None and risk_free is None:
        found = _up_to_risk_free(job, (kept, single_rows), thresholds, qualifying, found)
    if found is None:
        return None
    at, billed, high_ok = found
    judged = (runnable.take(at), qualifying.take(at), used_stale, excluded, high_ok)
    return _evaluation(job, billed, judged, quoted_offers=quoted)


def _hours_with_leads(job: _Request, hours: FloatArray) -> FloatArray:
    """Every cell's ``hours`` with its row's lead time added, as a deadline judges them (``hours``
    itself without a deadline or a lead time anywhere): the dense counts' whole rows added to the lead
    times row by row, the other cells to their rows' gathered, the same floats as adding
    ``_leads_before``'s, without laying the lead times out per cell first (8 MB at 96,000 offers)."""
    tables, layout = job.tables, job.layout
    lead = tables.lead_time_h
    if job.resolved.request.deadline_hours is None or not lead.any():
        return hours
    head, dense_shape = layout.dense * tables.size, (layout.dense, tables.size)
    shown = np.empty_like(hours)
    with unknown_hours():
        np.add(hours[:head].reshape(dense_shape), lead, out=shown[:head].reshape(dense_shape))
        np.add(hours[head:], lead.take(layout.cell_offer[head:]), out=shown[head:])
    return shown


# ``_least_risk_free_key`` bills the qualifying cells on capacity no one takes back with the least key
# first (its ties too), then about this many more, before it gives up: the first is usually free of
# risk (the cheapest candidates are spot, and the first on demand meets the deadline at its high end
# too); at 96,000 offers a few hundred at most were ahead of it.
_RISK_FREE_LOOKED = 4_096


def _least_risk_free_key(
    job: _Request, at: IntArray, candidates: tuple[FloatArray, FloatArray, BoolArray]
) -> float | None:
    """The least ranking key among the qualifying cells (at positions ``at``, their expected cost and
    hours, and whether each is spot: ``candidates``) free of risk: their high end within every limit, on
    capacity no one takes back (``_risk_free_key``'s, over the whole layout). Only the high ends of the
    cells with the least keys are billed: those at the least key, then those up to about the
    ``_RISK_FREE_LOOKED``-th (read off a sample of the keys; every one when there are fewer); every cell
    with a lesser key than the one found is among them. None when none of them is free of risk: the
    rows the ranking returns are then billed first and the risk-free candidate looked for among them
    (``_up_to_risk_free``)."""
    tables, layout = job.tables, job.layout
    cost, hours, spot = candidates
    keys = np.where(spot, np.inf, _ranking_key(job.resolved.request, cost, hours))
    if np.isnan(keys).any():
        return None
    step = max(1, keys.size // _RISK_FREE_LOOKED)
    sampled = np.sort(keys[::step])
    least, further = float(keys.min()), float(sampled[min(sampled.size - 1, _RISK_FREE_LOOKED // step)])
    if not np.isfinite(least):  # none on demand
        return None
    if not np.isfinite(further):  # fewer on demand than that: every one
        further = float(np.max(keys, where=np.isfinite(keys), initial=least))
    for reach in (least, further):
        looked = np.flatnonzero(keys <= reach)
        cells = at.take(looked)  # ascending, as ``at`` is
        if bool((layout.cell_offer.take(cells) < tables.offer_count).all()):
            positions, (billed_layout, speedups) = cells, layout.subset_alone(cells, job.rule, tables)
        else:
            positions, billed_layout, speedups = layout.subset_with_plans(cells, job.rule, tables)
        billed = _bill(job, billed_layout, speedups)
        free = _billed_high_ends(job, billed, _leads_before(job, billed_layout)).at(
            np.searchsorted(positions, cells)
        )
        if free.any():
            return float(keys.take(looked)[free].min())
    return None


def _reaching(thresholds: Thresholds, rank_by: RankBy, key: float) -> Thresholds:
    """``thresholds`` with the ranking key's own widened to reach ``key`` (unchanged when it does)."""
    if key <= _ranking_threshold(thresholds, rank_by):
        return thresholds
    wide = widened(key)
    if rank_by == "time":
        return replace(thresholds, hours=wide)
    if rank_by == "value":
        return replace(thresholds, value=wide)
    return replace(thresholds, cost=wide)


def _up_to_risk_free(
    job: _Request,
    kept: tuple[_Kept, IntArray | None],
    thresholds: Thresholds,
    qualifying: BoolArray,
    found: tuple[IntArray, _Billed, HighWithin],
) -> tuple[IntArray, _Billed, HighWithin] | None:
    """``found`` (``_billed_ranked``'s, at ``thresholds``), or, when the least ranking key among its
    qualifying cells free of risk (``qualifying``: every cell's) is past the ranking key's threshold,
    the rows up to that key billed: every candidate up to the first free of risk is then billed. None
    when none billed is free of risk, or the rows hold too many cells."""
    at, billed, high_ok = found
    risk_free = _risk_free_key(job, billed, qualifying.take(at), high_ok)
    if risk_free is None:
        return None
    wider = _reaching(thresholds, job.resolved.request.rank_by, risk_free)
    return found if wider is thresholds else _billed_ranked(job, kept, wider)


def _unbilled_high(positions: IntArray) -> FloatArray:
    """The high ends of cells a judgement of every cell never reads (``_ranked_within_limits`` reads
    them of the billed cells alone)."""
    raise ValueError("high ends are read of the billed cells alone")


# The rows that can reach some thresholds, in ``kept_rows``'s two sets.
_Kept = Callable[[Thresholds], tuple[IntArray, IntArray]]


def _kept_by(job: _Request, bounds: RowBounds, known: KnownCandidates | None) -> _Kept:
    """The rows ``_billed_ranked`` bills for some thresholds: read off the candidates' own figures
    (``evaluate.known``), or off the rows' bounds where a figure is unknown."""
    request, safe = job.resolved.request, safe_rows(job.tables)
    if known is not None:
        return lambda thresholds: known.kept(thresholds, request, safe)
    return lambda thresholds: kept_rows(bounds, thresholds, request, safe)


def _billed_ranked(
    job: _Request, kept_at: tuple[_Kept, IntArray | None], thresholds: Thresholds
) -> tuple[IntArray, _Billed, HighWithin] | None:
    """The rows that can reach ``thresholds`` billed (``kept_at``: those rows, and those that reach the
    hours' threshold alone, of which only the cells within it are billed; and the rows that can be the
    single card, of which only the one-card cell is, with the candidates of the others that can reach
    one, ``_cells_within_thresholds``; None: the rows' bounds kept them, and every cell of each is
    billed): their cells' positions among the layout's, their figures, and whether their high ends meet
    the request's limits; None when they hold more than ``_WHOLE_BILL_SHARE`` of the cells."""
    tables, layout = job.tables, job.layout
    kept, kept_fastest = kept_at[0](thresholds)
    single = kept_at[1]
    if single is None:  # a figure unknown: the rows' bounds keep rows whole, the single card's among them
        needed = _merged(layout.cells_of(kept, tables), _fastest_cells(job, kept_fastest, thresholds.hours))
    else:
        needed = _reaching_cells(job, (kept, kept_fastest, single), thresholds)
    if needed.size + layout.plan_cells(tables).size > _WHOLE_BILL_SHARE * layout.cells.size:
        return None
    at, kept_layout, speedups = layout.subset_with_plans(needed, job.rule, tables)
    billed = _bill(job, kept_layout, speedups)
    return at, billed, _billed_high_ends(job, billed, _leads_before(job, kept_layout))


def _single_cards_within(
    job: _Request, runnable: BoolArray, hours: FloatArray, cost: FloatArray
) -> tuple[IntArray, FloatArray]:
    """The rows whose one-card cell can be the single card the summary compares
    (``judge.single_card_eligible``), and its expected cost there (``hours`` and ``cost``: every cell's
    expected ones, what the limits read on this path)."""
    tables, layout, request = job.tables, job.layout, job.resolved.request
    column = slice(layout.one_card_column * tables.size, (layout.one_card_column + 1) * tables.size)
    eligible = single_card_eligible(
        request,
        runnable[column],
        (layout.units[column], tables.unit_cards, tables.machine_cards),
        (hours[column], cost[column]),
    )
    rows = np.flatnonzero(eligible)
    return rows, cost[column].take(rows)


def _risk_free_key(
    job: _Request, billed: _Billed, qualifying: BoolArray, high_ok: HighWithin
) -> float | None:
    """The least ranking key among ``billed``'s qualifying cells whose high ends meet every limit, on
    capacity no one takes back; None when none is."""
    at = np.flatnonzero(qualifying)
    at = at[~job.tables.interruptible.take(billed.layout.cell_offer.take(at))]
    at = at[high_ok.at(at)]
    if at.size == 0:
        return None
    cost = billed.figures[Figure.COST_EXPECTED].take(at)
    hours = billed.figures[Figure.HOURS_EXPECTED].take(at)
    return float(_ranking_key(job.resolved.request, cost, hours).min())


def _ranking_key(request: QuoteRequest, cost: FloatArray, hours: FloatArray) -> FloatArray:
    """The ranking's key of candidates with these expected figures: their hours, value or cost."""
    if request.rank_by == "time":
        return hours
    if request.rank_by == "value" and request.time_value_cny_per_hour is not None:
        return cost + request.time_value_cny_per_hour * hours
    return cost


@dataclass(frozen=True, slots=True)
class _Front:
    """The front of ``evaluate``: what a request's job reads per row, its speed-up rule, its candidates."""

    conversion: FloatArray  # (3, rows) the speed over the reference GPU (``one_card_hours_of``)
    rows: CandidateRows
    fewest_key: FewestKey  # the memory need ``rows.fewest_cards`` is kept by
    rule: SpeedupRule
    candidates: Candidates


def _front(
    tables: OfferTables,
    resolved: ResolvedRequest,
    asked: tuple[GpuCatalog, float, int, bool],
    fast: FastPaths,
) -> _Front:
    """``asked``: the catalog, the operator's cross-node factor, the most cards a plan takes, and whether
    the answer compares a single card (``AskedFor``)."""
    catalog, cross_node_factor, max_plan_cards, single_card = asked
    request, kind = resolved.request, resolved.kind
    conversion, one_card_hours = one_card_hours_of(tables, resolved, catalog)
    matching = filter_mask(tables, resolved, known_hours(tables, resolved, catalog, one_card_hours))
    fewest_key, fewest_cards = fewest_cards_of(tables, resolved.memory_needed_gb)
    replica_tps = replica_throughput(tables, resolved.job, fewest_cards, gpu_facts(tables, catalog))
    rows = CandidateRows(matching, fewest_cards, one_card_hours, replica_tps)
    rule = kind.speedups(tables, resolved.job, request, resolved.curve, cross_node_factor, rows)
    candidates = kind.candidates(
        tables,
        resolved.job,
        AskedFor(resolved.card_counts, request.deadline_hours, max_plan_cards, single_card),
        rows,
        rule,
        fast,
    )
    return _Front(conversion=conversion, rows=rows, fewest_key=fewest_key, rule=rule, candidates=candidates)


def prepare_whole_billing(
    tables: OfferTables,
    resolved: ResolvedRequest,
    *,
    catalog: GpuCatalog,
    cross_node_factor: float,
    max_plan_cards: int = 512,
    fast: FastPaths = _ALL_FAST,
) -> None:
    """Make what billing every cell of ``resolved``'s layout reads and keep it on the layout: its speed-ups
    gathered per cell under the request's rule, and the rows' billing terms per cell (a deadline or
    budget most rows meet reads both: ``_ranked_within_limits``). The service calls it for a plain job
    as it builds each snapshot, so the first such request on it does not (27 ms at 96,000 offers, 27 MB
    kept); answers are the same without. A layout billed row by row alone (``prunes_placed``) has none.
    Also the speed-ups by count a deadline under the rule searches (``prepare_deadline_counts``)."""
    front = _front(tables, resolved, (catalog, cross_node_factor, max_plan_cards, True), fast)
    prepare_deadline_counts(tables, front.rule.columns(tables, (1,)), max_plan_cards)
    if prunes_placed(tables, resolved, fast):
        return
    layout = cached_layout(tables, front.candidates, fast)
    layout.gathered(front.rule, tables)
    if not layout.bounds_up_front:  # billed with its bounds: the terms are read off the rows in place
        layout.billing_rows(tables)


def evaluate(
    tables: OfferTables,
    resolved: ResolvedRequest,
    *,
    catalog: GpuCatalog,
    now_s: float,
    price_max_age_s: float,
    cross_node_factor: float,
    cross_city_mbps: float = 500.0,
    max_plan_cards: int = 512,
    gpu_hours_between_failures: float = DEFAULT_GPU_HOURS_BETWEEN_FAILURES,
    spot_interruptions_per_month: tuple[float, float, float] = DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
    fast: FastPaths = _ALL_FAST,
    single_card: bool = True,
) -> Evaluation:
    """``resolved`` evaluated on ``tables``. ``single_card`` False: the answer reads the recommendation
    alone, not the single card the summary compares (``jobs.AskedFor``), whose cells are then not
    billed where a job's own layout leaves them out (a quantized alternative's serving job)."""
    front = _front(tables, resolved, (catalog, cross_node_factor, max_plan_cards, single_card), fast)
    rows, rule, fewest_key, candidates = front.rows, front.rule, front.fewest_key, front.candidates
    conversion, one_card_hours, matching = front.conversion, rows.one_card_hours, rows.matching
    fewest_cards, replica_tps = rows.fewest_cards, rows.replica_tokens_per_s
    stale = _stale(tables, now_s, price_max_age_s)
    workload = resolved.request.workload
    remote = elsewhere(tables, resolved.data_city)
    extra_hours = None
    if workload.dataset_gb and remote.any():
        extra_hours = np.where(remote, copy_hours(workload.dataset_gb, cross_city_mbps), 0.0)
    placed = None
    if prunes_placed(tables, resolved, fast):
        hours = (one_card_hours.expected, extra_hours)
        bounds_of = _bounds_of(tables, hours, matching, (fewest_key, fewest_cards))
        placed = placed_rows(tables, (candidates, rule), fast, hours, bounds_of, resolved)
        layout, scaling = placed.layout, placed.grid.scaling
    else:
        layout = cached_layout(tables, candidates, fast)
        scaling = layout.scaling(rule, tables)
    job = _Request(
        tables=tables,
        resolved=resolved,
        conversion=conversion,
        one_card_hours=one_card_hours,
        matching=matching,
        stale=stale,
        fewest_cards=fewest_cards,
        fewest_key=fewest_key,
        replica_tps=replica_tps,
        layout=layout,
        scaling=scaling,
        remote=remote,
        extra_hours=extra_hours,
        losses=loss_terms(tables, resolved, gpu_hours_between_failures, spot_interruptions_per_month),
        fees=fees_per_offer(tables, remote, workload.dataset_gb),
        rule=rule,
    )
    if placed is not None:
        pruned = _pruned(job, placed)
        if pruned is not None:
            return pruned
        layout = cached_layout(tables, candidates, fast, placed.grid.inputs)  # every row billed
        job = replace(job, layout=layout, scaling=layout.scaling(rule, tables))
    elif prunes(tables, resolved, layout, fast):
        pruned = _pruned(job, row_order=fast.row_order)
        if pruned is not None:
            return pruned
    else:
        pruned = None
        if prunes_but_for_limits(tables, resolved, layout, fast) and _deadline_passes_nothing(job):
            pruned = _pruned(job, deadline_passes_nothing=True, row_order=fast.row_order)
        if pruned is None and prunes_by_limits(tables, resolved, layout, fast):
            pruned = _limits_pruned(job)
        if pruned is not None:
            return pruned
    billed = _bill(job, layout)
    judged = _judged(job, layout, billed.figures, billed.requested, _high_figures(job, billed))
    return _evaluation(job, billed, judged)
