"""The Redis client every Redis user of the service gets: explicit timeouts, a capped pool, one retry of
a connection Redis closed, and the cluster client when the settings or the URL ask for it."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["RedisClient", "connect_redis", "is_cluster"]

RedisClient = aioredis.Redis | RedisCluster


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
