"""One HTTP GET of a vendor feed: retries, same-origin redirects, a byte cap, errors that leak nothing.

Retried: connect errors, timeouts, broken exchanges (a body cut short), 5xx, and 429 (honouring
``Retry-After``, capped). Not retried: other 4xx, refused redirects, bodies over the byte cap. Each attempt
has the vendor's ``timeout_s`` as a deadline for the whole response, redirects included, so a server that
trickles bytes cannot hold a refresh forever.

Vendor responses are untrusted: a redirect is followed only within the origin (scheme, host, port) of the
URL asked for, so the vendor's token never goes elsewhere; the body is streamed and abandoned once it passes
``AdapterContext.max_feed_bytes``; and error messages name the URL asked for (redacted), never what the
server sent (its reason phrase, headers, body or redirect target).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from adapters._urls import RedactUrlArguments, redact_url, same_origin
from adapters.base import AdapterContext, FetchErrorCategory, VendorFetchError
from schemas.vendor import VendorConfig

__all__ = ["MAX_REDIRECTS", "get_bytes"]

logger = logging.getLogger(__name__)
# httpx logs "HTTP Request: GET <url>" at INFO with the URL's credentials in it; any client we are handed
# logs through this one logger, so the filter goes there, once, when vendor I/O is first imported.
logging.getLogger("httpx").addFilter(RedactUrlArguments())

MAX_REDIRECTS = 5
_RETRY_AFTER_CAP_S = 30.0
# The one message of h11's that is safe to repeat: it holds byte counts only, no bytes from the peer.
_TRUNCATED_BODY = "peer closed connection without sending complete message body"

# Looked up at call time so tests can record the delays instead of waiting them out.
_sleep = asyncio.sleep


@dataclass
class _Retryable(Exception):
    """One attempt failed in a way another attempt might not."""

    problem: str
    category: FetchErrorCategory
    retry_after_s: float | None = None


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
        raise VendorFetchError(config.id, f"token variable {config.token_env} is not set", category="config")
    return {"Authorization": f"Bearer {token}"}


def _connect_detail(error: BaseException) -> str:
    """Why a connection failed, in the local network stack's words (a TLS peer's certificate text is not)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return "TLS handshake failed"
        if isinstance(cause, socket.gaierror):
            return cause.strerror or "host name not resolved"
        if isinstance(cause, OSError) and cause.errno is not None:
            return os.strerror(cause.errno)
        cause = cause.__cause__ or cause.__context__
    return type(error).__name__


def _describe(error: httpx.HTTPError | TimeoutError, label: str, timeout_s: float) -> _Retryable:
    match error:
        case httpx.TimeoutException() | TimeoutError():
            return _Retryable(f"timed out after {timeout_s:g} s fetching {label}", "timeout")
        case httpx.RemoteProtocolError() if str(error).startswith(_TRUNCATED_BODY):
            # h11 raises this when the peer closes before the declared Content-Length arrived.
            return _Retryable(f"truncated response from {label}: {error}", "protocol")
        case httpx.ConnectError():
            return _Retryable(f"cannot connect to {label}: {_connect_detail(error)}", "connect")
        case _:
            # Other protocol errors quote the offending header or status line: name the kind only.
            return _Retryable(f"{type(error).__name__}: malformed HTTP response from {label}", "protocol")


def _check_status(response: httpx.Response, vendor: str, label: str) -> None:
    status = response.status_code
    if response.is_success:
        return
    # The standard phrase, not the server's: a reason phrase is text the vendor chose.
    phrase = httpx.codes.get_reason_phrase(status)
    problem = f"HTTP {status}{' ' + phrase if phrase else ''} from {label}"
    if status == httpx.codes.TOO_MANY_REQUESTS:
        raise _Retryable(problem, "http_status", _retry_after_s(response))
    if status >= httpx.codes.INTERNAL_SERVER_ERROR:
        raise _Retryable(problem, "http_status")
    unauthorized = status in {httpx.codes.UNAUTHORIZED, httpx.codes.FORBIDDEN}
    raise VendorFetchError(vendor, problem, category="unauthorized" if unauthorized else "http_status")


