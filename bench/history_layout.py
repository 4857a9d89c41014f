"""Benchmark of price-history layouts in Redis: memory and write cost per offer, and one offer's read.

Run: ``.venv/bin/python bench/history_layout.py [--offers 100000] [--changes 5]``

A private ``redis-server`` (loopback, nothing on disk) holds ``--offers`` offers' histories in each layout
in turn, written the way a refresh writes them: a first write (every offer new, one entry each), then
``--changes`` refreshes in which every price changes (one more entry per offer each). Every layout takes
the same entries (a msgpack ``PriceChange`` without its offer id, ~70 bytes) in chunks of 5,000 per Lua
script call, as ``service.store`` does. Per layout it prints:

- memory: ``used_memory`` growth (``INFO memory``) per offer after the first write and after the changes,
  and ``MEMORY USAGE`` of one offer's key (for the per-vendor layout: the vendor key / offers);
- write: offers per second of the first write and of one changed-price refresh;
- read: one offer's newest 100 entries (the ``GET /offers/{id}/history`` query), median of 200 (20 for
  the per-vendor stream, which is read whole).

Layouts: ``stream/offer`` (``XADD MAXLEN ~``, the layout before this measurement), ``list/offer``
(``RPUSH`` + ``LTRIM``), ``stream/vendor`` (one stream per vendor, the offer id a field of each entry: a
read must scan the vendor's stream) and ``hash/vendor`` (one hash per vendor, each field one offer's
entries length-prefixed in one string, trimmed on append).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas.offer import CardHourPricing
from tests.net import free_port
from tests.servers import RedisServer

MAX_ENTRIES = 500
CHUNK = 5_000
VENDOR = "bench-vendor"


class _Entry(msgspec.Struct, array_like=True):
    at: datetime
    pricing: CardHourPricing
    available_cards: int | None
    change: str


_STREAM_OFFER = """
local maxlen = ARGV[1]
for i = 2, #ARGV, 2 do
  redis.call('XADD', ARGV[i], 'MAXLEN', '~', maxlen, '*', 'e', ARGV[i + 1])
end
"""
_LIST_OFFER = """
local keep = -tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  redis.call('RPUSH', ARGV[i], ARGV[i + 1])
  redis.call('LTRIM', ARGV[i], keep, -1)
