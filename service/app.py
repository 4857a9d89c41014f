"""The app factory: ``create_app(settings)`` builds everything; nothing reads the environment at import."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import cast

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.plugins.prometheus import PrometheusConfig
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore
from redis.asyncio import Redis

from service.errors import RefreshBusy
from service.http.admin import AdminController
from service.http.catalog import CatalogController
from service.http.explorer import explorer_router
from service.http.health import HealthController
from service.http.limits import RATE_LIMIT_STORE, cors_config, rate_limit_config
from service.http.metrics import MetricsController
from service.http.problems import problem_details_config
from service.http.quote import QuoteController
from service.logs import RequestIdMiddleware
from service.settings import Settings
from service.state import AppServices, build_services
from service.store.base import StoreUnavailable
from service.store.redis import RedisClient, connect_redis

__all__ = ["API_VERSION", "create_app"]

API_VERSION = "0.1.0"
logger = logging.getLogger("gpuquote.app")
_STARTUP_LOCK_WAIT_S = 30.0


async def load_if_empty(services: AppServices) -> None:
    """Fill an empty store from the configured vendors (the bundled reference catalog by default)."""
    try:
        if await services.store.version() > 0:
            return
        report = await services.refresher.refresh(wait_s=_STARTUP_LOCK_WAIT_S)
    except RefreshBusy:
        logger.info("another process is loading the store; serving what it writes")
        return
    except StoreUnavailable as error:
        logger.warning("price store unreachable at startup: %s", error)
        return
    failed = [outcome.vendor for outcome in report.vendors if not outcome.ok]
    if failed:
        logger.warning("initial load: vendors failed: %s", ", ".join(failed))


async def refresh_periodically(services: AppServices, interval_s: float) -> None:
    """Refresh every ``interval_s``, ±20 % jitter so replicas do not line up; a held lock is fine."""
    while True:
        await asyncio.sleep(interval_s * random.uniform(0.8, 1.2))  # noqa: S311 - jitter only
        try:
            report = await services.refresher.refresh()
            logger.info("periodic refresh: %d vendors, ok=%s", len(report.vendors), report.ok)
        except RefreshBusy:
            logger.info("periodic refresh skipped: another refresher holds the lock")
        except StoreUnavailable as error:
            logger.warning("periodic refresh failed: %s", error)


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


def _middleware(settings: Settings) -> list[DefineMiddleware | type[RequestIdMiddleware]]:
    middleware: list[DefineMiddleware | type[RequestIdMiddleware]] = [
        RequestIdMiddleware,
        PrometheusConfig(app_name="gpuquote", prefix="gpuquote", group_path=True).middleware,
    ]
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
        await load_if_empty(app_services)
        refresher_task: asyncio.Task[None] | None = None
        if resolved_settings.refresh_interval_s > 0:
            refresher_task = asyncio.create_task(
                refresh_periodically(app_services, resolved_settings.refresh_interval_s)
            )
        try:
            yield
        finally:
            if refresher_task is not None:
                refresher_task.cancel()
                with suppress(asyncio.CancelledError):
                    await refresher_task
            await app_services.aclose()
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
        openapi_config=OpenAPIConfig(
            title="gpuquote",
            version=API_VERSION,
            description="GPU-rental prices from vendors in Shenzhen and Jiangsu, normalized, and ranked "
            "total-cost quotes for a job: which vendor, GPU, card count and billing model, what it costs "
            "and how long it takes.",
            path="/schema",
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(path="/swagger")],
        ),
        debug=False,
    )
