"""Real processes for integration tests: ``gpuquote serve`` on a free port, a private redis-server, and a
loopback HTTP server serving vendor feeds that the test can change or slow down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.net import IN_CI, free_port, wait_for_redis

GPUQUOTE = str(Path(sys.executable).with_name("gpuquote"))


@contextmanager
def gpuquote_server(
    env: Mapping[str, str], *, startup_timeout_s: float = 30.0, log_file: Path | None = None
) -> Iterator[str]:
    """``gpuquote serve`` in its own process; yields its base URL once ``/health`` answers.

    With ``log_file``, the server's log (its stderr) is written there, complete once the block exits.
    """
    port = free_port()
    log = log_file.open("wb") if log_file is not None else None
    process = subprocess.Popen(
        [GPUQUOTE, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=log if log is not None else subprocess.PIPE,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout_s
        while True:
            if process.poll() is not None:
                if log_file is not None:
                    stderr = log_file.read_text(encoding="utf-8", errors="replace")
                else:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"gpuquote serve exited with {process.returncode}: {stderr[-2000:]}")
            try:
                if httpx.get(base_url + "/health", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("gpuquote serve did not answer /health in time")
            time.sleep(0.1)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stderr:
            process.stderr.close()
        if log is not None:
            log.close()


class PrivateRedis:
    """A redis-server this test owns, so it may stop and restart it."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            if IN_CI:
                pytest.fail("fault tests need the redis-server binary", pytrace=False)
            pytest.skip("redis-server not installed")
        self._binary = binary
        self.port = free_port()
        self._workdir = tempfile.TemporaryDirectory(prefix="gpuquote-redis-fault-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self._workdir.name],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_redis(self.url)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        self._workdir.cleanup()


class FeedServer:
    """Serves static price files at ``/<name>``; a test rewrites them or makes one hang."""

    def __init__(self) -> None:
        self.feeds: dict[str, bytes] = {}
        self.delays_s: dict[str, float] = {}
        feeds, delays = self.feeds, self.delays_s

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.lstrip("/")
                time.sleep(delays.get(name, 0.0))
                body = feeds.get(name)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def set_feed(self, name: str, rows: list[dict[str, object]]) -> None:
        self.feeds[name] = json.dumps({"offers": rows}).encode()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def card_hour_rows(prices_cny: Mapping[str, float]) -> list[dict[str, object]]:
    """Static-format rows, one RTX 4090 card-hour offer per sku."""
    return [
        {"sku": sku, "gpu": "RTX 4090", "pricing": {"kind": "card_hour", "price_cny": price}}
        for sku, price in prices_cny.items()
    ]


def write_vendors_file(
    folder: Path, feed_base_url: str, vendor_ids: list[str], *, timeout_s: float = 60
) -> Path:
    """A vendors file with one static-format vendor per id, each fetched from ``<feed>/<id>.json``."""
    entries = [
        f'[[vendors]]\nid = "{vendor}"\nname = "{vendor}"\nregion = "jiangsu"\ncity = "suzhou"\n'
        f'format = "static"\nurl = "{feed_base_url}/{vendor}.json"\ntimeout_s = {timeout_s}\nretries = 0\n'
        for vendor in vendor_ids
    ]
    path = folder / "vendors.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    return path
