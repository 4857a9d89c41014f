"""The shared price store on Redis (or Redis Cluster), for every replica and the refresh job.

Keys share one hash tag so a vendor rewrite is one MULTI/EXEC on a cluster too::

    <ns>:{prices}:vendor:<id>          msgpack list[Offer]
    <ns>:{prices}:status               hash: vendor id -> msgpack VendorStatus
    <ns>:{prices}:vendors              hash: vendor id -> "" for every vendor written (finds lost keys)
    <ns>:{prices}:version              integer, INCR on every successful write
    <ns>:{prices}:history:<offer_id>   list of price changes, bounded (``_redis_history``)
    <ns>:{prices}:history-layout       ``list``: the streams of an older release were swept
    <ns>:{prices}:refresh-lock         token of the refresher holding the lock (PX expiry)

``<ns>`` is ``gpuquote`` unless a deployment (or a test) shares a Redis with others.

Whatever those keys hold, a read never raises on it (``_redis_read``): a bad version, a vendor or status
that does not decode or is missing is a fault listed in ``StoreContents.faults``, a bad history entry is
skipped. A write replaces what it cannot decode (a key of the wrong type, a junk version), so the next
refresh repairs the store. Prices come before history: history is written after the prices, only while
Redis has room (``HistoryBounds.memory_limit_ratio``), and a price write or the lock that Redis refuses
for want of memory first deletes the history to make room. No error this store raises names the server
(``redis_errors``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from redis.exceptions import RedisError, ResponseError

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus
from service.background import BACKGROUND_NICE, BackgroundThread
from service.store._redis_client import RedisClient, connect_redis, is_cluster
from service.store._redis_history import append_history, drop_history, read_history, sweep_streams
from service.store._redis_read import DecodedVendors, Keys, read_contents
from service.store.base import (
    DECODE_ERRORS,
    VERSION_READ_BYTES,
    HistoryBounds,
    StoreContents,
    StoreCorrupt,
    StoreUnavailable,
    decode_offers,
    offers_encoder,
    parse_version,
    price_changes,
)
from service.store.redis_errors import describe, is_out_of_memory

__all__ = ["RedisClient", "RedisPriceStore", "connect_redis", "is_cluster"]

logger = logging.getLogger("gpuquote.store")

_UNLOCK_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# Take the lock unless a refresher holds it: 1 taken (or already ours), 0 held, 2 taken after replacing a
# value no refresher writes (another type, or a key without expiry: it would block every refresh forever).
_LOCK_SCRIPT = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
local held = redis.call('TYPE', KEYS[1])['ok']
if held == 'string' and redis.call('PTTL', KEYS[1]) >= 0 then
  return redis.call('GET', KEYS[1]) == ARGV[1] and 1 or 0
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
"""
# Inside a write's MULTI/EXEC: delete a version that is not an integer in [0, 2^53), a status key that is
# not a hash and a vendor index that is not a hash, so the write that follows can repair the store.
_REPAIR_SCRIPT = """
local bad = {0, 0, 0}
local vtype = redis.call('TYPE', KEYS[1])['ok']
if vtype ~= 'none' then
  local value = vtype == 'string' and redis.call('GETRANGE', KEYS[1], 0, 31) or ''
  if not (string.match(value, '^%d+$') and string.len(value) <= 16
          and tonumber(value) <= 9007199254740991) then
    redis.call('DEL', KEYS[1])
    bad[1] = 1
  end
end
for i = 2, 3 do
  local found = redis.call('TYPE', KEYS[i])['ok']
  if found ~= 'none' and found ~= 'hash' then
    redis.call('DEL', KEYS[i])
    bad[i] = 1
  end
end
return bad
"""

FaultCallback = Callable[[str], None]


def _unavailable(what: str, error: BaseException) -> StoreUnavailable:
    return StoreUnavailable(f"redis {what} failed: {describe(error)}")


