"""Interruptions: spot capacity taken back and hardware that fails, as rates, expected counts and lost hours.

A candidate (one offer at n cards) is interrupted from two sources, each a rate per wall-clock hour:

- **failing hardware**: a synchronous job stops whole when any of its cards fails, so n cards stop it n
  times as often as one: ``n / gpu_hours_between_failures``. The default, one failure per 50,700 GPU-hours,
  is Llama 3 405B's pre-training: 419 unexpected interruptions in 54 days on 16,384 H100
  (16,384 × 54 × 24 / 419 ≈ 50,700; 58.7 % of them GPU faults).
- **spot capacity** (``BillingTerms.interruptible``): each rented machine can be taken back, so
  ``machines × interruptions per machine-month / 720``. The rate is the vendor's
  (``Offer.spot_interruptions_per_month``), else ``DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH``: 0.05 / 0.10 /
  0.20 per machine-month, the bounds of the buckets AWS's Spot Instance Advisor sorts instance types into
  by the share of their spot capacity reclaimed over the trailing month (< 5 %, 5–10 %, 10–15 %, 15–20 %,
  > 20 %); its GPU types sit from 5–10 % (A100) to 10–20 % (H100). Read as interruptions per 720 h of one
  machine; a vendor that bids capacity away faster says so in its feed.

Each interruption of a batch job loses the work since its last checkpoint, half a checkpoint interval
on average, plus the restart (``LossTerms``); a serving replica loses the restart, and its hours, being
wall-clock, are not extended. The expected count is rate × hours; the high end of a quote's hours adds
``high_count``: the 90th percentile of a Poisson count whose mean is the high end's (the pessimistic rate
over the pessimistic hours), the interruptions a run with bad luck meets, so a 1-card, 48-hour job
(0.001 expected) adds nothing and a 1,024-card, 500-hour one (10 expected) adds 14. Every figure here is
elementwise, so a cell's answer never depends on which other cells are worked out with it.

The checkpoint interval that loses least (Young/Daly) is ``√(2 × checkpoint time × hours between
interruptions)``; a quote suggests it when the caller gives the checkpoint time. Sources and the reasons
for each default: docs/engine.md, "Interruptions".
"""

from __future__ import annotations

import functools
import math

import msgspec
import numpy as np

from service.defaults import DEFAULT_GPU_HOURS_BETWEEN_FAILURES
from service.quote.base.arrays import FloatArray, IntArray
from service.quote.base.memo import MemoSlot

__all__ = [
    "DEFAULT_CHECKPOINT_INTERVAL_H",
    "DEFAULT_GPU_HOURS_BETWEEN_FAILURES",
    "DEFAULT_RESTART_MINUTES",
    "DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH",
    "HIGH_QUANTILE",
    "HOURS_PER_MONTH",
    "SPOT_RATES",
    "LossTerms",
    "high_count",
    "high_count_at_most",
    "prepare_high_counts",
    "spot_rates",
    "young_daly_interval_h",
]

DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH: tuple[float, float, float] = (0.05, 0.10, 0.20)
HOURS_PER_MONTH = 720.0
# A round default between checkpointing every epoch of a fine-tune and every few hours of a long run;
# the caller's ``workload.checkpoint_interval_h`` replaces it.
DEFAULT_CHECKPOINT_INTERVAL_H = 1.0
# Noticing the interruption, getting the cards back and reloading the checkpoint (or the model, for a
# serving replica); the caller's ``workload.restart_minutes`` replaces it.
DEFAULT_RESTART_MINUTES = 15.0
HIGH_QUANTILE = 0.9

# Below this mean, no interruption is the 90th percentile: P(N = 0) = e^-mean ≥ 0.9.
_NONE_BELOW = -math.log(HIGH_QUANTILE)
# Up to this mean the percentile is read from the exact table; past it the Cornish-Fisher expansion is
# within one.
_EXACT_UP_TO = 30.0
_TABLE_COUNTS = 48  # the table's counts reach past the percentile of a mean of 30 (37)
_Z = 1.2815515655446004  # the standard normal's 90th percentile


@functools.cache
def _breakpoints() -> FloatArray:
    """``(counts,)``: for each n, the largest mean whose Poisson P(N ≤ n) is still ≥ 0.9 (the percentile is
    non-decreasing in the mean, so a mean's percentile is the number of breakpoints below it). Bisected
    for every n at once, the probabilities summed in logs; worked out once per process."""
    counts = np.arange(_TABLE_COUNTS)
    log_factorials = np.array([math.lgamma(k + 1) for k in range(_TABLE_COUNTS)])
    low, high = np.zeros(_TABLE_COUNTS), np.full(_TABLE_COUNTS, 4.0 * _TABLE_COUNTS)
    for _ in range(100):
        middle = (low + high) / 2
        log_pmf = -middle[:, None] + counts[None, :] * np.log(middle[:, None]) - log_factorials[None, :]
        cdf = np.cumsum(np.exp(log_pmf), axis=1)[counts, counts]
        met = cdf >= HIGH_QUANTILE
        low, high = np.where(met, middle, low), np.where(met, high, middle)
    low[0] = _NONE_BELOW  # exact: e^-mean = 0.9
    low.flags.writeable = False
    return low


