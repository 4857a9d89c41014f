"""Request limits: per-caller rate limiting on ``POST /quote`` and CORS, both off unless configured.

The rate limit is a fixed one-minute window per caller, counted in the shared store when Redis is
configured (``INCR`` + ``EXPIRE`` in one round trip) so every replica sees the same count. A caller is
one of the configured API keys (``Settings.admin_api_keys``; hashed, never stored in clear) or else the
client address: the socket peer, or the ``X-Forwarded-For`` hop nearest to it that is not one of
``Settings.trusted_proxies`` when the peer is one of them. Any other ``X-API-Key`` value counts as the
address it came from, so rotating made-up keys buys nothing.

Requests that arrive together share a round trip (``service.http._counts``), and the deadline does not
count the event loop's own delay, so the shared limit holds when traffic is heaviest. The limiter fails
open: when the store errors or misses ``Settings.store_deadline_s``, it counts in this process instead
(logged once per outage, counted in ``gpuquote_rate_limit_local_total``), and it skips the store while
the shared store breaker is open. Over the limit: 429 with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import time
from collections.abc import Callable, Iterable

from litestar.config.cors import CORSConfig
from litestar.enums import ScopeType
from litestar.exceptions import TooManyRequestsException
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send
from redis.exceptions import RedisError

from service import metrics
from service.http._counts import SharedCounts
from service.settings import Settings, SettingsError
from service.store.breaker import StoreBreaker
from service.store.deadline import StoreSlow
from service.store.redis import RedisClient
from service.store.redis_errors import describe

__all__ = ["ClientAddress", "RateLimitMiddleware", "RateLimiter", "cors_config", "rate_limit_middleware"]

logger = logging.getLogger("gpuquote.limits")

_WINDOW_S = 60
_LIMITED = frozenset({("POST", "/quote")})
_LOCAL_MAX_CALLERS = 100_000  # in-process counts kept at most (per window) while the store is away
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


class ClientAddress:
    """The caller's address: the socket peer, unless that is a trusted proxy (then X-Forwarded-For)."""

    def __init__(self, trusted_proxies: Iterable[str]) -> None:
        networks: list[_Network] = []
        for entry in trusted_proxies:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise SettingsError(f"invalid GPUQUOTE_TRUSTED_PROXIES entry {entry!r}") from None
        self._trusted = tuple(networks)

    def _is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._trusted)

    def __call__(self, scope: Scope) -> str:
        client = scope.get("client")
        peer = client[0] if client else "unknown"
        if not self._trusted or not self._is_trusted(peer):
            return peer
        hops = [
            hop.strip()
            for name, value in scope["headers"]
            if name == b"x-forwarded-for"
            for hop in value.decode("latin-1").split(",")
            if hop.strip()
        ]
        # The nearest hop no trusted proxy vouches for; the ones before it could be anything.
        for hop in reversed(hops):
            if not self._is_trusted(hop):
                return hop[:64]
        return hops[0][:64] if hops else peer


class RateLimiter:
    """Counts each caller's requests in the current window; shared through Redis when given a client."""

    def __init__(
        self,
        limit_per_minute: int,
        *,
        client: RedisClient | None = None,
        namespace: str = "gpuquote",
        deadline_s: float = 0.5,
        breaker: StoreBreaker | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limit = limit_per_minute
        self._counts = SharedCounts(client, ttl_s=_WINDOW_S + 1, deadline_s=deadline_s) if client else None
        self._prefix = f"{namespace}:ratelimit:"
        self._deadline_s = deadline_s
        self._breaker = breaker or StoreBreaker()
        self._clock = clock
        self._local: dict[str, int] = {}
        self._local_window = -1

    async def hit(self, caller: str) -> tuple[bool, int]:
        """Count one request; ``(allowed, seconds until the window resets)``."""
        now = self._clock()
        window = int(now // _WINDOW_S)
        reset_s = max(1, math.ceil((window + 1) * _WINDOW_S - now))
        count = await self._shared_count(caller, window)
        if count is None:
            if self._counts is not None:
                metrics.RATE_LIMIT_FALLBACKS.inc()
            count = self._local_count(caller, window)
        return count <= self.limit, reset_s

    async def _shared_count(self, caller: str, window: int) -> int | None:
        if self._counts is None or not self._breaker.allow():
            return None
        try:
            count = await self._counts.hit(f"{self._prefix}{caller}:{window}")
        except StoreSlow:
            reason = f"no answer within {self._deadline_s} s"
        except (RedisError, OSError, TimeoutError) as error:
            reason = describe(error)
        else:
            if self._breaker.succeeded():
                logger.info("rate limit store reachable again")
            return count
        if self._breaker.failed(f"rate limit: {reason}"):
            logger.warning("rate limit store unavailable, counting in-process: %s", reason)
        return None

    def _local_count(self, caller: str, window: int) -> int:
        if window != self._local_window or len(self._local) >= _LOCAL_MAX_CALLERS:
            self._local.clear()
            self._local_window = window
        count = self._local.get(caller, 0) + 1
        self._local[caller] = count
        return count


class RateLimitMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)

    def __init__(self, limiter: RateLimiter, api_keys: Iterable[str], address: ClientAddress) -> None:
        self._limiter = limiter
        self._key_hashes = frozenset(_hash(key) for key in api_keys)
        self._address = address

    def caller(self, scope: Scope) -> str:
        for name, value in scope["headers"]:
            if name == b"x-api-key":
                hashed = _hash(value.decode("latin-1"))
                if hashed in self._key_hashes:
                    return "key:" + hashed
                break
        return "addr:" + self._address(scope)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        route = (scope.get("method", ""), scope["path"])
        if route in _LIMITED:
            allowed, reset_s = await self._limiter.hit(self.caller(scope))
            if not allowed:
                raise TooManyRequestsException(
                    detail="Too many requests", headers={"Retry-After": str(reset_s)}
                )
        await next_app(scope, receive, send)


def rate_limit_middleware(
    settings: Settings,
    *,
    client: RedisClient | None,
    breaker: StoreBreaker | None,
    clock: Callable[[], float] = time.time,
) -> RateLimitMiddleware | None:
    """The limiter for ``settings``, counting in Redis through ``client`` when one is given; ``clock``
    (seconds since the epoch) places each request in its one-minute window."""
    if settings.rate_limit_per_minute <= 0:
        return None
    limiter = RateLimiter(
        settings.rate_limit_per_minute,
        client=client,
        namespace=settings.redis_namespace,
        deadline_s=settings.store_deadline_s,
        breaker=breaker,
        clock=clock,
    )
    return RateLimitMiddleware(limiter, settings.admin_api_keys, ClientAddress(settings.trusted_proxies))


def cors_config(settings: Settings) -> CORSConfig | None:
    if not settings.cors_allow_origins:
        return None
    return CORSConfig(allow_origins=list(settings.cors_allow_origins), allow_methods=["GET", "POST"])
