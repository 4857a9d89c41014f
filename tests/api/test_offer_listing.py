"""``GET /offers`` and the MCP ``list_offers`` tool: one price per card-hour across pricing models, sorting,
filters, and ``stale`` by the quote engine's rule, the same over both surfaces.

The catalog is ``tests.api.listing``'s; the tool is called in process through the MCP server's own
``call_tool`` (argument decoding, errors and all) on the services the HTTP app runs on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import AppServices, build_services
from service.store.memory import MemoryPriceStore
from service.tools.mcp import call_tool
from tests.api.listing import PRICES, listing_settings

Client = AsyncTestClient[Any]

CZ = "js-changzhou-t:"
OLD_4090 = "js-yangzhou-old:4090"


@pytest.fixture
async def surfaces(tmp_path: Path) -> AsyncIterator[tuple[Client, AppServices]]:
    services = build_services(listing_settings(tmp_path), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        yield client, services


async def over_http(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    response = await client.get("/offers", params=params)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def over_mcp(services: AppServices, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await call_tool(services, "list_offers", arguments)
    assert not result.is_error, result.content
    page: dict[str, Any] | None = result.structured_content
    assert page is not None
    return page


def ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


async def test_every_offer_carries_one_price_per_card_hour_its_most_cards_and_stale(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, services = surfaces
    for page in (await over_http(client, {}), await over_mcp(services, {})):
        by_id = {item["id"]: item for item in page["items"]}
        assert {offer_id: item["cny_per_card_hour"] for offer_id, item in by_id.items()} == PRICES
        assert {offer_id: item.get("max_cards") for offer_id, item in by_id.items()} == {
            CZ + "l20": 4,
            CZ + "a800-node": 32,
            CZ + "4090x2": 6,
            CZ + "4090-week": 4,
            CZ + "h20-spot": 8,
            OLD_4090: 8,
        }
        assert [offer_id for offer_id, item in by_id.items() if item["stale"]] == [OLD_4090]
        assert page["price_max_age_s"] == 86_400
    one = (await client.get(f"/offers/{OLD_4090}")).json()
    assert (one["cny_per_card_hour"], one["stale"]) == (2.2, True)


SORTED = [
    ("price", [OLD_4090, CZ + "4090-week", CZ + "l20", CZ + "4090x2", CZ + "h20-spot", CZ + "a800-node"]),
    ("-price", [CZ + "a800-node", CZ + "h20-spot", CZ + "4090x2", CZ + "l20", CZ + "4090-week", OLD_4090]),
    # Unknown stock last, whichever the direction; ties by id.
    ("stock", [CZ + "4090x2", CZ + "l20", CZ + "h20-spot", CZ + "4090-week", CZ + "a800-node", OLD_4090]),
    ("-stock", [CZ + "h20-spot", CZ + "l20", CZ + "4090x2", CZ + "4090-week", CZ + "a800-node", OLD_4090]),
    ("-cards", [CZ + "a800-node", CZ + "h20-spot", OLD_4090, CZ + "4090x2", CZ + "4090-week", CZ + "l20"]),
    ("memory", [CZ + "4090-week", CZ + "4090x2", OLD_4090, CZ + "l20", CZ + "a800-node", CZ + "h20-spot"]),
    ("-memory", [CZ + "h20-spot", CZ + "a800-node", CZ + "l20", CZ + "4090-week", CZ + "4090x2", OLD_4090]),
]


@pytest.mark.parametrize(("sort", "expected"), SORTED, ids=[sort for sort, _ in SORTED])
async def test_sorting_orders_the_whole_listing_before_paging(
    surfaces: tuple[Client, AppServices], sort: str, expected: list[str]
) -> None:
    client, services = surfaces
    assert ids(await over_http(client, {"sort": sort})) == expected
    assert ids(await over_mcp(services, {"sort": sort})) == expected
    second_page = await over_http(client, {"sort": sort, "limit": 2, "offset": 2})
    assert ids(second_page) == expected[2:4] and second_page["total"] == 6


FILTERED: list[tuple[dict[str, Any], list[str]]] = [
    ({"spot": True}, [CZ + "h20-spot"]),
    ({"spot": False}, [CZ + "l20", CZ + "a800-node", CZ + "4090x2", CZ + "4090-week", OLD_4090]),
    ({"min_cny_per_card_hour": 3.3, "max_cny_per_card_hour": 4.4}, [CZ + "l20", CZ + "4090x2", CZ + "h20-spot"]),
    ({"max_cny_per_card_hour": 2.5}, [CZ + "4090-week", OLD_4090]),
    ({"min_gpu_memory_gb": 48}, [CZ + "l20", CZ + "a800-node", CZ + "h20-spot"]),
    ({"min_cards": 8}, [CZ + "a800-node", CZ + "h20-spot", OLD_4090]),
    ({"min_available_cards": 5}, [CZ + "l20", CZ + "h20-spot"]),
    ({"min_available_cards": 0, "sort": "price"}, [CZ + "l20", CZ + "4090x2", CZ + "h20-spot"]),
    ({"pricing": "term"}, [CZ + "4090-week"]),
    ({"gpu": "RTX 4090", "max_cny_per_card_hour": 3, "sort": "-price"}, [CZ + "4090-week", OLD_4090]),
]  # fmt: skip


@pytest.mark.parametrize(("params", "expected"), FILTERED)
async def test_filters_keep_the_offers_known_to_pass(
    surfaces: tuple[Client, AppServices], params: dict[str, Any], expected: list[str]
) -> None:
    client, services = surfaces
    query = {key: str(value).lower() if isinstance(value, bool) else value for key, value in params.items()}
    assert ids(await over_http(client, query)) == expected
    assert ids(await over_mcp(services, params)) == expected


BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"spot": "maybe"}, "spot", "must be true or false, got text"),
    ({"sort": "cheapest"}, "sort",
     "must be one of -cards, -memory, -price, -stock, cards, memory, price, stock; got 'cheapest'"),
    ({"min_cards": 0}, "min_cards", "must be a whole number ≥ 1"),
    ({"min_available_cards": -1}, "min_available_cards", "must be a whole number ≥ 0"),
    ({"max_cny_per_card_hour": 0}, "max_cny_per_card_hour", "must be a number > 0"),
    ({"min_gpu_memory_gb": "lots"}, "min_gpu_memory_gb", "must be a whole number, got text"),
    ({"min_cny_per_card_hour": 5, "max_cny_per_card_hour": 4}, "min_cny_per_card_hour",
     "must be at most max_cny_per_card_hour (4), got 5"),
    ({"city": "hangzhou"}, "city", "unknown city 'hangzhou'; valid: changzhou, yangzhou"),
]  # fmt: skip


@pytest.mark.parametrize(("params", "field", "reason"), BAD)
async def test_a_bad_value_is_a_4xx_naming_the_parameter_on_both_surfaces(
    surfaces: tuple[Client, AppServices], params: dict[str, Any], field: str, reason: str
) -> None:
    client, services = surfaces
    response = await client.get("/offers", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["errors"] == [{"field": field, "reason": reason, "in": "query"}]
    tool = await call_tool(services, "list_offers", params)
    assert tool.is_error
    assert [block.text for block in tool.content] == [f"{field}: {reason}"]  # type: ignore[union-attr]


async def test_an_unknown_parameter_stays_a_400_naming_it(surfaces: tuple[Client, AppServices]) -> None:
    client, services = surfaces
    response = await client.get("/offers", params={"order": "price", "spot": "true"})
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "order"
    assert "min_available_cards" in error["reason"] and "sort" in error["reason"]
    tool = await call_tool(services, "list_offers", {"order": "price"})
    assert tool.is_error
    assert tool.content[0].text.startswith("order: unknown field; valid fields: gpu, region, city")  # type: ignore[union-attr]


async def test_the_tool_takes_one_name_a_list_or_the_earlier_plural_name(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, services = surfaces
    expected = ids(await over_http(client, {"city": ["yangzhou"]}))
    assert expected == [OLD_4090]
    for arguments in ({"city": "Yangzhou"}, {"city": ["扬州"]}, {"cities": ["yangzhou"]}):
        assert ids(await over_mcp(services, arguments)) == expected, arguments
    # The earlier name in an error names the earlier name.
    old = await call_tool(services, "list_offers", {"cities": ["hangzhou"]})
    assert old.content[0].text.startswith("cities: unknown city 'hangzhou'")  # type: ignore[union-attr]
