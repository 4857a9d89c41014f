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

The rule runs in bulk, over (offers × card counts) arrays, in ``evaluate``; a returned quote's bill is
gathered from those arrays, never worked out again. Rounding up to the granularity allows
for float noise (a millionth of a unit), so 48 h / 3.0 = 16 h bills 16 h, never 17. The bounds of a range
are each billed on their own hours: 17.14 h at hourly granularity bills 18 h.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from schemas.offer import (
    PERIOD_HOURS,
    BundlePricing,
    CardHourPricing,
    NodeHourPricing,
    Pricing,
    PricingKind,
    TermPricing,
)
from schemas.quote import MAX_CARDS

__all__ = [
    "KIND_CODES",
    "MIXED_CODE",
    "PERIOD_HOURS",
    "BillingTerms",
    "billed_hours",
    "billing_terms",
    "sold_counts",
]

KIND_CODES: dict[PricingKind, int] = {"card_hour": 0, "node_hour": 1, "bundle": 2, "term": 3}
# A combined plan's rows (``_plans``): term packages in whole periods plus card-hours for the rest.
MIXED_CODE = len(KIND_CODES)
# A millionth of a billing unit: well above float noise, far below anything a vendor bills.
_BILLING_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class BillingTerms:
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

    @property
    def max_cards(self) -> int:
        return self.max_units * self.unit_cards


def billing_terms(pricing: Pricing) -> BillingTerms:
    """The billing rule's parameters for one pricing variant."""
    match pricing:
        case CardHourPricing():
            return BillingTerms(
                unit_cards=1,
                min_units=1,
                max_units=pricing.max_cards,
                whole_units_only=False,
                unit_rate_cny_per_hour=pricing.cny_per_card_hour,
                granularity_hours=pricing.granularity_s / 3600,
                min_billed_hours=pricing.min_billed_hours,
                machine_cards=pricing.max_cards,
                spans_machines=False,
            )
        case NodeHourPricing():
            node_rate = (
                pricing.cny_per_node_hour
                + pricing.network_premium_cny_per_node_hour
                + pricing.storage_cny_per_node_hour
            )
            return BillingTerms(
                unit_cards=pricing.cards_per_node,
                min_units=pricing.min_nodes,
                max_units=pricing.max_nodes or MAX_CARDS,
                whole_units_only=False,
                unit_rate_cny_per_hour=node_rate,
                granularity_hours=pricing.granularity_s / 3600,
                min_billed_hours=0.0,
                machine_cards=pricing.cards_per_node,
                spans_machines=True,
            )
        case BundlePricing():
            return BillingTerms(
                unit_cards=pricing.cards,
                min_units=1,
                max_units=pricing.max_bundles,
                whole_units_only=True,
                unit_rate_cny_per_hour=pricing.cny_per_bundle_hour,
                granularity_hours=pricing.granularity_s / 3600,
                min_billed_hours=0.0,
                machine_cards=pricing.cards * pricing.max_bundles,
                spans_machines=False,
            )
        case TermPricing():
            period_hours = PERIOD_HOURS[pricing.period]
            per_card = pricing.cards == 1
            return BillingTerms(
                unit_cards=pricing.cards,
                min_units=1,
                max_units=pricing.max_units if per_card else 1,
                whole_units_only=False,
                unit_rate_cny_per_hour=pricing.cny_per_period / period_hours,
                granularity_hours=period_hours,
                min_billed_hours=0.0,
                machine_cards=pricing.max_units if per_card else pricing.cards,
                spans_machines=False,
            )
    raise TypeError(f"unknown pricing variant {type(pricing).__name__}")  # pragma: no cover


def sold_counts(terms: BillingTerms) -> frozenset[int]:
    """The card counts an offer sells, the ones quoted when a request names none.

    Within a machine: powers of two (of the bundle size for bundles) and the machine itself; across
    machines (node-hour offers): every whole number of nodes from the minimum to the most nodes (and at
    most ``MAX_CARDS`` cards; the engine quotes up to ``max_plan_cards`` of them), so a budget or a time
    value can settle on 12 nodes rather than only 8 or 16.
    """
    step = terms.unit_cards if terms.whole_units_only else 1
    largest = min(terms.max_cards, MAX_CARDS)
    counts = {min(terms.machine_cards, largest)}
    cards = step
    while cards <= min(terms.machine_cards, largest):
        counts.add(cards)
        cards *= 2
    if terms.spans_machines:
        most_nodes = min(terms.max_units, largest // terms.unit_cards)
        counts.update(nodes * terms.unit_cards for nodes in range(max(terms.min_units, 1), most_nodes + 1))
    return frozenset(counts)


def billed_hours(
    hours: npt.NDArray[np.float64],
    granularity_hours: npt.NDArray[np.float64],
    min_billed_hours: npt.NDArray[np.float64],
    *,
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """``hours`` rounded up to whole granules, and at least the minimum billed (arrays, broadcast)."""
    billed = np.divide(hours, granularity_hours, out=out)
    billed -= _BILLING_TOLERANCE
    np.ceil(billed, out=billed)
    billed *= granularity_hours
    return np.maximum(min_billed_hours, billed, out=billed)
