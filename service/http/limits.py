"""Request limits: per-caller rate limiting on ``POST /quote`` and CORS, both off unless configured.

The rate limit counts per API key (hashed, never stored in clear) or else per client address, in the
shared store when Redis is configured so every replica sees the same count.
"""

from __future__ import annotations

import hashlib
from typing import Any

from litestar import Request
from litestar.config.cors import CORSConfig
from litestar.middleware.rate_limit import RateLimitConfig, get_remote_address

from service.settings import Settings

__all__ = ["RATE_LIMIT_STORE", "cors_config", "rate_limit_config"]

RATE_LIMIT_STORE = "rate_limit"
_LIMITED_PATHS = frozenset({"/quote"})


def _caller(request: Request[Any, Any, Any]) -> str:
    if api_key := request.headers.get("X-API-Key"):
        return "key:" + hashlib.sha256(api_key.encode()).hexdigest()[:32]
    return "addr:" + get_remote_address(request)


def _is_limited(request: Request[Any, Any, Any]) -> bool:
    return request.url.path in _LIMITED_PATHS


def rate_limit_config(settings: Settings) -> RateLimitConfig | None:
    if settings.rate_limit_per_minute <= 0:
        return None
    return RateLimitConfig(
        rate_limit=("minute", settings.rate_limit_per_minute),
        identifier_for_request=_caller,
        check_throttle_handler=_is_limited,
        store=RATE_LIMIT_STORE,
    )


def cors_config(settings: Settings) -> CORSConfig | None:
    if not settings.cors_allow_origins:
        return None
    return CORSConfig(allow_origins=list(settings.cors_allow_origins), allow_methods=["GET", "POST"])
