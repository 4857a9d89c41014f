"""The quote explorer: ``GET /`` serves a page that calls ``POST /quote``; its assets are under ``/static``.

Every asset ships inside the package (``service/static``), so the page works with no network access
beyond the service itself; the Content-Security-Policy on the page holds it to that.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from litestar import Controller, MediaType, Request, Response, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import NotFoundException
from litestar.static_files import create_static_files_router

__all__ = ["STATIC_DIR", "ExplorerController", "explorer_router"]

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"

# Scripts, styles and data only from this origin; the SVG plot is drawn by script, so no inline code.
_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


@cache
def _index_html() -> bytes:
    return (STATIC_DIR / "index.html").read_bytes()


class ExplorerController(Controller):
    tags = ["explorer"]  # noqa: RUF012 - litestar reads a plain list

    @get(
        "/",
        operation_id="quote_explorer",
        summary="Quote explorer page",
        description="An HTML page for people: enter a job, see the ranked quotes as a table and as a "
        "cost-against-time plot with the Pareto frontier. Programs should call `POST /quote` instead.",
        media_type=MediaType.HTML,
        cache_control=CacheControlHeader(no_cache=True),
    )
    async def explorer(self) -> Response[bytes]:
        return Response(
            _index_html(),
            media_type=MediaType.HTML,
            headers={
                "Content-Security-Policy": _CONTENT_SECURITY_POLICY,
                "X-Content-Type-Options": "nosniff",
            },
        )


# no_cache makes browsers revalidate (cheap, ETag) so a deploy never pairs an old script with a new page.
_assets = create_static_files_router(
    path="/static",
    directories=[STATIC_DIR],
    name="explorer-assets",
    cache_control=CacheControlHeader(no_cache=True),
    include_in_schema=False,
)


def _refuse_nul_paths(request: Request[Any, Any, Any]) -> None:
    """No file name holds a NUL byte (``/static/app.js%00.png``); the file system would raise on it."""
    if "\x00" in request.scope["path"]:
        raise NotFoundException(detail="no such file")


explorer_router = Router(
    path="/", route_handlers=[ExplorerController, _assets], before_request=_refuse_nul_paths
)
