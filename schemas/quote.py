"""``POST /quote``: the request a caller sends and the ranked, costed quotes it gets back.

Most bad input fails at decode with the field named (``Expected `float` > 0 - at `$.workload.gpu_hours```):
every number carries its bounds, a range a person could mean (an upper bound also rejects infinities,
which ``msgspec.convert`` would otherwise accept; a lower bound above zero keeps ``5e-324`` from making
the engine divide its way to an overflow), and unknown fields are rejected at every level. What needs the catalog (GPU and region
names, the scaling curve's consistency) is checked by the engine, which raises ``InvalidRequest``.

Money is CNY rounded half-up to the fen; hours are rounded half-up to 0.01 h for display.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from schemas.offer import Interconnect, PricingKind, TermPeriod

__all__ = [
    "DEFAULT_CARD_COUNTS",
    "MAX_CARDS",
    "Communication",
    "Excluded",
    "Lang",
    "LineItem",
    "LineItemKind",
    "MemoryNeed",
    "Quote",
    "QuotePricingKind",
    "QuoteRequest",
    "QuoteResponse",
    "Range",
    "RankBy",
    "ScalingOverride",
    "ScalingPoints",
    "ScalingProfile",
    "SnapshotInfo",
    "Task",
    "Workload",
    "WorkloadKind",
]

MAX_CARDS = 1024
# Counts within one 8-card machine and one step past it: a short list a caller might give. Without
# ``card_counts`` a request is quoted at every count each offer sells (``QuoteRequest.card_counts``).
DEFAULT_CARD_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16)

Task = Literal["inference", "lora", "qlora", "full_finetune", "pretrain"]
RankBy = Literal["cost", "time", "value"]
Lang = Literal["en", "zh"]
ScalingProfile = Literal["default", "nvlink", "comm_heavy"]
LineItemKind = Literal["compute", "network", "storage", "discount", "minimum"]
QuotePricingKind = PricingKind | Literal["mixed"]
"""An offer's pricing kind, or ``mixed``: one vendor's term packages for the GPU in whole periods plus its
card-hour price for the rest, the cheapest combination for the job's hours."""

# Bounds are generous but finite: they turn 1e308- and 5e-324-style inputs into a named 4xx. A deadline
# under 36 s or a budget under one fen is no limit anyone sets.
Hours = Annotated[float, msgspec.Meta(ge=0.01, le=1e7)]
MoneyCny = Annotated[float, msgspec.Meta(ge=0.01, le=1e12)]
CardCount = Annotated[int, msgspec.Meta(ge=1, le=MAX_CARDS)]
FilterName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
FilterList = Annotated[list[FilterName], msgspec.Meta(max_length=64)]
Speedup = Annotated[float, msgspec.Meta(ge=1, le=MAX_CARDS)]
CardCountKey = Annotated[str, msgspec.Meta(pattern=r"^[1-9][0-9]{0,3}$")]

ScalingPoints = Annotated[
    dict[CardCountKey, tuple[Speedup, Speedup]], msgspec.Meta(min_length=1, max_length=64)
]
"""Measured speed-ups over one card: ``{"4": [2.8, 3.2], "8": [4.5, 5.5]}`` (card count → [low, high])."""

ScalingOverride = ScalingPoints | ScalingProfile
"""Either the caller's own points or a named curve: ``default``, ``nvlink`` (near-linear), ``comm_heavy``."""


# A job shorter than 3.6 s on one card is no rental; the floor also keeps every hours figure a normal float.
JobHours = Annotated[float, msgspec.Meta(ge=0.001, le=1e7)]


# A measured speed 100 times below or above the reference GPU's is beyond any pair of GPUs rented today.
SpeedRatios = Annotated[
    dict[FilterName, Annotated[float, msgspec.Meta(ge=0.01, le=100)]], msgspec.Meta(max_length=32)
]
"""Measured speeds relative to ``reference_gpu`` by GPU: ``{"h800": 3.2}`` (the job runs 3.2x as fast on
an H800); each replaces the catalog's estimated range for that model when hours are converted."""


WorkloadKind = Literal["batch", "serving"]
Communication = Literal["light", "moderate", "heavy"]


