"""Vendor feeds are untrusted: what a hostile or broken vendor can and cannot make the adapters do.

Against the loopback vendor (and a second server playing "another origin"): redirects and next links stay
within the vendor's origin, so its token goes nowhere else; feeds are capped in bytes; feed files stay in
the vendors file's folder; and no error or log line quotes the feed or a credential from a URL.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from adapters import (
    FETCH_ERROR_CATEGORIES,
    AdapterContext,
    FetchResult,
    VendorFetchError,
    build_adapter,
    redact_url,
)
from adapters import base as adapters_base
from adapters._http import MAX_REDIRECTS
from adapters.vendors_file import VendorsFileError, load_vendors_file
from schemas.vendor import FeedFormat
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor

PATH = "/feed"
SECRET = "hunter2"


@pytest.fixture
def other_origin() -> Iterator[FakeVendor]:
    """A second server: a different port is a different origin."""
    server = FakeVendor()
    yield server
    server.close()


async def _fetch(
    feed_format: FeedFormat, client: httpx.AsyncClient, context: AdapterContext, **fields: object
) -> FetchResult:
    return await build_adapter(vendor(feed_format, **fields), client=client, context=context).fetch()


async def _failure(
    feed_format: FeedFormat, client: httpx.AsyncClient, context: AdapterContext, **fields: object
) -> VendorFetchError:
    with pytest.raises(VendorFetchError) as caught:
        await _fetch(feed_format, client, context, **fields)
    assert caught.value.category in FETCH_ERROR_CATEGORIES
    return caught.value


def _per_second_page(region: str, next_link: str | None = None) -> bytes:
    regions = [{"region_name": region, "inventory": 1, "price": 550}]
    document = {"data": [{"gpu_name": "RTX 4090", "gpu_count": 8, "regions": regions}], "next": next_link}
    return json.dumps(document).encode()


# Redirects


async def test_a_redirect_to_another_origin_is_refused_and_the_token_stays_home(
    fake_vendor: FakeVendor, other_origin: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    elsewhere = other_origin.serve(PATH, payload("card_hour.json"))
    url = fake_vendor.serve(PATH, status=302, headers={"Location": elsewhere})

    error = await _failure("card_hour_json", client, context, url=url, token_env="JS_TOKEN")

    assert error.category == "redirect_refused"
    assert error.message == f"refused a redirect from {url} to another origin"
    assert other_origin.requests == []  # so it never saw the Authorization header either
    assert fake_vendor.hits(PATH) == 1  # a refused redirect is not retried


@pytest.mark.parametrize(
    "location",
    ["/v2/feed", "{origin}/v2/feed", "https://{host}/v2/feed", "http://localhost:{port}/v2/feed"],
    ids=["relative", "absolute", "other-scheme", "other-host-same-port"],
)
async def test_only_the_exact_origin_counts_as_home(
    location: str, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    origin = fake_vendor.url("")
    target = location.format(origin=origin, host=f"127.0.0.1:{fake_vendor.port}", port=fake_vendor.port)
    url = fake_vendor.serve(PATH, status=301, headers={"Location": target})
    fake_vendor.serve("/v2/feed", payload("card_hour.json"))

    if target.startswith(("/", origin)):
        result = await _fetch("card_hour_json", client, context, url=url, token_env="JS_TOKEN")
        assert len(result.offers) == 4
        assert [request.path for request in fake_vendor.requests] == [PATH, "/v2/feed"]
        assert {request.headers["authorization"] for request in fake_vendor.requests} == {"Bearer s3cret"}
        assert {offer.source for offer in result.offers} == {url}  # the configured URL, not the target
    else:
        error = await _failure("card_hour_json", client, context, url=url, token_env="JS_TOKEN")
        assert error.category == "redirect_refused"
        assert [request.path for request in fake_vendor.requests] == [PATH]


async def test_a_redirect_loop_within_the_origin_stops_at_the_hop_limit(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, status=307, headers={"Location": PATH})

    error = await _failure("card_hour_json", client, context, url=url)

    assert error.category == "redirect_refused"
    assert error.message == f"more than {MAX_REDIRECTS} redirects from {url}"
    assert fake_vendor.hits(PATH) == MAX_REDIRECTS + 1


# Pagination


async def test_a_next_link_to_another_origin_is_refused_and_gets_no_token(
    fake_vendor: FakeVendor, other_origin: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    elsewhere = other_origin.serve("/v1/prices?page=2", _per_second_page("b"))
    url = fake_vendor.serve("/v1/prices", _per_second_page("a", elsewhere))

    error = await _failure("per_second_json", client, context, url=url, token_env="JS_TOKEN")

    assert error.category == "redirect_refused"
    assert error.message == f"refused page 2 of {url}: its link points at another origin"
    assert other_origin.requests == []
    assert [request.headers["authorization"] for request in fake_vendor.requests] == ["Bearer s3cret"]


async def test_a_same_origin_next_link_still_gets_the_token(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve("/v1/prices", _per_second_page("a", fake_vendor.url("/v1/prices?page=2")))
    fake_vendor.serve("/v1/prices?page=2", _per_second_page("b"))

    result = await _fetch("per_second_json", client, context, url=url, token_env="JS_TOKEN")

    assert [offer.sku for offer in result.offers] == ["rtx-4090-8x-a", "rtx-4090-8x-b"]
    assert [request.headers["authorization"] for request in fake_vendor.requests] == ["Bearer s3cret"] * 2


# Feed files


def _vendors_file(folder: Path, feed_path: str) -> Path:
    entry = (
        '[[vendors]]\nid = "js-files"\nname = "Files"\nregion = "jiangsu"\ncity = "suzhou"\n'
        f'format = "static"\npath = "{feed_path}"\n'
    )
    file = folder / "vendors.toml"
    file.write_text(entry, encoding="utf-8")
    return file


@pytest.fixture
def config_folder(tmp_path: Path) -> Path:
    """``<tmp>/config`` holding the vendors file, ``<tmp>/outside.json`` beside it (outside its folder)."""
    folder = tmp_path / "config"
    (folder / "feeds").mkdir(parents=True)
    (folder / "feeds" / "prices.json").write_bytes(payload("static.json"))
    (tmp_path / "outside.json").write_bytes(payload("static.json"))
    (folder / "escape.json").symlink_to(tmp_path / "outside.json")
    (folder / "feeds" / "alias.json").symlink_to(folder / "feeds" / "prices.json")
    return folder


@pytest.mark.parametrize(
    "feed_path",
    ["../../../../../../etc/passwd", "/proc/self/environ", "{outside}", "../outside.json", "escape.json"],
    ids=["traversal", "proc", "absolute", "parent", "symlink-out"],
)
def test_a_feed_path_leading_outside_the_folder_fails_the_vendors_file(
    feed_path: str, config_folder: Path
) -> None:
    feed_path = feed_path.format(outside=config_folder.parent / "outside.json")

    with pytest.raises(VendorsFileError) as caught:
        load_vendors_file(_vendors_file(config_folder, feed_path))

    message = str(caught.value)
    assert "vendor 'js-files'" in message
    assert f"path {feed_path!r} leads outside {config_folder.resolve()}" in message
    assert "must be in the vendors file's folder or below it, after following symlinks" in message


@pytest.mark.parametrize("feed_path", ["feeds/prices.json", "feeds/alias.json", "feeds/../feeds/prices.json"])
async def test_a_feed_path_inside_the_folder_loads_and_reads(
    feed_path: str, config_folder: Path, client: httpx.AsyncClient
) -> None:
    vendors, base_dir = load_vendors_file(_vendors_file(config_folder, feed_path))

    result = await build_adapter(vendors[0], client=client, context=AdapterContext(base_dir=base_dir)).fetch()

    assert len(result.offers) == 4


async def test_a_symlink_swapped_after_loading_is_refused_when_read(
    config_folder: Path, client: httpx.AsyncClient
) -> None:
    vendors, base_dir = load_vendors_file(_vendors_file(config_folder, "feeds/alias.json"))
    alias = config_folder / "feeds" / "alias.json"
    alias.unlink()
    alias.symlink_to(config_folder.parent / "outside.json")
    adapter = build_adapter(vendors[0], client=client, context=AdapterContext(base_dir=base_dir))

    with pytest.raises(VendorFetchError) as caught:
        await adapter.fetch()

    assert caught.value.category == "config"
    assert caught.value.message.startswith("path 'feeds/alias.json' leads outside")


# Credentials in URLs


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pa55@api.example.com/v1/prices", "https://api.example.com/v1/prices"),
        ("https://api.example.com:8443/p?access_token=s&page=2", "https://api.example.com:8443/p?…"),
        ("http://user@h.example/p?#frag=token", "http://h.example/p"),
        ("http://[::1/p?access_token=s", "(unparsable URL)"),
    ],
)
def test_redact_url_drops_userinfo_query_and_fragment(url: str, shown: str) -> None:
    assert redact_url(url) == shown


async def test_credentials_in_a_vendor_url_reach_no_error_log_or_offer(
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_vendor.serve(f"{PATH}?access_token=tok3n", status=503)
    fake_vendor.serve(f"{PATH}?access_token=tok3n", payload("card_hour.json"))
    fake_vendor.serve("/down?access_token=tok3n", status=503)
    with_credentials = f"http://feeduser:pa55word@127.0.0.1:{fake_vendor.port}"
    caplog.set_level(logging.DEBUG)

    result = await _fetch(
        "card_hour_json", client, context, url=f"{with_credentials}{PATH}?access_token=tok3n"
    )
    error = await _failure(
        "card_hour_json", client, context, url=f"{with_credentials}/down?access_token=tok3n"
    )

    assert fake_vendor.requests[0].headers["authorization"].startswith("Basic ")  # the credentials were used
    assert {offer.source for offer in result.offers} == {fake_vendor.url(f"{PATH}?…")}
    assert (
        error.message
        == f"HTTP 503 Service Unavailable from {fake_vendor.url('/down?…')} (gave up after 3 attempts)"
    )
    retries = [record.getMessage() for record in caplog.records if "retrying" in record.getMessage()]
    assert len(retries) == 3  # one before the success, two before giving up
    shown = [str(error), *(record.getMessage() for record in caplog.records)]
    assert not [text for text in shown if "pa55word" in text or "tok3n" in text or "feeduser" in text]


# Byte cap


@pytest.fixture
def capped(context: AdapterContext) -> AdapterContext:
    return dataclasses.replace(context, max_feed_bytes=1024)


async def test_a_declared_length_over_the_cap_is_refused_before_reading(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, capped: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, b" " * 4096 + payload("static.json"))

    error = await _failure("static", client, capped, url=url)

    assert error.category == "too_large"
    assert (
        error.message
        == f"{url} declares {4096 + len(payload('static.json'))} bytes, over the 1024-byte feed cap"
    )
    assert fake_vendor.hits(PATH) == 1  # not retried


async def test_a_chunked_body_is_cut_off_once_it_passes_the_cap(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, capped: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, b" " * (1024 * 1024) + payload("static.json"), chunked=True)

    error = await _failure("static", client, capped, url=url)

    assert error.category == "too_large"
    assert error.message == f"{url} sent more than the 1024-byte feed cap; stopped reading"
    assert fake_vendor.hits(PATH) == 1


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_feed_under_the_cap_still_parses(
    chunked: bool, fake_vendor: FakeVendor, client: httpx.AsyncClient, capped: AdapterContext
) -> None:
    body = payload("static.json")
    assert len(body) <= capped.max_feed_bytes
    url = fake_vendor.serve(PATH, body, chunked=chunked)

    result = await _fetch("static", client, capped, url=url)

    assert [offer.sku for offer in result.offers] == ["4090", "4090x4", "h800-node", "4090-month"]


@pytest.mark.parametrize("feed_format", ["static", "sheet_csv"])
async def test_a_feed_file_over_the_cap_is_refused(
    feed_format: FeedFormat, tmp_path: Path, client: httpx.AsyncClient, capped: AdapterContext
) -> None:
    (tmp_path / "big").write_bytes(b" " * 2048)
    context = dataclasses.replace(capped, base_dir=tmp_path)

    error = await _failure(feed_format, client, context, path="big")

    assert error.category == "too_large"
    assert error.message == "big is over the 1024-byte feed cap"


# Nothing fetched is quoted


HOSTILE_BODIES: dict[FeedFormat, bytes] = {
    "sheet_csv": f"INTERNAL_SECRET={SECRET}\nDB_PASSWORD={SECRET}\n".encode(),
    "static": json.dumps({"offers": [{"sku": "a", "gpu": "x", "pricing": {"kind": SECRET}}]}).encode(),
    "card_hour_json": json.dumps({"code": 403, "msg": SECRET, "data": None}).encode(),
    "per_second_json": f"{SECRET}=1".encode(),
    "node_hour_html": f"<html><table><tr><th>{SECRET}</th></tr></table></html>".encode(),
}


@pytest.mark.parametrize("feed_format", HOSTILE_BODIES)
async def test_a_body_that_fails_is_not_quoted_in_the_error(
    feed_format: FeedFormat, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, HOSTILE_BODIES[feed_format])

    error = await _failure(feed_format, client, context, url=url)

    assert error.category in {"malformed", "api_error"}
    assert SECRET not in str(error)


async def test_a_sheet_file_whose_first_line_is_a_secret_is_not_quoted(
    tmp_path: Path, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    (tmp_path / "env.csv").write_text(f"INTERNAL_SECRET={SECRET}\n", encoding="utf-8")

    error = await _failure(
        "sheet_csv", client, dataclasses.replace(context, base_dir=tmp_path), path="env.csv"
    )

    assert error.category == "malformed"
    assert error.message == "price sheet has no 计费方式/型号/卡数/单价 column (its first line has 1 cells)"


async def test_the_servers_reason_phrase_is_not_repeated(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, status=404, reason=f"Not Found {SECRET}")

    error = await _failure("static", client, context, url=url)

    assert error.category == "http_status"
    assert error.message == f"HTTP 404 Not Found from {url}"


@pytest.mark.parametrize(
    ("status", "category"), [(401, "unauthorized"), (403, "unauthorized"), (410, "http_status")]
)
async def test_a_refusal_is_told_apart_from_other_statuses(
    status: int, category: str, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, status=status)

    error = await _failure("static", client, context, url=url)

    assert error.category == category


async def test_a_malformed_header_line_is_not_quoted(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    # h11 rejects a header name with a space in it, and its own message quotes the whole line.
    url = fake_vendor.serve(PATH, b"{}", headers={f"X {SECRET}": "1"})

    error = await _failure("static", client, context, url=url, retries=0)

    assert error.category == "protocol"
    assert SECRET not in str(error)
    assert (
        error.message == f"RemoteProtocolError: malformed HTTP response from {url} (gave up after 1 attempt)"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://feeduser:pa55word@127.0.0.1:port/feed?access_token=tok3n",
        "ftp://feeduser:pa55word@127.0.0.1/feed",
    ],
    ids=["bad-port", "ftp"],
)
async def test_an_unusable_url_is_a_config_error_that_shows_no_credentials(
    url: str, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    error = await _failure("static", client, context, url=url)

    assert error.category == "config"
    assert error.message == f"{redact_url(url)} is not a usable http or https URL"
    assert "pa55word" not in str(error)


def test_every_category_is_documented() -> None:
    docstring = adapters_base.__doc__ or ""
    assert [category for category in FETCH_ERROR_CATEGORIES if f"\n    {category} " not in docstring] == []


async def test_a_feed_path_that_is_a_fifo_fails_at_once(
    config_folder: Path, client: httpx.AsyncClient
) -> None:
    # A named pipe nobody writes to would block the read, and the refresh lock with it, for good.
    os.mkfifo(config_folder / "feeds" / "pipe.json")
    vendors, base_dir = load_vendors_file(_vendors_file(config_folder, "feeds/pipe.json"))
    adapter = build_adapter(vendors[0], client=client, context=AdapterContext(base_dir=base_dir))

    with pytest.raises(VendorFetchError) as caught:
        await asyncio.wait_for(adapter.fetch(), timeout=5)

    assert caught.value.category == "file"
    assert caught.value.message == "cannot read feeds/pipe.json: not a regular file"


def test_a_url_with_credentials_and_a_token_variable_is_refused(tmp_path: Path) -> None:
    # httpx would send the URL's user:password as Basic auth instead of the vendor's bearer token.
    file = tmp_path / "vendors.toml"
    file.write_text(
        '[[vendors]]\nid = "both"\nname = "Both"\nregion = "jiangsu"\ncity = "suzhou"\n'
        'format = "card_hour_json"\nurl = "https://user:pw@vendor.example/api"\ntoken_env = "VENDOR_TOKEN"\n',
        encoding="utf-8",
    )

    with pytest.raises(VendorsFileError) as caught:
        load_vendors_file(file)

    assert "vendor 'both' has both credentials in its url and token_env" in str(caught.value)
    assert "pw" not in str(caught.value)
