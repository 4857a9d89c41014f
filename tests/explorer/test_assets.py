"""The explorer's assets without a browser: all served by the service, all shipped in the package, nothing
fetched from elsewhere, and every interface text present in both languages."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from litestar.testing import AsyncTestClient

import service
from service.http.explorer import STATIC_DIR

ROOT = Path(__file__).resolve().parents[2]
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def _asset_names() -> list[str]:
    return sorted(path.name for path in STATIC_DIR.iterdir())


async def test_the_page_and_every_asset_it_loads_are_served(client: AsyncTestClient) -> None:  # type: ignore[type-arg]
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    linked = re.findall(r'(?:src|href)="/static/([^"]+)"', page.text)
    imported = [
        name
        for path in STATIC_DIR.glob("*.js")
        for name in re.findall(r'from "\./([^"]+)"', path.read_text())
    ]
    assert "app.js" in linked and "app.css" in linked
    assert {"i18n.js", "plot.js", "format.js"} <= set(imported)
    for name in {*linked, *imported}:
        asset = await client.get(f"/static/{name}")
        assert asset.status_code == 200, name
        expected_type = "text/css" if name.endswith(".css") else "text/javascript"
        assert asset.headers["content-type"].startswith(expected_type), name


async def test_a_missing_asset_is_a_404_problem(client: AsyncTestClient) -> None:  # type: ignore[type-arg]
    response = await client.get("/static/nothing-here.js")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


def test_no_asset_refers_to_another_host() -> None:
    for name in _asset_names():
        text = (STATIC_DIR / name).read_text(encoding="utf-8").replace(SVG_NAMESPACE, "")
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text), name


def test_every_asset_is_package_data() -> None:
    """pyproject ships ``service/static/*``: a subfolder would be left out of the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "static/*" in config["tool"]["setuptools"]["package-data"]["service"]
    assert STATIC_DIR.parent == Path(service.__file__).resolve().parent
    assert all((STATIC_DIR / name).is_file() for name in _asset_names())


def _messages(language: str) -> set[str]:
    source = (STATIC_DIR / "i18n.js").read_text(encoding="utf-8")
    block = re.search(rf"\n  {language}: \{{\n(.*?)\n  \}},", source, re.DOTALL)
    assert block is not None, language
    return set(re.findall(r"^\s+(\w+):", block.group(1), re.MULTILINE))


def test_every_text_is_in_english_and_chinese() -> None:
    english, chinese = _messages("en"), _messages("zh")
    assert english == chinese
    page_keys = set(re.findall(r'data-i18n="(\w+)"', (STATIC_DIR / "index.html").read_text(encoding="utf-8")))
    script_keys = {
        key
        for path in STATIC_DIR.glob("*.js")
        for key in re.findall(r'translate\([^,()]+, "(\w+)"', path.read_text(encoding="utf-8"))
    }
    assert page_keys <= english, page_keys - english
    assert script_keys <= english, script_keys - english
    assert {
        f"excluded_{reason}" for reason in ("memory", "deadline", "budget", "stale", "capacity")
    } <= english
