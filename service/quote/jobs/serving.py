"""A serving job (``workload.kind`` "serving"): ``hours`` up, ``replicas`` copies of the model side by side.

More cards add replicas, never speed: every speed-up is 1 and the hours are the wall-clock hours asked
for, on any GPU (nothing converts). Its candidates are its replicas placed over an offer's machines:

Each replica takes its memory minimum rounded up to a tensor-parallel size serving frameworks run: a power
of two (1, 2, 4, 8) within a machine, else whole machines. Replicas run independently, so each machine
holds ⌊machine cards / cards per replica⌋ whole replicas and as many machines (rentals of the same offer)
as needed are taken, each billed as the offer bills the cards it uses (per card, or the whole machine,
package, bundle or node). A cluster offer (nodes rented at least two at a time) is used only when one
replica needs more than a machine, one rental per replica: tensor parallel across nodes serves worse
than replicas on separate machines. Placement is per offer: mixing two offers (two replicas on one
vendor's hourly cards, one on another's monthly package) is not quoted. A combined plan row is placed
the same way and priced by ``evaluate.combined.price_plans`` at the total cards.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from schemas.quote import MAX_CARDS, QuoteRequest, Task, Workload
from service.errors import InvalidRequest
from service.quote.base.arrays import BoolArray, FloatArray, frozen, whole_positions
from service.quote.base.memo import MemoSlot, kept_by_identity
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
from service.quote.model.memory import min_cards
from service.quote.model.scaling import ScalingCurve
from service.quote.model.sizing import TokenSizing
from service.quote.model.tables import OfferTables
from service.quote.model.throughput import DEFAULT_CONCURRENT_REQUESTS, Throughput, replica_tokens_per_s

__all__ = [
    "ReplicaPlacement",
    "ServingJob",
    "ServingLayout",
    "placed_replicas",
    "rented_units",
    "serving_candidates",
    "serving_layout",
    "serving_units",
]


@dataclass(frozen=True, slots=True)
class ServingLayout:
    """Per row ``(rows,)``: the cards one replica takes, and whether the offer can host a replica."""

    replica_cards: FloatArray
    hosts: BoolArray
    within_machine: BoolArray  # a replica fits one machine (else it spans whole nodes of a cluster)
    whole_cards: bool  # every finite ``replica_cards`` is a whole number (machines hold whole cards)


def serving_layout(tables: OfferTables, fewest_cards: FloatArray) -> ServingLayout:
    """Each row's cards per replica: the memory minimum up to a power of two within a machine, else up to
    whole machines (only where the offer rents nodes across machines).

    An evaluation reads it several times for one read-only ``fewest_cards`` (its candidates, its
    throughput, its pieces), and requests of one model size share that array (``evaluate.evaluation``): the
    layout of the last few such arrays is kept by identity, each with the array it was made from."""
    if fewest_cards.flags.writeable:
        return _serving_layout(tables, fewest_cards)
    kept = _SERVING_LAYOUTS.of(tables.memos)
    return kept_by_identity(kept, (fewest_cards,), lambda: _serving_layout(tables, fewest_cards))


def _serving_layout(tables: OfferTables, fewest_cards: FloatArray) -> ServingLayout:
    machine = tables.machine_cards
    power_of_two = _power_of_two_at_least(fewest_cards)
    within = power_of_two <= machine
    whole_machines = np.ceil(fewest_cards / machine) * machine
    cluster = tables.spans_machines & (tables.min_units > 1)
    hosts = np.where(within, ~cluster, tables.spans_machines)
    replica_cards = np.where(within, power_of_two, whole_machines)
    return ServingLayout(
        replica_cards=frozen(replica_cards),
        hosts=frozen(hosts),
        within_machine=frozen(within),
        whole_cards=_whole(replica_cards),
    )


def _power_of_two_at_least(cards: FloatArray) -> FloatArray:
    """``2 ** ceil(log2(max(cards, 1)))`` per value: read off ``_POWERS_OF_TWO`` where every value is a
    whole count up to ``MAX_CARDS`` (a memory minimum always is, unless it is infinite), a ninth of the
    time of the logarithm at 96,000 rows; worked out otherwise."""
    with np.errstate(invalid="ignore"):
        whole = cards.astype(np.int64)  # infinite or NaN: a value that equals no float below
    if whole.size and (whole == cards).all() and whole.min() >= 0 and whole.max() <= MAX_CARDS:
        found: FloatArray = _POWERS_OF_TWO.take(whole)
        return found
    powers: FloatArray = 2.0 ** np.ceil(np.log2(np.maximum(cards, 1.0)))
    return powers


# The least power of two at or past each whole count 0 ... MAX_CARDS (1 for 0), as the formula gives it:
# a whole count's base-2 logarithm is an integer only at a power of two, where it is exact, and at least
# a thousandth from one elsewhere, so its ceiling is the same on every platform.
_POWERS_OF_TWO = frozen(2.0 ** np.ceil(np.log2(np.maximum(np.arange(MAX_CARDS + 1, dtype=np.float64), 1.0))))


def _whole(values: FloatArray) -> bool:
    """Whether every finite value is a whole number."""
    with np.errstate(invalid="ignore"):
        return not bool((np.isfinite(values) & (np.floor(values) != values)).any())


# The serving layouts of the read-only memory minimums seen last, by the array's identity.
_SERVING_LAYOUTS: MemoSlot[Hashable, tuple[tuple[object, ...], ServingLayout]] = MemoSlot(
    "serving layouts", size=8
)


def rented_units(tables: OfferTables, cards: FloatArray, rows_at: RowsAt = every_row) -> FloatArray:
    """Units one rental of ``cards`` bills: whole units, at least the offer's minimum (its figures read
    by ``rows_at``)."""
    units: FloatArray = np.maximum(rows_at(tables.min_units), np.ceil(cards / rows_at(tables.unit_cards)))
    return units


def serving_units(
    tables: OfferTables, layout: ServingLayout, counts: FloatArray
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """``(counts, rows)``: units billed for ``counts`` cards of whole replicas, whether they can be placed,
    and the machines (or cluster nodes) they take (``placed_replicas`` on the whole grid)."""
    return placed_replicas(tables, layout, counts[:, None], every_row)


def placed_replicas(
    tables: OfferTables, layout: ServingLayout, cards: FloatArray, rows_at: RowsAt
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """Units billed for ``cards`` cards of whole replicas on rows (each row's figures read by
    ``rows_at``), whether they can be placed (a whole number of replicas, each rental within the offer's
    limits, within its stock and its most units in all), and the machines (or cluster nodes) they take.

    Within a machine, ``per_machine`` replicas fill each machine and the rest share one more; beyond a
    machine, each replica is its own rental of whole nodes. Counts that are not whole replicas keep the
    plain rule's units (they are never quoted).
    """
    per_replica, within_machine = rows_at(layout.replica_cards), rows_at(layout.within_machine)
    replicas = cards / per_replica
    whole = _whole_replicas(replicas) & rows_at(layout.hosts)
    per_machine = np.maximum(np.floor(rows_at(tables.machine_cards) / per_replica), 1.0)
    full_machines = np.floor(replicas / per_machine)
    rest = replicas - full_machines * per_machine
    full_units = rented_units(tables, per_machine * per_replica, rows_at)
    rest_units = np.where(rest > 0, rented_units(tables, np.maximum(rest, 1.0) * per_replica, rows_at), 0.0)
    one_replica_units = rented_units(tables, per_replica, rows_at)
    placed_units = np.where(
        within_machine, full_machines * full_units + rest_units, replicas * one_replica_units
    )
    rental_units = np.where(within_machine, full_units, one_replica_units)
    units = np.where(
        whole, placed_units, rented_units(tables, np.broadcast_to(cards, placed_units.shape), rows_at)
    )
    placed = (
        whole
        & (rental_units <= rows_at(tables.max_units))
        & (units * rows_at(tables.unit_cards) <= rows_at(tables.available_cards))
        & (units <= rows_at(tables.most_units))
    )
    machines = np.where(within_machine, full_machines + (rest > 0), units)
    return units, placed, machines


def _whole_replicas(replicas: FloatArray) -> BoolArray:
    """Whether each number of replicas is a whole one, at least one (NaN: not)."""
    whole: BoolArray = (replicas == np.floor(replicas)) & (replicas >= 1)
    return whole


def _one_card_hosts(layout: ServingLayout) -> BoolArray:
    """The rows where one card holds whole replicas: the only rows whose one-card cell
    ``placed_replicas`` can place, so the only ones the summary's single card can be."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _whole_replicas(1.0 / layout.replica_cards) & layout.hosts


