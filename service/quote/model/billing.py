"""Billing: how many units of an offer a job rents, and what it is billed for a number of hours.

Every pricing variant reduces to one rule, ``cost = units × unit_rate_cny_per_hour × billed_hours``:

============  ==========================  ==================================  =========================
variant       unit                        units for n cards                   billed hours
============  ==========================  ==================================  =========================
card_hour     one card                    n (≤ cards per machine)             up to the granularity,
                                                                              at least the minimum
node_hour     one node (all its cards     max(min nodes, ⌈n / cards per       up to the granularity
              billed, idle or not)        node⌉) (≤ max nodes)
bundle        the bundle                  n / bundle size, a whole number     up to the granularity
                                          (≤ max bundles, one machine)
term          one period per card, or     n per-card packages (≤ max units)   whole periods: day 24 h,
              per machine                 or one machine package (n ≤ its     week 168 h, month 720 h
                                          cards)
============  ==========================  ==================================  =========================

A node's rate includes its network premium and storage fee. A term package's rate is its period price
spread over the period, so whole periods times the rate is the package price.

Only node-hour offers span machines: separately rented machines promise no interconnect between them,
so a per-machine term package rents one machine.

Each variant's terms come from its pricing kind (``model.pricing``); an offer's terms add whether it is
spot capacity the vendor can take back (``interruptible``, ``model.pricing.offer_terms``). The rule runs in bulk, over
(offers × card counts) arrays, in ``evaluate``; a returned quote's bill is gathered from those arrays,
never worked out again (``ExpectedBill``). Rounding up to the granularity allows for float noise (a
millionth of a unit), so 48 h / 3.0 = 16 h bills 16 h, never 17: ``whole_granules`` is that one rule,
for one figure or an array, and every bill rounds through it. The bounds of a range are each billed on
their own hours: 17.14 h at hourly granularity bills 18 h.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np
import numpy.typing as npt

from schemas.quote import MAX_CARDS

__all__ = [
    "BILLING_TOLERANCE",
    "BillingTerms",
    "ExpectedBill",
    "billed_hours",
    "billed_hours_of",
    "sold_counts",
    "whole_granules",
    "whole_granules_of",
]

BILLING_TOLERANCE = 1e-6
"""A millionth of a billing unit: well above float noise, far below anything a vendor bills."""


# A struct, not a frozen dataclass: a snapshot makes one per offer, and a frozen dataclass sets each field
# through object.__setattr__ (every offer's terms at 96,000 offers: 250 ms so, 40 ms as structs), and
# carries the collector's header, which nothing this holds needs.
class BillingTerms(msgspec.Struct, frozen=True, gc=False):
    """An offer's pricing reduced to the one billing rule above."""

    unit_cards: int
    min_units: int
    max_units: int
    whole_units_only: bool
    unit_rate_cny_per_hour: float
    granularity_hours: float
    min_billed_hours: float
    machine_cards: int
    spans_machines: bool
    # The most units rentable in all, across rentals of the offer (a package's ``max_units``); the others
    # are bounded per rental and by their stock.
    most_units: float = math.inf
    # Spot capacity (``Offer.spot``): billed as its kind bills, but the vendor can take it back mid-job,
    # so its quotes carry the interruptions that costs (``model.interruptions``).
    interruptible: bool = False

    @property
    def max_cards(self) -> int:
        return self.max_units * self.unit_cards


# A struct rather than a frozen dataclass: a response makes one per quote, and a frozen dataclass takes
# a microsecond to make (a setattr per field), ten times a struct.
class ExpectedBill(msgspec.Struct, frozen=True, gc=False):
    """One candidate's expected bill, as the evaluation computed it (unrounded)."""

    units: int  # rented: cards, nodes, bundles or packages
    billed_cards: int
    billed_hours: float
    hourly_rate_cny: float
    cost_cny: float


def sold_counts(terms: BillingTerms) -> frozenset[int]:
    """The card counts an offer sells, the ones quoted when a request names none.

    Within a machine: every count (every whole number of bundles for bundles) up to the machine; across
    machines (node-hour offers): every whole number of nodes from the minimum to the most nodes (and at
    most ``MAX_CARDS`` cards; the engine quotes up to ``max_plan_cards`` of them), so a budget or a time
    value can settle on 3 cards or 12 nodes rather than only on powers of two.
    """
    step = terms.unit_cards if terms.whole_units_only else 1
    largest = min(terms.max_cards, MAX_CARDS)
    within = min(terms.machine_cards, largest)
    counts = {within, *range(step, within + 1, step)}
    if terms.spans_machines:
        most_nodes = min(terms.max_units, largest // terms.unit_cards)
        counts.update(nodes * terms.unit_cards for nodes in range(max(terms.min_units, 1), most_nodes + 1))
    return frozenset(counts)


def whole_granules_of(hours: float, granularity_hours: float) -> float:
    """How many whole granules (or periods) of ``granularity_hours`` cover ``hours``: the one round-up."""
    return float(math.ceil(hours / granularity_hours - BILLING_TOLERANCE))


def billed_hours_of(hours: float, granularity_hours: float, min_billed_hours: float) -> float:
    """``hours`` rounded up to whole granules, and at least the minimum billed (one figure)."""
    return max(min_billed_hours, whole_granules_of(hours, granularity_hours) * granularity_hours)


def whole_granules(
    hours: npt.NDArray[np.float64],
    granularity_hours: npt.NDArray[np.float64],
    *,
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """``whole_granules_of`` over arrays (broadcast), the same float operations in the same order."""
    granules = np.divide(hours, granularity_hours, out=out)
    granules -= BILLING_TOLERANCE
    return np.ceil(granules, out=granules)


def billed_hours(
    hours: npt.NDArray[np.float64],
    granularity_hours: npt.NDArray[np.float64],
    min_billed_hours: npt.NDArray[np.float64],
    *,
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """``billed_hours_of`` over arrays (broadcast): whole granules, at least the minimum billed."""
    billed = whole_granules(hours, granularity_hours, out=out)
    billed *= granularity_hours
    return np.maximum(min_billed_hours, billed, out=billed)
