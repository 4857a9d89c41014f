"""The in-process refresher: with GPUQUOTE_REFRESH_INTERVAL_S > 0 the app refreshes on its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

from litestar.testing import AsyncTestClient

from service.app import create_app
from service.settings import Settings
from tests.builders import static_feed, static_row


async def test_prices_change_without_anyone_asking_for_a_refresh(tmp_path: Path) -> None:
    feed = tmp_path / "feed.json"

    def publish(price_cny: float) -> None:
        feed.write_bytes(static_feed([static_row(price_cny=price_cny)]))

    publish(8.0)
    vendors = tmp_path / "vendors.toml"
    vendors.write_text(
        '[[vendors]]\nid = "js-auto"\nname = "auto"\nregion = "jiangsu"\ncity = "wuxi"\n'
        'format = "static"\npath = "feed.json"\n',
        encoding="utf-8",
    )
    app = create_app(Settings(vendors_file=vendors, refresh_interval_s=0.1))
    async with AsyncTestClient(app) as client:
        first = (await client.get("/offers/js-auto:4090")).json()
        assert first["pricing"]["cny_per_card_hour"] == 8.0
        publish(7.5)
        for _ in range(50):
            await asyncio.sleep(0.05)
            current = (await client.get("/offers/js-auto:4090")).json()
            if current["pricing"]["cny_per_card_hour"] == 7.5:
                break
        assert current["pricing"]["cny_per_card_hour"] == 7.5
        assert current["fetched_at"] > first["fetched_at"]
