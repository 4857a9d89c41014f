"""The app each server worker serves (``gpuquote serve``): its own module, so a worker imports the service
and nothing the command line's other commands need (the MCP SDK, the CLI's tables)."""

from __future__ import annotations

from granian.utils.proxies import wrap_asgi_with_proxy_headers
from litestar.types import ASGIApp

from service.app import create_app
from service.logs import capture_stray_output
from service.settings import Settings

__all__ = ["proxied_app"]


def proxied_app() -> ASGIApp:
    """The served app factory (either server): the service, trusting ``X-Forwarded-*`` from proxies only.

    Only ``GPUQUOTE_TRUSTED_PROXIES`` may set the client address (what uvicorn's ``proxy_headers`` with
    ``forwarded_allow_ips`` does); with none configured the socket peer stays the client.
    """
    settings = Settings.from_env()
    capture_stray_output()  # this worker's warnings (numpy's among them) are JSON lines too
    app: ASGIApp = create_app(settings, freeze_heap=True)
    if settings.trusted_proxies:
        app = wrap_asgi_with_proxy_headers(app, trusted_hosts=list(settings.trusted_proxies))
    return app
