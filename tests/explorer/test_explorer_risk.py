"""The explorer's risk inputs and marks in a real browser: spot allowed or not, the confidence a deadline
is judged with, checkpoint and restart figures reaching the request; the plan without the deadline's risk
marked "no risk" beside the recommendation, and a spot quote marked spot.

On the bundled catalog, 48 GPU-hours measured on an RTX 4090 with a 20 h deadline: 3 × 4090 in Wuxi
(19.95 h, up to 20.99 h) is the cheapest, 4 × 4090 (up to 17.14 h) the plan without the risk.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Route, expect

from tests.explorer.test_explorer_inputs import ROWS, quote_bodies, row_ids
from tests.explorer.test_explorer_page import open_explorer

pytestmark = pytest.mark.slow

RISKY = "js-wuxi-ref:4090@3"
SAFE = "js-wuxi-ref:4090@4"


def _fill_deadline_job(page: Page) -> None:
    page.fill("#gpu_hours", "48")
    page.select_option("#reference_gpu", "rtx4090")
    page.fill("#deadline_hours", "20")


def test_the_plan_without_the_risk_is_marked_and_named(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, base_url)
    _fill_deadline_job(page)
    page.click("#submit")

    assert RISKY in row_ids(page)
    expect(page.locator("#summary")).to_contain_text("¥20.00 more removes the risk")
    safe_row = page.locator(f'{ROWS}[data-quote-id="{SAFE}"]')
    expect(safe_row.locator(".badge-safe")).to_have_text("no risk")
    sent = bodies[-1]
    assert (sent["deadline_confidence"], sent["budget_confidence"]) == ("expected", "expected")
    assert "allow_spot" not in sent  # left to the service: batch jobs yes, serving no

    page.select_option("#deadline_confidence", "high")
    page.click("#submit")
    expect(page.locator(f'{ROWS}[data-quote-id="{RISKY}"]')).to_have_count(0)
    recommended = page.locator(f"{ROWS}:has(.badge-recommended)")
    expect(recommended).to_have_attribute("data-quote-id", SAFE)
    assert bodies[-1]["deadline_confidence"] == "high"


def test_spot_and_checkpoint_inputs_reach_the_request_in_chinese(page: Page, base_url: str) -> None:
    bodies = quote_bodies(page)
    open_explorer(page, f"{base_url}/?lang=zh")
    expect(page.locator('label[for="allow_spot"]')).to_have_text("抢占式（可中断）资源")
    _fill_deadline_job(page)
    page.select_option("#allow_spot", "false")
    page.fill("#checkpoint_interval_h", "2")
    page.fill("#checkpoint_minutes", "5")
    page.fill("#restart_minutes", "30")
    page.click("#submit")

    expect(page.locator(ROWS).first).to_be_visible()
    sent = bodies[-1]
    assert sent["allow_spot"] is False
    workload = sent["workload"]
    figures = [workload[name] for name in ("checkpoint_interval_h", "checkpoint_minutes", "restart_minutes")]
    assert figures == [2, 5, 30]
    expect(page.locator("#summary")).to_contain_text("多花 ¥20.00 即可消除风险")


def test_a_spot_quote_is_marked_spot(page: Page, base_url: str) -> None:
    """The bundled catalog sells no spot capacity: the reply is marked as a spot vendor's would be."""

    def as_spot(route: Route) -> None:
        reply = route.fetch()
        body = reply.json()
        body["quotes"][0]["spot"] = True
        route.fulfill(response=reply, json=body)

    page.route("**/quote", as_spot)
    open_explorer(page, base_url)
    _fill_deadline_job(page)
    page.click("#submit")

    first = page.locator(ROWS).first
    expect(first.locator(".badge-spot")).to_have_text("spot")
    expect(page.locator(f"{ROWS} .badge-spot")).to_have_count(1)


@pytest.mark.parametrize(
    ("lang", "held", "assumed", "title"),
    [
        ("en", "price held back", "city assumed", "The feed now asks ¥14.00 (was ¥6.50)"),
        ("zh", "价格待确认", "城市为推定", "报价源现报 ¥14.00（原为 ¥6.50）"),
    ],
)
def test_a_held_back_price_and_an_assumed_city_are_marked_on_their_row(
    page: Page, base_url: str, lang: str, held: str, assumed: str, title: str
) -> None:
    """What the operator sees is on the quote's row: a price the feed moved and the service held back,
    and a zone that names no city (the reply is edited as such a vendor's would read)."""

    def as_held(route: Route) -> None:
        reply = route.fetch()
        body = reply.json()
        body["quotes"][0]["held_back"] = {
            "offer_id": body["quotes"][0]["offer_id"],
            "price_cny": 14.0,
            "previous_cny": 6.5,
            "change_ratio": 1.15,
            "seen_at": "2026-11-30T08:00:00Z",
        }
        body["quotes"][0]["zone"] = "az-7"
        body["quotes"][0]["city_assumed"] = True
        route.fulfill(response=reply, json=body)

    page.route("**/quote", as_held)
    open_explorer(page, base_url)
    if lang == "zh":
        page.select_option("#lang", "zh")
    _fill_deadline_job(page)
    page.click("#submit")

    first = page.locator(ROWS).first
    expect(first.locator(".badge-held")).to_have_text(held)
    assert title in (first.locator(".badge-held").get_attribute("title") or "")
    expect(first.locator(".badge-assumed")).to_have_text(assumed)
    expect(first).to_contain_text("az-7")
    expect(page.locator(f"{ROWS} .badge-held")).to_have_count(1)
