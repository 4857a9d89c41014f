"""Where the data lives, per offer, read from the snapshot's arrays: the same as asking each offer.

``locality.elsewhere`` compares city codes and ``locality.data_fees`` reads the fees each offer lists once
per snapshot; the reference walks the offers one by one, as the rule reads.
"""

from __future__ import annotations

import random

import msgspec
import numpy as np
import pytest

from service.quote.evaluate.locality import data_fees, elsewhere
from tests.quote.factories import snapshot
from tests.quote.seeded import catalog


@pytest.mark.parametrize("seed", [5, 17])
def test_cities_and_fees_are_each_offers_own(seed: int) -> None:
    rng = random.Random(seed)
    offers = [
        msgspec.structs.replace(
            offer,
            storage_cny_per_gb_day=rng.choice([None, 0.0, 0.02, 0.15]),
            traffic_cny_per_gb=rng.choice([None, 0.0, 0.5, 0.8]),
        )
        for offer in catalog(seed, 200, clusters=12, packaged_vendors=4).offers
    ]
    tables = snapshot(offers).tables
    assert tables.size > tables.offer_count  # combined plans' rows are read too
    for city in (*tables.city_names, "shanghai", None):
        remote = elsewhere(tables, city)
        expected = np.array([city is not None and offer.city != city for offer in tables.offers])
        assert np.array_equal(remote, expected)
        storage, traffic = data_fees(tables, remote)
        listed = [
            (offer.storage_cny_per_gb_day or 0.0, offer.traffic_cny_per_gb or 0.0) for offer in tables.offers
        ]
        assert np.array_equal(storage, np.array([gb_day / 24 for gb_day, _ in listed]))
        assert np.array_equal(
            traffic, np.array([per_gb * far for (_, per_gb), far in zip(listed, expected, strict=True)])
        )