def serving_candidates(
    tables: OfferTables,
    fewest_cards: FloatArray,
    replicas: int | FloatArray,
    card_counts: Sequence[int] | None,
    matching: BoolArray,
    *,
    single_card: bool = True,
) -> LayoutInputs:
    """The counts to evaluate for a serving job, which (count, row) candidates are quoted, and the
    placement of each billed one: its units, whether it can be placed and the machines it takes
    (``placed_replicas``, reading the replicas' per-row layout).

    Without ``card_counts``: each row at exactly ``replicas`` replicas (one number, or one per row for a
    throughput target; NaN or past ``MAX_CARDS`` cards: the row cannot serve it). With them: each given
    total that is a whole number of the row's replicas, at least ``replicas`` of them (more serve more).
    ``single_card``: the answer compares a single card, so the one-card cells that can be it are read
    (``_one_card_hosts``); else only the requested ones.
    """
    layout = serving_layout(tables, fewest_cards)
    least = replicas * layout.replica_cards
    if card_counts is None:
        servable = matching & layout.hosts & np.isfinite(least) & (least <= MAX_CARDS)
        # ``compress``, not a mask index: 0.2 ms rather than 0.4 at 96,000 rows.
        truncated = np.compress(servable, least).astype(np.int64)  # as int() does; at most MAX_CARDS
        # The distinct counts, by a tally of each (a sort of 100,000 rows costs ten times more).
        tally = np.bincount(truncated) if truncated.size and truncated.min() >= 0 else None
        given = set((np.unique(truncated) if tally is None else np.flatnonzero(tally)).tolist())
        counts = tuple(sorted({1, *given}))
        whole = layout.whole_cards and (isinstance(replicas, int) or _whole(replicas))
        requested = _at_least(np.array(counts, dtype=np.float64), least, layout, whole_replicas=whole)
    else:
        counts = tuple(sorted({1, *card_counts}))
        cards = np.array(counts, dtype=np.float64)[:, None]
        requested = (cards % layout.replica_cards == 0) & (cards >= least) & layout.hosts
    return LayoutInputs(
        counts=counts,
        requested=requested,
        placement=functools.partial(placed_replicas, tables, layout),
        placement_rows=(layout.replica_cards, layout.within_machine, layout.hosts),
        placement_follows=MEMORY_FOLLOWS,
        one_card_rows=_one_card_hosts(layout) if single_card else np.zeros(tables.size, dtype=np.bool_),
    )