class Workload(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The job. A ``batch`` job (the default) gives ``gpu_hours``: its wall-clock time on ONE card of
    ``reference_gpu``, shortened by more cards. A ``serving`` job gives ``hours``: the wall-clock time it
    stays up. Each of its ``replicas`` takes the cards that hold the model (task inference, rounded up to
    1, 2, 4 or 8 in a machine, or whole machines beyond one); replicas are placed whole on as many machines
    of one offer as they need; more cards add replicas, never speed. Exactly one of ``gpu_hours`` and
    ``hours`` is given, matching ``kind``."""

    gpu_hours: JobHours | None = None
    kind: WorkloadKind = "batch"
    hours: JobHours | None = None
    replicas: Annotated[int, msgspec.Meta(ge=1, le=MAX_CARDS)] = 1
    # How much the job communicates between cards: light (data parallel, small model), moderate, heavy
    # (tensor/pipeline parallel, large dense gradients). Sets the derived in-machine curve and the
    # cross-node factor by the offer's interconnect.
    communication: Communication = "moderate"
    # Efficiency kept per doubling of nodes past one machine, replacing the factor derived from the offer's
    # interconnect and ``communication`` (measured on your cluster: 8 → 16 cards at 1.8× is 0.9).
    # At least 0.1: below that two nodes would run a job 5 times slower than one, which no fabric does.
    cross_node_factor: Annotated[float, msgspec.Meta(ge=0.1, le=1)] | None = None
    # Where the job's data lives (a city, also in Chinese: 南京) and how big it is: offers elsewhere add
    # the time to copy it over the cross-city line (and storage/traffic fees where the vendor lists them).
    data_city: FilterName | None = None
    dataset_gb: Annotated[float, msgspec.Meta(ge=0.001, le=1e7)] | None = None  # 1 MB to 10 PB
    reference_gpu: FilterName | None = None
    speed_ratios: SpeedRatios | None = None
    model_params_b: Annotated[float, msgspec.Meta(ge=0.001, le=100_000)] | None = None  # 1 M to 100 T
    task: Task | None = None
    # A named model (``GET /models``) in place of ``model_params_b``; memory uses its total parameters.
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    # Bytes per weight: bf16 2, fp8 / int8 1, int4 0.5. Left out: bf16, and QLoRA's usual 4-bit base.
    precision: Literal["bf16", "fp8", "int8", "int4"] | None = None


class QuoteRequest(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """What to quote. Filter lists narrow the offers; an empty list means no filter."""

    workload: Workload
    gpus: FilterList | None = None
    regions: FilterList | None = None
    cities: FilterList | None = None
    vendors: FilterList | None = None
    pricing: Annotated[list[QuotePricingKind], msgspec.Meta(max_length=5)] | None = None
    min_gpu_memory_gb: Annotated[float, msgspec.Meta(ge=1, le=10_000)] | None = None
    # None: every count each offer sells (powers of two within a machine, the machine itself, whole-node
    # multiples, and with a deadline the fewest cards that meet it), up to the service's plan cap.
    card_counts: Annotated[list[CardCount], msgspec.Meta(min_length=1, max_length=64)] | None = None
    deadline_hours: Hours | None = None
    budget_cny: MoneyCny | None = None
    rank_by: RankBy = "cost"
    time_value_cny_per_hour: Annotated[float, msgspec.Meta(ge=0, le=1e9)] | None = None
    scaling: ScalingOverride | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10
    lang: Lang = "en"


class Range(msgspec.Struct, frozen=True):
    """A figure with its honest spread: ``expected`` sits between ``low`` and ``high``."""

    low: float
    expected: float
    high: float


class LineItem(msgspec.Struct, kw_only=True, frozen=True):
    """One line of the expected bill. Items add up to ``cost_cny.expected``; a discount is negative."""

    kind: LineItemKind
    description: str
    amount_cny: float


class Quote(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """One way to run the job: an offer at a card count, with time and cost ranges.

    ``break_even_hours`` (term packages): hours of use per period past which the package costs less than
    the card-hour price (the same vendor's, else the cheapest for the GPU). ``hours`` is wall-clock time; ``billed_hours`` is what the expected run is billed for (rounded up to
    the offer's granularity, minimum or whole term periods). ``effective_card_hour_cny`` is the expected
    cost spread over the cards the job uses and the hours it runs, so idle cards and unused term time show.
    """

    id: str
    rank: int
    offer_id: str
    vendor: str
    region: str
    city: str
    gpu: str
    gpu_memory_gb: int
    interconnect: Interconnect
    cards: int
    nodes: int
    billed_cards: int
    pricing: QuotePricingKind
    speedup: Range
    hours: Range
    cost_cny: Range
    billed_hours: float
    hourly_rate_cny: float
    effective_card_hour_cny: float
    breakdown: list[LineItem]
    warnings: list[str]
    price_fetched_at: datetime
    stale: bool = False
    value_cny: float | None = None
    term_period: TermPeriod | None = None
    break_even_hours: float | None = None
    label: str = ""


class Excluded(msgspec.Struct, kw_only=True, frozen=True):
    """Candidates (offer × card count) left out, by reason; one candidate counts under every reason it
    fails. ``filters`` counts those outside the request's gpus/regions/cities/vendors/pricing/memory filters.
    ``stale`` counts candidates left out because their price is older than the maximum age, only when fresh
    candidates qualified and the stale ones were dropped: it is 0 when nothing qualifies and when stale
    prices are used as the fallback (no fresh candidate qualified), since staleness left nothing out then."""

    memory: int = 0
    deadline: int = 0
    budget: int = 0
    stale: int = 0
    capacity: int = 0
    filters: int = 0


class SnapshotInfo(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """Which price snapshot answered, and when its oldest price was fetched."""

    version: int
    oldest_fetched_at: datetime | None


class MemoryNeed(msgspec.Struct, kw_only=True, frozen=True):
    """What the model needs: ``needed_gb`` in total (parameters × bytes per parameter for the task and
    precision) and, per GPU model the snapshot offers, the fewest cards holding it at ≤ 90 % of each card's
    memory (``min_cards``: ``{"rtx4090": 9, "h800": 3}``)."""

    needed_gb: float
    min_cards: dict[str, int]


class QuoteResponse(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """Ranked quotes. ``quotes`` holds the best ``limit`` by ``rank_by``, plus the cheapest and fastest
    quotes when they rank lower, so every id named here can be looked up in ``quotes``. ``recommended``
    is always the top of the ``rank_by`` ranking (rank 1): the cheapest for ``cost``, the fastest for
    ``time``, the best cost plus waited hours × ``time_value_cny_per_hour`` for ``value``.
    The ids are null (never missing) when nothing qualifies; ``warnings`` is always present."""

    quotes: list[Quote]
    cheapest: str | None
    fastest: str | None
    recommended: str | None
    summary: str
    excluded: Excluded
    snapshot: SnapshotInfo
    warnings: list[str]
    rank_by: RankBy
    # Present when the request gives a model size (or name) and a task.
    memory: MemoryNeed | None = None
