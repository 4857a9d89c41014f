"""A batch job (``workload.kind`` "batch", the default): ``gpu_hours`` on one card, shortened by more cards.

Its time follows the scaling curves (``model.scaling``). Its candidates are the counts asked for, or,
without ``card_counts``, every count each row sells (``model.billing.sold_counts``) up to the operator's
cap (``QuoteOptions.max_plan_cards``), and, with a deadline, the fewest cards that meet it by the
expected hours and by the high end's (``jobs.deadline``). The evaluation still runs as one (counts × rows) block over the union
of those counts; ``requested`` marks the candidates each row sells, so a count an offer never sells
(16 cards of an 8-card machine) is neither quoted nor counted as excluded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from schemas.quote import QuoteRequest, Task, Workload, WorkloadKind
from service.errors import InvalidRequest
from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.base.paths import FastPaths
from service.quote.jobs.base import (
    ArrayKey,
    AskedFor,
    CandidateRows,
    Candidates,
    CurveSpeedups,
    Job,
    JobKind,
    LayoutInputs,
    ModelSize,
    SpeedupRule,
)
from service.quote.jobs.deadline import DEADLINE_BOUNDS, SpeedupBound, fewest_meeting_deadline
from service.quote.model.scaling import ScalingCurve
from service.quote.model.sizing import TokenSizing
from service.quote.model.tables import OfferTables

__all__ = ["AskedCounts", "BatchJob", "SoldCounts", "plan_candidates", "sold_already"]


def plan_candidates(
    tables: OfferTables, base_counts: Sequence[int], max_cards: int, deadline_cards: IntArray | None
) -> tuple[tuple[int, ...], BoolArray]:
    """The counts to evaluate and which (count, row) candidates are quoted, for a request without counts;
    ``deadline_cards``: ``(k, rows)``, each row's fewest cards meeting a deadline by each bound (0: none)."""
    sold_rows = [at for at, cards in enumerate(tables.plan_counts) if cards <= max_cards]
    extra = set() if deadline_cards is None else set(deadline_cards[deadline_cards > 0].tolist())
    counts = tuple(sorted({*base_counts, *(tables.plan_counts[at] for at in sold_rows), *extra}))
    position = {cards: at for at, cards in enumerate(counts)}
    requested = np.zeros((len(counts), tables.size), dtype=np.bool_)
    requested[[position[tables.plan_counts[at]] for at in sold_rows]] = tables.shape_sells[sold_rows].take(
        tables.sales_shape, axis=1
    )
    for bound_cards in () if deadline_cards is None else deadline_cards:
        rows = np.flatnonzero(bound_cards)
        requested[np.searchsorted(counts, bound_cards[rows]), rows] = True
    return counts, requested


def sold_already(tables: OfferTables, max_cards: int, deadline_cards: IntArray) -> bool:
    """Whether each row's fewest cards meeting a deadline (``(k, rows)``, 0: none) is a count the row
    sells up to ``max_cards``: then the deadline adds no candidate to ``SoldCounts`` (most rows sell
    every count of a machine), and the job shares its layout instead of building one of its own."""
    counts = np.asarray(tables.plan_counts)
    # Bound by bound: two 1-D ``flatnonzero`` take half the time of one 2-D ``nonzero`` (96,000 rows).
    for bound_cards in deadline_cards:
        rows = np.flatnonzero(bound_cards)
        cards = bound_cards.take(rows)
        if counts.size == 0:
            if cards.size:
                return False
            continue
        at = np.minimum(np.searchsorted(counts, cards), counts.size - 1)
        sold = (counts.take(at) == cards) & (cards <= max_cards)
        if not (sold.all() and tables.sells_at(at, rows).all()):
            return False
    return True


class AskedCounts(Candidates, frozen=True, gc=False):
    """The caller's card counts, and one card (the summary's comparison)."""

    card_counts: tuple[int, ...]

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        counts = tuple(sorted({1, *self.card_counts}))
        return LayoutInputs(counts=counts, requested=np.isin(counts, self.card_counts)[:, None])


class SoldCounts(Candidates, frozen=True, gc=False):
    """Every count each row sells up to ``max_cards``, and one card."""

    max_cards: int

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        return LayoutInputs(*plan_candidates(tables, (1,), self.max_cards, None))


class SoldCountsByDeadline(Candidates, frozen=True, gc=False):
    """``SoldCounts`` and each row's fewest cards meeting a deadline by the expected hours and by the high
    end's (``(2, rows)``; 0: none does): they move with the job's hours, so such layouts are kept apart
    from the shared ones."""

    shared: ClassVar[bool] = False
    max_cards: int
    deadline_cards: ArrayKey[IntArray]

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        return LayoutInputs(*plan_candidates(tables, (1,), self.max_cards, self.deadline_cards.array))


