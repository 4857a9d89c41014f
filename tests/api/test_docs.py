"""``GET /schema``: the docs page loads only assets the service itself serves, under the explorer's CSP."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.settings import Settings


class _References(HTMLParser):
    """Every ``src``/``href`` on the page, and whether any script is inline."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts = 0
        self.spec_url: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("src", "href"):
            if (url := values.get(name)) is not None:
                self.urls.append(url)
        if tag == "script" and "src" not in values:
            self.inline_scripts += 1
        if "data-spec-url" in values:
            self.spec_url = values["data-spec-url"]


EXPECTED_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


@pytest.mark.parametrize("page", ["/schema", "/schema/swagger"])
async def test_docs_page_uses_only_same_origin_assets(page: str) -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        response = await client.get(page)
        explorer = await client.get("/")
        references = _References()
        references.feed(response.text)
        assets = {url: await client.get(url) for url in references.urls}
        spec = await client.get(references.spec_url or "")
        committed_spec = await client.get("/schema/openapi.json")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["Content-Security-Policy"] == explorer.headers["Content-Security-Policy"]
    assert "script-src 'self';" in response.headers["Content-Security-Policy"]
    assert references.inline_scripts == 0
    assert {url.rsplit("/", 1)[1] for url in references.urls} >= {
        "swagger-ui-bundle.js",
        "swagger-ui.css",
        "swagger-init.js",
    }
    for url, asset in assets.items():
        assert url.startswith("/") and not url.startswith("//"), url
        assert asset.status_code == 200, url
        suffix = "." + url.rsplit(".", 1)[1]
        assert asset.headers["content-type"].startswith(EXPECTED_TYPES[suffix]), url
        if suffix in {".js", ".css"}:
            assert b"cdn.jsdelivr.net" not in asset.content
            assert b"unpkg.com" not in asset.content
    assert references.spec_url == "/schema/openapi.json"
    assert spec.status_code == 200
    assert spec.json() == committed_spec.json()
    assert spec.json()["openapi"].startswith("3.1")


@pytest.mark.parametrize(
    "path",
    [
        "/schema/redoc",
        "/schema/elements",
        "/schema/no/such/page",
        "/schema/openapi.yaml",
        "/schema/static/x.js",
    ],
)
async def test_a_docs_path_no_page_serves_is_a_problem_json_404(path: str) -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        response = await client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 404
