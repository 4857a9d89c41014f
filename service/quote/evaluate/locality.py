"""Where the data lives: offers in another city wait for the data to be copied, then read it remotely.

``workload.data_city`` names the city holding the job's data and ``workload.dataset_gb`` its size. An
offer in another city adds the time to copy the data set over the cross-city line before the job starts,
``dataset_gb × 8,000 / cross_city_mbps / 3,600`` hours, to each bound of its hours (the cards are rented
while they wait, so the copy is billed too): 500 GB at 500 Mbit/s is 8,000 s, 2.22 h. The line's speed is
the operator's ``GPUQUOTE_CROSS_CITY_MBPS`` (500 Mbit/s by default; 1 Gbit/s ≈ 0.45 TB/h, and
a copy between cities seldom has a whole gigabit to itself). Offers in the data's city add nothing.

The Jiangsu article's advice stands behind the warning such an offer carries (``assemble.notes``): data
read from another city makes every epoch wait on the same line (IO 等待时间相当可观), so copy it next to
the GPUs first.

A vendor may list storage (``storage_cny_per_gb_day``) and traffic (``traffic_cny_per_gb``) prices on its
offers; with ``dataset_gb`` they become figures of the bill: storage for the data set over each bound's
hours (GB × price × hours / 24), and traffic for copying it in once when it comes from another city.
"""

from __future__ import annotations

import numpy as np

from service.defaults import DEFAULT_CROSS_CITY_MBPS
from service.quote.base.arrays import BoolArray, FloatArray, frozen
from service.quote.base.memo import MemoSlot
from service.quote.model.tables import OfferTables

__all__ = ["DEFAULT_CROSS_CITY_MBPS", "copy_hours", "data_fees", "elsewhere", "prepare_listed_fees"]


_MEGABITS_PER_GB = 8_000.0


def copy_hours(dataset_gb: float, mbps: float) -> float:
    """Hours to move ``dataset_gb`` over a ``mbps`` line: 500 GB at 500 Mbit/s is 2.22 h."""
    return dataset_gb * _MEGABITS_PER_GB / mbps / 3600


def elsewhere(tables: OfferTables, data_city: str | None) -> BoolArray:
    """``(offers,)``: offers outside the data's city (none when the request names no city)."""
    if data_city is None:
        return np.zeros(tables.size, dtype=np.bool_)
    if data_city not in tables.city_names:
        return np.ones(tables.size, dtype=np.bool_)
    remote: BoolArray = tables.city_code != tables.city_names.index(data_city)
    return remote


def data_fees(tables: OfferTables, remote: BoolArray) -> tuple[FloatArray, FloatArray]:
    """Per offer: storage CNY per GB-hour and traffic CNY per GB of the copy (0 where not listed)."""
    storage, traffic = _LISTED_FEES.of(tables.memos).get(0, lambda: _listed_fees(tables))
    return storage, traffic * remote


def prepare_listed_fees(tables: OfferTables) -> None:
    """Read the fees every offer lists into the tables' arrays, so the first request naming the data's
    city does not (19 ms at 96,000 offers: a read of two fields of every offer)."""
    _LISTED_FEES.of(tables.memos).get(0, lambda: _listed_fees(tables))


def _listed_fees(tables: OfferTables) -> tuple[FloatArray, FloatArray]:
    """Per offer: the storage CNY per GB-hour and traffic CNY per GB it lists (0 where not listed)."""
    storage = np.array([offer.storage_cny_per_gb_day or 0.0 for offer in tables.offers]) / 24
    traffic = np.array([offer.traffic_cny_per_gb or 0.0 for offer in tables.offers])
    return frozen(storage), frozen(traffic)


# The fees every offer lists, read once per snapshot.
_LISTED_FEES: MemoSlot[int, tuple[FloatArray, FloatArray]] = MemoSlot("listed data fees", size=1)
