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
    "Alternative",
    "Communication",
    "Confidence",
    "Excluded",
    "Growth",
    "HeldBackPrice",
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
    "Sizing",
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
LineItemKind = Literal["compute", "network", "storage", "discount", "minimum", "data_copy"]
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


WorkloadKind = Literal["batch", "serving", "independent"]
Communication = Literal["light", "moderate", "heavy"]


class Workload(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """The job. A ``batch`` job (the default) gives ``gpu_hours``, its wall-clock time on ONE card of
    ``reference_gpu``, or ``tokens`` with a model and task (its FLOPs then size it on every GPU model);
    more cards shorten it. An ``independent`` job is the same work split into runs that never talk to each
    other (a sweep, batch generation): ``runs`` equal runs of ``cards_per_run`` cards, finished in whole
    rounds, or without ``runs`` divided freely. A ``serving`` job gives ``hours``, the wall-clock time it
    stays up, and ``replicas`` or a ``target_tokens_per_s``: each replica takes the cards that hold the
    model (task inference, rounded up to 1, 2, 4 or 8 in a machine, or whole machines beyond one);
    replicas are placed whole on as many machines of one offer as they need; more cards add replicas,
    never speed."""

    gpu_hours: JobHours | None = None
    kind: WorkloadKind = "batch"
    hours: JobHours | None = None
    replicas: Annotated[int, msgspec.Meta(ge=1, le=MAX_CARDS)] = 1
    # Sizing from the model and its data: training tokens (or, for inference, tokens generated) with a
    # model (or ``model_params_b``) and a task give the job's FLOPs; ``mfu`` (model FLOPs utilization,
    # measured) replaces the default range.
    tokens: Annotated[float, msgspec.Meta(gt=0, le=1e15)] | None = None
    mfu: Annotated[float, msgspec.Meta(ge=0.01, le=1)] | None = None
    # Independent work: how many equal runs (left out: the work divides freely) and the cards each takes
    # (left out: the fewest that hold the model).
    runs: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    cards_per_run: Annotated[int, msgspec.Meta(ge=1, le=MAX_CARDS)] | None = None
    # Serving by throughput: the tokens per second to serve in all, requests served at once per replica,
    # and a measured figure per replica replacing the estimate from each GPU's memory bandwidth.
    target_tokens_per_s: Annotated[float, msgspec.Meta(gt=0, le=1e8)] | None = None
    concurrent_requests: Annotated[int, msgspec.Meta(ge=1, le=1024)] | None = None
    replica_tokens_per_s: Annotated[float, msgspec.Meta(gt=0, le=1e7)] | None = None
    # The work may grow by this factor (2: it doubles): each quote says whether its offer carries it.
    growth_factor: Annotated[float, msgspec.Meta(gt=1, le=100)] | None = None
    # How much the job communicates between cards: light (data parallel, small model), moderate, heavy
    # (tensor/pipeline parallel, large dense gradients). Sets the derived in-machine curve and the
    # cross-node factor by the offer's interconnect. Left out: moderate, or heavy on the cards where the
    # model has to be split because it does not fit one.
    communication: Communication | None = None
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
    min_gpu_memory_gb: Annotated[float, msgspec.Meta(ge=1, le=10_000)] | None = None
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
    # 1, 2, ... in the ``rank_by`` ranking for the top ``limit``; 0 for a quote returned below them (the
    # cheapest, the fastest, the plan without risk, the single card the summary compares with).
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
    # Serving: the replicas the cards hold, and with a throughput target what they serve in all.
    replicas: int | None = None
    tokens_per_s: Range | None = None
    # Independent runs: how many run at once on the cards, and the whole rounds that finish them.
    runs_at_once: int | None = None
    rounds: int | None = None
    # Hours between booking and the start (a vendor that rents multi-card capacity booked a day ahead):
    # the deadline counts them.
    lead_time_h: float | None = None
    growth: Growth | None = None
    # The data-centre zone the stock is in as the feed names it, and whether ``city`` is the vendor's own
    # because the zone names no city the service knows (the quote then warns).
    zone: str = ""
    city_assumed: bool = False
    # The vendor's newer price, held back after a jump until a second refresh confirms it: the quote is
    # at the price served, and says what it would cost at this one.
    held_back: HeldBackPrice | None = None
    # Spot / interruptible capacity (抢占式): the vendor can take the cards back mid-job.
    spot: bool = False
    interruptions: Interruptions | None = None
    # What can go wrong with this plan (``Risk``), empty when nothing: the summary names the best plan
    # without them (``QuoteResponse.safe``) when the recommendation has any.
    risks: list[Risk] = []


class HeldBackPrice(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A price the vendor's feed moved past the quarantine threshold (``QUARANTINE_CHANGE_RATIO``), held
    back until the next refresh confirms it: ``price_cny`` in the offer's own unit (per card-hour,
    node-hour, bundle-hour or period), ``previous_cny`` the one served, ``change_ratio`` how far it moved
    (0.6 = 60 %), ``seen_at`` when the feed showed it, ``cost_cny`` the quote's expected cost at it (left
    out when the offer's shape changed with it)."""

    offer_id: str
    price_cny: float
    previous_cny: float
    change_ratio: float
    seen_at: datetime
    cost_cny: float | None = None


class Growth(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """Whether the quote's offer carries the job grown by ``factor`` (its work, replicas or runs): on
    ``cards`` cards of the same offer, within its most cards, nodes and stock (``fits``), in about ``hours``
    for about ``cost_cny`` (expected, billed as the offer bills); ``why`` says what does not fit."""

    factor: float
    cards: int
    fits: bool
    hours: float | None = None
    cost_cny: float | None = None
    why: str = ""


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


class Sizing(msgspec.Struct, kw_only=True, frozen=True):
    """How a job given by its tokens was sized: ``flops`` = ``flops_per_param_token`` (6 full fine-tune or
    pre-train, 4 LoRA/QLoRA, 2 inference) × ``active_params_b`` × 1e9 × ``tokens``, run at a model FLOPs
    utilization ``mfu`` of each GPU's peak dense BF16 rate (the caller's measured figure, or the default
    range)."""

    flops: float
    flops_per_param_token: float
    active_params_b: float
    tokens: float
    mfu: Range
    mfu_source: Literal["default", "caller"]


class Alternative(msgspec.Struct, kw_only=True, frozen=True):
    """Another way to run the job that changes the decision: the same request at another ``precision``
    (weights quantized to int8 or int4, which can cost accuracy), and its recommended quote."""

    precision: Literal["int8", "int4"]
    quote: Quote
    memory_needed_gb: float


class QuoteResponse(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """Ranked quotes. ``quotes`` holds the best ``limit`` by ``rank_by`` (``rank`` 1, 2, ...), then the
    cheapest and fastest quotes (and ``safe``) when they rank lower, with ``rank`` 0, so every id named
    here can be looked up in ``quotes``. ``recommended``
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
    # Present when the job is given by its tokens: how its hours were estimated.
    sizing: Sizing | None = None
    # Quantized weights where memory, the budget or the deadline blocks or dominates the answer.
    alternatives: list[Alternative] = []
    # When the recommendation has risks (``Quote.risks``: a high end past the deadline or budget, spot
    # capacity): the top of the same ``rank_by`` ranking among the quotes without any, if one qualifies.
    safe: str | None = None
