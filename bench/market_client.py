"""Per-request timing for ``bench/market.py``: a raw-socket HTTP/1.1 client, steady load, process RSS.

``Connection`` keeps one loopback socket open (keep-alive, ``TCP_NODELAY``) and times each request from
the first byte sent to the last byte of the body read, so the figure is the server's answer plus one
loopback round trip, without a client library's own overhead. ``SteadyLoad`` keeps one request in flight
per connection on a thread of its own and records each one's start, latency and the snapshot version its
response names. ``tree_rss_mb`` adds up ``VmRSS`` of a process and all its descendants.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import msgspec

from schemas.quote import QuoteRequest

__all__ = [
    "Connection",
    "Reply",
    "Sample",
    "SteadyLoad",
    "percentile",
    "recommends",
    "snapshot_version",
    "tree_rss_mb",
]

_encoder = msgspec.json.Encoder()


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    seconds: float


class _Snapshot(msgspec.Struct):
    version: int


class _Versioned(msgspec.Struct):
    snapshot: _Snapshot


class _Recommended(msgspec.Struct):
    recommended: str | None


_version_decoder = msgspec.json.Decoder(_Versioned)
_recommended_decoder = msgspec.json.Decoder(_Recommended)


def snapshot_version(body: bytes) -> int:
    """The ``snapshot.version`` of a ``POST /quote`` response (the rest of the body is skipped)."""
    return _version_decoder.decode(body).snapshot.version


def recommends(body: bytes) -> bool:
    """Whether a ``POST /quote`` response recommends a quote (null when nothing qualifies)."""
    return _recommended_decoder.decode(body).recommended is not None


class Connection:
    """One keep-alive HTTP/1.1 connection to a loopback server; bodies must come with Content-Length."""

    def __init__(self, base_url: str, timeout_s: float = 60.0) -> None:
        parts = urlsplit(base_url)
        self._host = f"{parts.hostname}:{parts.port}"
        self._socket = socket.create_connection((parts.hostname, parts.port), timeout=timeout_s)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._socket.close()

    def request(self, method: str, path: str, body: bytes = b"") -> Reply:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self._host}\r\nContent-Length: {len(body)}\r\n"
        if body:
            head += "Content-Type: application/json\r\n"
        started = time.perf_counter()
        self._socket.sendall(head.encode() + b"\r\n" + body)
        status, length = self._read_head()
        answer = self._read_exactly(length)
        return Reply(status, answer, time.perf_counter() - started)

    def quote(self, request: QuoteRequest) -> Reply:
        return self.request("POST", "/quote", _encoder.encode(request))

    def _read_head(self) -> tuple[int, int]:
        while b"\r\n\r\n" not in self._buffer:
            self._receive()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(":", 1) for line in lines[1:])
        lengths = [value for name, value in headers.items() if name.strip().lower() == "content-length"]
        if not lengths:
            raise RuntimeError(f"response without Content-Length: {lines[0]}")
        return int(lines[0].split()[1]), int(lengths[0])

    def _read_exactly(self, length: int) -> bytes:
        while len(self._buffer) < length:
            self._receive()
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return body

    def _receive(self) -> None:
        chunk = self._socket.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self._buffer += chunk


@dataclass(frozen=True)
class Sample:
    started_s: float  # time.monotonic() when sent
    seconds: float
    status: int
    version: int | None


@dataclass
class SteadyLoad:
    """Unique requests back to back on ``connections`` connections, each its own thread, until ``stop``."""

    base_url: str
    make_request: Callable[[int], QuoteRequest]
    connections: int = 1
    samples: list[Sample] = field(default_factory=list)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        for number in range(self.connections):
            thread = threading.Thread(target=self._run, args=(number,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> list[Sample]:
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout=120)
        return sorted(self.samples, key=lambda sample: sample.started_s)

    def _run(self, number: int) -> None:
        with Connection(self.base_url) as connection:
            for index in range(number, 1 << 62, self.connections):
                if self._stopping.is_set():
                    return
                started_s = time.monotonic()
                reply = connection.quote(self.make_request(index))
                version = snapshot_version(reply.body) if reply.status == 200 else None
                self.samples.append(Sample(started_s, reply.seconds, reply.status, version))


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` 0.99: p99); NaN for no samples."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def _children(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children.extend(int(child) for child in task.read_text().split())
        except OSError:  # the thread ended meanwhile
            continue
    return children


def _rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    lines = [line for line in status.splitlines() if line.startswith("VmRSS:")]
    return int(lines[0].split()[1]) if lines else 0


def tree_rss_mb(pid: int) -> tuple[float, int]:
    """Resident memory (MB, 1e6 bytes) of ``pid`` and every descendant, and how many processes that is."""
    pending, seen = [pid], []
    while pending:
        current = pending.pop()
        seen.append(current)
        pending.extend(_children(current))
    return sum(_rss_kb(current) for current in seen) * 1024 / 1e6, len(seen)
