"""GET /offers and POST /quote resolve GPU, region and vendor names alike, on both stores.

Each surface names the field its own way (``region`` on the query string, ``regions`` in the body); the
names they accept, the offers those names mean and the reasons they refuse one are the same.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.base import PriceStore

Client = AsyncTestClient[Any]
REFERENCE_OFFERS = Path(__file__).resolve().parents[2] / "service" / "reference" / "offers"
AMBIGUOUS_A100 = "ambiguous GPU 'a100': could be a100-80g (80 GB) or a100-40g (40 GB)"


async def offer_ids(client: Client, params: dict[str, str]) -> set[str]:
    response = await client.get("/offers", params=params)
    assert response.status_code == 200, response.text
    return {item["id"] for item in response.json()["items"]}


async def quoted_offer_ids(client: Client, filters: dict[str, list[str]]) -> set[str]:
    body = {"workload": {"gpu_hours": 48}, "limit": 100, **filters}
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    return {quote["offer_id"] for quote in response.json()["quotes"]}


async def reason(client: Client, method: str, field: str, **request: Any) -> str:
    response = await client.request(method, **request)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == field
    return str(error["reason"])


@pytest.mark.parametrize(
    ("kind", "written", "canonical"),
    [
        ("region", "Jiangsu", "jiangsu"),
        ("region", " 江苏 ", "jiangsu"),
        ("vendor", "JS-SUZHOU-REF", "js-suzhou-ref"),
        ("vendor", "Sz-Cluster-Ref ", "sz-cluster-ref"),
    ],
)
async def test_a_name_in_any_case_means_the_same_offers_on_both_routes(
    client: Client, kind: str, written: str, canonical: str
) -> None:
    expected = await offer_ids(client, {kind: canonical})
    assert expected  # the reference catalog has offers for each of these

    assert await offer_ids(client, {kind: written}) == expected
    # With no card count or limit in the way, every matching offer is quoted at some card count.
    assert await quoted_offer_ids(client, {f"{kind}s": [written]}) == expected
    assert await quoted_offer_ids(client, {f"{kind}s": [canonical]}) == expected


async def test_an_ambiguous_gpu_gets_the_same_reason_on_every_route(client: Client) -> None:
    on_offers = await reason(client, "GET", "gpu", url="/offers", params={"gpu": "a100"})
    on_quote = await reason(
        client, "POST", "gpus", url="/quote", json={"workload": {"gpu_hours": 1}, "gpus": ["a100"]}
    )
    on_reference = await reason(
        client,
        "POST",
        "workload.reference_gpu",
        url="/quote",
        json={"workload": {"gpu_hours": 1, "reference_gpu": "A100"}},
    )
    assert on_offers == on_quote == AMBIGUOUS_A100
    assert on_reference == AMBIGUOUS_A100.replace("'a100'", "'A100'")


async def test_an_unknown_region_or_vendor_gets_the_same_reason_on_both_routes(client: Client) -> None:
    for query, body, listed in [
        ("region", "regions", "unknown region 'Beijing'; valid: jiangsu, shenzhen"),
        ("vendor", "vendors", "unknown vendor 'nobody'; valid: js-nanjing-ref, js-suzhou-ref, js-wuxi-ref"),
    ]:
        name = "Beijing" if query == "region" else "nobody"
        on_offers = await reason(client, "GET", query, url="/offers", params={query: name})
        on_quote = await reason(
            client, "POST", body, url="/quote", json={"workload": {"gpu_hours": 1}, body: [name]}
        )
        assert on_offers == on_quote
        assert on_offers.startswith(listed)


@pytest.fixture
async def zhejiang_client(store: PriceStore, tmp_path: Path) -> AsyncIterator[Client]:
    """The app over one vendor in a region the reference catalog does not have."""
    shutil.copy(REFERENCE_OFFERS / "js-suzhou.json", tmp_path / "offers.json")
    (tmp_path / "vendors.toml").write_text(
        '[[vendors]]\nid = "zj-hangzhou"\nname = "Hangzhou"\nregion = "zhejiang"\ncity = "hangzhou"\n'
        'format = "static"\npath = "offers.json"\n',
        encoding="utf-8",
    )
    settings = Settings(vendors_file=tmp_path / "vendors.toml")
    async with AsyncTestClient(create_app(services=build_services(settings, store=store))) as client:
        yield client


async def test_valid_regions_come_from_the_data_not_a_fixed_list(zhejiang_client: Client) -> None:
    expected = "unknown region 'jiangsu'; valid: zhejiang"
    assert (
        await reason(zhejiang_client, "GET", "region", url="/offers", params={"region": "jiangsu"})
        == expected
    )
    on_quote = await reason(
        zhejiang_client,
        "POST",
        "regions",
        url="/quote",
        json={"workload": {"gpu_hours": 1}, "regions": ["jiangsu"]},
    )
    assert on_quote == expected
    assert await offer_ids(zhejiang_client, {"region": "ZheJiang"}) == await quoted_offer_ids(
        zhejiang_client, {"regions": ["Zhejiang"]}
    )
