"""``POST /quote``: the request a caller sends and the ranked, costed quotes it gets back.

Most bad input fails at decode with the field named (``Expected `float` > 0 - at `$.workload.gpu_hours```):
every number carries its bounds (an upper bound also rejects infinities, which ``msgspec.convert`` would
otherwise accept), and unknown fields are rejected at every level. What needs the catalog (GPU and region
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
    "Confidence",
    "Excluded",
    "Interruptions",
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
    "Risk",
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
Confidence = Literal["expected", "high"]
"""Which end of a quote's range a limit judges: ``expected`` (the figure it is ranked by) or ``high``
(its high end, interruptions included: the plan meets the limit even when speed is at its low end)."""
Risk = Literal["deadline", "budget", "spot"]
"""What can go wrong with a quote: its high end passes the deadline or the budget, or it runs on spot
capacity the vendor can take back."""
Lang = Literal["en", "zh"]
ScalingProfile = Literal["default", "nvlink", "comm_heavy"]
LineItemKind = Literal["compute", "network", "storage", "discount", "minimum"]
QuotePricingKind = PricingKind | Literal["mixed"]
"""An offer's pricing kind, or ``mixed``: one vendor's term packages for the GPU in whole periods plus its
card-hour price for the rest, the cheapest combination for the job's hours."""

# Upper bounds are generous but finite: they turn 1e308-style inputs into a named 4xx.
Hours = Annotated[float, msgspec.Meta(gt=0, le=1e7)]
MoneyCny = Annotated[float, msgspec.Meta(gt=0, le=1e12)]
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


SpeedRatios = Annotated[
    dict[FilterName, Annotated[float, msgspec.Meta(gt=0, le=100)]], msgspec.Meta(max_length=32)
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
    cross_node_factor: Annotated[float, msgspec.Meta(gt=0, le=1)] | None = None
    # Where the job's data lives (a city, also in Chinese: 南京) and how big it is: offers elsewhere add
    # the time to copy it over the cross-city line (and storage/traffic fees where the vendor lists them).
    data_city: FilterName | None = None
    dataset_gb: Annotated[float, msgspec.Meta(gt=0, le=1e7)] | None = None
    reference_gpu: FilterName | None = None
    speed_ratios: SpeedRatios | None = None
    model_params_b: Annotated[float, msgspec.Meta(gt=0, le=100_000)] | None = None
    task: Task | None = None
    # A named model (``GET /models``) in place of ``model_params_b``; memory uses its total parameters.
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    # Bytes per weight: bf16 2, fp8 / int8 1, int4 0.5. Left out: bf16, and QLoRA's usual 4-bit base.
    precision: Literal["bf16", "fp8", "int8", "int4"] | None = None
    # What an interruption (spot capacity taken back, a card failing) costs a batch job: the work since
    # its last checkpoint (half the interval on average; default 1 h) and the restart (default 15 min,
    # also a serving replica's time down). With ``checkpoint_minutes`` (the time one checkpoint takes
    # to write), each quote suggests the interval that loses least (Young/Daly).
    checkpoint_interval_h: Annotated[float, msgspec.Meta(ge=0.01, le=720)] | None = None
    checkpoint_minutes: Annotated[float, msgspec.Meta(gt=0, le=600)] | None = None
    restart_minutes: Annotated[float, msgspec.Meta(ge=0, le=1440)] | None = None


class QuoteRequest(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """What to quote. Filter lists narrow the offers; an empty list means no filter."""

    workload: Workload
    gpus: FilterList | None = None
    regions: FilterList | None = None
    cities: FilterList | None = None
    vendors: FilterList | None = None
    pricing: Annotated[list[QuotePricingKind], msgspec.Meta(max_length=5)] | None = None
    min_gpu_memory_gb: Annotated[float, msgspec.Meta(gt=0, le=10_000)] | None = None
    # None: every count each offer sells (powers of two within a machine, the machine itself, whole-node
    # multiples, and with a deadline the fewest cards that meet it), up to the service's plan cap.
    card_counts: Annotated[list[CardCount], msgspec.Meta(min_length=1, max_length=64)] | None = None
    deadline_hours: Hours | None = None
    budget_cny: MoneyCny | None = None
    # Which end of each quote's range the deadline and the budget judge (``Confidence``): with ``high``,
    # only plans whose high end (low speed, bad-luck interruptions) meets the limit qualify.
    deadline_confidence: Confidence = "expected"
    budget_confidence: Confidence = "expected"
    # Spot capacity (cheaper, but the vendor can take it back). None: allowed for a batch job, whose
    # interruptions are priced into its quotes, refused for serving, where a reclaimed replica drops
    # traffic; true or false decides for either.
    allow_spot: bool | None = None
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


class Interruptions(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """What interruptions a quote expects over its hours: failing hardware (cards × hours ÷ GPU-hours
    between failures) and, on spot capacity, the vendor taking machines back. ``expected`` is the mean
    count (``hardware`` + ``spot``); ``hours_lost`` and ``cost_cny`` what they cost at the offer's hourly
    rate, each its own expected figure: the quote's ``hours.expected`` and ``cost_cny.expected`` are the
    job's own, billed as usual, and only the high ends include interruptions (``high_includes`` of them, a
    bad-luck count). A batch job loses ``per_interruption_hours`` each (half a checkpoint interval and a
    restart); a serving replica is down for a restart, ``replica_down_share`` of the time, and its hours
    are not extended (``hours_lost`` is then replica-hours down, ``cost_cny`` 0)."""

    expected: float
    hardware: float
    spot: float = 0.0
    hours_lost: float
    cost_cny: float
    high_includes: int = 0
    per_interruption_hours: float
    # With ``workload.checkpoint_minutes``: the checkpoint interval that loses least (Young/Daly).
    suggested_checkpoint_interval_h: float | None = None
    replica_down_share: float | None = None


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
    # Spot / interruptible capacity (抢占式): the vendor can take the cards back mid-job.
    spot: bool = False
    interruptions: Interruptions | None = None
    # What can go wrong with this plan (``Risk``), empty when nothing: the summary names the best plan
    # without them (``QuoteResponse.safe``) when the recommendation has any.
    risks: list[Risk] = []


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
    quotes (and ``safe``) when they rank lower, so every id named here can be looked up in ``quotes``. ``recommended``
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
    # When the recommendation has risks (``Quote.risks``: a high end past the deadline or budget, spot
    # capacity): the top of the same ``rank_by`` ranking among the quotes without any, if one qualifies.
    safe: str | None = None
