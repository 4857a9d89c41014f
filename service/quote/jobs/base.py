"""What a job kind is to the engine: the one interface behind ``workload.kind``.

A kind answers three questions, each in one place:

- **What the job is** (``JobKind.job``): the workload's fields checked for this kind (a 422 naming the
  field otherwise) and reduced to a ``Job``: its hours on one card, the task its memory is checked for.
- **How its time grows with cards** (``JobKind.speedups``): a ``SpeedupRule``, hashable, that gives the
  speed-up range of n cards on every (machine size, interconnect) column of the offer tables. A batch job
  follows the scaling curves and the cross-node factor; a serving job is never sped up (more cards add
  replicas).
- **Which candidates it is quoted at** (``JobKind.candidates``): a ``Candidates`` spec, hashable, whose
  fields are the whole input of the evaluation layout built from it (``evaluate.layout``), so the layout
  is looked up by exactly what it was made from: the counts each row sells, the counts asked for, the
  fewest cards meeting a deadline, a serving job's replicas placed over an offer's machines.

A new kind is a value of ``schemas.quote.WorkloadKind``, a module here with its ``JobKind`` subclass and
its ``Candidates`` (and, when its time grows its own way, a ``SpeedupRule``), a line in ``jobs.JOB_KINDS``,
and its messages in ``prose.texts``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import msgspec
import numpy as np

from schemas.quote import Communication, QuoteRequest, Task, Workload, WorkloadKind
from service.quote.base.arrays import ArrayT, BoolArray, FloatArray
from service.quote.base.paths import FastPaths
from service.quote.model.one_card import OneCardHours
from service.quote.model.scaling import ScalingColumns, ScalingCurve, speedup_columns
from service.quote.model.sizing import TokenSizing
from service.quote.model.tables import OfferTables
from service.quote.model.throughput import Throughput

__all__ = [
    "MEMORY_FOLLOWS",
    "ArrayKey",
    "AskedFor",
    "CandidateRows",
    "Candidates",
    "CurveSpeedups",
    "Job",
    "JobKind",
    "LayoutInputs",
    "ModelSize",
    "Placement",
    "RowsAt",
    "SpeedupRule",
    "every_row",
]


A = TypeVar("A", bound="np.ndarray[Any, Any]")


class ArrayKey(Generic[A]):
    """A read-only array as part of a hashable key: equal when dtype, shape and contents are."""

    __slots__ = ("_bytes", "_hash", "array")

    def __init__(self, array: A) -> None:
        self.array = array
        self._bytes = array.tobytes()
        self._hash = hash((array.dtype.str, array.shape, self._bytes))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ArrayKey)
            and self._hash == other._hash
            and self.array.dtype == other.array.dtype
            and self.array.shape == other.array.shape
            and self._bytes == other._bytes
        )


class ModelSize(msgspec.Struct, frozen=True, gc=False):
    """A job's model: parameters in all and active per token (billions), and its weights' GB at the
    job's precision; None where the request gives no model."""

    params_b: float | None
    active_params_b: float | None
    weight_gb: float | None


class Job(msgspec.Struct, frozen=True, gc=False):
    """A workload as the engine uses it: its kind, its hours and the task its memory is checked for.

    ``hours`` are on one card of the reference GPU for a job more cards shorten (for a job given by its
    tokens, ``sizing``, the expected hours on one RTX 4090: each GPU model's own follow from its peak), and
    wall-clock for one they do not (a serving job's hours up); ``replicas`` copies are served side by side.
    """

    kind: WorkloadKind
    hours: float
    task: Task | None
    replicas: int = 1
    sizing: TokenSizing | None = None
    runs: int | None = None  # independent work: equal runs (None: it divides freely)
    cards_per_run: int | None = None  # independent work: the caller's cards per run
    throughput: Throughput | None = None  # a serving job sized by the tokens per second it must serve


class RowsAt(Protocol):
    """Per-row values read at some cells, each cell its row's value: an array with one per cell."""

    def __call__(self, values: ArrayT) -> ArrayT: ...


def every_row(values: ArrayT) -> ArrayT:
    """Per-row values as they are, against every row (the ``RowsAt`` of a whole ``(counts, rows)`` grid)."""
    return values