def _at_least(
    cards: FloatArray, least: FloatArray, layout: ServingLayout, *, whole_replicas: bool
) -> BoolArray:
    """``(counts, rows)``: each hosting row at the count of exactly its ``least`` cards (whole replicas;
    none where no count is). One count per row at most, so the cells are set row by row rather than
    worked out over the whole grid. ``whole_replicas``: the replicas and each replica's cards are whole
    numbers, so ``least``, their product, is a multiple of a replica's cards wherever it equals a count
    (a whole number of cards, exact in floats): nothing to divide."""
    at = np.minimum(whole_positions(cards, least), cards.size - 1)  # NaN: past every count
    with np.errstate(invalid="ignore"):
        hit = (cards.take(at) == least) & layout.hosts
        if not whole_replicas:
            hit &= least % layout.replica_cards == 0
    rows = np.flatnonzero(hit)
    requested = np.zeros((cards.size, least.size), dtype=np.bool_)
    # Set at flat positions: a third of the time of a (counts, rows) pair index.
    requested.reshape(-1)[at.take(rows) * least.size + rows] = True
    return requested


class ReplicaPlacement(Candidates, frozen=True, gc=False):
    """``replicas`` replicas of the model (``fewest_cards`` per row hold it) placed on each matching row,
    or the totals ``card_counts`` in whole replicas; ``replicas`` per row for a throughput target;
    ``single_card``: whether the answer compares a single card (``serving_candidates``)."""

    shared: ClassVar[bool] = False
    replicas: int | ArrayKey[FloatArray]
    card_counts: tuple[int, ...] | None
    fewest_cards: ArrayKey[FloatArray]
    matching: ArrayKey[BoolArray]
    single_card: bool = True

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        replicas = self.replicas if isinstance(self.replicas, int) else self.replicas.array
        return serving_candidates(
            tables,
            self.fewest_cards.array,
            replicas,
            self.card_counts,
            self.matching.array,
            single_card=self.single_card,
        )


