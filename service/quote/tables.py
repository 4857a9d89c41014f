"""Offer tables: the catalog prepared once per snapshot version for the quote engine's bulk maths."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.offer import Offer

__all__ = ["OfferTables", "build_offer_tables"]


@dataclass(frozen=True, slots=True)
class OfferTables:
    """Column arrays over the snapshot's offers (index i is ``offers[i]``)."""

    offers: tuple[Offer, ...]


def build_offer_tables(offers: Sequence[Offer]) -> OfferTables:
    """Prepare the snapshot's offers for vectorized evaluation."""
    return OfferTables(offers=tuple(offers))