class Placement(Protocol):
    """A placement worked out at some cells alone: for their card counts ``cards`` (one per cell), and
    their rows' figures read by ``rows_at``, the units each rents, whether it can be placed, and the
    machines (or nodes) it takes."""

    def __call__(self, cards: FloatArray, rows_at: RowsAt) -> tuple[FloatArray, BoolArray, FloatArray]: ...


class LayoutInputs(msgspec.Struct, frozen=True):
    """What a layout is built from: the counts evaluated, the candidates quoted among them, and, where a
    placement replaces the one-rental rule (replicas or runs placed over machines), the placement, worked
    out at the cells billed alone, and the job's own per-row arrays it reads (besides the tables'
    columns: rows alike in all of them are placed alike, ``evaluate.placing``)."""

    counts: tuple[int, ...]
    requested: BoolArray  # (counts, rows), or broadcast to it
    placement: Placement | None = None
    placement_rows: tuple[FloatArray | BoolArray, ...] = ()
    # The tables' columns ``placement_rows`` follow from (with the placement columns): a hint, checked
    # where it is read (``evaluate.placing``)
    placement_follows: tuple[str, ...] = ()
    # (rows,) the rows whose one-card cell a response can read past the requested ones: where the
    # placement can supply one card, the only one-card cells the summary's single card can be; none for an
    # answer without it (``AskedFor.single_card``); None: every row's (``evaluate.layout``).
    one_card_rows: BoolArray | None = None


# What a serving replica's or an independent run's cards follow from: a row's GPU memory (with the
# machine and rental columns a placement reads already).
MEMORY_FOLLOWS: tuple[str, ...] = ("gpu_memory_gb",)


class Candidates(msgspec.Struct, frozen=True, gc=False):
    """Which (card count, row) candidates a job is quoted at: the whole input of its layout, hashable (a
    frozen struct: equal fields, equal specs). Each kind's subclass says how to build the layout's inputs.

    ``shared`` specs recur from job to job (the counts each row sells); the others depend on the job's
    own figures (a deadline's fewest cards, a replica's cards) and are kept apart from them.
    """

    shared: ClassVar[bool] = True

    def inputs(self, tables: OfferTables) -> LayoutInputs:
        """The layout's inputs, from this spec and the tables alone."""
        raise NotImplementedError


class SpeedupRule(msgspec.Struct, frozen=True, gc=False):
    """How a job's time grows with cards: hashable; equal rules give equal speed-up tables."""

    def columns(self, tables: OfferTables, counts: Sequence[int]) -> ScalingColumns:
        """Speed-ups of ``counts`` cards on every scaling column of ``tables`` (low / expected / high)."""
        raise NotImplementedError


class CurveSpeedups(SpeedupRule, frozen=True, gc=False):
    """Speed-ups by each column's curve and cross-node factor (``model.scaling``): derived from the
    offer's interconnect and ``communication`` unless the caller's ``curve`` or ``cross_node_factor``
    replaces them; ``sped_up`` False gives 1 at every count (the columns are still the offers' own).

    ``split`` marks the rows whose model does not fit one card: split across cards (tensor or pipeline
    parallel, ZeRO-3), every step moves weights or activations between them, so those rows take the
    curves and factors of a communication-heavy job (one more column per machine size and interconnect).
    """

    curve: ScalingCurve | None
    communication: Communication
    cross_node_factor: float | None
    operator_factor: float
    sped_up: bool = True
    split: ArrayKey[BoolArray] | None = None

    def columns(self, tables: OfferTables, counts: Sequence[int]) -> ScalingColumns:
        own = self._columns(tables, counts, self.communication)
        if self.split is None:
            return own
        heavy = self._columns(tables, counts, "heavy")
        return ScalingColumns(
            columns=own.columns + heavy.columns,
            code=tables.scaling_code + len(own.columns) * self.split.array,
            low=np.hstack((own.low, heavy.low)),
            expected=np.hstack((own.expected, heavy.expected)),
            high=np.hstack((own.high, heavy.high)),
        )

    def _columns(
        self, tables: OfferTables, counts: Sequence[int], communication: Communication
    ) -> ScalingColumns:
        return speedup_columns(
            counts,
            tables.scaling_keys,
            tables.scaling_code,
            curve=self.curve,
            communication=communication,
            cross_node_factor=self.cross_node_factor,
            operator_factor=self.operator_factor,
            serving=not self.sped_up,
        )


