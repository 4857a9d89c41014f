"""Vendor I/O, handled one way: a file beside the vendors file, or an HTTP GET with bounded retries.

Retried: connect errors, timeouts, truncated bodies, 5xx, and 429 (honouring ``Retry-After``, capped).
Not retried: other 4xx. Each attempt has the vendor's ``timeout_s`` as a deadline for the whole response,
so a server that trickles bytes cannot hold a refresh forever. Everything that fails ends as one
``VendorFetchError(vendor=...)`` whose message says what happened and where.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.parse import urljoin

import httpx

from adapters.base import AdapterContext, FetchResult, VendorFetchError
from schemas.vendor import VendorConfig

__all__ = [
    "MAX_PAGES",
    "SLUG_SEPARATOR_PATTERN",
    "DocumentAdapter",
    "decode_text",
    "get_bytes",
    "read_feed",
    "read_pages",
    "slug",
]

_RETRY_AFTER_CAP_S = 30.0
MAX_PAGES = 100

# Looked up at call time so tests can record the delays instead of waiting them out.
_sleep = asyncio.sleep

PageT = TypeVar("PageT")

# SKU ids keep ASCII letters, digits and Chinese; everything else collapses to one "-".
SLUG_SEPARATOR_PATTERN = r"[^a-z0-9\u4e00-\u9fff]+"
_slug_separators = re.compile(SLUG_SEPARATOR_PATTERN)


def slug(*parts: str | int) -> str:
    """A stable SKU fragment: ``slug("RTX 4090", 8, "苏州 A区")`` is ``rtx-4090-8-苏州-a区``."""
    joined = "-".join(str(part) for part in parts).lower()
    return _slug_separators.sub("-", joined).strip("-")


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


def _describe(error: httpx.HTTPError | TimeoutError, url: str, timeout_s: float) -> str:
    match error:
        case httpx.TimeoutException() | TimeoutError():
            return f"timed out after {timeout_s:g} s fetching {url}"
        case httpx.RemoteProtocolError():
            # h11 raises this when the peer closes before the declared Content-Length arrived.
            return f"truncated or malformed response from {url}: {error}"
        case httpx.ConnectError():
            return f"cannot connect to {url}: {error}"
        case _:
            return f"{type(error).__name__} fetching {url}: {error}"


async def get_bytes(
    url: str, config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext
) -> bytes:
    """GET ``url`` with the vendor's timeout and retry budget; the whole body, or ``VendorFetchError``."""
    headers = _headers(config, context)
    timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 5.0))
    attempts = config.retries + 1
    problem = "no attempt made"
    for attempt in range(attempts):
        delay_s = context.retry_backoff_s * (2**attempt) * (0.5 + random.random())  # noqa: S311 - jitter
        try:
            async with asyncio.timeout(config.timeout_s):
                response = await client.get(url, headers=headers, timeout=timeout)
        except (httpx.HTTPError, TimeoutError) as error:
            problem = _describe(error, url, config.timeout_s)
        else:
            if response.is_success:
                return response.content
            problem = f"HTTP {response.status_code} {response.reason_phrase} from {url}"
            if response.status_code == 429:
                retry_after_s = _retry_after_s(response)
                delay_s = delay_s if retry_after_s is None else retry_after_s
            elif response.status_code < 500:
                raise VendorFetchError(config.id, problem)
        if attempt < config.retries:
            await _sleep(delay_s)
    raise VendorFetchError(config.id, f"{problem} (gave up after {attempts} attempts)")


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


async def read_pages(
    config: VendorConfig,
    *,
    client: httpx.AsyncClient,
    context: AdapterContext,
    decode: Callable[[bytes, str], PageT],
    next_link: Callable[[PageT], str | None],
    max_pages: int = MAX_PAGES,
) -> tuple[list[PageT], str]:
    """Every page of a paginated feed, following next links (relative ones against the page's URL).

    A file is one page. A next link already followed, or more than ``max_pages`` pages, fails the feed:
    a vendor bug must not keep a refresh looping. ``decode(body, where)`` raises ``VendorFetchError``.
    """
    body, source = await read_feed(config, client=client, context=context)
    pages = [decode(body, source)]
    if config.path is not None:
        return pages, source
    page_url = source
    fetched = {page_url}
    while link := next_link(pages[-1]):
        page_url = urljoin(page_url, link)
        if page_url in fetched:
            raise VendorFetchError(config.id, f"pagination loops: next link {page_url} was already fetched")
        if len(pages) == max_pages:
            raise VendorFetchError(config.id, f"more than {max_pages} pages; stopped before {page_url}")
        fetched.add(page_url)
        pages.append(decode(await get_bytes(page_url, config, client=client, context=context), page_url))
    return pages, source


def decode_text(body: bytes, config: VendorConfig, *, what: str) -> str:
    """Text of a vendor document: UTF-8 (a BOM allowed) or else GBK, the usual encodings of Chinese sheets.

    GB 18030 is a superset of GBK that every GBK file decodes as; trying UTF-8 first is safe because GBK
    text with Chinese in it is almost never valid UTF-8.
    """
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return body.decode("gb18030")
    except UnicodeDecodeError as error:
        raise VendorFetchError(config.id, f"{what} is neither UTF-8 nor GBK text: {error}") from error


class DocumentAdapter:
    """An adapter whose feed is one document (a file, or one GET): ``fetch`` reads it, ``parse`` maps it."""

    def __init__(self, config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext) -> None:
        self.config = config
        self.client = client
        self.context = context

    async def fetch(self) -> FetchResult:
        body, source = await read_feed(self.config, client=self.client, context=self.context)
        return self.parse(body, source=source)

    def parse(self, body: bytes, *, source: str) -> FetchResult:
        raise NotImplementedError
