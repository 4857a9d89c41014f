"""A real browser against a real server: Debian's chromium driven by Playwright, ``gpuquote serve`` in
its own process on a free loopback port. ``playwright install`` is never needed: the browser is the
system one (``make system-deps`` installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.net import IN_CI
from tests.servers import gpuquote_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# The embedded store over the bundled reference catalog, whatever the developer's environment says.
SERVER_ENV = {
    "GPUQUOTE_REDIS_URL": "",
    "GPUQUOTE_REFRESH_INTERVAL_S": "0",
    "GPUQUOTE_RATE_LIMIT_PER_MINUTE": "0",
}


# Module scope, not session: while Playwright's sync API runs, the main thread has a running event loop,
# which would stop every later asyncio test from starting its own.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} not found: run `make system-deps` (apt-get install chromium)"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with gpuquote_server(SERVER_ENV) as url:
        yield url


@pytest.fixture(scope="module")
def stale_base_url() -> Iterator[str]:
    """A server whose prices are all older than its (one millisecond) max age."""
    with gpuquote_server({**SERVER_ENV, "GPUQUOTE_PRICE_MAX_AGE_S": "0.001"}) as url:
        yield url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(20_000)
    opened = context.new_page()
    script_errors: list[str] = []
    opened.on("pageerror", lambda error: script_errors.append(str(error)))
    try:
        yield opened
    finally:
        context.close()
    assert script_errors == [], "the page's scripts raised"