class AskedFor(msgspec.Struct, frozen=True, gc=False):
    """What the request asks of the candidates: its card counts (sorted, no repeats; None for every
    count each row sells, up to ``max_plan_cards``) and its deadline; and whether the answer compares a
    single card (False: the recommendation alone is read, as a quantized alternative's)."""

    card_counts: tuple[int, ...] | None
    deadline_hours: float | None
    max_plan_cards: int
    single_card: bool = True


class CandidateRows(msgspec.Struct, frozen=True):
    """Per row ``(rows,)``, what choosing a job's candidates may read: whether the row matches the
    request's filters, the fewest cards holding the model, the expected and the high hours on one card."""

    matching: BoolArray
    fewest_cards: FloatArray
    one_card_hours: OneCardHours  # low / expected / high (the low and high rows divided where first read)
    # (3, rows) low / expected / high tokens per second one replica serves, for a throughput target
    replica_tokens_per_s: FloatArray | None = None


class JobKind(ABC):
    """One value of ``workload.kind``: what the job is, how its time grows, where it is quoted."""

    kind: ClassVar[WorkloadKind]
    # More cards shorten the job: its hours are on one card (and convert between GPU models), and a
    # quote on several cards says how they scale. Otherwise they are the job's own wall-clock hours.
    shortened_by_cards: ClassVar[bool]
    # An interruption loses the work since the last checkpoint and lengthens the job (a batch job);
    # otherwise it only takes a replica down for a restart (serving: the hours are wall-clock).
    loses_work: ClassVar[bool]
    # Quoted on spot capacity when the request leaves ``allow_spot`` out: a job that resumes from its
    # checkpoints is, one whose users wait on it is not.
    spot_by_default: ClassVar[bool]

    @abstractmethod
    def check(self, workload: Workload) -> Task | None:
        """The workload's fields checked for this kind (``InvalidRequest`` naming the field); the task its
        memory is checked for."""

    @abstractmethod
    def job(self, workload: Workload, task: Task | None, sizing: TokenSizing | None, model: ModelSize) -> Job:
        """The checked workload reduced (``sizing``: its tokens' FLOPs, when it gives tokens; ``model``: its
        parameters and weights, when it names a model or its size)."""

    @abstractmethod
    def speedups(
        self,
        tables: OfferTables,
        job: Job,
        request: QuoteRequest,
        curve: ScalingCurve,
        operator_factor: float,
        rows: CandidateRows,
    ) -> SpeedupRule:
        """The rule the job's speed-ups follow (``curve``: the request's, resolved)."""

    @abstractmethod
    def candidates(
        self,
        tables: OfferTables,
        job: Job,
        asked: AskedFor,
        rows: CandidateRows,
        speedups: SpeedupRule,
        fast: FastPaths,
    ) -> Candidates:
        """The candidates the job is quoted at."""

    def piece_cards(self, tables: OfferTables, job: Job, fewest_cards: FloatArray) -> FloatArray | None:
        """``(rows,)``: the cards one placed piece of the job takes (a serving replica, an independent
        run), where the job is placed in pieces; None for a job that runs as one."""
        del tables, job, fewest_cards
        return None

    def placement(
        self, tables: OfferTables, job: Job, fewest_cards: FloatArray, counts: FloatArray
    ) -> tuple[FloatArray, BoolArray, FloatArray] | None:
        """``(counts, rows)``: the units ``counts`` cards of the job rent, whether they can be placed and
        the machines they take, where the job is placed in pieces over an offer's machines; None for a job
        rented as one (the offer's own units and limits)."""
        del tables, job, fewest_cards, counts
        return None

    def check_counts(
        self,
        tables: OfferTables,
        job: Job,
        card_counts: tuple[int, ...],
        memory_needed_gb: float | None,
        gpus: frozenset[str] | None,
    ) -> None:
        """Refuse (422) card counts no offer can quote this job at; by default every count may be."""
        del tables, job, card_counts, memory_needed_gb, gpus
