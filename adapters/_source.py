"""Reading a vendor feed: a file beside the vendors file, or HTTP (``adapters._http``), page by page.

Everything that fails ends as one ``VendorFetchError(vendor=...)`` whose message says what happened and
where, without quoting the feed: a URL is shown redacted, a later page by its number, a decode error by
its kind and position.
"""

from __future__ import annotations

import asyncio
import errno
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
import msgspec

from adapters._http import get_bytes
from adapters._urls import redact_url, same_origin
from adapters.base import AdapterContext, FetchResult, VendorFetchError
from adapters.vendors_file import feed_file_path
from schemas.vendor import VendorConfig

__all__ = [
    "MAX_PAGES",
    "SLUG_SEPARATOR_PATTERN",
    "DocumentAdapter",
    "decode_problem",
    "decode_text",
    "get_bytes",
    "read_feed",
    "read_pages",
    "slug",
]

MAX_PAGES = 100

PageT = TypeVar("PageT")

# SKU ids keep ASCII letters, digits and Chinese; everything else collapses to one "-".
SLUG_SEPARATOR_PATTERN = r"[^a-z0-9\u4e00-\u9fff]+"
_slug_separators = re.compile(SLUG_SEPARATOR_PATTERN)

# msgspec messages that name only types, our own field names and positions; the others quote the input
# ("Invalid enum value 'x'", "Object contains unknown field `x`").
_SAFE_DECODE_PROBLEMS = ("Expected `", "Object missing required field `", "JSON is malformed:", "Input data")


def slug(*parts: str | int) -> str:
    """A stable SKU fragment: ``slug("RTX 4090", 8, "苏州 A区")`` is ``rtx-4090-8-苏州-a区``."""
    joined = "-".join(str(part) for part in parts).lower()
    return _slug_separators.sub("-", joined).strip("-")


def decode_problem(error: msgspec.DecodeError) -> str:
    """What msgspec found wrong, without any of the input it found it in.

    ``Expected `int`, got `str` - at `$.data[0].gpu_count``` is kept; ``Invalid enum value 'x' - at
    `$.kind``` becomes ``unexpected value - at `$.kind```. Paths show our field names and list
    indexes only (msgspec writes dict keys as ``[...]``).
    """
    lead, at, path = str(error).partition(" - at `")
    if not lead.startswith(_SAFE_DECODE_PROBLEMS):
        lead = "unexpected value" if isinstance(error, msgspec.ValidationError) else "not valid JSON"
    return lead + at + path


def _read_capped_file(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes, or None when it is (or grows while read to be) over ``max_bytes``.

    Only a regular file is read: a FIFO or a device would block the refresh (and its lock) with no timeout.
    """
    status = path.stat()
    if not stat.S_ISREG(status.st_mode):
        raise IsADirectoryError(errno.EINVAL, "not a regular file")
    if status.st_size > max_bytes:
        return None
    with path.open("rb") as file:
        body = file.read(max_bytes + 1)
    return None if len(body) > max_bytes else body


async def _read_file(config: VendorConfig, relative: str, context: AdapterContext) -> bytes:
    try:
        path = feed_file_path(context.base_dir, relative)
    except ValueError as error:
        raise VendorFetchError(config.id, str(error), category="config") from None
    try:
        body = await asyncio.to_thread(_read_capped_file, path, context.max_feed_bytes)
    except OSError as error:
        raise VendorFetchError(
            config.id, f"cannot read {relative}: {error.strerror}", category="file"
        ) from error
    if body is None:
        message = f"{relative} is over the {context.max_feed_bytes}-byte feed cap"
        raise VendorFetchError(config.id, message, category="too_large")
    return body


async def read_feed(
    config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext
) -> tuple[bytes, str]:
    """The feed's body and where it came from, safe to show (``path`` wins over ``url``)."""
    if config.path is not None:
        return await _read_file(config, config.path, context), f"file:{config.path}"
    if config.url is not None:
        return await get_bytes(config.url, config, client=client, context=context), redact_url(config.url)
    raise VendorFetchError(config.id, "neither path nor url is configured", category="config")


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

    A file is one page. A next link to another origin fails the feed (the vendor's token must not follow
    it), and so do a next link already followed and more than ``max_pages`` pages: a vendor bug must not
    keep a refresh looping. ``AdapterContext.max_feed_bytes`` caps the feed, not each page: every page is
    read against what the earlier ones left (100 pages just under the cap would otherwise be 100 times
    it in memory). ``decode(body, where)`` raises ``VendorFetchError``; ``where`` names a later page by
    its number, since its URL came from the vendor.
    """
    body, source = await read_feed(config, client=client, context=context)
    pages = [decode(body, source)]
    if config.url is None or config.path is not None:
        return pages, source
    left_bytes = context.max_feed_bytes - len(body)
    first_url = httpx.URL(config.url)  # it parsed: the first page was fetched from it
    page_url = first_url
    fetched = {page_url}
    while link := next_link(pages[-1]):
        number = len(pages) + 1
        try:
            page_url = page_url.join(link)
        except httpx.InvalidURL:
            message = f"page {number - 1} of {source} has an unusable next link"
            raise VendorFetchError(config.id, message, category="malformed") from None
        if not same_origin(first_url, page_url):
            message = f"refused page {number} of {source}: its link points at another origin"
            raise VendorFetchError(config.id, message, category="redirect_refused")
        if page_url in fetched:
            message = f"pagination loops: page {number - 1}'s next link points at a page already fetched"
            raise VendorFetchError(config.id, message, category="malformed")
        if len(pages) == max_pages:
            message = f"more than {max_pages} pages from {source}; stopped before page {number}"
            raise VendorFetchError(config.id, message, category="too_large")
        if left_bytes <= 0:
            message = (
                f"pages of {source} reached the {context.max_feed_bytes}-byte feed cap before page {number}"
            )
            raise VendorFetchError(config.id, message, category="too_large")
        fetched.add(page_url)
        where = f"{source} (page {number})"
        try:
            page_body = await get_bytes(
                str(page_url), config, client=client, context=context, label=where, max_bytes=left_bytes
            )
        except VendorFetchError as error:
            if error.category == "too_large":
                message = (
                    f"pages of {source} pass the {context.max_feed_bytes}-byte feed cap at page {number}"
                )
                raise VendorFetchError(config.id, message, category="too_large") from None
            raise
        left_bytes -= len(page_body)
        pages.append(decode(page_body, where))
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
        message = f"{what} is neither UTF-8 nor GBK text (first bad byte at offset {error.start})"
        raise VendorFetchError(config.id, message, category="malformed") from error


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
