"""``GET /metrics``: the Prometheus text exposition of this process's metrics."""

from __future__ import annotations

from litestar import Controller, Response, get
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

__all__ = ["MetricsController"]


class MetricsController(Controller):
    tags = ["operations"]  # noqa: RUF012 - litestar reads a plain list

    @get(
        "/metrics",
        operation_id="metrics",
        summary="Prometheus metrics",
        description="Request latency by route, quotes served, refresh duration and outcome per vendor, offers "
        "per vendor, snapshot version and age, price-store errors.",
        media_type=CONTENT_TYPE_LATEST,
    )
    async def metrics(self) -> Response[bytes]:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
