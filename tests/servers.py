"""Real processes for integration tests: ``gpuquote serve`` on a free port, and private redis-servers.
Vendor feeds are served by ``tests.adapters.fake_vendor.FakeVendor`` (the ``fake_vendor`` fixture)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import httpx
import pytest
import redis

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


def require_binary(name: str, hint: str = "") -> str:
    """The path of a program the test needs; without it the test is skipped, or fails under CI."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} not found on PATH{hint}"
        if IN_CI:
            pytest.fail(f"cannot run under CI: {message}", pytrace=False)
        pytest.skip(message)
    return path


class RedisServer:
    """A ``redis-server`` the test owns, on loopback: its own port (a free one unless given), nothing kept
    on disk, a scratch directory, and ``extra_args`` on its command line. The test may stop it, start it
    again (empty, on the same port), freeze and thaw it. As a context manager: started, then closed."""

    def __init__(self, *extra_args: str, port: int | None = None, hint: str = "") -> None:
        self._binary = require_binary("redis-server", hint)
        self._extra_args = extra_args
        self.port = free_port() if port is None else port
        self._workdir = tempfile.TemporaryDirectory(prefix="gpuquote-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start it and wait until it answers."""
        self._process = subprocess.Popen(
            [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self._workdir.name, *self._extra_args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_redis(self.url)
        # Whoever answers must be this process, not another one that took the port in the meantime.
        client = redis.Redis.from_url(self.url, socket_timeout=2)
        try:
            answering_pid = int(client.info("server")["process_id"])
        finally:
            client.close()
        if answering_pid != self._process.pid:
            self.stop()
            raise RuntimeError(f"port {self.port} is held by another redis-server (pid {answering_pid})")

    def stop(self) -> None:
        """Kill it, frozen or not: a crash, and all its data gone."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=10)

    def freeze(self) -> None:
        """SIGSTOP: connections are accepted and never answered."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: signal.Signals) -> None:
        assert self._process is not None and self.running, "redis-server is not running"
        os.kill(self._process.pid, signum)

    def close(self) -> None:
        self.stop()
        self._workdir.cleanup()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
