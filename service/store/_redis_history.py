"""Price history in Redis: one list per offer, bounded in entries, in age and by the server's memory.

Layout, chosen by ``bench/history_layout.py`` (100,000 offers, every price new, then changed 5 times)::

    layout          bytes/offer, 1 entry   after 6 entries   first write      one offer's read
    stream/offer    4,348                  4,351             58,000 offers/s  0.04 ms
    list/offer        316                    959             95,000 offers/s  0.03 ms   <- this one
    stream/vendor     154                    950            136,000 offers/s  2,248 ms (scans the vendor)
    hash/vendor       204                    847            263,000 offers/s  0.12 ms (no TTL per field)

A stream per offer spends 4 KB on its first entry (a stream node is preallocated); one stream per vendor is
small but an offer's read scans the whole vendor; a hash per vendor is small but Redis < 7.4 cannot expire
one field, so a gone offer's history could not go on its own. A list per offer is small, reads one key and
expires as a key does::

    <prefix><offer_id>   list, oldest first; each entry: the Unix millisecond it was recorded (13
                         digits), then a msgpack array (at, pricing, available_cards, change)

Bounds, applied by the append script as it appends: at most ``max_entries`` entries; entries recorded more
than ``max_age_s`` ago dropped from the head (the newest one kept); the key expires ``max_age_s`` after its
last entry, so the history of an offer gone (or unchanged) that long goes too. And before each chunk the
script reads the server's memory: at or above ``memory_limit_ratio`` of ``maxmemory`` it writes nothing,
so history never takes the memory the prices need (a script is not stopped by ``maxmemory`` once it has
written, so the check is the script's own). A chunk of changes travels as two arguments (their sizes,
``"12,87,12,90"``, and the parts concatenated: offer id, then its entry), which packs 5,000 changes in no
time. A key of another type (the stream an older release wrote, or junk) is replaced; an older release's
streams that are never written again are deleted once (``sweep_streams``).

On a cluster every key shares the ``{prices}`` hash tag, so a chunk is one slot; the first change's key is
declared (``KEYS[1]``) so the script is routed to that slot's node.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from schemas.vendor import PriceChange
from service.store.base import (
    DECODE_ERRORS,
    HistoryBounds,
    change_decoder,
    decode_history_entry,
    encode_history_entry,
    visible_history,
)

__all__ = ["HISTORY_CHUNK", "HistoryWrite", "append_history", "drop_history", "read_history", "sweep_streams"]

# Changes per script call. Redis runs a script to its end before it answers anyone else, and one change
# costs it about 4 us, so a call of 100 holds it about 0.4 ms: a refresh writing every vendor's history
# keeps the store answering the replicas' version checks (5,000 per call held it 10-25 ms per call, and
# a refresh's concurrent vendor writes queued those into stalls of 160 ms). bench/market.py measure 6, a
# refresh moving all 96,000 prices under steady quotes, four pairs alternating: the quotes' p99 while the
# refresh ran 12.6-16.5 ms at 500 per call, 8.9-11.7 ms at 100; the refresh took 3.5-5.1 s and 3.6-4.3 s.
HISTORY_CHUNK = 100
_RECORDED_DIGITS = 13

Client = Redis | RedisCluster


_APPEND_SCRIPT = """
local prefix, keep, ttl_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local cutoff, ratio = tonumber(ARGV[4]), tonumber(ARGV[5])
if ratio > 0 then
  local info = redis.call('INFO', 'memory')
  local used = tonumber(string.match(info, 'used_memory:(%d+)'))
  local limit = tonumber(string.match(info, 'maxmemory:(%d+)'))
  if used and limit and limit > 0 and used >= limit * ratio then
    return {0, 'memory', used, limit}
  end
end
local written, reset = 0, 0
local at, key = 1, nil
for size in string.gmatch(ARGV[6], '%d+') do
  local part = string.sub(ARGV[7], at, at + size - 1)
  at = at + size
  if key == nil then
    key = prefix .. part
  else
    local length = redis.pcall('RPUSH', key, part)
    if type(length) == 'table' then
      if string.sub(length.err, 1, 9) ~= 'WRONGTYPE' then
        return {written, length.err, reset}
      end
      redis.call('DEL', key)
      reset = reset + 1
      length = redis.call('RPUSH', key, part)
    end
    redis.call('PEXPIRE', key, ttl_ms)
    if length > keep then
      redis.call('LTRIM', key, -keep, -1)
      length = keep
    end
    while length > 1 and (tonumber(string.sub(redis.call('LINDEX', key, 0), 1, 13)) or 0) < cutoff do
      redis.call('LPOP', key)
      length = length - 1
    end
    written = written + 1
    key = nil
  end
