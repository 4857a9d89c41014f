"""The HTTP app beside the MCP server, so a test can check both surfaces answer alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore


@pytest.fixture
async def http() -> AsyncIterator[AsyncTestClient[Any]]:
    """The app over the bundled reference catalog, in memory."""
    services = build_services(Settings(), store=MemoryPriceStore(history_max_entries=10))
    async with AsyncTestClient(create_app(services=services)) as client:
        yield client
