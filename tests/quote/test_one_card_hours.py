"""``model.one_card.OneCardHours``: rows divided where first read give what dividing them whole gives.

The low and high rows of a converted job's one-card hours are divided only where read (whole, or at the
few offers a response returns); each element must be the quotient the whole division gives, whichever
is read first, so no figure depends on what a request happened to read before it.
"""

from __future__ import annotations

import numpy as np

from service.quote.model.one_card import OneCardHours


def _speeds(offers: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    speeds = np.sort(rng.uniform(0.05, 20.0, (3, offers)), axis=0)[::-1].copy()  # the highest first
    speeds[:, rng.random(offers) < 0.1] = np.nan  # GPUs the catalog does not rate
    return speeds


def test_rows_read_in_any_order_are_the_whole_division() -> None:
    for seed in range(20):
        speeds = _speeds(500, seed)
        hours = float(np.random.default_rng(seed).uniform(0.001, 1e6))
        whole = hours / speeds
        rng = np.random.default_rng(100 + seed)
        offers = rng.integers(0, 500, 40)
        lazy = OneCardHours.divided(hours, speeds)
        # Some offers first, then the whole rows: every read equal, bit for bit (NaN where unrated).
        for bound in (2, 0, 1):
            np.testing.assert_array_equal(lazy.at(bound, offers), whole[bound].take(offers))
        offer = int(offers[0])
        np.testing.assert_array_equal(np.array(lazy.of_offer(offer)), whole[:, offer])
        np.testing.assert_array_equal(lazy.row(0), whole[0])
        np.testing.assert_array_equal(lazy.every(), whole)
        np.testing.assert_array_equal(lazy.at(2, offers), whole[2].take(offers))  # once the row is kept
        assert lazy.size == 500


def test_hours_given_whole_are_read_as_given() -> None:
    rows = np.random.default_rng(3).uniform(0.1, 100.0, (3, 60))
    given = OneCardHours.of_rows(rows)
    offers = np.array([5, 0, 59, 5])
    for bound in range(3):
        np.testing.assert_array_equal(given.row(bound), rows[bound])
        np.testing.assert_array_equal(given.at(bound, offers), rows[bound].take(offers))
    np.testing.assert_array_equal(given.every(), rows)
    np.testing.assert_array_equal(given.expected, rows[1])
