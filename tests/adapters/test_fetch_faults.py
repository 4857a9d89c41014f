"""Vendor I/O faults against the loopback vendor: each ends as a VendorFetchError that says what happened,
or is retried into a success within the vendor's budget."""

from __future__ import annotations

import socket

import httpx
import pytest

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from schemas.vendor import FeedFormat
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor

# One recorded payload per format, served at one path: the faults are the same for every format.
RECORDED: dict[FeedFormat, str] = {
    "static": "static.json",
    "card_hour_json": "card_hour.json",
    "per_second_json": "per_second_page2.json",  # a last page: no next link
    "node_hour_html": "node_hour.html",
    "sheet_csv": "sheet.csv",
}
PATH = "/feed"


async def _fetch(
    feed_format: FeedFormat, url: str, client: httpx.AsyncClient, context: AdapterContext, **fields: object
) -> FetchResult:
    config = vendor(feed_format, url=url, **fields)
    return await build_adapter(config, client=client, context=context).fetch()


@pytest.mark.parametrize("feed_format", RECORDED)
async def test_a_500_is_retried_and_the_next_answer_is_used(
    feed_format: FeedFormat,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
    sleeps: list[float],
) -> None:
    fake_vendor.serve(PATH, b"upstream exploded", status=500)
    url = fake_vendor.serve(PATH, payload(RECORDED[feed_format]))

    result = await _fetch(feed_format, url, client, context)

    assert result.offers
    assert fake_vendor.hits(PATH) == 2
    assert len(sleeps) == 1  # one backoff between the two attempts


@pytest.mark.parametrize("feed_format", RECORDED)
async def test_a_body_shorter_than_its_content_length_fails_the_feed(
    feed_format: FeedFormat, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload(RECORDED[feed_format]), truncate_at=40)

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(feed_format, url, client, context, retries=1)

    assert caught.value.vendor == "js-test"
    assert "truncated" in caught.value.message
    assert "expected" in caught.value.message  # h11 says how many bytes came and how many were declared
    assert fake_vendor.hits(PATH) == 2  # a cut connection is worth one more try


async def test_a_vendor_slower_than_its_timeout_fails_with_the_timeout_named(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload("card_hour.json"), delay_s=2.0)

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context, timeout_s=0.2, retries=1)

    assert caught.value.message == f"timed out after 0.2 s fetching {url} (gave up after 2 attempts)"
    assert fake_vendor.hits(PATH) == 2


async def test_a_429_waits_as_long_as_retry_after_says(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext, sleeps: list[float]
) -> None:
    fake_vendor.serve(PATH, b"slow down", status=429, headers={"Retry-After": "3"})
    url = fake_vendor.serve(PATH, payload("card_hour.json"))

    result = await _fetch("card_hour_json", url, client, context)

    assert sleeps == [3.0]
    assert len(result.offers) == 4


async def test_retry_after_zero_means_retry_now(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext, sleeps: list[float]
) -> None:
    fake_vendor.serve(PATH, b"", status=429, headers={"Retry-After": "0"})
    url = fake_vendor.serve(PATH, payload("card_hour.json"))

    await _fetch("card_hour_json", url, client, context)

    assert sleeps == [0.0]


async def test_a_vendor_that_keeps_failing_costs_exactly_its_retry_budget(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext, sleeps: list[float]
) -> None:
    url = fake_vendor.serve(PATH, b"", status=503)

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context, retries=2)

    assert caught.value.message == f"HTTP 503 Service Unavailable from {url} (gave up after 3 attempts)"
    assert fake_vendor.hits(PATH) == 3
    # Exponential backoff with ±50 % jitter: attempt n waits within [0.5, 1.5) × base × 2**n. The two ranges
    # overlap, so each delay is checked against its own range rather than against the other.
    base_s = context.retry_backoff_s
    assert len(sleeps) == 2
    assert base_s * 0.5 <= sleeps[0] < base_s * 1.5
    assert base_s * 2 * 0.5 <= sleeps[1] < base_s * 2 * 1.5


async def test_a_client_error_is_not_retried(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, b"no such account", status=403)

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context, retries=2)

    assert caught.value.message == f"HTTP 403 Forbidden from {url}"
    assert fake_vendor.hits(PATH) == 1


async def test_a_refused_connection_is_retried_then_reported(
    client: httpx.AsyncClient, context: AdapterContext
) -> None:
    with socket.socket() as probe:  # a port nobody listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/feed"

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context, retries=1)

    assert caught.value.message.startswith(f"cannot connect to {url}")
    assert caught.value.message.endswith("(gave up after 2 attempts)")


@pytest.mark.parametrize(
    ("feed_format", "expected"),
    [
        ("card_hour_json", "malformed card_hour_json response from {url}: "),
        ("per_second_json", "malformed per_second_json page {url}: "),
        ("static", "malformed static price file: "),
    ],
)
async def test_malformed_json_fails_the_feed_and_says_where(
    feed_format: FeedFormat,
    expected: str,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
) -> None:
    url = fake_vendor.serve(PATH, b'{"code": 0, "data": {"gpu_skus": [{"sku_id": "4090",,}]}}')

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(feed_format, url, client, context)

    assert caught.value.message.startswith(expected.format(url=url))
    assert fake_vendor.hits(PATH) == 1  # a body that does not decode is not retried


async def test_json_cut_short_with_an_honest_length_is_reported_as_truncated(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload("card_hour.json")[:200])

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context)

    assert "truncated" in caught.value.message


async def test_the_token_is_sent_as_a_bearer_header(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload("card_hour.json"))

    await _fetch("card_hour_json", url, client, context, token_env="JS_TOKEN")

    assert fake_vendor.requests[0].headers["authorization"] == "Bearer s3cret"


async def test_no_token_header_when_the_vendor_needs_none(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload("card_hour.json"))

    await _fetch("card_hour_json", url, client, context)

    assert "authorization" not in fake_vendor.requests[0].headers


async def test_a_missing_token_variable_fails_before_any_request(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve(PATH, payload("card_hour.json"))

    with pytest.raises(VendorFetchError) as caught:
        await _fetch("card_hour_json", url, client, context, token_env="WX_TOKEN")

    assert caught.value.message == "token variable WX_TOKEN is not set"
    assert fake_vendor.requests == []


async def test_a_missing_file_names_the_path(client: httpx.AsyncClient, context: AdapterContext) -> None:
    config = vendor("sheet_csv", path="sheets/gone.csv")

    with pytest.raises(VendorFetchError) as caught:
        await build_adapter(config, client=client, context=context).fetch()

    assert caught.value.message == "cannot read sheets/gone.csv: No such file or directory"