end
return {written, '', reset}
"""


@dataclass
class HistoryWrite:
    """What an append did: entries written, keys of another type replaced, and why it stopped early."""

    written: int = 0
    reset: int = 0
    skipped: int = 0
    # ``memory`` (the server is past the share of maxmemory history may use) or the server's error.
    stopped: str | None = None
    memory: tuple[int, int] | None = field(default=None)  # (used, maxmemory) bytes when stopped by memory


def _bytes(value: bytes | str) -> bytes:
    """Replies are bytes (``decode_responses`` stays off); the typing admits str too."""
    return value.encode() if isinstance(value, str) else value


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


async def append_history(
    client: Client, prefix: str, bounds: HistoryBounds, changes: Sequence[PriceChange]
) -> HistoryWrite:
    """Append ``changes`` chunk by chunk; stops at the first chunk the server refuses or has no room for.

    Raises what the client raises (``RedisError``, ``OSError``) for a failed round trip.
    """
    outcome = HistoryWrite()
    now_ms = int(time.time() * 1000)
    for start in range(0, len(changes), HISTORY_CHUNK):
        chunk = changes[start : start + HISTORY_CHUNK]
        parts: list[bytes] = []
        for change in chunk:
            parts.append(change.offer_id.encode())
            parts.append(b"%013d%s" % (now_ms, encode_history_entry(change)))
        sizes = ",".join(str(len(part)) for part in parts)
        result = await client.eval(
            _APPEND_SCRIPT,
            1,
            prefix + chunk[0].offer_id,
            prefix,
            str(bounds.max_entries),
            str(max(1, int(bounds.max_age_s * 1000))),
            str(now_ms - int(bounds.max_age_s * 1000)),
            repr(bounds.memory_limit_ratio),
            sizes,
            b"".join(parts),
        )
        written, stopped = int(result[0]), _text(result[1])
        outcome.written += written
        if stopped == "memory":
            outcome.memory = (int(result[2]), int(result[3]))
        else:
            outcome.reset += int(result[2])
        if stopped:
            outcome.stopped = stopped
            outcome.skipped = len(changes) - outcome.written
            break
    return outcome


def _decode_entry(offer_id: str, raw: bytes) -> tuple[float, PriceChange]:
    recorded = raw[:_RECORDED_DIGITS]
    if len(recorded) != _RECORDED_DIGITS or not recorded.isdigit():
        raise ValueError("no recorded time")
    return int(recorded) / 1000, decode_history_entry(offer_id, raw[_RECORDED_DIGITS:])  # recorded: ms


async def _read_stream(client: Client, key: str, offer_id: str, limit: int) -> tuple[list[PriceChange], int]:
    """An older release's stream (until a write replaces it): its entries, and how many did not decode."""
    changes: list[PriceChange] = []
    bad = 0
    for _, fields in reversed(await client.xrevrange(key, count=limit) or []):
        try:
            changes.append(change_decoder.decode(_bytes((fields or {})[b"e"])))
        except (KeyError, *DECODE_ERRORS):
            bad += 1
    return [change for change in changes if change.offer_id == offer_id], bad


async def read_history(
    client: Client, prefix: str, offer_id: str, *, limit: int, bounds: HistoryBounds
) -> tuple[list[PriceChange], int]:
    """The offer's newest ``limit`` entries, oldest first, within the age bound; and how many entries did
    not decode (skipped). A key of another type that is not a stream reads as no history.

    Raises what the client raises for a failed round trip.
    """
    key = prefix + offer_id
    try:
        raw_entries = await client.lrange(key, -limit, -1)
    except ResponseError as error:
        if "WRONGTYPE" not in str(error):
            raise
        if _text(await client.type(key)) == "stream":
            return await _read_stream(client, key, offer_id, limit)
        return [], 1
    entries: list[tuple[float, PriceChange]] = []
    bad = 0
    for raw in raw_entries or []:
        try:
            entries.append(_decode_entry(offer_id, _bytes(raw)))
        except DECODE_ERRORS:
            bad += 1
    return visible_history(entries, time.time() - bounds.max_age_s), bad


async def _unlink_matching(client: Client, match: str, *, kind: str | None = None) -> int:
    removed = 0
    batch: list[Any] = []
    async for key in client.scan_iter(match=match, count=1000, _type=kind):
        batch.append(key)
        if len(batch) >= 1000:
            removed += int(await client.unlink(*batch))
            batch = []
    if batch:
        removed += int(await client.unlink(*batch))
    return removed


async def sweep_streams(client: Client, prefix: str) -> int:
    """Delete the history streams an older release wrote (each 4 KB or more); returns how many."""
    return await _unlink_matching(client, prefix + "*", kind="stream")


async def drop_history(client: Client, prefix: str) -> int:
    """Delete every history key: the last resort when Redis is at ``maxmemory`` and prices need room."""
    return await _unlink_matching(client, prefix + "*")
