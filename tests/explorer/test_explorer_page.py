"""The quote explorer in a real browser: the Jiangsu article's example end to end, errors next to their
field, the Chinese interface, stale prices marked, and nothing fetched from outside the service.

The example: an RTX 4090 at ¥8 per card-hour, 48 GPU-hours, cards [1, 4] → one card 48 h for ¥384.00;
four cards (3× speed-up) 16 h for ¥512.00. The Suzhou reference vendor sells exactly that offer (plus a
monthly package, which the plot shows off the frontier).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.slow

HOURLY_ONE = "js-suzhou-ref:4090@1"
HOURLY_FOUR = "js-suzhou-ref:4090@4"


def open_explorer(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#quote-form")).to_have_attribute("data-ready", "true")


def fill_jiangsu_example(page: Page) -> None:
    page.fill("#gpu_hours", "48")
    page.select_option("#reference_gpu", "rtx4090")
    page.fill("#card_counts", "1, 4")
    page.select_option("#gpus", ["rtx4090"])
    page.select_option("#vendors", ["js-suzhou-ref"])


def row(page: Page, quote_id: str) -> str:
    return page.locator(f'#quotes tbody tr[data-quote-id="{quote_id}"]').inner_text()


def test_jiangsu_example_fills_the_table_and_the_plot(page: Page, base_url: str) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    page.click("#submit")

    rows = page.locator("#quotes tbody tr")
    expect(rows.first).to_be_visible()
    table = page.locator("#quotes tbody").inner_text()
    assert "¥384.00" in table
    assert "¥512.00" in table
    assert "¥384.00" in row(page, HOURLY_ONE)
    assert "48" in row(page, HOURLY_ONE)
    assert "¥512.00" in row(page, HOURLY_FOUR)
    assert "16" in row(page, HOURLY_FOUR)

    # One point per quote, each tied to its row.
    points = page.locator("#plot-area circle.point")
    row_ids = rows.evaluate_all("rows => rows.map(r => r.dataset.quoteId)")
    point_ids = points.evaluate_all("points => points.map(p => p.dataset.quoteId)")
    assert len(row_ids) >= 2
    assert sorted(point_ids) == sorted(row_ids)

    # No hourly or monthly option is both cheaper and faster than these two: the frontier is them.
    frontier = page.locator("#plot-area circle.point.on-frontier")
    assert sorted(frontier.evaluate_all("points => points.map(p => p.dataset.quoteId)")) == [
        HOURLY_ONE,
        HOURLY_FOUR,
    ]
    assert page.locator("#plot-area polyline.frontier").get_attribute("points")
    marked = dict(points.evaluate_all("points => points.map(p => [p.dataset.quoteId, p.dataset.marks])"))
    assert "cheapest" in marked[HOURLY_ONE].split()
    assert "fastest" in marked[HOURLY_FOUR].split()
    assert page.locator(f'#quotes tbody tr[data-quote-id="{HOURLY_ONE}"] .badge-cheapest').is_visible()

    expect(page.locator("#summary")).to_contain_text("¥384.00")
    expect(page.locator("#summary")).to_contain_text("¥512.00")
    # Every asset and call went to the service itself: no CDN, no font host.
    assert requested
    assert all(url.startswith(base_url + "/") for url in requested), requested


def test_hovering_a_point_shows_its_offer(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    page.click("#submit")
    point = page.locator(f'#plot-area circle.point[data-quote-id="{HOURLY_FOUR}"]')
    tooltip = page.locator("#tooltip")
    expect(tooltip).to_be_hidden()

    point.hover()

    expect(tooltip).to_be_visible()
    expect(tooltip).to_contain_text("js-suzhou-ref:4090")
    expect(tooltip).to_contain_text("× 4")
    expect(tooltip).to_contain_text("¥512.00")
    expect(page.locator(f'#quotes tbody tr[data-quote-id="{HOURLY_FOUR}"]')).to_have_class(
        re.compile(r"\bhighlight\b")
    )


@pytest.mark.parametrize(
    ("field", "value", "error_at", "expected"),
    [
        # The API: "Expected `float` >= 0.001" (a job is at least 3.6 s on one card).
        ("#gpu_hours", "-5", "workload.gpu_hours", "GPU-hours on one reference card must be at least 0.001."),
        # The API: "Object missing required field `gpu_hours`" at `workload` ("… is required."), or the
        # engine's own reason, shown as sent, where gpu_hours is required by the kind of workload.
        (
            "#gpu_hours",
            "",
            "workload.gpu_hours",
            re.compile(r"^(GPU-hours on one reference card is )?required"),
        ),
        # The API: "Expected `int`, got `str`" at `card_counts[1]`.
        ("#card_counts", "1, four", "card_counts", "Every entry of card counts must be a whole number."),
        # The API: "Expected `float` >= 0.01" (a budget under one fen is no limit).
        ("#budget_cny", "0", "budget_cny", "Budget must be at least 0.01."),
    ],
)
def test_a_bad_input_shows_the_api_error_next_to_its_field(
    page: Page, base_url: str, field: str, value: str, error_at: str, expected: str | re.Pattern[str]
) -> None:
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    page.click("#submit")
    expect(page.locator("#results")).to_be_visible()
    page.fill(field, value)
    page.click("#submit")

    message = page.locator(f'.field[data-field="{error_at}"] .field-error')
    expect(message).to_be_visible()
    expect(message).to_have_text(expected)
    expect(page.locator(f'.field[data-field="{error_at}"]')).to_have_class(re.compile(r"\binvalid\b"))
    # Only that field is flagged, and the earlier results are gone: they answered other inputs.
    assert page.locator(".field.invalid").count() == 1
    expect(page.locator("#results")).to_be_hidden()


def test_an_unknown_gpu_from_the_engine_is_shown_at_its_field(page: Page, base_url: str) -> None:
    open_explorer(page, base_url)
    fill_jiangsu_example(page)
    # A name the catalog does not know passes decoding and is rejected by the engine (422).
    page.evaluate(
        """() => { const o = new Option('RTX 9999', 'rtx9999'); document.querySelector('#reference_gpu').add(o); }"""
    )
    page.select_option("#reference_gpu", "rtx9999")
    page.click("#submit")

    message = page.locator('.field[data-field="workload.reference_gpu"] .field-error')
    expect(message).to_contain_text("rtx9999")


def test_the_chinese_page_labels_everything_and_asks_for_a_chinese_summary(page: Page, base_url: str) -> None:
    open_explorer(page, base_url + "/?lang=zh")
    expect(page.locator("#submit")).to_have_text("获取报价")
    expect(page.locator('label[for="gpu_hours"]')).to_have_text("单张参考卡所需 GPU 小时")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    fill_jiangsu_example(page)
    page.click("#submit")

    expect(page.locator("#quotes thead")).to_contain_text("费用")
    assert "¥384.00" in row(page, HOURLY_ONE)
    expect(page.locator("#summary")).to_contain_text("推荐")
    expect(page.locator("#plot-area svg")).to_contain_text("预计用时（小时）")

    # Switching language re-asks the service, so the summary follows the interface.
    page.select_option("#lang", "en")
    expect(page.locator("#summary")).to_contain_text("Recommended")
    expect(page.locator("#submit")).to_have_text("Get quotes")


def test_stale_prices_are_marked_in_the_table_and_the_plot(page: Page, stale_base_url: str) -> None:
    open_explorer(page, stale_base_url)
    fill_jiangsu_example(page)
    page.click("#submit")

    stale_row = page.locator(f'#quotes tbody tr[data-quote-id="{HOURLY_ONE}"]')
    expect(stale_row).to_have_class(re.compile(r"\bstale\b"))
    expect(stale_row.locator(".badge-stale")).to_have_text("stale")
    assert page.locator(f'#plot-area circle.point.stale[data-quote-id="{HOURLY_ONE}"]').count() == 1
    expect(page.locator("#warnings")).not_to_be_empty()


def test_vendor_choices_show_the_reference_catalog_stale_with_its_age_in_days(
    page: Page, base_url: str
) -> None:
    open_explorer(page, base_url)
    option = page.locator('#vendors option[value="js-suzhou-ref"]')
    expect(option).to_have_class(re.compile(r"\bstale\b"))
    assert option.inner_text().endswith("⚠")
    title = option.get_attribute("title") or ""
    assert re.search(r"oldest price observed \d+ days ago", title), title
    assert "prices stale" in title

    page.goto(base_url + "/?lang=zh")
    expect(page.locator("#quote-form")).to_have_attribute("data-ready", "true")
    title_zh = page.locator('#vendors option[value="js-suzhou-ref"]').get_attribute("title") or ""
    assert re.search(r"最早的价格观测于 \d+ 天前", title_zh), title_zh