def prepare_high_counts() -> None:
    """Work out the table ``high_count`` reads (4 ms, once per process) ahead of the first request whose
    high end counts interruptions."""
    _breakpoints()


def high_count(means: FloatArray) -> FloatArray:
    """Interruptions a quote's high end includes for Poisson ``means`` (NaN and 0 give 0): the 90th
    percentile, read from the exact table up to a mean of 30, the Cornish-Fisher expansion past it."""
    some = means > _NONE_BELOW  # NaN not: below it (most cells of most jobs) the count is 0
    counts: FloatArray = np.zeros(means.shape)
    if some.all():
        counts[...] = np.searchsorted(_breakpoints(), means)
    elif some.any():
        counts[some] = np.searchsorted(_breakpoints(), means[some])
    large = means > _EXACT_UP_TO
    if large.any():
        chosen = means[large]  # an infinite mean (hours unknown) stays infinite
        counts[large] = np.ceil(chosen + _Z * np.sqrt(chosen) + (_Z * _Z - 1) / 6 - 0.5)
    return counts


def high_count_at_most(means: FloatArray) -> FloatArray:
    """Per mean, a count ``high_count`` gives no mean up to it more than: its own while the exact table
    reads it, one more past the table (the expansion is within one of the exact percentile, which never
    falls as the mean rises)."""
    counts: FloatArray = high_count(means) + (means > _EXACT_UP_TO)
    return counts


def young_daly_interval_h(checkpoint_h: float, hours_between_interruptions: float) -> float:
    """The checkpoint interval that loses least: √(2 × checkpoint time × hours between interruptions)."""
    return math.sqrt(2 * checkpoint_h * hours_between_interruptions)


class LossTerms(msgspec.Struct, frozen=True, gc=False):
    """What interrupts a request's candidates and what each interruption costs, per offer row.

    ``spot_per_hour`` is ``(3, rows)``: low / expected / high interruptions per machine-hour of a spot
    row, 0 for the others. ``lost_hours`` is what one interruption adds to a job's hours (0 when it adds
    none: a serving job's hours are wall-clock).
    """

    per_card_hour: float  # hardware: 1 / GPU-hours between failures
    spot_per_hour: FloatArray
    machine_cards: FloatArray
    lost_hours: float
    any_spot: bool

    def rate(self, cards: FloatArray, rows: IntArray | None, bound: int) -> FloatArray:
        """Interruptions per wall-clock hour of ``cards`` cards on ``rows`` (None: every row, ``cards``
        broadcast against them) at ``bound`` (0 low, 1 expected, 2 high)."""
        hardware: FloatArray = cards * self.per_card_hour
        if not self.any_spot:
            return hardware
        spot = self.spot_per_hour[bound]
        machine_cards = self.machine_cards
        if rows is not None:
            spot, machine_cards = spot.take(rows), machine_cards.take(rows)
        rate: FloatArray = hardware + np.ceil(cards / machine_cards) * spot
        return rate

    def added_hours(self, compute_hours: FloatArray, cards: FloatArray, rows: IntArray | None) -> FloatArray:
        """Hours the high end adds to ``compute_hours`` (the high end's own, unchanged by copies): the
        high count at the high rate times the hours each interruption loses. Unknown hours (NaN or
        infinite) stay unknown, with no floating-point warning: every rate is positive and finite."""
        added: FloatArray = high_count(compute_hours * self.rate(cards, rows, 2)) * self.lost_hours
        return added


def spot_rates(
    interruptible: np.ndarray, stated_per_month: FloatArray, default_per_month: tuple[float, float, float]
) -> FloatArray:
    """``(3, rows)`` interruptions per machine-hour: the vendor's stated rate at every bound where given,
    else the default range; 0 for rows that are not spot."""
    default = np.array(default_per_month, dtype=np.float64)[:, None]
    per_month = np.where(np.isnan(stated_per_month), default, stated_per_month)
    rates: FloatArray = np.where(interruptible, per_month / HOURS_PER_MONTH, 0.0)
    rates.flags.writeable = False
    return rates


# Each default range's spot rates per snapshot (a snapshot's offers never change).
SPOT_RATES: MemoSlot[tuple[float, float, float], FloatArray] = MemoSlot("spot rates", size=8)
