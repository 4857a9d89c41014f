"""``GET /metrics``: Litestar's Prometheus controller, with the operation id and words our spec carries.

The handler is Litestar's own (``PrometheusController.get``: the global registry, or a multiprocess
collector when ``PROMETHEUS_MULTIPROC_DIR`` is set); only its OpenAPI description is ours.
"""

from __future__ import annotations

import litestar
from litestar import Response
from litestar.plugins.prometheus import PrometheusController
from prometheus_client import CONTENT_TYPE_LATEST

__all__ = ["MetricsController"]


class MetricsController(PrometheusController):
    path = "/metrics"
    tags = ["operations"]  # noqa: RUF012 - litestar reads a plain list

    @litestar.get(
        operation_id="metrics",
        summary="Prometheus metrics",
        description="Request latency by route, quotes served, refresh duration and outcome per vendor, offers "
        "per vendor, snapshot version and age, price-store errors.",
        media_type=CONTENT_TYPE_LATEST,
    )
    async def get(self) -> Response[bytes]:  # replaces the inherited handler: same path and method
        response: Response[bytes] = await PrometheusController.get.fn(self)
        return response