def _check_throughput(workload: Workload) -> None:
    """A throughput target replaces ``replicas``; the figures that size it need the target."""
    if workload.target_tokens_per_s is None:
        for name in ("concurrent_requests", "replica_tokens_per_s"):
            if getattr(workload, name) is not None:
                raise InvalidRequest(
                    f"workload.{name}", f"{name} sizes the replicas for workload.target_tokens_per_s: give it"
                )
    elif workload.replicas != 1:
        raise InvalidRequest(
            "workload.replicas",
            "give replicas or target_tokens_per_s, not both: the target decides the replicas per GPU model",
        )


def replica_throughput(
    tables: OfferTables, job: Job, fewest_cards: FloatArray, gpu_facts: tuple[FloatArray, FloatArray]
) -> FloatArray | None:
    """``(3, rows)``: what one replica serves on each row (its cards: ``serving_layout``), for a serving
    job with a throughput target; None otherwise. ``gpu_facts``: each row's peak TFLOPS and bandwidth."""
    if job.throughput is None:
        return None
    tflops, bandwidth = gpu_facts
    cards = serving_layout(tables, fewest_cards).replica_cards
    return replica_tokens_per_s(job.throughput, cards, bandwidth, tflops)


def _replicas_for(throughput: Throughput, rows: CandidateRows) -> FloatArray:
    """``(rows,)``: the replicas that serve the target on each row at the expected tokens per second."""
    assert rows.replica_tokens_per_s is not None
    with np.errstate(divide="ignore", invalid="ignore"):
        replicas: FloatArray = np.ceil(throughput.target_tokens_per_s / rows.replica_tokens_per_s[1] - 1e-9)
    replicas.flags.writeable = False
    return replicas


