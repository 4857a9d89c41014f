"""Liveness and readiness.

Readiness stays 200 ("degraded") while the store is unreachable but a snapshot is held: every replica
would fail together on a Redis blip, and pulling them all from the Service would turn a stale-price
problem into an outage. Without a snapshot there is nothing to serve, and readiness is 503.

Readiness never waits on the store longer than ``Settings.store_deadline_s`` (not counting the event
loop's own delay under load, which is no fault of the store): it runs the same bounded version check a
request does, then reports the snapshot cache's state (the store's last known health, an empty store,
values that do not decode or are missing, a rebuild that failed, whether a snapshot is held). The version
and build time it names are the held snapshot's, the one quotes are answered from.
"""

from __future__ import annotations

from typing import Literal

from litestar import Controller, Response, get
from litestar.openapi import ResponseSpec

from schemas.api import Health, Readiness
from service.errors import StoreUnreachable
from service.services import Services

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
        snapshots = services.snapshots
        reason: str | None = None
        try:
            # A rebuild this check starts is waited for as a request once was (within the deadline), so
            # what it finds in the store is reported now.
            await snapshots.latest(timeout_s=services.settings.store_deadline_s)
        except StoreUnreachable as error:
            reason = str(error)
        reachable = reason is None and snapshots.store_reachable
        held = snapshots.held
        state: Literal["ready", "degraded", "unavailable"]
        if held is None:
            state, reason = "unavailable", reason or "no price snapshot loaded yet"
        elif not reachable:
            state, reason = "degraded", reason or snapshots.last_store_error or "price store unreachable"
        elif snapshots.store_empty:
            state, reason = "degraded", "store empty: serving the held snapshot until a refresh refills it"
        elif snapshots.store_fault is not None:
            state, reason = "degraded", snapshots.store_fault
        elif snapshots.rebuild_error is not None:
            state, reason = "degraded", f"{snapshots.rebuild_error}; serving the held snapshot"
        else:
            state = "ready"
        body = Readiness(
            status=state,
            store=services.store_kind,
            store_reachable=reachable,
            snapshot_version=held.version if held else None,
            snapshot_built_at=held.built_at if held else None,
            reason=reason,
        )
        return Response(body, status_code=503 if held is None else 200)
