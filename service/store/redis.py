"""The shared price store on Redis (or Redis Cluster), for every replica and the refresh job.

Keys share one hash tag so a vendor rewrite is one MULTI/EXEC on a cluster too::

    <ns>:{prices}:vendor:<id>          msgpack list[Offer]
    <ns>:{prices}:status               hash: vendor id -> msgpack VendorStatus
    <ns>:{prices}:version              integer, INCR on every successful write
    <ns>:{prices}:history:<offer_id>   stream of msgpack PriceChange, trimmed
    <ns>:{prices}:refresh-lock         token of the refresher holding the lock (PX expiry)

``<ns>`` is ``gpuquote`` unless a deployment (or a test) shares a Redis with others.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus
from service.store.base import (
    StoreContents,
    StoreUnavailable,
    change_decoder,
    offers_decoder,
    offers_encoder,
    price_changes,
    status_decoder,
)

__all__ = ["RedisPriceStore", "connect_redis"]

_UNLOCK_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_READ_ATTEMPTS = 5

RedisClient = aioredis.Redis | RedisCluster


def connect_redis(url: str, *, cluster: bool = False, timeout_s: float = 2.0) -> RedisClient:
    """A client with explicit timeouts; ``cluster`` or a ``redis+cluster://`` URL picks the cluster one."""
    if url.startswith("redis+cluster://"):
        cluster, url = True, "redis://" + url.removeprefix("redis+cluster://")
    options: dict[str, Any] = {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
    if cluster:
        return RedisCluster.from_url(url, **options)
    # A pooled connection that Redis closed (a restart, a failover) is retried once on a fresh one.
    retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2)
    return aioredis.from_url(
        url,
        health_check_interval=30,
        retry=retry,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
        **options,
    )


def _raw(value: bytes | str) -> bytes:
    """Payloads are bytes (``decode_responses`` stays off); the typing admits str too."""
    return value.encode() if isinstance(value, str) else value


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisPriceStore:
    def __init__(self, client: RedisClient, *, namespace: str = "gpuquote", history_max_entries: int = 500):
        self._client = client
        prefix = f"{namespace}:{{prices}}"
        self._version_key = f"{prefix}:version"
        self._status_key = f"{prefix}:status"
        self._lock_key = f"{prefix}:refresh-lock"
        self._vendor_prefix = f"{prefix}:vendor:"
        self._history_prefix = f"{prefix}:history:"
        self._history_max_entries = history_max_entries

    async def version(self) -> int:
        try:
            raw = await self._client.get(self._version_key)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis GET version failed: {error}") from error
        return int(raw) if raw is not None else 0

    async def read(self) -> StoreContents:
        try:
            return await self._read_consistent()
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis read failed: {error}") from error

    async def _read_consistent(self) -> StoreContents:
        vendors = sorted(_text(key) for key in await self._client.hkeys(self._status_key))
        for _ in range(_READ_ATTEMPTS):
            pipe = self._client.pipeline(transaction=True)
            pipe.get(self._version_key)
            pipe.hgetall(self._status_key)
            for vendor in vendors:
                pipe.get(self._vendor_prefix + vendor)
            version_raw, statuses_raw, *offers_raw = await pipe.execute()
            listed = sorted(key.decode() for key in statuses_raw)
            if listed != vendors:  # a vendor appeared or went between the two round trips
                vendors = listed
                continue
            return StoreContents(
                version=int(version_raw) if version_raw is not None else 0,
                offers_by_vendor={
                    vendor: offers_decoder.decode(raw)
                    for vendor, raw in zip(vendors, offers_raw, strict=True)
                    if raw
                },
                statuses={key.decode(): status_decoder.decode(raw) for key, raw in statuses_raw.items()},
            )
        raise StoreUnavailable("vendor list kept changing while reading; try again")

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        vendor_key = self._vendor_prefix + vendor
        try:
            previous_raw = await self._client.get(vendor_key)
            previous = offers_decoder.decode(_raw(previous_raw)) if previous_raw else []
            pipe = self._client.pipeline(transaction=True)
            pipe.set(vendor_key, offers_encoder.encode(list(offers)))
            pipe.hset(self._status_key, vendor, offers_encoder.encode(status))
            for change in price_changes(previous, offers, datetime.now(UTC)):
                pipe.xadd(
                    self._history_prefix + change.offer_id,
                    {"e": offers_encoder.encode(change)},
                    maxlen=self._history_max_entries,
                    approximate=True,
                )
            self._bump_version(pipe)
            results = await pipe.execute()
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis write of vendor {vendor} failed: {error}") from error
        return int(results[-1])

    async def write_status(self, status: VendorStatus) -> int:
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.hset(self._status_key, status.vendor, offers_encoder.encode(status))
            self._bump_version(pipe)
            results = await pipe.execute()
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis status write for {status.vendor} failed: {error}") from error
        return int(results[-1])

    def _bump_version(self, pipe: Any) -> None:
        # A store that lost its keys (a restart without persistence) starts again from the clock, in
        # milliseconds, so its versions never repeat one a reader still holds.
        pipe.set(self._version_key, time.time_ns() // 1_000_000, nx=True)
        pipe.incr(self._version_key)

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        try:
            entries = await self._client.xrevrange(self._history_prefix + offer_id, count=limit)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(f"redis history read failed: {error}") from error
        return [
            change_decoder.decode(_raw(fields[b"e"]))
            for _entry_id, fields in reversed(entries or [])
            if fields
        ]

    async def try_lock(self, token: str, ttl_s: float) -> bool:
        try:
            taken = await self._client.set(self._lock_key, token, nx=True, px=max(1, int(ttl_s * 1000)))
            if taken:
                return True
            holder = await self._client.get(self._lock_key)
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