class ServingJob(JobKind):
    kind = "serving"
    shortened_by_cards = False
    loses_work = False
    spot_by_default = False

    def check(self, workload: Workload) -> Task | None:
        if workload.gpu_hours is not None:
            raise InvalidRequest(
                "workload.gpu_hours", "a serving workload takes workload.hours, not workload.gpu_hours"
            )
        if workload.hours is None:
            raise InvalidRequest(
                "workload.hours", "required for a serving workload (wall-clock hours it stays up)"
            )
        # A serving job holds the model for inference; another task is a contradiction, and a 422.
        if workload.task not in {None, "inference"}:
            raise InvalidRequest("workload.task", f"a serving workload runs inference, not {workload.task}")
        if workload.reference_gpu is not None or workload.speed_ratios:
            raise InvalidRequest(
                "workload.reference_gpu",
                "serving hours are wall-clock hours on any GPU: there is nothing to convert, leave it out",
            )
        for name in ("checkpoint_interval_h", "checkpoint_minutes"):
            if getattr(workload, name) is not None:
                raise InvalidRequest(
                    f"workload.{name}",
                    "a serving job keeps no checkpoints: an interrupted replica reloads the model "
                    "(workload.restart_minutes says how long that takes)",
                )
        for name in ("tokens", "mfu", "runs", "cards_per_run"):
            if getattr(workload, name) is not None:
                raise InvalidRequest(
                    f"workload.{name}", f"{name} is for a batch or independent workload, not a serving one"
                )
        _check_throughput(workload)
        return "inference"

    def job(self, workload: Workload, task: Task | None, sizing: TokenSizing | None, model: ModelSize) -> Job:
        assert workload.hours is not None and sizing is None  # ``check``
        throughput = None
        if workload.target_tokens_per_s is not None:
            if workload.replica_tokens_per_s is None and model.weight_gb is None:
                raise InvalidRequest(
                    "workload.target_tokens_per_s",
                    "what a replica serves depends on the model: give workload.model (or model_params_b), "
                    "or your measured workload.replica_tokens_per_s",
                )
            throughput = Throughput(
                target_tokens_per_s=workload.target_tokens_per_s,
                concurrent_requests=workload.concurrent_requests or DEFAULT_CONCURRENT_REQUESTS,
                measured_tokens_per_s=workload.replica_tokens_per_s,
                weight_gb=model.weight_gb,
                active_params_b=model.active_params_b,
            )
        return Job(
            kind="serving", hours=workload.hours, task=task, replicas=workload.replicas, throughput=throughput
        )

    def speedups(
        self,
        tables: OfferTables,
        job: Job,
        request: QuoteRequest,
        curve: ScalingCurve,
        operator_factor: float,
        rows: CandidateRows,
    ) -> SpeedupRule:
        del tables, job, rows
        workload = request.workload
        return CurveSpeedups(
            curve=None if request.scaling is None else curve,
            communication=workload.communication or "moderate",
            cross_node_factor=workload.cross_node_factor,
            operator_factor=operator_factor,
            sped_up=False,
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
        del speedups, fast
        return ReplicaPlacement(
            replicas=job.replicas
            if job.throughput is None
            else ArrayKey(_replicas_for(job.throughput, rows)),
            card_counts=asked.card_counts,
            fewest_cards=ArrayKey(rows.fewest_cards),
            matching=ArrayKey(rows.matching),
            single_card=asked.single_card,
        )

    def piece_cards(self, tables: OfferTables, job: Job, fewest_cards: FloatArray) -> FloatArray:
        return serving_layout(tables, fewest_cards).replica_cards

    def placement(
        self, tables: OfferTables, job: Job, fewest_cards: FloatArray, counts: FloatArray
    ) -> tuple[FloatArray, BoolArray, FloatArray]:
        return serving_units(tables, serving_layout(tables, fewest_cards), counts)

    def check_counts(
        self,
        tables: OfferTables,
        job: Job,
        card_counts: tuple[int, ...],
        memory_needed_gb: float | None,
        gpus: frozenset[str] | None,
    ) -> None:
        """Each ``card_counts`` total must hold whole replicas, at least ``replicas`` of them, on some
        offer (its cards per replica: ``serving_layout``); else a 422 saying what they need.

        A 422 rather than a warning: a count that no offer can split into replicas would otherwise return
        nothing (or, before, silently another count), and the sentence tells the caller the count to ask for.
        With a throughput target the replicas differ by GPU model: the evaluation leaves out what is short.
        """
        if job.throughput is not None:
            return
        fewest = (
            np.ones(tables.size)
            if memory_needed_gb is None
            else min_cards(memory_needed_gb, tables.gpu_memory_gb)
        )
        layout = serving_layout(tables, fewest)
        hosting = layout.hosts.copy()
        if gpus is not None:
            hosting &= np.array(
                [tables.gpu_names[code] in gpus for code in tables.gpu_code.tolist()], dtype=np.bool_
            )
        sizes = sorted({int(cards) for cards in layout.replica_cards[hosting].tolist()})
        if not sizes:
            return  # no offer hosts a replica at all: the evaluation says so (memory, capacity)
        replicas = job.replicas
        for cards in card_counts:
            if any(cards % size == 0 and cards >= replicas * size for size in sizes):
                continue
            need = " or ".join(f"{replicas * size}" for size in sizes)
            per_replica = " or ".join(f"{size}" for size in sizes)
            label = "replica" if replicas == 1 else "replicas"
            if cards < replicas * sizes[0]:
                reason = f"{replicas} {label} of {per_replica} cards need {need} cards; {cards} is too few"
            else:
                reason = (
                    f"{cards} cards are not whole replicas of {per_replica} cards; {replicas} {label} need "
                    f"{need} cards (or a multiple of the cards per replica for more replicas)"
                )
            raise InvalidRequest("card_counts", reason)