class RedisPriceStore:
    def __init__(
        self,
        client: RedisClient,
        *,
        namespace: str = "gpuquote",
        history_max_entries: int | None = None,
        history: HistoryBounds | None = None,
        on_fault: FaultCallback | None = None,
        decode_nice: int = BACKGROUND_NICE,
    ):
        self._client = client
        self._namespace = namespace
        self._keys = Keys.under(namespace)
        bounds = history or HistoryBounds()
        if history_max_entries is not None:
            bounds = HistoryBounds(history_max_entries, bounds.max_age_s, bounds.memory_limit_ratio)
        self._history_bounds = bounds
        self._on_fault = on_fault
        self._streams_swept = False
        # One history append in Redis at a time from this store: a refresh writes many vendors at once,
        # and their scripts would queue in Redis ahead of every other client's command.
        self._history_turn = asyncio.Lock()
        self._decoder = BackgroundThread("gpuquote-store-decode", nice=decode_nice)
        self._decoded: DecodedVendors = {}

    @property
    def client(self) -> RedisClient:
        """The connection pool, shared with the rate limiter so one cap holds for both."""
        return self._client

    @property
    def namespace(self) -> str:
        return self._namespace

    def _fault(self, kind: str, key: str, reason: str) -> None:
        logger.warning("price store: skipped the value at %s: %s", key, reason)
        if self._on_fault is not None:
            self._on_fault(kind)

    async def version(self) -> int:
        try:
            raw = await self._client.getrange(self._keys.version, 0, VERSION_READ_BYTES - 1)
        except ResponseError as error:
            raise StoreCorrupt(self._keys.version, describe(error)) from None
        except (RedisError, OSError) as error:
            raise _unavailable("GET version", error) from None
        return parse_version(raw, self._keys.version)

    async def read(self, *, expected_vendors: Collection[str] = ()) -> StoreContents:
        try:
            return await read_contents(
                self._client, self._keys, expected_vendors, self._fault, self._decoder, self._decoded
            )
        except (RedisError, OSError) as error:
            raise _unavailable("read", error) from None

    async def _previous_offers(self, vendor_key: str) -> list[Offer]:
        """The offers a rewrite replaces (for history); what does not decode is replaced without history."""
        try:
            raw = await self._client.get(vendor_key)
        except ResponseError as error:
            self._fault("vendor", vendor_key, describe(error))
            return []
        except (RedisError, OSError) as error:
            raise _unavailable(f"read of {vendor_key}", error) from None
        if not raw:
            return []
        try:
            return decode_offers(raw.encode() if isinstance(raw, str) else raw)
        except DECODE_ERRORS as error:
            self._fault("vendor", vendor_key, f"{error} ({len(raw)} bytes); overwriting it")
            return []

    async def _write(self, what: str, queue: Callable[[Any], None]) -> int:
        """Run the queued commands in one MULTI/EXEC, after a script that drops a junk version, status or
        index (inside the transaction, so concurrent writers agree on it). A write Redis refuses for want
        of memory deletes the history (prices come first) and runs once more."""
        try:
            return await self._write_once(what, queue)
        except _OutOfMemory:
            dropped = await self._drop_history()
            logger.warning("redis is at maxmemory: deleted %d history keys to make room for prices", dropped)
            try:
                return await self._write_once(what, queue)
            except _OutOfMemory as still:
                raise StoreUnavailable(f"redis {what} failed: {still}") from None

    async def _write_once(self, what: str, queue: Callable[[Any], None]) -> int:
        keys = self._keys
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.eval(_REPAIR_SCRIPT, 3, keys.version, keys.status, keys.index)
            queue(pipe)
            # A store that lost its keys (a restart without persistence) starts again from the clock, in
            # milliseconds, so its versions never repeat one a reader still holds.
            pipe.set(keys.version, time.time_ns() // 1_000_000, nx=True)
            pipe.incr(keys.version)
            results = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as error:
            if is_out_of_memory(error):
                raise _OutOfMemory(describe(error)) from None
            raise _unavailable(what, error) from None
        failures = [result for result in results if isinstance(result, Exception)]
        if any(is_out_of_memory(failure) for failure in failures):
            raise _OutOfMemory(describe(next(f for f in failures if is_out_of_memory(f))))
        for failure in failures[:-1] if isinstance(results[-1], Exception) else failures:
            logger.warning("price store: %s: a command failed: %s", what, describe(failure))
        if isinstance(results[-1], Exception):
            raise _unavailable(what, results[-1])
        if isinstance(results[0], list):
            for key, flag in zip((keys.version, keys.status, keys.index), results[0], strict=False):
                if flag:
                    self._fault(key.rpartition(":")[2], key, "junk value reset")
        return int(results[-1])

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        """The vendor's offers, status and the version in one MULTI/EXEC, then its price changes.

        History follows the atomic write (``_append_history``): readers never see a change before the price
        it records is served, and a history that cannot be written (no room, an error, a crash between the
        two) costs the history its entries, never the write its prices; it is logged.
        """
        vendor_key = self._keys.vendor_prefix + vendor
        changes = price_changes(await self._previous_offers(vendor_key), offers, datetime.now(UTC))

        def queue(pipe: Any) -> None:
            pipe.set(vendor_key, offers_encoder.encode(list(offers)))
            pipe.hset(self._keys.status, vendor, offers_encoder.encode(status))
            pipe.hset(self._keys.index, vendor, b"")

        version = await self._write(f"write of vendor {vendor}", queue)
        await self._append_history(vendor, changes)
        return version

    async def write_status(self, status: VendorStatus) -> int:
        def queue(pipe: Any) -> None:
            pipe.hset(self._keys.status, status.vendor, offers_encoder.encode(status))
            pipe.hset(self._keys.index, status.vendor, b"")

        return await self._write(f"status write for {status.vendor}", queue)

    async def remove_vendor(self, vendor: str) -> int:
        vendor_key = self._keys.vendor_prefix + vendor
        changes = price_changes(await self._previous_offers(vendor_key), [], datetime.now(UTC))

        def queue(pipe: Any) -> None:
            pipe.delete(vendor_key)
            pipe.hdel(self._keys.status, vendor)
            pipe.hdel(self._keys.index, vendor)

        version = await self._write(f"removal of vendor {vendor}", queue)
        await self._append_history(vendor, changes)
        return version

    async def _append_history(self, vendor: str, changes: Sequence[PriceChange]) -> None:
        if not changes:
            return
        prefix = self._keys.history_prefix
        try:
            async with self._history_turn:
                await self._sweep_streams_once()
                outcome = await append_history(self._client, prefix, self._history_bounds, changes)
        except (RedisError, OSError) as error:
            logger.warning(
                "price store: vendor %s: %d price changes not added to the history: %s",
                vendor,
                len(changes),
                describe(error),
            )
            return
        if outcome.reset:
            self._fault("history", f"{prefix}*", f"{outcome.reset} keys of another type replaced")
        if outcome.memory is not None:
            used, limit = outcome.memory
            logger.warning(
                "price store: vendor %s: %d price changes not added to the history: redis uses %d of %d "
                "bytes, past the %.0f %% history may fill",
                vendor,
                outcome.skipped,
                used,
                limit,
                self._history_bounds.memory_limit_ratio * 100,
            )
        elif outcome.stopped:
            logger.warning(
                "price store: vendor %s: %d price changes not added to the history: %s",
                vendor,
                outcome.skipped,
                outcome.stopped,
            )

    async def _sweep_streams_once(self) -> None:
        """Delete an older release's history streams the first time this store appends history."""
        if self._streams_swept:
            return
        if await self._client.get(self._keys.layout) is None:
            swept = await sweep_streams(self._client, self._keys.history_prefix)
            if swept:
                logger.info("price store: deleted %d history streams of the previous layout", swept)
            await self._client.set(self._keys.layout, b"list")
        self._streams_swept = True

    async def _drop_history(self) -> int:
        try:
            return await drop_history(self._client, self._keys.history_prefix)
        except (RedisError, OSError) as error:
            raise _unavailable("history cleanup", error) from None

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        try:
            changes, bad = await read_history(
                self._client, self._keys.history_prefix, offer_id, limit=limit, bounds=self._history_bounds
            )
        except (RedisError, OSError) as error:
            raise _unavailable("history read", error) from None
        if bad:
            self._fault("history", self._keys.history_prefix + offer_id, f"{bad} entries did not decode")
        return changes

    async def try_lock(self, token: str, ttl_s: float) -> bool:
        ttl_ms = str(max(1, int(ttl_s * 1000)))
        try:
            try:
                taken = await self._client.eval(_LOCK_SCRIPT, 1, self._keys.lock, token, ttl_ms)
            except ResponseError as error:
                if not is_out_of_memory(error):
                    raise
                dropped = await drop_history(self._client, self._keys.history_prefix)
                logger.warning("redis is at maxmemory: deleted %d history keys to make room", dropped)
                taken = await self._client.eval(_LOCK_SCRIPT, 1, self._keys.lock, token, ttl_ms)
        except (RedisError, OSError) as error:
            raise _unavailable("lock", error) from None
        if int(taken) == 2:
            self._fault(
                "lock", self._keys.lock, "a value no refresher wrote (another type, or no expiry); replaced"
            )
        return int(taken) > 0

    async def unlock(self, token: str) -> None:
        try:
            await self._client.eval(_UNLOCK_SCRIPT, 1, self._keys.lock, token)
        except (RedisError, OSError) as error:
            raise _unavailable("unlock", error) from None

    async def ping(self) -> None:
        try:
            await self._client.ping()
        except (RedisError, OSError) as error:
            raise _unavailable("PING", error) from None

    async def aclose(self) -> None:
        self._decoder.close()
        await self._client.aclose()


class _OutOfMemory(Exception):
    """Redis refused a write for want of memory (``maxmemory`` with ``noeviction``)."""
