"""Vendor I/O, handled one way: a file beside the vendors file, or an HTTP GET with bounded retries.

Retried: connect/read errors, 5xx, and 429 (honouring ``Retry-After``, capped). Not retried: other 4xx.
Everything that fails ends as one ``VendorFetchError(vendor=...)``.
"""

from __future__ import annotations

import asyncio
import random
from email.utils import parsedate_to_datetime
from datetime import UTC, datetime

import httpx

from adapters.base import AdapterContext, VendorFetchError
from schemas.vendor import VendorConfig

__all__ = ["get_bytes", "read_feed"]

_BACKOFF_BASE_S = 0.2
_RETRY_AFTER_CAP_S = 30.0


def _retry_after_s(response: httpx.Response) -> float | None:
    header = response.headers.get("Retry-After")
    if header is None:
        return None
    try:
        return min(max(float(header), 0.0), _RETRY_AFTER_CAP_S)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return min(max((when - datetime.now(UTC)).total_seconds(), 0.0), _RETRY_AFTER_CAP_S)


def _headers(config: VendorConfig, context: AdapterContext) -> dict[str, str]:
    if config.token_env is None:
        return {}
    token = context.environ.get(config.token_env)
    if not token:
        raise VendorFetchError(config.id, f"token variable {config.token_env} is not set")
    return {"Authorization": f"Bearer {token}"}


async def get_bytes(
    url: str, config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext
) -> bytes:
    """GET ``url`` with the vendor's timeout and retry budget; the whole body, or ``VendorFetchError``."""
    headers = _headers(config, context)
    timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 5.0))
    last_problem = "no attempt made"
    for attempt in range(config.retries + 1):
        delay_s = _BACKOFF_BASE_S * (2**attempt) * (0.5 + random.random())  # noqa: S311 - jitter only
        try:
            response = await client.get(url, headers=headers, timeout=timeout)
        except httpx.TimeoutException as error:
            last_problem = f"timed out after {config.timeout_s:g} s ({type(error).__name__})"
        except httpx.HTTPError as error:
            last_problem = f"{type(error).__name__}: {error}"
        else:
            if response.is_success:
                return response.content
            last_problem = f"HTTP {response.status_code} from {url}"
            if response.status_code == 429:
                delay_s = _retry_after_s(response) or delay_s
            elif response.status_code < 500:
                break
        if attempt < config.retries:
            await asyncio.sleep(delay_s)
    raise VendorFetchError(config.id, last_problem)


async def read_feed(
    config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext
) -> tuple[bytes, str]:
    """The feed's body and a description of where it came from (``path`` wins over ``url``)."""
    if config.path is not None:
        path = (context.base_dir / config.path).resolve()
        try:
            return await asyncio.to_thread(path.read_bytes), f"file:{config.path}"
        except OSError as error:
            raise VendorFetchError(config.id, f"cannot read {config.path}: {error.strerror}") from error
    if config.url is not None:
        return await get_bytes(config.url, config, client=client, context=context), config.url
    raise VendorFetchError(config.id, "neither path nor url is configured")
