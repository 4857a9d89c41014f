from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.base import PriceStore

ADMIN_KEY = "test-admin-key-0123456789"


@pytest.fixture
async def client(store: PriceStore) -> AsyncIterator[AsyncTestClient]:  # type: ignore[type-arg]
    """The app over the bundled reference catalog, on each store in turn."""
    settings = Settings(admin_api_keys=(ADMIN_KEY,))
    app = create_app(services=build_services(settings, store=store))
    async with AsyncTestClient(app) as test_client:
        yield test_client
