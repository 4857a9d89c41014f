"""Which Redis client a URL and ``GPUQUOTE_REDIS_CLUSTER`` pick: decided once, by ``connect_redis``."""

from __future__ import annotations

import pytest

from service.services import build_store
from service.settings import Settings


@pytest.mark.parametrize(
    ("url", "cluster_setting", "expected_kind"),
    [
        ("redis://127.0.0.1:1/0", False, "redis"),
        ("redis://127.0.0.1:1/0", True, "redis-cluster"),
        ("redis+cluster://127.0.0.1:1", False, "redis-cluster"),
    ],
)
async def test_store_kind_follows_the_client_connect_redis_chose(
    url: str, cluster_setting: bool, expected_kind: str
) -> None:
    store, kind = build_store(Settings(redis_url=url, redis_cluster=cluster_setting))
    try:
        assert kind == expected_kind
    finally:
        await store.aclose()
