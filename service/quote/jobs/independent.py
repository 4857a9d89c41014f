"""Independent work (``workload.kind`` "independent"): runs that never talk to each other.

A hyper-parameter sweep, batch image generation, rendering: ``gpu_hours`` is all of the work on one card
(of ``reference_gpu``, or sized by its ``tokens``), split into ``runs`` equal runs of ``cards_per_run``
cards each (the fewest that hold the model when left out). With ``k`` runs at once on ``n = k × c`` cards
the work finishes in ``⌈runs ÷ k⌉`` whole rounds of one run's hours: 200 runs of 2 h on 8 cards are 25
rounds, 50 h. Without ``runs`` the work divides freely (a batch of many images): ``hours ÷ k`` on ``k``
groups of ``c`` cards. Either way there is no scaling loss and no cross-node factor between runs; a run
of several cards scales within itself by the curve of its cards (``CurveSpeedups``, heavy when the model
is split across them).

Runs are placed across an offer's machines: each machine holds ``⌊machine cards ÷ c⌋`` runs and as many
machines (rentals of the same offer) as needed are taken, each billed for the cards it uses; a cluster
(node-hour offer) is one rental of the nodes the runs fill, at least its minimum. ``card_counts`` and the
default counts are total cards: whole runs at once, from one run to all of them (powers of two, whole
machines) and, with a deadline, the fewest cards whose rounds meet it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from schemas.quote import QuoteRequest, Range, Task, Workload
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen, rows_alike
from service.quote.base.memo import MemoSlot
from service.quote.base.paths import FastPaths
from service.quote.jobs.base import (
    MEMORY_FOLLOWS,
    ArrayKey,
    AskedFor,
    CandidateRows,
    Candidates,
    CurveSpeedups,
    Job,
    JobKind,
    LayoutInputs,
    ModelSize,
    RowsAt,
    SpeedupRule,
    every_row,
)
from service.quote.jobs.batch import check_work, curve_speedups
from service.quote.jobs.serving import rented_units, serving_layout
from service.quote.model.scaling import ScalingColumn, ScalingColumns, ScalingCurve
from service.quote.model.sizing import TokenSizing
from service.quote.model.tables import OfferTables

__all__ = ["IndependentJob", "RunPlacement", "RunSpeedups", "RunsColumn", "run_units"]

# Whole machines of runs quoted by default, beyond the powers of two.
_MACHINES_QUOTED = 8


@dataclass(frozen=True, slots=True)
class RunsColumn(ScalingColumn):
    """A speed-up column of independent runs: a run of ``cards_per_run`` cards scales within itself by
    this column's curve; n cards hold ``⌊n ÷ c⌋`` runs at once, finishing ``runs`` of them in whole
    rounds (or, without ``runs``, dividing the work freely). Runs never talk across machines."""

    cards_per_run: int = 1
    runs: int | None = None

    @classmethod
    def of(cls, base: ScalingColumn, cards_per_run: int, runs: int | None) -> RunsColumn:
        fields = {field.name: getattr(base, field.name) for field in dataclasses.fields(ScalingColumn)}
        return cls(**fields, cards_per_run=cards_per_run, runs=runs)

    def speedup(self, cards: int) -> Range:
        run = ScalingColumn.speedup(self, self.cards_per_run)
        at_once = cards // self.cards_per_run
        if at_once == 0:
            return Range(math.nan, math.nan, math.nan)
        gain = at_once if self.runs is None else self.runs / math.ceil(self.runs / at_once)
        return Range(run.low * gain, run.expected * gain, run.high * gain)

    def spans_nodes(self, cards: int) -> bool:
        return False


class RunSpeedups(SpeedupRule, frozen=True, gc=False):
    """Speed-ups of independent runs: ``base`` for the cards of one run (each row's ``cards_per_run``),
    times the runs n cards finish at once (``RunsColumn``)."""

    base: CurveSpeedups
    cards_per_run: ArrayKey[FloatArray]
    runs: int | None

    def columns(self, tables: OfferTables, counts: Sequence[int]) -> ScalingColumns:
        per_run = self.cards_per_run.array
        sizes = run_sizes(per_run)
        within = self.base.columns(tables, sizes)  # (sizes, base columns): a run's own speed-up
        width = len(within.columns)
        size_at = np.searchsorted(sizes, per_run)
        code: IntArray = size_at * width + within.code
        cards = np.asarray(counts, dtype=np.float64)[:, None]
        size_cards = np.repeat(np.asarray(sizes, dtype=np.float64), width)
        at_once = np.floor(cards / size_cards)
        # Fewer cards than one run takes run nothing: NaN, never placed (``run_units``).
        gain = at_once if self.runs is None else self.runs / np.ceil(self.runs / np.maximum(at_once, 1))
        gain = np.where(at_once > 0, gain, np.nan)
        tables_of = [bound.reshape(1, -1) for bound in (within.low, within.expected, within.high)]
        low, expected, high = (gain * bound for bound in tables_of)
        columns = tuple(
            RunsColumn.of(within.columns[at % width], sizes[at // width], self.runs)
            for at in range(width * len(sizes))
        )
        return ScalingColumns(columns=columns, code=code, low=low, expected=expected, high=high)


def run_sizes(cards_per_run: FloatArray) -> list[int]:
    """The distinct cards a run takes over the rows, ascending (whole cards)."""
    return [int(cards) for cards in np.unique(cards_per_run).tolist()]


def run_units(
    tables: OfferTables, cards_per_run: FloatArray, counts: FloatArray
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """``(counts, rows)``: units billed for ``counts`` cards of whole runs placed on each row, whether they
    can be placed, and the machines (or nodes) they take (``placed_runs`` on the whole grid)."""
    return placed_runs(tables, cards_per_run, counts[:, None], every_row)


def placed_runs(
    tables: OfferTables, cards_per_run: FloatArray, cards: FloatArray, rows_at: RowsAt
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """Units billed for ``cards`` cards of whole runs placed on rows (each row's figures, and its
    ``cards_per_run``, read by ``rows_at``), whether they can be placed (whole runs, each rental within
    the offer's limits, within its stock and its most units), and the machines (or nodes) they take."""
    per_run = rows_at(cards_per_run)
    machine_cards, spans_machines = rows_at(tables.machine_cards), rows_at(tables.spans_machines)
    runs = cards / per_run
    whole = (runs == np.floor(runs)) & (runs >= 1)
    # A machine (or one cluster node) holds this many runs; a run wider than one only spans nodes.
    per_machine = np.floor(machine_cards / per_run)
    fits = per_machine >= 1
    machines = np.ceil(runs / np.maximum(per_machine, 1.0))
    rest = runs - (machines - 1) * per_machine
    full_units = rented_units(tables, per_machine * per_run, rows_at)
    last_units = rented_units(tables, np.maximum(rest, 1.0) * per_run, rows_at)
    spread = (machines - 1) * full_units + last_units
    # A cluster is one rental of the nodes its runs fill (a run of several nodes takes whole nodes).
    nodes = np.where(fits, machines, runs * np.ceil(per_run / machine_cards))
    cluster = np.maximum(rows_at(tables.min_units), nodes)
    units = np.where(spans_machines, cluster, spread)
    rental = np.where(spans_machines, cluster, full_units)
    placed = (
        whole
        & (fits | spans_machines)
        & (rental <= rows_at(tables.max_units))
        & (units * rows_at(tables.unit_cards) <= rows_at(tables.available_cards))
        & (units <= rows_at(tables.most_units))
    )
    return units, placed, np.where(spans_machines, cluster, machines)


def _default_runs_at_once(per_machine: int, most: int) -> set[int]:
    """Runs at once quoted by default for a row: powers of two, whole machines, and all of them."""
    wanted = {most}
    at_once = 1
    while at_once <= most:
        wanted.add(at_once)
        at_once *= 2
    wanted.update(
        machines * per_machine
        for machines in range(1, _MACHINES_QUOTED + 1)
        if machines * per_machine <= most
    )
    return wanted


class RunPlacement(Candidates, frozen=True, gc=False):
    """Runs of ``cards_per_run`` cards (per row) placed at the totals ``card_counts``, or at the default
    runs at once (``_default_runs_at_once``) up to ``max_cards`` and the number of runs, and each row's
    fewest cards meeting a deadline (``deadline_cards``, 0 for none)."""

    shared: ClassVar[bool] = False
    cards_per_run: ArrayKey[FloatArray]
    runs: int | None
    card_counts: tuple[int, ...] | None
    max_cards: int
    matching: ArrayKey[BoolArray]
    deadline_cards: ArrayKey[IntArray] | None

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        per_run = self.cards_per_run.array
        matching = self.matching.array
        if self.card_counts is None:
            counts, requested = _DEFAULT_CANDIDATES.of(tables.memos).get(
                self, lambda: self._default_candidates(tables, per_run, matching)
            )
        else:
            counts = tuple(sorted({1, *self.card_counts}))
            cards = np.array(counts, dtype=np.float64)
            asked = np.isin(cards, self.card_counts)[:, None]
            requested = asked & (cards[:, None] % per_run == 0) & (cards[:, None] >= per_run) & matching
        placement = functools.partial(placed_runs, tables, per_run)  # at the cells billed alone
        return LayoutInputs(
            counts=counts,
            requested=requested,
            placement=placement,
            placement_rows=(per_run,),
            # A run's cards are the caller's, or follow from the row's GPU memory (``cards_per_run``).
            placement_follows=MEMORY_FOLLOWS,
        )

    def _default_candidates(
        self, tables: OfferTables, per_run: FloatArray, matching: BoolArray
    ) -> tuple[tuple[int, ...], BoolArray]:
        """The counts and ``(counts, rows)`` candidates without ``card_counts``: per matching row, whole
        runs at the default runs at once (``_default_runs_at_once``), which depend only on its run's
        cards, its machine's and the most runs, so rows alike share one set; and its deadline's cards."""
        run_cards = per_run.astype(np.int64)
        active = matching & (run_cards <= self.max_cards)
        rows = np.flatnonzero(active)
        run_cards = run_cards[rows]
        most = self.max_cards // run_cards
        if self.runs is not None:
            most = np.minimum(self.runs, most)
        per_machine = np.maximum(tables.machine_cards[rows].astype(np.int64) // run_cards, 1)
        # Rows alike by (run cards, runs per machine, most runs) share their totals; a row of each
        # stands for its group.
        group, first = rows_alike((run_cards, per_machine, most))
        totals = [
            {at_once * int(cards) for at_once in _default_runs_at_once(int(machine), int(most_runs))}
            for cards, machine, most_runs in zip(
                run_cards[first].tolist(), per_machine[first].tolist(), most[first].tolist(), strict=True
            )
        ]
        by_deadline = np.zeros(rows.size, dtype=np.int64)
        if self.deadline_cards is not None:
            by_deadline = self.deadline_cards.array[rows]
        met = by_deadline > 0
        counts = tuple(sorted(set().union({1}, *totals, by_deadline[met].tolist())))
        position = {count: at for at, count in enumerate(counts)}
        # Each group's counts as a column, and one more column of none for the rows left out; every row
        # then reads its group's column (one gather, not a scatter per group).
        by_group = np.zeros((len(counts), len(totals) + 1), dtype=np.bool_)
        for at, group_totals in enumerate(totals):
            by_group[[position[total] for total in group_totals], at] = True
        group_of = np.full(tables.size, len(totals), dtype=np.int64)
        group_of[rows] = group
        requested = by_group.take(group_of, axis=1)
        requested[np.searchsorted(counts, by_deadline[met]), rows[met]] = True
        return counts, frozen(requested)


# A sweep's default candidates per placement (its runs, their cards, the rows matching): asked again by
# every job of that sweep, whatever its hours; a (counts, rows) grid of flags, 1-3 MB at 96,000 rows.
_DEFAULT_CANDIDATES: MemoSlot[RunPlacement, tuple[tuple[int, ...], BoolArray]] = MemoSlot(
    "default runs", size=2, max_bytes=6 * 2**20
)


def cards_per_run(tables: OfferTables, job: Job, fewest_cards: FloatArray) -> FloatArray:
    """``(rows,)``: the cards a run takes on each row: the caller's, or the fewest that hold the model
    rounded as a serving replica is (a power of two within a machine, whole machines beyond)."""
    if job.cards_per_run is not None:
        per_run = np.full(tables.size, float(job.cards_per_run))
    else:
        per_run = serving_layout(tables, fewest_cards).replica_cards
    per_run.flags.writeable = False
    return per_run


def _fewest_meeting_deadline(
    job: Job, rows: CandidateRows, per_run: FloatArray, run_speedup: FloatArray, deadline_hours: FloatArray
) -> IntArray:
    """``(rows,)``: each row's fewest cards whose whole rounds meet the deadline by expected hours (0: none)."""
    hours_per_group = rows.one_card_hours.expected / run_speedup  # all the work on one group of a run's cards
    deadline_hours = np.where(deadline_hours > 0, deadline_hours, np.nan)  # no time left: none meets it
    if job.runs is None:
        at_once = np.ceil(hours_per_group / deadline_hours - 1e-9)
    else:
        per_run_hours = hours_per_group / job.runs
        with np.errstate(divide="ignore", invalid="ignore"):
            rounds = np.floor(deadline_hours / per_run_hours + 1e-9)
            at_once = np.where(rounds >= 1, np.ceil(job.runs / np.maximum(rounds, 1)), 0.0)
    found = np.where(rows.matching & np.isfinite(at_once) & (at_once >= 1), at_once * per_run, 0.0)
    return found.astype(np.int64)


class IndependentJob(JobKind):
    kind = "independent"
    shortened_by_cards = True
    # A run interrupted resumes from its own checkpoint, as a batch job does; the others run on. Its
    # interruptions are counted as a batch job's (every card's), which overstates what one run loses.
    loses_work = True
    spot_by_default = True

    def check(self, workload: Workload) -> Task | None:
        check_work(workload, self.kind)
        return workload.task

    def job(self, workload: Workload, task: Task | None, sizing: TokenSizing | None, model: ModelSize) -> Job:
        hours = sizing.reference_hours if sizing is not None else workload.gpu_hours
        assert hours is not None  # ``check_work``
        return Job(
            kind=self.kind,
            hours=hours,
            task=task,
            sizing=sizing,
            runs=workload.runs,
            cards_per_run=workload.cards_per_run,
        )

    def piece_cards(self, tables: OfferTables, job: Job, fewest_cards: FloatArray) -> FloatArray:
        return cards_per_run(tables, job, fewest_cards)

    def placement(
        self, tables: OfferTables, job: Job, fewest_cards: FloatArray, counts: FloatArray
    ) -> tuple[FloatArray, BoolArray, FloatArray]:
        return run_units(tables, cards_per_run(tables, job, fewest_cards), counts)

    def speedups(
        self,
        tables: OfferTables,
        job: Job,
        request: QuoteRequest,
        curve: ScalingCurve,
        operator_factor: float,
        rows: CandidateRows,
    ) -> SpeedupRule:
        return RunSpeedups(
            base=curve_speedups(request, curve, operator_factor, rows),
            cards_per_run=ArrayKey(cards_per_run(tables, job, rows.fewest_cards)),
            runs=job.runs,
        )

    def candidates(
        self,
        tables: OfferTables,
        job: Job,
        asked: AskedFor,
        rows: CandidateRows,
        speedups: SpeedupRule,
        fast: FastPaths,
    ) -> Candidates:
        del fast
        assert isinstance(speedups, RunSpeedups)
        per_run = speedups.cards_per_run.array
        deadline = None
        if asked.card_counts is None and asked.deadline_hours is not None:
            sizes = run_sizes(per_run)
            one_run = speedups.base.columns(tables, sizes)
            at = np.searchsorted(sizes, per_run) * one_run.expected.shape[1] + one_run.code
            run_speedup = one_run.expected.take(at)
            time_left = asked.deadline_hours - tables.lead_time_h
            found = _fewest_meeting_deadline(job, rows, per_run, run_speedup, time_left)
            found.flags.writeable = False
            deadline = ArrayKey(found)
        matching = rows.matching.copy()
        matching.flags.writeable = False
        return RunPlacement(
            cards_per_run=speedups.cards_per_run,
            runs=job.runs,
            card_counts=asked.card_counts,
            max_cards=asked.max_plan_cards,
            matching=ArrayKey(matching),
            deadline_cards=deadline,
        )
