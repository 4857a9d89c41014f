"""The explorer's newer inputs and marks in a real browser: illustrative reference prices marked, the
reference GPU defaulting to the RTX 4090, regions (typed in Chinese too), billing kinds, measured speed
ratios and the named model reaching the request, and the API's decoder messages shown as sentences.

The bundled catalog's offers all carry ``"label": "illustrative reference price"``; Jiangsu's vendors are
js-*-ref (Suzhou, Nanjing, Wuxi), Shenzhen's sz-*-ref.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Request, Route, expect

from tests.explorer.test_explorer_page import HOURLY_FOUR, HOURLY_ONE, fill_jiangsu_example, open_explorer

pytestmark = pytest.mark.slow

ROWS = "#quotes tbody tr"


def quote_bodies(page: Page) -> list[dict[str, Any]]:
    """Collects the JSON body of every POST /quote the page sends."""
    bodies: list[dict[str, Any]] = []

    def keep(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/quote"):
            bodies.append(json.loads(request.post_data or "{}"))

    page.on("request", keep)
    return bodies


def row_ids(page: Page) -> list[str]:
    expect(page.locator(ROWS).first).to_be_visible()
    ids: list[str] = page.locator(ROWS).evaluate_all("rows => rows.map(r => r.dataset.quoteId)")
    return ids


@pytest.mark.parametrize(
    ("lang", "mark", "note"),
    [
        ("en", "illustrative", "Rows marked illustrative are reference prices"),
        ("zh", "示意价格", "标有“示意价格”的行是取自公开文章的参考价"),
    ],
)
def test_illustrative_reference_prices_are_marked_with_a_note(
    page: Page, base_url: str, lang: str, mark: str, note: str
) -> None:
    open_explorer(page, f"{base_url}/?lang={lang}")
    fill_jiangsu_example(page)
    page.click("#submit")

    ids = row_ids(page)
    assert HOURLY_ONE in ids and HOURLY_FOUR in ids
    # Every bundled offer is illustrative: one mark per row, and the note above the table.
    badges = page.locator(f"{ROWS} .badge-illustrative")
    assert badges.count() == len(ids)
    expect(badges.first).to_have_text(mark)
    expect(page.locator("#illustrative-note")).to_be_visible()
    expect(page.locator("#illustrative-note")).to_contain_text(note)


def test_only_rows_with_the_label_are_marked(page: Page, base_url: str) -> None:
    def without_labels(route: Route, keep: set[str]) -> None:
        reply = route.fetch()
        body = reply.json()
        for quote in body["quotes"]:
            if quote["id"] not in keep:
                quote.pop("label", None)
        route.fulfill(response=reply, json=body)

    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    # The service's real answer, with the label taken off every row but the one-card hourly quote.
    page.route("**/quote", lambda route: without_labels(route, {HOURLY_ONE}))
    page.click("#submit")

    row_ids(page)
    marked = page.locator(f"{ROWS}:has(.badge-illustrative)")
    assert marked.evaluate_all("rows => rows.map(r => r.dataset.quoteId)") == [HOURLY_ONE]
    expect(page.locator("#illustrative-note")).to_be_visible()

    # With no labelled row left, no note.
    page.unroute("**/quote")
    page.route("**/quote", lambda route: without_labels(route, set()))
    page.click("#submit")
    expect(page.locator(f"{ROWS} .badge-illustrative")).to_have_count(0)
    expect(page.locator("#illustrative-note")).to_be_hidden()


def test_the_reference_gpu_defaults_to_the_rtx_4090(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, base_url)
    expect(page.locator("#reference_gpu")).to_have_value("rtx4090")
    # The Jiangsu example without choosing the reference: 48 h on one 4090 at ¥8/h is ¥384.00.
    page.fill("#gpu_hours", "48")
    page.fill("#card_counts", "1")
    page.select_option("#gpus", ["rtx4090"])
    page.select_option("#vendors", ["js-suzhou-ref"])
    page.click("#submit")

    expect(page.locator(f'{ROWS}[data-quote-id="{HOURLY_ONE}"]')).to_contain_text("¥384.00")
    assert bodies[-1]["workload"]["reference_gpu"] == "rtx4090"


def test_a_region_typed_in_chinese_narrows_the_rows(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, base_url)
    page.fill("#gpu_hours", "48")
    page.fill("#card_counts", "1")
    page.fill("#limit", "100")
    page.click("#submit")
    everywhere = row_ids(page)
    assert any(quote_id.startswith("js-") for quote_id in everywhere)
    assert any(quote_id.startswith("sz-") for quote_id in everywhere)

    page.fill("#regions", "深圳")
    page.click("#submit")
    expect(page.locator(f'{ROWS}[data-quote-id^="js-"]')).to_have_count(0)
    shenzhen = row_ids(page)
    assert shenzhen and all(quote_id.startswith("sz-") for quote_id in shenzhen)
    assert set(shenzhen) < set(everywhere)
    assert bodies[-1]["regions"] == ["深圳"]
    assert bodies[-1]["limit"] == 100


def test_billing_speed_ratios_model_and_precision_reach_the_request(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, base_url)
    page.fill("#gpu_hours", "48")
    page.fill("#card_counts", "1, 4")
    page.select_option("#pricing", ["term"])
    page.fill("#speed_ratios", "h800=3.2， a100-80g: 1.6")
    page.fill("#model", "qwen2.5-7b")
    page.select_option("#task", "inference")
    page.select_option("#precision", "fp8")
    page.click("#submit")

    expect(page.locator(ROWS).first).to_be_visible()
    billing = page.locator(f"{ROWS} td:nth-child(5)").all_inner_texts()
    assert billing and all(text.startswith("term rental") for text in billing)
    sent = bodies[-1]
    assert sent["pricing"] == ["term"]
    assert sent["workload"] == {
        "gpu_hours": 48,
        "reference_gpu": "rtx4090",
        "speed_ratios": {"h800": 3.2, "a100-80g": 1.6},
        "model": "qwen2.5-7b",
        "task": "inference",
        "precision": "fp8",
    }
    # The model names come from GET /models.
    assert page.locator('#model-names option[value="qwen2.5-7b"]').count() == 1


def test_a_field_the_service_lacks_is_hidden_and_never_sent(page: Page, base_url: str) -> None:
    def without_regions(route: Route) -> None:
        reply = route.fetch()
        document = reply.json()
        del document["components"]["schemas"]["QuoteRequest"]["properties"]["regions"]
        route.fulfill(response=reply, json=document)

    bodies = quote_bodies(page)
    page.route("**/schema/openapi.json", without_regions)
    open_explorer(page, base_url)
    expect(page.locator('.field[data-field="regions"]')).to_be_hidden()
    fill_jiangsu_example(page)
    page.evaluate("() => { document.querySelector('#regions').value = 'shenzhen'; }")
    page.click("#submit")

    expect(page.locator(f'{ROWS}[data-quote-id="{HOURLY_ONE}"]')).to_be_visible()
    assert "regions" not in bodies[-1]


def test_a_decoder_message_is_a_sentence_in_english_and_chinese(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    page.fill("#gpu_hours", "abc")
    page.click("#submit")

    # The API says "Expected `float`, got `str`" (or, in its own words, "must be a number, got text") at
    # workload.gpu_hours; its words stay in the title.
    message = page.locator('.field[data-field="workload.gpu_hours"] .field-error')
    expect(message).to_have_text("GPU-hours on one reference card must be a number.")
    expect(message).to_have_attribute(
        "title", re.compile(r"^(Expected `float`, got `str`|must be a number, got text)$")
    )

    page.select_option("#lang", "zh")
    expect(message).to_have_text("单张参考卡所需 GPU 小时须为数字。")

    # "Expected `int` <= 100" at limit, asked for in Chinese from the start.
    page.fill("#gpu_hours", "48")
    page.fill("#limit", "500")
    page.click("#submit")
    expect(page.locator('.field[data-field="limit"] .field-error')).to_have_text("显示报价数不能大于 100。")
    expect(message).to_be_empty()


def test_a_reason_no_pattern_knows_is_shown_as_sent(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    page.fill("#model", "no-such-model")
    page.click("#submit")

    message = page.locator('.field[data-field="workload.model"] .field-error')
    expect(message).to_contain_text("no open model called 'no-such-model'")


def test_the_city_input_follows_the_request_schema(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    document = httpx.get(f"{base_url}/schema/openapi.json", timeout=10).json()
    has_cities = "cities" in document["components"]["schemas"]["QuoteRequest"]["properties"]
    open_explorer(page, base_url)
    city = page.locator('.field[data-field="cities"]')
    if not has_cities:
        expect(city).to_be_hidden()
        return
    page.fill("#gpu_hours", "48")
    page.fill("#card_counts", "1")
    page.fill("#cities", "无锡")
    page.click("#submit")

    wuxi = row_ids(page)
    assert wuxi and all(quote_id.startswith("js-wuxi-ref:") for quote_id in wuxi)
    assert bodies[-1]["cities"] == ["无锡"]


def test_independent_runs_reach_the_request_and_their_rounds_are_shown(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, base_url)
    page.select_option("#kind", "independent")
    page.fill("#gpu_hours", "400")
    page.fill("#runs", "200")
    page.fill("#card_counts", "8")
    page.fill("#growth_factor", "2")
    page.click("#submit")

    expect(page.locator(ROWS).first).to_be_visible()
    workload = bodies[-1]["workload"]
    assert (workload["kind"], workload["runs"], workload["growth_factor"]) == ("independent", 200, 2)
    notes = page.locator(f"{ROWS} td.notes").first.inner_text()
    assert "25 round(s) of 8 runs at once" in notes
    assert "if the work grows 2×" in notes


def test_serving_by_throughput_reaches_the_request_in_chinese(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, f"{base_url}/?lang=zh")
    page.select_option("#kind", "serving")
    page.fill("#serving_hours", "720")
    page.fill("#model", "llama-3.1-70b")
    page.select_option("#precision", "int8")
    page.fill("#target_tokens_per_s", "3000")
    page.click("#submit")

    expect(page.locator(ROWS).first).to_be_visible()
    workload = bodies[-1]["workload"]
    assert (
        workload["kind"] == "serving" and workload["hours"] == 720 and workload["target_tokens_per_s"] == 3000
    )
    assert "gpu_hours" not in workload
    assert "token/秒" in page.locator(f"{ROWS} td.notes").first.inner_text()
