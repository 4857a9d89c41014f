"""The per-process quote cache: a repeat on the same snapshot is served from it, anything else is not."""

from __future__ import annotations

from litestar.testing import AsyncTestClient

from schemas.quote import QuoteRequest, Workload
from service.app import create_app
from service.services import build_services
from service.services.quote_cache import QuoteCache
from service.settings import Settings

ARTICLE = QuoteRequest(workload=Workload(gpu_hours=48), gpus=["rtx4090"], card_counts=[1, 4])


def test_key_separates_request_version_reachability_and_minute() -> None:
    base = QuoteCache.key(b"{}", 7, True, 600.0)
    assert QuoteCache.key(b"{}", 7, True, 659.9) == base
    assert QuoteCache.key(b"{}", 7, True, 660.0) != base
    assert QuoteCache.key(b"{}", 8, True, 600.0) != base
    assert QuoteCache.key(b"{}", 7, False, 600.0) != base
    assert QuoteCache.key(b"{ }", 7, True, 600.0) != base


async def test_a_repeat_is_a_hit_and_a_new_snapshot_is_a_miss() -> None:
    services = build_services(Settings(admin_api_keys=("k",)))
    async with AsyncTestClient(create_app(services=services)) as client:
        first = await services.quote(ARTICLE)
        again = await services.quote(ARTICLE)
        assert again is first
        assert (services.quote_cache.hits, services.quote_cache.misses) == (1, 1)
        other = await services.quote(QuoteRequest(workload=Workload(gpu_hours=47), gpus=["rtx4090"]))
        assert other is not first
        assert (await client.post("/admin/refresh", headers={"X-API-Key": "k"})).status_code == 200
        after_refresh = await services.quote(ARTICLE)
        assert after_refresh is not first
        assert after_refresh.snapshot.version > first.snapshot.version
        assert services.quote_cache.misses == 3


def test_least_recently_used_entries_are_evicted() -> None:
    cache = QuoteCache(max_entries=2)
    response = object()
    cache.put("a", response)  # type: ignore[arg-type]
    cache.put("b", response)  # type: ignore[arg-type]
    assert cache.get("a") is response
    cache.put("c", response)  # type: ignore[arg-type]
    assert cache.get("b") is None
    assert cache.get("a") is response
    assert cache.get("c") is response
