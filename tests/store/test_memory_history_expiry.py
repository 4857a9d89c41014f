"""The embedded store's history expiry, on a clock the test sets: a history goes ``max_age_s`` after its
last entry, whatever order the offers were written in, a clock set back included."""

from __future__ import annotations

from schemas.offer import CardHourPricing
from service.store.base import HistoryBounds
from service.store.memory import MemoryPriceStore
from tests.builders import make_offer, ok_status

MAX_AGE_S = 10.0


class _Clock:
    def __init__(self) -> None:
        self.now_s = 1_000.0

    def __call__(self) -> float:
        return self.now_s


def _store(clock: _Clock) -> MemoryPriceStore:
    return MemoryPriceStore(history=HistoryBounds(max_entries=10, max_age_s=MAX_AGE_S), clock=clock)


async def _write(store: MemoryPriceStore, vendor: str, cny_per_card_hour: float) -> None:
    offer = make_offer(vendor, pricing=CardHourPricing(cny_per_card_hour=cny_per_card_hour))
    await store.write_vendor(vendor, [offer], ok_status(vendor))


async def _changes(store: MemoryPriceStore, vendor: str) -> list[tuple[str, float]]:
    return [
        (entry.change, entry.pricing.cny_per_card_hour)  # type: ignore[union-attr]
        for entry in await store.history(f"{vendor}:4090")
    ]


async def test_each_history_goes_max_age_after_its_own_last_entry() -> None:
    clock = _Clock()
    store = _store(clock)
    await _write(store, "a", 5.0)
    await _write(store, "b", 6.0)
    clock.now_s += 4
    await _write(store, "a", 5.5)  # a's history now last written after b's
    clock.now_s += MAX_AGE_S - 4  # b's last entry is MAX_AGE_S old, a's MAX_AGE_S - 4
    assert await _changes(store, "b") == []
    assert await _changes(store, "a") == [("new", 5.0), ("changed", 5.5)]
    clock.now_s += 4
    assert await _changes(store, "a") == []
    await _write(store, "a", 6.5)  # a history started anew
    assert await _changes(store, "a") == [("changed", 6.5)]


async def test_a_history_gone_behind_one_that_is_not_is_gone_too() -> None:
    """A clock set back writes an older last entry after a newer one: it expires first, and is neither
    read nor continued, though the one before it in the store is still kept."""
    clock = _Clock()
    store = _store(clock)
    await _write(store, "a", 5.0)
    clock.now_s -= 500  # set back
    await _write(store, "b", 6.0)
    clock.now_s += 500 + MAX_AGE_S - 1  # a kept (1 s left), b gone for 499 s
    assert await _changes(store, "a") == [("new", 5.0)]
    assert await _changes(store, "b") == []
    await _write(store, "b", 7.0)
    assert await _changes(store, "b") == [("changed", 7.0)]
    clock.now_s += 1
    assert await _changes(store, "a") == []
    assert await _changes(store, "b") == [("changed", 7.0)]
