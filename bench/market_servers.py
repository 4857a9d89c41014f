"""The servers ``bench/market.py`` measures: ``gpuquote serve`` over a catalog's feeds, the framework floor,
a private ``redis-server``, and ``gpuquote refresh``.

Every server is started the way ``bench/http_load.py`` starts production's (``served_process``): the
default server (granian), one worker, JSON logs at INFO, the request middleware and metrics, and the rate
limiter on with a limit no run reaches. The floor is a bare Litestar app under the same ``run_server``
settings with one ``POST /quote`` route that decodes the body as a ``QuoteRequest`` and answers fixed bytes
(a real quote response, captured by the caller), so it costs what the framework and the server cost.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from http_load import GPUQUOTE, served_process  # bench/http_load.py
from litestar import Litestar, MediaType, Request, Response, get, post
from market_catalog import MarketVendor, write_feeds

from schemas.quote import QuoteRequest

__all__ = [
    "FLOOR_BODY_ENV",
    "PRODUCTION_ENV",
    "Server",
    "catalog_server",
    "feeds_env",
    "floor_app",
    "floor_server",
    "private_redis",
    "refresh",
]

FLOOR_BODY_ENV = "MARKET_FLOOR_BODY_FILE"
# The limiter runs on every POST /quote; the limit is out of reach of one client address.
PRODUCTION_ENV = {"GPUQUOTE_LOG_LEVEL": "INFO", "GPUQUOTE_RATE_LIMIT_PER_MINUTE": "100000000"}
_quote_decoder = msgspec.json.Decoder(QuoteRequest)


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    started_in_s: float  # from the process's start until it answered GET /health


@contextmanager
def _served(command: Sequence[str], env: Mapping[str, str], log: Path) -> Iterator[Server]:
    started = time.perf_counter()
    with served_process(command, env, log) as (url, process):
        yield Server(url, process.pid, time.perf_counter() - started)


def _pinned(command: Sequence[str], cpu: int | None) -> list[str]:
    """``command`` run on one CPU (and every thread and child it starts), or anywhere for ``None``."""
    return list(command) if cpu is None else ["taskset", "-c", str(cpu), *command]


@contextmanager
def catalog_server(
    folder: Path, vendors: Sequence[MarketVendor], redis_url: str | None = None, cpu: int | None = None
) -> Iterator[Server]:
    """``gpuquote serve`` over ``vendors``' feeds, written to ``folder`` when they are not there yet: the
    embedded store loading them at start-up, or with ``redis_url`` what ``refresh`` wrote there."""
    extra = {**PRODUCTION_ENV, **feeds_env(folder, vendors, redis_url)}
    with _served(_pinned([GPUQUOTE, "serve"], cpu), extra, folder / "server.log") as server:
        yield server


def feeds_env(folder: Path, vendors: Sequence[MarketVendor], redis_url: str | None = None) -> dict[str, str]:
    """The settings naming ``vendors``' feeds in ``folder`` (written on first use) and the store."""
    vendors_file = folder / "vendors.toml"
    if not vendors_file.exists():
        folder.mkdir(parents=True, exist_ok=True)
        write_feeds(folder, vendors)
    env = {"GPUQUOTE_VENDORS_FILE": str(vendors_file)}
    if redis_url is not None:
        env["GPUQUOTE_REDIS_URL"] = redis_url
    return env


@contextmanager
def floor_server(folder: Path, body: bytes) -> Iterator[Server]:
    """The framework floor answering ``body`` to every ``POST /quote``."""
    body_file = folder / "floor-body.json"
    body_file.write_bytes(body)
    env = {**PRODUCTION_ENV, FLOOR_BODY_ENV: str(body_file)}
    command = [sys.executable, str(Path(__file__).with_name("market.py")), "--serve-floor"]
    with _served(command, env, folder / "floor.log") as server:
        yield server


def floor_app() -> Litestar:
    """The floor's app factory (``market_servers:floor_app``): no middleware, no logging config of its own."""
    body = Path(os.environ[FLOOR_BODY_ENV]).read_bytes()

    @post("/quote", status_code=200)
    async def quote(request: Request[Any, Any, Any]) -> Response[bytes]:
        _quote_decoder.decode(await request.body())
        return Response(content=body, media_type=MediaType.JSON)

    @get("/", sync_to_thread=False)
    def ready() -> dict[str, str]:  # what ``served_process`` polls until the server answers
        return {"floor": "ready"}

    return Litestar(route_handlers=[quote, ready], logging_config=None, openapi_config=None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def private_redis(folder: Path, cpu: int | None = None) -> Iterator[str]:
    """A ``redis-server`` of this run's own on a free loopback port, no persistence; its URL."""
    port = _free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    command = _pinned(command, cpu)
    with (folder / "redis.log").open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"redis-server did not start; see {folder / 'redis.log'}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def refresh(env: Mapping[str, str], log: Path, *, cpu: int | None = None) -> subprocess.Popen[bytes]:
    """``gpuquote refresh`` of every vendor, started (the caller waits), on ``cpu`` when given; its output
    goes to ``log``."""
    command = _pinned([GPUQUOTE, "refresh"], cpu)
    with log.open("ab") as log_file:
        return subprocess.Popen(
            command, env={**os.environ, **PRODUCTION_ENV, **env}, stdout=log_file, stderr=subprocess.STDOUT
        )
