"""The cheapest card-hour offer of each key (a vendor's GPU, or the market's), found by one sort: the same
offer a comparison of (rate, id, position) finds offer by offer, ties and offers without a rate included."""

from __future__ import annotations

import math

import numpy as np
import pytest

from service.quote.model.tables import NO_OFFER, _cheapest_card_hour


def _compared(rates: list[float], keys: list[int], ids: list[str]) -> list[int]:
    """Offer by offer: the least (rate, id, position) of each key, NaN rates left out."""
    best: dict[int, tuple[float, str, int]] = {}
    for index, (rate, key, offer_id) in enumerate(zip(rates, keys, ids, strict=True)):
        if math.isnan(rate):
            continue
        candidate = (rate, offer_id, index)
        if key not in best or candidate < best[key]:
            best[key] = candidate
    return [best[key][2] if key in best else NO_OFFER for key in keys]


@pytest.mark.parametrize("seed", range(12))
def test_each_keys_cheapest_is_the_one_compared_offer_by_offer(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 400))
    # Few distinct rates (ties) and some offers priced otherwise (NaN), over a few keys.
    rates = rng.choice([1.5, 2.0, 2.25, 3.0, math.nan], size=size).tolist()
    keys = rng.integers(0, int(rng.integers(1, 12)), size=size).tolist()
    ids = [f"v{int(rng.integers(0, 50))}-{at}" for at in range(size)]
    ranks = {offer_id: rank for rank, offer_id in enumerate(sorted(ids))}
    found = _cheapest_card_hour(
        np.array(rates, dtype=np.float64),
        np.array(keys, dtype=np.int64),
        np.array([ranks[offer_id] for offer_id in ids], dtype=np.int64),
    )
    assert found.tolist() == _compared(rates, keys, ids)


def test_a_key_without_a_card_hour_offer_has_none() -> None:
    found = _cheapest_card_hour(np.array([math.nan, 4.0, math.nan]), np.array([0, 1, 0]), np.array([2, 0, 1]))
    assert found.tolist() == [NO_OFFER, 1, NO_OFFER]
