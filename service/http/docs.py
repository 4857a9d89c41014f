"""``GET /schema``: interactive API docs (Swagger UI) from assets shipped with the service.

Swagger UI's files come from the ``swagger-ui-py`` distribution, pinned in ``pyproject.toml``, and are
served under ``/schema/static`` next to the page's own start-up script; the spec stays at
``/schema/openapi.json``. Nothing is loaded from another origin, so the docs work offline, and the
Content-Security-Policy (the explorer page's) holds every ``/schema`` response to that.
"""

from __future__ import annotations

import html
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from litestar import Request, Response, Router
from litestar.datastructures import CacheControlHeader, ResponseHeader
from litestar.exceptions import NotFoundException
from litestar.openapi.plugins import OpenAPIRenderPlugin
from litestar.static_files import create_static_files_router
from litestar.status_codes import HTTP_404_NOT_FOUND

__all__ = ["DOCS_CONTENT_SECURITY_POLICY", "SwaggerUIPlugin", "docs_router"]

DOCS_PATH = "/schema"

# The explorer's policy: scripts, styles and data from this origin only.
DOCS_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

_OWN_ASSETS = Path(__file__).resolve().parent / "docs_assets"


def _swagger_ui_assets() -> Path:
    # find_spec locates the package without importing it (its __init__ pulls in web-framework glue).
    spec = find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py distribution is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" type="image/png" href="{assets}/favicon-32x32.png">
<link rel="stylesheet" href="{assets}/swagger-ui.css">
<script src="{assets}/swagger-ui-bundle.js" defer></script>
<script src="{assets}/swagger-init.js" defer></script>
</head>
<body>
<div id="swagger-ui" data-spec-url="{spec_url}"></div>
</body>
</html>
"""


class SwaggerUIPlugin(OpenAPIRenderPlugin):
    """Swagger UI at ``/schema`` (and ``/schema/swagger``), its assets at ``/schema/static``."""

    def __init__(self) -> None:
        super().__init__(path=["/swagger"])

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        spec_url = self.get_openapi_json_route(request)
        assets = spec_url.rsplit("/", 1)[0] + "/static"
        title = str(openapi_schema.get("info", {}).get("title", "API"))
        page = _PAGE.format(
            title=html.escape(title),
            assets=html.escape(assets, quote=True),
            spec_url=html.escape(spec_url, quote=True),
        )
        return page.encode()

    def receive_router(self, router: Router) -> None:
        # Revalidated on every load (cheap, ETag), so an upgrade never pairs an old bundle with a new page.
        router.register(
            create_static_files_router(
                path="/static",
                directories=[_OWN_ASSETS, _swagger_ui_assets()],
                name="docs-assets",
                cache_control=CacheControlHeader(no_cache=True),
                include_in_schema=False,
            )
        )


def _not_found_as_problem(response: Response[Any]) -> Response[Any]:
    """Litestar answers a ``/schema/...`` path no page serves (``/schema/redoc``) with an HTML 404 page of
    its own; raised again here, it is answered like every other 404: problem JSON."""
    if response.status_code == HTTP_404_NOT_FOUND:
        raise NotFoundException(
            f"no docs page there: the docs are at {DOCS_PATH}, the spec at {DOCS_PATH}/openapi.json"
        )
    return response


def docs_router() -> Router:
    """The ``/schema`` router Litestar fills with the spec and the docs page; one per app."""
    return Router(
        DOCS_PATH,
        route_handlers=[],
        include_in_schema=False,
        after_request=_not_found_as_problem,
        response_headers=[
            ResponseHeader(name="Content-Security-Policy", value=DOCS_CONTENT_SECURITY_POLICY),
            ResponseHeader(name="X-Content-Type-Options", value="nosniff"),
        ],
    )