_SERVING_ONLY = ("target_tokens_per_s", "concurrent_requests", "replica_tokens_per_s")


def check_work(workload: Workload, kind: WorkloadKind) -> None:
    """A job of work (batch, independent): ``gpu_hours`` or ``tokens``, exactly one; no serving fields."""
    if workload.hours is not None:
        raise InvalidRequest(
            "workload.hours", f"a {kind} workload takes workload.gpu_hours, not workload.hours"
        )
    if workload.gpu_hours is not None and workload.tokens is not None:
        raise InvalidRequest(
            "workload.tokens", "give workload.gpu_hours (measured) or workload.tokens (estimated), not both"
        )
    if workload.gpu_hours is None and workload.tokens is None:
        raise InvalidRequest(
            "workload.gpu_hours",
            f"required for a {kind} workload (hours on one card), or give workload.tokens with a model and task",
        )
    if workload.replicas != 1:
        raise InvalidRequest("workload.replicas", "replicas are for a serving workload (workload.kind)")
    for name in _SERVING_ONLY:
        if getattr(workload, name) is not None:
            raise InvalidRequest(f"workload.{name}", f"{name} is for a serving workload (workload.kind)")
    if workload.mfu is not None and workload.tokens is None:
        raise InvalidRequest(
            "workload.mfu", "the utilization sizes a job given by workload.tokens: give them"
        )


def curve_speedups(
    request: QuoteRequest, curve: ScalingCurve, operator_factor: float, rows: CandidateRows
) -> CurveSpeedups:
    """A job that scales by the curves: the caller's curve, communication and factor where given; rows
    whose model must be split across cards take the heavy curves unless the caller said how the job
    communicates or measured its own curve (``CurveSpeedups.split``)."""
    workload = request.workload
    split = None
    if workload.communication is None and request.scaling is None:
        needs_split = rows.fewest_cards > 1
        if needs_split.any():
            needs_split.flags.writeable = False
            split = ArrayKey(needs_split)
    return CurveSpeedups(
        curve=None if request.scaling is None else curve,
        communication=workload.communication or "moderate",
        cross_node_factor=workload.cross_node_factor,
        operator_factor=operator_factor,
        split=split,
    )


def _deadline_bounds(rows: CandidateRows) -> tuple[tuple[FloatArray, SpeedupBound], ...]:
    """The one-card hours a deadline is met on, with the speed-up each divides by."""
    expected, low = DEADLINE_BOUNDS
    return ((rows.one_card_hours.expected, expected), (rows.one_card_hours.row(2), low))


class BatchJob(JobKind):
    kind = "batch"
    shortened_by_cards = True
    loses_work = True
    spot_by_default = True

    def check(self, workload: Workload) -> Task | None:
        check_work(workload, self.kind)
        for name in ("runs", "cards_per_run"):
            if getattr(workload, name) is not None:
                raise InvalidRequest(
                    f"workload.{name}", f'{name} is for independent runs: give workload.kind "independent"'
                )
        return workload.task

    def job(self, workload: Workload, task: Task | None, sizing: TokenSizing | None, model: ModelSize) -> Job:
        hours = sizing.reference_hours if sizing is not None else workload.gpu_hours
        assert hours is not None  # ``check_work``: one of the two
        return Job(kind=self.kind, hours=hours, task=task, sizing=sizing)

    def speedups(
        self,
        tables: OfferTables,
        job: Job,
        request: QuoteRequest,
        curve: ScalingCurve,
        operator_factor: float,
        rows: CandidateRows,
    ) -> SpeedupRule:
        del tables, job
        return curve_speedups(request, curve, operator_factor, rows)

    def candidates(
        self,
        tables: OfferTables,
        job: Job,
        asked: AskedFor,
        rows: CandidateRows,
        speedups: SpeedupRule,
        fast: FastPaths,
    ) -> Candidates:
        if asked.card_counts is not None:
            return AskedCounts(asked.card_counts)
        if asked.deadline_hours is None:
            return SoldCounts(asked.max_plan_cards)
        deadline_cards = fewest_meeting_deadline(
            tables,
            speedups.columns(tables, (1,)),
            _deadline_bounds(rows),
            asked.deadline_hours - tables.lead_time_h,  # the time left once the cards are ready
            rows.matching,
            rows.fewest_cards,
            asked.max_plan_cards,
            lookup=fast.deadline_lookup,
        )
        if sold_already(tables, asked.max_plan_cards, deadline_cards):
            return SoldCounts(asked.max_plan_cards)  # the same candidates: the shared layout
        deadline_cards.flags.writeable = False
        return SoldCountsByDeadline(asked.max_plan_cards, ArrayKey(deadline_cards))
