"""Pricing kinds: one ``PricingRule`` per variant of ``schemas.offer.Pricing`` (``base`` has the interface).

``rule_of(pricing)`` is the kind of an offer's pricing and ``offer_terms(offer)`` the terms an offer bills
by: its kind's, marked ``interruptible`` for spot capacity; ``KIND_CODES`` numbers the kinds for the offer
tables (``MIXED_CODE`` is a combined plan's row, ``model.plans``).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from schemas.offer import Offer, Pricing, PricingKind
from service.quote.model.billing import BillingTerms
from service.quote.model.pricing.base import (
    CardHourRate,
    LineSheet,
    LineWriter,
    OfferWords,
    Prepaid,
    PricingRule,
)
from service.quote.model.pricing.bundle import BundleRule
from service.quote.model.pricing.card_hour import CardHourRule
from service.quote.model.pricing.node_hour import NodeHourRule
from service.quote.model.pricing.term import TermRule

__all__ = [
    "KINDS",
    "KIND_CODES",
    "MIXED_CODE",
    "CardHourRate",
    "LineSheet",
    "LineWriter",
    "OfferWords",
    "Prepaid",
    "PricingRule",
    "offer_terms",
    "rule_of",
]

KINDS: Mapping[PricingKind, PricingRule[Pricing]] = {
    rule.kind: rule  # type: ignore[misc]
    for rule in (CardHourRule(), NodeHourRule(), BundleRule(), TermRule())
}
KIND_CODES: Mapping[PricingKind, int] = {kind: code for code, kind in enumerate(KINDS)}
# A combined plan's rows (``model.plans``): term packages in whole periods plus card-hours for the rest.
MIXED_CODE = len(KIND_CODES)


def rule_of(pricing: Pricing) -> PricingRule[Pricing]:
    """The kind of ``pricing`` (its variant's tag)."""
    return KINDS[pricing.__struct_config__.tag]  # type: ignore[index]


def offer_terms(offer: Offer) -> BillingTerms:
    """The terms ``offer`` bills by: its pricing kind's, and whether it is spot capacity (interruptible)."""
    terms = rule_of(offer.pricing).terms(offer.pricing)
    return msgspec.structs.replace(terms, interruptible=True) if offer.spot else terms
