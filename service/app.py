"""The app factory: ``create_app(settings)`` builds everything; nothing reads the environment at import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import cast

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore
from redis.asyncio import Redis

from service import VERSION
from service.http.admin import AdminController
from service.http.catalog import CatalogController
from service.http.docs import DOCS_PATH, SwaggerUIPlugin, docs_router
from service.http.explorer import explorer_router
from service.http.health import HealthController
from service.http.limits import RATE_LIMIT_STORE, cors_config, rate_limit_config
from service.http.metrics import MetricsController
from service.http.problems import problem_details_config
from service.http.quote import QuoteController
from service.http.requests import RequestMiddleware
from service.services import AppServices, build_services
from service.settings import Settings
from service.store.redis import RedisClient, connect_redis

__all__ = ["create_app"]


def _services(state: State) -> AppServices:
    services: AppServices = state.services
    return services


def _rate_limit_store(settings: Settings) -> tuple[Store, RedisClient | None]:
    """Counts live in Redis when it is configured, so every replica enforces one shared limit."""
    if settings.redis_url is None or settings.rate_limit_per_minute <= 0:
        return MemoryStore(), None
    client = connect_redis(settings.redis_url, cluster=settings.redis_cluster)
    store = RedisStore(cast(Redis, client), namespace=f"{settings.redis_namespace}:ratelimit")
    return store, client


def _middleware(settings: Settings) -> list[DefineMiddleware | type[RequestMiddleware]]:
    middleware: list[DefineMiddleware | type[RequestMiddleware]] = [RequestMiddleware]
    if (limits := rate_limit_config(settings)) is not None:
        middleware.append(limits.middleware)
    return middleware


def create_app(settings: Settings | None = None, *, services: AppServices | None = None) -> Litestar:
    """The ASGI app. ``settings`` default to the environment; tests pass their own (or ready services)."""
    resolved_settings = settings or (services.settings if services else Settings.from_env())
    app_services = services or build_services(resolved_settings)
    rate_limit_store, rate_limit_client = _rate_limit_store(resolved_settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        try:
            async with app_services.running():
                yield
        finally:
            if rate_limit_client is not None:
                await rate_limit_client.aclose()

    return Litestar(
        route_handlers=[
            QuoteController,
            HealthController,
            MetricsController,
            CatalogController,
            AdminController,
            explorer_router,
        ],
        dependencies={"services": Provide(_services, sync_to_thread=False)},
        state=State({"services": app_services}),
        lifespan=[lifespan],
        plugins=[ProblemDetailsPlugin(problem_details_config())],
        middleware=_middleware(resolved_settings),
        stores={RATE_LIMIT_STORE: rate_limit_store},
        cors_config=cors_config(resolved_settings),
        request_max_body_size=resolved_settings.max_body_bytes,
        logging_config=None,  # logging is configured once, by `gpuquote serve` (service.logs), not per app
        openapi_config=OpenAPIConfig(
            title="gpuquote",
            version=VERSION,
            description="GPU-rental prices from vendors in Shenzhen and Jiangsu, normalized, and ranked "
            "total-cost quotes for a job: which vendor, GPU, card count and billing model, what it costs "
            "and how long it takes.",
            path=DOCS_PATH,
            openapi_router=docs_router(),
            render_plugins=[SwaggerUIPlugin()],
        ),
        debug=False,
    )