async def _read_capped(response: httpx.Response, max_bytes: int, vendor: str, label: str) -> bytes:
    """The (decompressed) body, or ``too_large`` as soon as it is known to pass ``max_bytes``."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        message = f"{label} declares {int(declared)} bytes, over the {max_bytes}-byte feed cap"
        raise VendorFetchError(vendor, message, category="too_large")
    chunks: list[bytes] = []
    received = 0
    async for chunk in response.aiter_bytes():
        received += len(chunk)
        if received > max_bytes:
            message = f"{label} sent more than the {max_bytes}-byte feed cap; stopped reading"
            raise VendorFetchError(vendor, message, category="too_large")
        chunks.append(chunk)
    return b"".join(chunks)


async def _get_once(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: dict[str, str],
    request_timeout: httpx.Timeout,
    max_bytes: int,
    vendor: str,
    label: str,
) -> bytes:
    """One attempt: follow same-origin redirects (at most ``MAX_REDIRECTS``), then read the capped body."""
    current = httpx.URL(url)
    for _ in range(MAX_REDIRECTS + 1):
        request = client.build_request("GET", current, headers=headers, timeout=request_timeout)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            if not response.has_redirect_location:
                _check_status(response, vendor, label)
                return await _read_capped(response, max_bytes, vendor, label)
            location = response.headers["Location"]
        finally:
            await response.aclose()
        try:
            target = current.join(location)
        except httpx.InvalidURL:
            target = None
        if target is None or not same_origin(current, target):
            message = f"refused a redirect from {label} to another origin"
            raise VendorFetchError(vendor, message, category="redirect_refused")
        current = target
    message = f"more than {MAX_REDIRECTS} redirects from {label}"
    raise VendorFetchError(vendor, message, category="redirect_refused")


async def get_bytes(
    url: str,
    config: VendorConfig,
    *,
    client: httpx.AsyncClient,
    context: AdapterContext,
    label: str | None = None,
    max_bytes: int | None = None,
) -> bytes:
    """GET ``url`` with the vendor's timeout and retry budget; the whole body, or ``VendorFetchError``.

    ``label`` is how messages name the request (default: ``url`` redacted); ``max_bytes`` caps the body
    (default ``context.max_feed_bytes``; a paginated feed passes what its earlier pages left of it).
    """
    label = redact_url(url) if label is None else label
    headers = _headers(config, context)
    timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 5.0))
    attempts = config.retries + 1
    failure = _Retryable("no attempt made", "other")
    for attempt in range(attempts):
        try:
            async with asyncio.timeout(config.timeout_s):
                return await _get_once(
                    client,
                    url,
                    headers=headers,
                    request_timeout=timeout,
                    max_bytes=context.max_feed_bytes if max_bytes is None else max_bytes,
                    vendor=config.id,
                    label=label,
                )
        except _Retryable as retryable:
            failure = retryable
        except (httpx.InvalidURL, httpx.UnsupportedProtocol):
            message = f"{label} is not a usable http or https URL"
            raise VendorFetchError(config.id, message, category="config") from None
        except (httpx.HTTPError, TimeoutError) as error:
            failure = _describe(error, label, config.timeout_s)
        if attempt < config.retries:
            delay_s = failure.retry_after_s
            if delay_s is None:
                delay_s = context.retry_backoff_s * (2**attempt) * (0.5 + random.random())  # noqa: S311 - jitter
            logger.info(
                "vendor %s: attempt %d of %d failed (%s); retrying in %.2f s",
                config.id,
                attempt + 1,
                attempts,
                failure.problem,
                delay_s,
            )
            await _sleep(delay_s)
    message = f"{failure.problem} (gave up after {attempts} attempt{'s' if attempts > 1 else ''})"
    raise VendorFetchError(config.id, message, category=failure.category)
