"""The shared price store on Redis (or Redis Cluster), for every replica and the refresh job.

Keys share one hash tag so a vendor rewrite is one MULTI/EXEC on a cluster too::

    <ns>:{prices}:vendor:<id>          msgpack list[Offer]
    <ns>:{prices}:status               hash: vendor id -> msgpack VendorStatus
    <ns>:{prices}:version              integer, INCR on every successful write
    <ns>:{prices}:history:<offer_id>   stream of msgpack PriceChange, trimmed
    <ns>:{prices}:refresh-lock         token of the refresher holding the lock (PX expiry)

``<ns>`` is ``gpuquote`` unless a deployment (or a test) shares a Redis with others.

Whatever those keys hold, a read never raises on it: a bad version is a ``StoreCorrupt`` fault, a vendor
or status that does not decode is skipped and listed in ``StoreContents.faults``, a bad history entry is
skipped. A write replaces what it cannot decode (a key of the wrong type, a junk version), so the next
refresh repairs the store.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus
from service.store._redis_history import HISTORY_CHUNK, append_history_chunk
from service.store.base import (
    VERSION_READ_BYTES,
    StoreContents,
    StoreCorrupt,
    StoreUnavailable,
    change_decoder,
    offers_decoder,
    offers_encoder,
    parse_version,
    price_changes,
    status_decoder,
)

__all__ = ["RedisClient", "RedisPriceStore", "connect_redis", "is_cluster"]

logger = logging.getLogger("gpuquote.store")

_UNLOCK_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# Inside a write's MULTI/EXEC: delete a version that is not an integer in [0, 2^53) and a status key
# that is not a hash, so the write that follows can repair the store. Returns which it deleted.
_REPAIR_SCRIPT = """
local bad_version, bad_status = 0, 0
local vtype = redis.call('TYPE', KEYS[1])['ok']
if vtype ~= 'none' then
  local value = vtype == 'string' and redis.call('GETRANGE', KEYS[1], 0, 31) or ''
  if not (string.match(value, '^%d+$') and string.len(value) <= 16
          and tonumber(value) <= 9007199254740991) then
    redis.call('DEL', KEYS[1])
    bad_version = 1
  end
end
local stype = redis.call('TYPE', KEYS[2])['ok']
if stype ~= 'none' and stype ~= 'hash' then
  redis.call('DEL', KEYS[2])
  bad_status = 1
