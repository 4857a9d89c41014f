"""What quotes tell about the offers, each rule on a catalog of its own (tests/quote/vendors/facts): every
count of a machine searched, packages of two unit sizes combined, a node minimum's billed count, what each
offer supplies when a count is too many, a held-back price, a stale price's age, a zone no city names, the
rent while data copies in, billed time that multiplies out and a measured GPU pair; over HTTP, and over
MCP with the same answers."""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from mcp import Client as McpClient
from mcp import StdioServerParameters

from schemas.offer import CardHourPricing, TermPricing
from service.app import create_app
from service.quote import build_quote
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.mcp.test_mcp_server import GPUQUOTE, texts
from tests.quote.factories import offer, options, request, snapshot

Client = AsyncTestClient[Any]
FACTS = Path(__file__).parent / "vendors" / "facts"


@pytest.fixture(scope="module")
def vendors_file() -> Path:
    return FACTS / "vendors.toml"


async def _answer(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _quote(answer: dict[str, Any], cards: int, offer_id: str | None = None) -> dict[str, Any]:
    return next(
        quote
        for quote in answer["quotes"]
        if quote["cards"] == cards and (offer_id is None or quote["offer_id"] == offer_id)
    )


# --- every count of a machine ---------------------------------------------------------------------------


async def test_a_budget_ranked_by_time_settles_on_any_count_a_machine_sells(client: Client) -> None:
    # Six-card machines at ¥3: every count from 1 to 6 is quoted, and the fastest within ¥230 is whatever
    # count it is (powers of two and the machine alone would stop at 2 or 4 cards).
    job = {"workload": {"gpu_hours": 60, "reference_gpu": "rtx4090"}, "vendors": ["js-sweep"], "limit": 20}
    every = await _answer(client, job)
    assert sorted(quote["cards"] for quote in every["quotes"]) == [1, 2, 3, 4, 5, 6]
    within = [quote for quote in every["quotes"] if quote["cost_cny"]["expected"] <= 230]
    fastest = min(within, key=lambda quote: quote["hours"]["expected"])
    assert fastest["cards"] & (fastest["cards"] - 1)  # not a power of two: 3 cards here

    answer = await _answer(client, {**job, "budget_cny": 230, "rank_by": "time"})
    assert answer["recommended"] == fastest["id"]


# --- packages of two unit sizes -------------------------------------------------------------------------

_WEEK_H, _DAY_H = 168, 24


def _cheapest_by_hand(cards: int, hours: float, *, week: float, day: float, rate: float) -> float:
    """Every combination of whole machine weeks, card days and card-hours (rounded up) covering ``hours``."""
    best = math.inf
    for weeks in range(math.ceil(hours / _WEEK_H) + 1):
        for days in range(math.ceil(hours / _DAY_H) + 1):
            rest = max(hours - weeks * _WEEK_H - days * _DAY_H, 0.0)
            cost = weeks * week + cards * days * day + cards * rate * math.ceil(rest - 1e-9)
            best = min(best, cost)
    return best


async def test_machine_weeks_card_days_and_hours_combine_over_http(client: Client) -> None:
    # 800 card-hours on 4 × 4090 in 200 h: one machine week (¥2,000) + one day on each card (4 × ¥80) +
    # 8 h × 4 cards at ¥4 = ¥2,448, where the week and hours alone were ¥2,512.
    body = {
        "workload": {"gpu_hours": 800, "reference_gpu": "rtx4090"},
        "scaling": {"4": [4, 4]},
        "vendors": ["js-mix"],
        "card_counts": [4],
    }
    answer = await _answer(client, body)
    best = next(quote for quote in answer["quotes"] if quote["id"] == answer["cheapest"])
    assert best["pricing"] == "mixed"
    by_hand = _cheapest_by_hand(4, 200, week=2000, day=80, rate=4)
    assert best["cost_cny"]["expected"] == by_hand
    assert sum(item["amount_cny"] for item in best["breakdown"]) == by_hand
    described = " ".join(item["description"] for item in best["breakdown"])
    assert "week package (4 card(s) each)" in described and "day package (1 card(s) each)" in described


@pytest.mark.parametrize("cards", [1, 2, 3, 4])
def test_packages_of_two_unit_sizes_are_priced_at_the_cheapest_combination(cards: int) -> None:
    # Exhaustively against the hand enumeration, for every count the machine holds and many job lengths.
    week = offer(
        "js-m", "4090x4-week", pricing=TermPricing(period="week", cny_per_period=1900.0, cards=4, max_units=1)
    )
    day = offer(
        "js-m", "4090-day", pricing=TermPricing(period="day", cny_per_period=70.0, cards=1, max_units=4)
    )
    hourly = offer("js-m", "4090", pricing=CardHourPricing(cny_per_card_hour=3.5, max_cards=4))
    tables = snapshot([week, day, hourly])
    for hours in itertools.chain(range(1, 60, 7), range(150, 420, 23)):
        job = request(
            hours * cards, card_counts=[cards], scaling={str(cards): [cards, cards]} if cards > 1 else None
        )
        answer = build_quote(
            tables,
            job,
            options=options(),
        )
        cheapest = min(quote.cost_cny.expected for quote in answer.quotes if quote.cards == cards)
        assert cheapest == pytest.approx(_cheapest_by_hand(cards, hours, week=1900, day=70, rate=3.5)), hours


# --- a node minimum -------------------------------------------------------------------------------------


async def test_idle_cards_of_a_node_minimum_say_the_billed_count_is_better(client: Client) -> None:
    job = {"workload": {"gpu_hours": 480, "reference_gpu": "h800"}, "vendors": ["sz-nodes"]}
    ten = _quote(await _answer(client, {**job, "card_counts": [10]}), 10)
    sixteen = _quote(await _answer(client, {**job, "card_counts": [16]}), 16)
    assert ten["billed_cards"] == sixteen["billed_cards"] == 16
    assert sixteen["cost_cny"]["expected"] < ten["cost_cny"]["expected"]
    told = next(warning for warning in ten["warnings"] if "sit idle" in warning)
    assert f"all 16 cost less and finish sooner: about {sixteen['hours']['expected']:g} h" in told
    assert f"¥{sixteen['cost_cny']['expected']:,.2f}" in told
    assert not any("sit idle" in warning for warning in sixteen["warnings"])
    # Said among the summary's first caveats: it changes the plan.
    answer = await _answer(client, {**job, "card_counts": [10], "lang": "zh"})
    assert "直接用满 16 张更便宜也更快" in answer["summary"].split("提醒")[1][:80]


# --- too many cards -------------------------------------------------------------------------------------


async def test_too_many_cards_say_what_each_offer_supplies_and_the_nearest_cost(client: Client) -> None:
    job = {"workload": {"gpu_hours": 480, "reference_gpu": "h800"}, "gpus": ["h800"]}
    answer = await _answer(client, {**job, "card_counts": [32]})
    assert answer["quotes"] == [] and answer["excluded"]["capacity"] > 0
    summary = answer["summary"]
    assert "hold this model" not in summary  # no model in the request
    assert "Node cluster supplies at most 24 × H800 (3 nodes at most)" in summary
    assert "Two cards left supplies at most 2 × H800 (2 in stock)" in summary
    for cards, vendor in ((24, "sz-nodes"), (2, "js-few")):
        nearest = next(
            quote
            for quote in (await _answer(client, {**job, "card_counts": [cards]}))["quotes"]
            if quote["vendor"] == vendor
        )
        figures = f"{cards} × H800 take about {nearest['hours']['expected']:g} h for ¥{nearest['cost_cny']['expected']:,.2f}"
        assert figures in summary


# --- a held-back price ----------------------------------------------------------------------------------


async def test_a_held_back_price_is_said_first_with_the_cost_at_it(tmp_path: Path) -> None:
    shutil.copy(FACTS / "few.json", tmp_path / "few.json")
    (tmp_path / "vendors.toml").write_text(
        '[[vendors]]\nid = "js-few"\nname = "Two cards left"\nregion = "jiangsu"\ncity = "changzhou"\n'
        'format = "static"\npath = "few.json"\n',
        encoding="utf-8",
    )
    services = build_services(Settings(vendors_file=tmp_path / "vendors.toml"), store=MemoryPriceStore())
    body = {
        "workload": {"gpu_hours": 100, "reference_gpu": "a100-80g"},
        "gpus": ["a100-80g"],
        "card_counts": [2],
    }
    async with AsyncTestClient(create_app(services=services)) as client:
        before = _quote(await _answer(client, body), 2)
        assert "held_back" not in before
        feed = json.loads((tmp_path / "few.json").read_text(encoding="utf-8"))
        feed["offers"][1]["pricing"]["price_cny"] = 27.0  # ¥12 → ¥27: past the 60 % threshold
        (tmp_path / "few.json").write_text(json.dumps(feed), encoding="utf-8")
        await services.refresher.refresh()

        held = await _answer(client, body)
        quote = _quote(held, 2)
        assert quote["cost_cny"] == before["cost_cny"]  # still the price served
        assert quote["held_back"]["price_cny"] == 27.0 and quote["held_back"]["previous_cny"] == 12.0
        assert quote["warnings"][0].startswith("price held back: the vendor's feed now asks ¥27.00/card-hour")
        assert "held back" in held["summary"].split(". ")[0]  # the first sentence says it

        await services.refresher.refresh()  # the second refresh sees the same price and serves it
        released = _quote(await _answer(client, body), 2)
        assert "held_back" not in released
        assert released["cost_cny"]["expected"] == quote["held_back"]["cost_cny"]


# --- freshness and place --------------------------------------------------------------------------------


async def test_a_stale_price_reads_its_age_as_the_vendors_route_does(client: Client) -> None:
    vendors = {item["vendor"]: item for item in (await client.get("/vendors")).json()["vendors"]}
    age = vendors["js-sweep"]["oldest_price_age"]
    assert age.endswith(" days")
    answer = await _answer(
        client, {"workload": {"gpu_hours": 10}, "vendors": ["js-sweep"], "card_counts": [1]}
    )
    assert f"price fetched {age} ago" in " ".join(answer["quotes"][0]["warnings"])
    zh = await _answer(
        client, {"workload": {"gpu_hours": 10}, "vendors": ["js-sweep"], "card_counts": [1], "lang": "zh"}
    )
    assert f"价格抓取于 {age.replace(' days', ' 天')}前" in " ".join(zh["quotes"][0]["warnings"])


async def test_a_zone_no_city_names_is_placed_in_the_vendors_city_and_said(client: Client) -> None:
    body = {"workload": {"gpu_hours": 10}, "vendors": ["js-zones"], "card_counts": [2]}
    quotes = {quote["offer_id"]: quote for quote in (await _answer(client, body))["quotes"]}
    nanjing, unknown = quotes["js-zones:4090-pcie-nanjing-b"], quotes["js-zones:4090-pcie-x9"]
    assert (nanjing["city"], nanjing["zone"], nanjing.get("city_assumed", False)) == (
        "nanjing",
        "南京B区",
        False,
    )
    assert (unknown["city"], unknown["zone"], unknown["city_assumed"]) == ("suzhou", "X9区", True)
    assert any("zone X9区 names no city" in warning for warning in unknown["warnings"])
    assert not any("names no city" in warning for warning in nanjing["warnings"])
    in_nanjing = await _answer(client, {**body, "cities": ["南京"]})
    assert {quote["offer_id"] for quote in in_nanjing["quotes"]} == {"js-zones:4090-pcie-nanjing-b"}


# --- the bill's lines -----------------------------------------------------------------------------------

_LINE = re.compile(r"^(?P<units>\d+) × .* at ¥(?P<price>[\d,.]+)/(?:card|node)-hour × (?P<time>.+?)(?: \(|$)")
_UNITS_H = {"h": 1.0, "min": 1 / 60, "s": 1 / 3600}


def _duration_h(shown: str) -> float:
    parts = re.findall(r"([\d,.]+) (h|min|s)\b", shown)
    assert parts, shown
    return sum(float(number.replace(",", "")) * _UNITS_H[unit] for number, unit in parts)


@pytest.mark.parametrize(
    "body",
    [
        {
            "workload": {"gpu_hours": 8.6},
            "scaling": {"12": [12, 12]},
            "vendors": ["js-zones"],
            "card_counts": [12],
        },
        {"workload": {"gpu_hours": 3.3}, "vendors": ["js-zones"], "card_counts": [1, 5, 7]},
        {
            "workload": {"gpu_hours": 41, "reference_gpu": "rtx4090"},
            "vendors": ["js-sweep", "js-mix"],
            "limit": 30,
        },
        {
            "workload": {"gpu_hours": 480, "reference_gpu": "h800"},
            "vendors": ["sz-nodes"],
            "card_counts": [16, 24],
        },
    ],
)
async def test_every_line_multiplies_out(client: Client, body: dict[str, Any]) -> None:
    answer = await _answer(client, body)
    checked = 0
    for quote in answer["quotes"]:
        for item in quote["breakdown"]:
            line = _LINE.match(item["description"].removeprefix("then "))
            if line is None:
                continue
            price = float(line["price"].replace(",", ""))
            product = int(line["units"]) * price * _duration_h(line["time"])
            assert round(product, 2) == item["amount_cny"], item["description"]
            checked += 1
    assert checked


async def test_rent_while_data_copies_in_is_its_own_line_with_the_advice(client: Client) -> None:
    # 4 × 4090 at ¥3 for 40 card-hours, the data (1,000 GB) in Nanjing: the copy takes 4.44 h at
    # 500 Mbit/s; the job's own hours are billed to the whole hour, the copy's on its own line.
    workload: dict[str, Any] = {"gpu_hours": 40, "reference_gpu": "rtx4090", "dataset_gb": 1000}
    body: dict[str, Any] = {
        "workload": {**workload, "data_city": "nanjing"},
        "vendors": ["js-sweep"],
        "card_counts": [4],
    }
    quote = _quote(await _answer(client, body), 4)
    copy_h = 1000 * 8000 / 500 / 3600
    job_h = quote["hours"]["expected"] - copy_h
    lines = {item["kind"]: item for item in quote["breakdown"]}
    assert lines["compute"]["amount_cny"] == 4 * 3 * math.ceil(job_h - 1e-6)
    copy_billed = math.ceil(job_h + copy_h - 1e-6) - math.ceil(job_h - 1e-6)
    assert lines["data_copy"]["amount_cny"] == 4 * 3 * copy_billed
    assert sum(item["amount_cny"] for item in quote["breakdown"]) == quote["cost_cny"]["expected"]
    assert any("copy the data to Suzhou before renting" in warning for warning in quote["warnings"])
    in_city = _quote(await _answer(client, {**body, "workload": {**workload, "data_city": "suzhou"}}), 4)
    assert "data_copy" not in {item["kind"] for item in in_city["breakdown"]}


async def test_hours_convert_by_a_measured_pair(client: Client) -> None:
    # 100 h on an H800 is 200–300 h on an A100 80G (the H800 measured at 2–3×), 250 h expected.
    body = {"workload": {"gpu_hours": 100, "reference_gpu": "h800"}, "gpus": ["a100-80g"], "card_counts": [1]}
    quote = _quote(await _answer(client, body), 1)
    assert quote["hours"] == {"low": 200.0, "expected": 250.0, "high": 300.0}
    assert any("the H800 measured at 2.0–3.0× the A100 80G" in warning for warning in quote["warnings"])


# --- the same over MCP ----------------------------------------------------------------------------------

MCP_BODIES: list[dict[str, Any]] = [
    {"workload": {"gpu_hours": 60, "reference_gpu": "rtx4090"}, "vendors": ["js-sweep"], "budget_cny": 230, "rank_by": "time"},
    {"workload": {"gpu_hours": 800, "reference_gpu": "rtx4090"}, "scaling": {"4": [4, 4]}, "vendors": ["js-mix"], "card_counts": [4]},
    {"workload": {"gpu_hours": 480, "reference_gpu": "h800"}, "vendors": ["sz-nodes"], "card_counts": [10], "lang": "zh"},
    {"workload": {"gpu_hours": 480, "reference_gpu": "h800"}, "gpus": ["h800"], "card_counts": [32]},
    {"workload": {"gpu_hours": 10}, "vendors": ["js-zones"], "card_counts": [2]},
    {"workload": {"gpu_hours": 40, "dataset_gb": 1000, "data_city": "nanjing"}, "vendors": ["js-sweep"], "card_counts": [4]},
    {"workload": {"gpu_hours": 100, "reference_gpu": "h800"}, "gpus": ["a100-80g"], "card_counts": [1]},
]  # fmt: skip


@pytest.mark.slow
async def test_mcp_tells_the_same_facts_as_http(client: Client, vendors_file: Path) -> None:
    parameters = StdioServerParameters(
        command=GPUQUOTE,
        args=["mcp"],
        env={
            "GPUQUOTE_REDIS_URL": "",
            "GPUQUOTE_REFRESH_INTERVAL_S": "0",
            "GPUQUOTE_VENDORS_FILE": str(vendors_file),
        },
    )
    async with McpClient(parameters, read_timeout_seconds=60) as mcp:
        results = [await mcp.call_tool("quote", body) for body in MCP_BODIES]
    for body, result in zip(MCP_BODIES, results, strict=True):
        assert not result.is_error, texts(result)
        over_http, over_mcp = await _answer(client, body), result.structured_content
        assert over_mcp is not None
        assert over_mcp["summary"] == over_http["summary"]
        assert [quote["id"] for quote in over_mcp["quotes"]] == [quote["id"] for quote in over_http["quotes"]]
        for mine, theirs in zip(over_mcp["quotes"], over_http["quotes"], strict=True):
            assert (mine["warnings"], mine["breakdown"]) == (theirs["warnings"], theirs["breakdown"])
