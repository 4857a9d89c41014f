"""Price screening: a price that jumps past a threshold is held back until a second refresh confirms it.

A vendor's feed that suddenly shows an H800 at ¥4/h instead of ¥40/h is more likely a unit error than a
sale. The jumped price is recorded in the vendor's status (reported, not served) and the previous offer
keeps serving, ageing toward stale; when the next refresh sees the new level again it is accepted. A level
is the same when the two sightings are of one pricing kind and within ``CONFIRM_RATIO`` of each other: a
vendor whose new price jitters (¥4.0, then ¥4.4) has moved to it, and must not be held back forever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from schemas.offer import Offer, Pricing, headline_price_cny
from schemas.vendor import QuarantinedPrice

__all__ = ["CONFIRM_RATIO", "ScreenedPrices", "screen_prices"]

# Two sightings of a jumped price this close to each other (relative to the first) confirm a new level.
CONFIRM_RATIO = 0.2


@dataclass(frozen=True, slots=True)
class ScreenedPrices:
    served: list[Offer]
    quarantined: list[QuarantinedPrice]
    released: int


def _change_ratio(old: Pricing, new: Pricing) -> float | None:
    if type(old) is not type(new):
        return None  # a different product shape, not a price move
    old_price = headline_price_cny(old)
    return abs(headline_price_cny(new) - old_price) / old_price


def _same_level(held: Pricing, seen: Pricing) -> bool:
    ratio = _change_ratio(held, seen)
    return ratio is not None and ratio <= CONFIRM_RATIO


def screen_prices(
    previous: Sequence[Offer],
    fetched: Sequence[Offer],
    pending: Sequence[QuarantinedPrice],
    *,
    max_change_ratio: float,
    now: datetime,
) -> ScreenedPrices:
    """Which fetched offers to serve, which to hold back, and how many held-back prices were confirmed."""
    previous_by_id = {offer.id: offer for offer in previous}
    pending_by_id = {held.offer_id: held for held in pending}
    served: list[Offer] = []
    quarantined: list[QuarantinedPrice] = []
    released = 0
    for offer in fetched:
        old = previous_by_id.get(offer.id)
        ratio = _change_ratio(old.pricing, offer.pricing) if old is not None else None
        if old is None or ratio is None or ratio <= max_change_ratio:
            served.append(offer)
            continue
        held = pending_by_id.get(offer.id)
        if held is not None and _same_level(held.pricing, offer.pricing):
            served.append(offer)
            released += 1
            continue
        served.append(old)
        quarantined.append(
            QuarantinedPrice(
                offer_id=offer.id,
                pricing=offer.pricing,
                previous=old.pricing,
                change_ratio=ratio,
                seen_at=now,
            )
        )
    return ScreenedPrices(served=served, quarantined=quarantined, released=released)
