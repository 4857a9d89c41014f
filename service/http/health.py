"""Liveness and readiness.

Readiness stays 200 ("degraded") while the store is unreachable but a snapshot is held: every replica
would fail together on a Redis blip, and pulling them all from the Service would turn a stale-price
problem into an outage. Without a snapshot there is nothing to serve, and readiness is 503.
"""

from __future__ import annotations

from typing import Literal

from litestar import Controller, Response, get
from litestar.openapi import ResponseSpec

from schemas.api import Health, Readiness
from service.errors import StoreUnreachable
from service.services import Services
from service.store.base import StoreUnavailable

__all__ = ["HealthController"]


class HealthController(Controller):
    tags = ["operations"]  # noqa: RUF012 - litestar reads a plain list

    @get("/health", operation_id="health", summary="Liveness", description="200 while the process serves.")
    async def health(self) -> Health:
        return Health()

    @get(
        "/ready",
        responses={503: ResponseSpec(data_container=Readiness, description="No snapshot and no store")},
        operation_id="ready",
        summary="Readiness",
        description="200 when the price store answers, or while a snapshot is held when it does not; "
        "503 otherwise.",
    )
    async def ready(self, services: Services) -> Response[Readiness]:
        reason: str | None = None
        try:
            await services.store.ping()
            await services.snapshots.current()
        except (StoreUnavailable, StoreUnreachable) as error:
            reason = str(error)
        reachable = reason is None and services.snapshots.store_reachable
        held = services.snapshots.held
        state: Literal["ready", "degraded", "unavailable"]
        if held is None:
            state, reason = "unavailable", reason or "no price snapshot loaded yet"
        elif reachable:
            state = "ready"
        else:
            state, reason = "degraded", reason or services.snapshots.last_store_error
        body = Readiness(
            status=state,
            store=services.store_kind,
            store_reachable=reachable,
            snapshot_version=held.version if held else None,
            snapshot_built_at=held.built_at if held else None,
            reason=reason,
        )
        return Response(body, status_code=503 if held is None else 200)