end
"""
_STREAM_VENDOR = """
local maxlen = ARGV[1]
for i = 2, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', 'o', ARGV[i], 'e', ARGV[i + 1])
end
"""
# Each field: entries as <4-digit length><bytes>, newest last; trimmed to the newest ARGV[1].
_HASH_VENDOR = """
local keep = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  local entry = string.format('%04d', #ARGV[i + 1]) .. ARGV[i + 1]
  local old = redis.call('HGET', KEYS[1], ARGV[i]) or ''
  local joined = old .. entry
  local count, at = 0, 1
  while at <= #joined do count = count + 1; at = at + 4 + tonumber(string.sub(joined, at, at + 3)) end
  at = 1
  while count > keep do at = at + 4 + tonumber(string.sub(joined, at, at + 3)); count = count - 1 end
  redis.call('HSET', KEYS[1], ARGV[i], string.sub(joined, at))
end
"""


class Layout:
    def __init__(self, name: str, script: str, key: Callable[[str], str], per_vendor: bool) -> None:
        self.name = name
        self.script = script
        self.key = key
        self.per_vendor = per_vendor

    def write(self, client: redis.Redis, offer_ids: Sequence[str], entries: Sequence[bytes]) -> None:
        sha = client.script_load(self.script)
        maxlen = MAX_ENTRIES * len(offer_ids) if self.name == "stream/vendor" else MAX_ENTRIES
        for start in range(0, len(offer_ids), CHUNK):
            args: list[str | bytes | int] = [maxlen]
            chunk = zip(offer_ids[start : start + CHUNK], entries[start : start + CHUNK], strict=True)
            for offer_id, entry in chunk:
                args.extend((offer_id if self.per_vendor else self.key(offer_id), entry))
            keys = [self.key(VENDOR)] if self.per_vendor else []
            client.evalsha(sha, len(keys), *keys, *args)

    def read(self, client: redis.Redis, offer_id: str) -> int:
        if self.name == "stream/offer":
            return len(client.xrevrange(self.key(offer_id), count=100) or [])
        if self.name == "list/offer":
            return len(client.lrange(self.key(offer_id), -100, -1))
        if self.name == "hash/vendor":
            return len(client.hget(self.key(VENDOR), offer_id) or b"")
        # One vendor stream: the offer's entries are spread over it; read it all, newest first.
        found = 0
        last = "+"
        while found < 100:
            page: Any = client.xrevrange(self.key(VENDOR), max=last, count=10_000)
            if not page:
                break
            found += sum(1 for _, fields in page if fields[b"o"] == offer_id.encode())
            last = "(" + page[-1][0].decode()
        return found


LAYOUTS = (
    Layout("stream/offer", _STREAM_OFFER, lambda offer: f"h:{offer}", per_vendor=False),
    Layout("list/offer", _LIST_OFFER, lambda offer: f"h:{offer}", per_vendor=False),
    Layout("stream/vendor", _STREAM_VENDOR, lambda vendor: f"h:{vendor}", per_vendor=True),
    Layout("hash/vendor", _HASH_VENDOR, lambda vendor: f"h:{vendor}", per_vendor=True),
)


def _entries(offers: int, step: int) -> list[bytes]:
    at = datetime.now(UTC)
    return [
        msgspec.msgpack.encode(
            _Entry(
                at=at,
                pricing=CardHourPricing(cny_per_card_hour=1.5 + (index % 97) / 10 + step, max_cards=8),
                available_cards=index % 64,
                change="new" if step == 0 else "changed",
            )
        )
        for index in range(offers)
    ]


def _used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def measure(layout: Layout, offers: int, changes: int) -> None:
    offer_ids = [f"{VENDOR}:sku-{index:06d}" for index in range(offers)]
    with RedisServer(port=free_port()) as server:
        client = redis.Redis.from_url(server.url, socket_timeout=120)
        base = _used(client)
        first = _entries(offers, 0)
        started = time.perf_counter()
        layout.write(client, offer_ids, first)
        first_s = time.perf_counter() - started
        first_bytes = (_used(client) - base) / offers
        key = layout.key(VENDOR) if layout.per_vendor else layout.key(offer_ids[0])
        one_key = client.memory_usage(key, samples=0) or 0
        if layout.per_vendor:
            one_key //= offers
        change_s = 0.0
        for step in range(1, changes + 1):
            entries = _entries(offers, step)
            started = time.perf_counter()
            layout.write(client, offer_ids, entries)
            change_s = time.perf_counter() - started
        after_bytes = (_used(client) - base) / offers
        reads = []
        for index in range(20 if layout.name == "stream/vendor" else 200):
            started = time.perf_counter()
            layout.read(client, offer_ids[(index * 7919) % offers])
            reads.append(time.perf_counter() - started)
        client.close()
    print(
        f"  {layout.name:<14} {first_bytes:8,.0f} B {one_key:8,} B {after_bytes:9,.0f} B"
        f" {offers / first_s:12,.0f} {offers / max(change_s, 1e-9):12,.0f} {statistics.median(reads) * 1e3:9.2f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=5)
    parser.add_argument("--layouts", nargs="*", default=[layout.name for layout in LAYOUTS])
    args = parser.parse_args(argv)
    print(f"{args.offers:,} offers, a first write then {args.changes} refreshes changing every price")
    print(
        f"  {'layout':<14} {'B/offer 1st':>10} {'one key':>10} {'B/offer +' + str(args.changes):>11}"
        f" {'1st offers/s':>12} {'chg offers/s':>12} {'read ms':>9}"
    )
    for layout in LAYOUTS:
        if layout.name in args.layouts:
            measure(layout, args.offers, args.changes)


if __name__ == "__main__":
    main()