end
return {bad_version, bad_status}
"""
_READ_ATTEMPTS = 5
_DECODE_ERRORS = (msgspec.DecodeError, ValueError, TypeError, OverflowError)

RedisClient = aioredis.Redis | RedisCluster
FaultCallback = Callable[[str], None]


def connect_redis(
    url: str,
    *,
    cluster: bool = False,
    timeout_s: float = 2.0,
    max_connections: int = 32,
    pool_timeout_s: float | None = None,
) -> RedisClient:
    """A client with explicit timeouts and a capped pool; ``cluster`` or a ``redis+cluster://`` URL picks
    the cluster one. A request waits at most ``pool_timeout_s`` (default ``timeout_s``) for a free
    connection when all ``max_connections`` are busy."""
    if url.startswith("redis+cluster://"):
        cluster, url = True, "redis://" + url.removeprefix("redis+cluster://")
    options: dict[str, Any] = {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, **options)
    # A pooled connection that Redis closed (a restart, a failover) is retried once on a fresh one. A
    # timeout is not retried: a frozen server would only make the caller wait twice as long.
    retry = Retry(ExponentialBackoff(cap=0.1, base=0.01), retries=1)
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout_s if pool_timeout_s is None else pool_timeout_s,
        health_check_interval=30,
        retry=retry,
        retry_on_error=[RedisConnectionError],
        **options,
    )
    return aioredis.Redis.from_pool(pool)  # the client owns the pool: closing one closes both


def is_cluster(client: RedisClient) -> bool:
    """Whether ``connect_redis`` chose the cluster client (the one place that decides)."""
    return isinstance(client, RedisCluster)


def _raw(value: bytes | str) -> bytes:
    """Payloads are bytes (``decode_responses`` stays off); the typing admits str too."""
    return value.encode() if isinstance(value, str) else value


def _text(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


class RedisPriceStore:
    def __init__(
        self,
        client: RedisClient,
        *,
        namespace: str = "gpuquote",
        history_max_entries: int = 500,
        on_fault: FaultCallback | None = None,
    ):
        self._client = client
        prefix = f"{namespace}:{{prices}}"
        self._version_key = f"{prefix}:version"
        self._status_key = f"{prefix}:status"
        self._lock_key = f"{prefix}:refresh-lock"
        self._vendor_prefix = f"{prefix}:vendor:"
        self._history_prefix = f"{prefix}:history:"
        self._history_max_entries = history_max_entries
        self._on_fault = on_fault

    @property
    def client(self) -> RedisClient:
        """The connection pool, shared with the rate limiter so one cap holds for both."""
        return self._client

    def _fault(self, kind: str, key: str, reason: str) -> None:
        logger.warning("price store: skipped the value at %s: %s", key, reason)
        if self._on_fault is not None:
            self._on_fault(kind)

    async def version(self) -> int:
        try:
            raw = await self._client.getrange(self._version_key, 0, VERSION_READ_BYTES - 1)
        except ResponseError as error:
            raise StoreCorrupt(self._version_key, str(error)) from error
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis GET version failed: {error}") from error
        return parse_version(raw, self._version_key)

    async def read(self) -> StoreContents:
        try:
            return await self._read_consistent()
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis read failed: {error}") from error

    async def _vendor_ids(self) -> list[str]:
        try:
            return sorted(_text(key) for key in await self._client.hkeys(self._status_key))
        except ResponseError:
            # The status hash is not a hash: find the vendors by their offer keys instead.
            keys = [key async for key in self._client.scan_iter(match=self._vendor_prefix + "*", count=500)]
            return sorted(_text(key).removeprefix(self._vendor_prefix) for key in keys)

    async def _read_consistent(self) -> StoreContents:
        vendors = await self._vendor_ids()
        for _ in range(_READ_ATTEMPTS):
            pipe = self._client.pipeline(transaction=True)
            pipe.getrange(self._version_key, 0, VERSION_READ_BYTES - 1)
            pipe.hgetall(self._status_key)
            for vendor in vendors:
                pipe.get(self._vendor_prefix + vendor)
            version_raw, statuses_raw, *offers_raw = await pipe.execute(raise_on_error=False)
            if isinstance(statuses_raw, dict):
                listed = sorted(_text(key) for key in statuses_raw)
                if listed != vendors:  # a vendor appeared or went between the two round trips
                    vendors = listed
                    continue
            return self._decode_contents(
                version_raw, statuses_raw, dict(zip(vendors, offers_raw, strict=True))
            )
        raise StoreUnavailable("vendor list kept changing while reading; try again")

    def _decode_contents(
        self, version_raw: Any, statuses_raw: Any, offers_raw: dict[str, Any]
    ) -> StoreContents:
        faults: dict[str, str] = {}

        def skip(kind: str, key: str, reason: str) -> None:
            faults[key] = reason
            self._fault(kind, key, reason)

        version = 0
        try:
            if isinstance(version_raw, Exception):
                raise StoreCorrupt(self._version_key, str(version_raw))
            version = parse_version(version_raw, self._version_key)
        except StoreCorrupt as error:
            skip("version", self._version_key, error.reason)
        statuses: dict[str, VendorStatus] = {}
        if isinstance(statuses_raw, Exception):
            skip("status", self._status_key, str(statuses_raw))
            statuses_raw = {}
        for key, raw in statuses_raw.items():
            vendor = _text(key)
            try:
                statuses[vendor] = status_decoder.decode(_raw(raw))
            except _DECODE_ERRORS as error:
                skip("status", f"{self._status_key}[{vendor}]", str(error))
        offers: dict[str, list[Offer]] = {}
        unreadable: set[str] = set()
        for vendor, raw in offers_raw.items():
            key = self._vendor_prefix + vendor
            if isinstance(raw, Exception):
                skip("vendor", key, str(raw))
                unreadable.add(vendor)
            elif raw:
                try:
                    offers[vendor] = offers_decoder.decode(_raw(raw))
                except _DECODE_ERRORS as error:
                    skip("vendor", key, f"{error} ({len(raw)} bytes)")
                    unreadable.add(vendor)
        return StoreContents(
            version=version,
            offers_by_vendor=offers,
            statuses=statuses,
            faults=faults,
            unreadable_vendors=frozenset(unreadable),
        )

    async def _previous_offers(self, vendor_key: str) -> list[Offer]:
        """The offers a rewrite replaces (for history); what does not decode is replaced without history."""
        try:
            raw = await self._client.get(vendor_key)
        except ResponseError as error:
            self._fault("vendor", vendor_key, str(error))
            return []
        if not raw:
            return []
        try:
            return offers_decoder.decode(_raw(raw))
        except _DECODE_ERRORS as error:
            self._fault("vendor", vendor_key, f"{error} ({len(raw)} bytes); overwriting it")
            return []

    async def _write(self, what: str, queue: Callable[[Any], None]) -> int:
        """Run the queued commands in one MULTI/EXEC, after a script that drops a junk version or a
        status key that is not a hash (inside the transaction, so concurrent writers agree on it)."""
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.eval(_REPAIR_SCRIPT, 2, self._version_key, self._status_key)
            queue(pipe)
            self._bump_version(pipe)
            results = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis {what} failed: {error}") from error
        repaired = results[0]
        if isinstance(repaired, list):
            for key, flag in zip((self._version_key, self._status_key), repaired, strict=False):
                if flag:
                    self._fault("version" if key == self._version_key else "status", key, "junk value reset")
        return self._checked_version(what, results)

    def _checked_version(self, what: str, results: list[Any]) -> int:
        for failure in (r for r in results[:-2] if isinstance(r, Exception)):
            logger.warning("price store: %s: a command failed: %s", what, failure)
        if isinstance(results[-1], Exception):
            raise StoreUnavailable(f"redis {what} failed: {results[-1]}")
        return int(results[-1])

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        """The vendor's offers, status and the version in one MULTI/EXEC, then its price changes.

        The history streams are an append-only log, appended after the atomic write by a script per
        ``HISTORY_CHUNK`` changes (``_redis_history``; one MULTI holding 100,000 XADDs, after 100,000
        TYPE checks, was the slowest part of a big sheet's first write). Readers never see a change before the price it
        records is served. A crash or a Redis failure between the two leaves the new prices served and
        their changes missing from the history (the next refresh compares against the new prices, so
        they are not added again); it is logged, and the write still counts as done.
        """
        vendor_key = self._vendor_prefix + vendor
        try:
            previous = await self._previous_offers(vendor_key)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis write of vendor {vendor} failed: {error}") from error
        changes = price_changes(previous, offers, datetime.now(UTC))

        def queue(pipe: Any) -> None:
            pipe.set(vendor_key, offers_encoder.encode(list(offers)))
            pipe.hset(self._status_key, vendor, offers_encoder.encode(status))

        version = await self._write(f"write of vendor {vendor}", queue)
        await self._append_history(vendor, changes)
        return version

    async def _append_history(self, vendor: str, changes: Sequence[PriceChange]) -> None:
        for start in range(0, len(changes), HISTORY_CHUNK):
            chunk = changes[start : start + HISTORY_CHUNK]
            try:
                reset = await append_history_chunk(
                    self._client, self._history_prefix, self._history_max_entries, chunk
                )
            except (RedisError, OSError) as error:
                logger.warning(
                    "price store: vendor %s: %d price changes not added to the history: %s",
                    vendor,
                    len(changes) - start,
                    error,
                )
                return
            for key in reset:
                self._fault("history", _text(key), "not a stream; reset it")

    async def write_status(self, status: VendorStatus) -> int:
        def queue(pipe: Any) -> None:
            pipe.hset(self._status_key, status.vendor, offers_encoder.encode(status))

        return await self._write(f"status write for {status.vendor}", queue)

    def _bump_version(self, pipe: Any) -> None:
        # A store that lost its keys (a restart without persistence) starts again from the clock, in
        # milliseconds, so its versions never repeat one a reader still holds.
        pipe.set(self._version_key, time.time_ns() // 1_000_000, nx=True)
        pipe.incr(self._version_key)

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        key = self._history_prefix + offer_id
        try:
            entries = await self._client.xrevrange(key, count=limit)
        except ResponseError as error:
            self._fault("history", key, str(error))
            return []
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis history read failed: {error}") from error
        changes: list[PriceChange] = []
        for entry_id, fields in reversed(entries or []):
            payload = (fields or {}).get(b"e")
            try:
                if payload is None:
                    raise ValueError("no `e` field")
                changes.append(change_decoder.decode(_raw(payload)))
            except _DECODE_ERRORS as error:
                self._fault("history", f"{key}#{_text(entry_id or b'?')}", str(error))
        return changes

    async def try_lock(self, token: str, ttl_s: float) -> bool:
        ttl_ms = max(1, int(ttl_s * 1000))
        try:
            taken = await self._client.set(self._lock_key, token, nx=True, px=ttl_ms)
            if taken:
                return True
            try:
                holder = await self._client.get(self._lock_key)
            except ResponseError as error:
                # The lock key holds something no refresher wrote (a wrong type): it guards nothing.
                self._fault("lock", self._lock_key, f"{error}; replacing it")
                await self._client.delete(self._lock_key)
                return bool(await self._client.set(self._lock_key, token, nx=True, px=ttl_ms))
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis lock failed: {error}") from error
        return holder is not None and _text(holder) == token

    async def unlock(self, token: str) -> None:
        try:
            await self._client.eval(_UNLOCK_SCRIPT, 1, self._lock_key, token)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis unlock failed: {error}") from error

    async def ping(self) -> None:
        try:
            await self._client.ping()
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis PING failed: {error}") from error

    async def aclose(self) -> None:
        await self._client.aclose()
