"""A real HTTP server on loopback that plays a vendor: scripted replies per path, faults included. It is
the one vendor server of the tests (the ``fake_vendor`` fixture): adapter tests script replies with
``serve``; refresh, fault and soak tests ``publish`` whole feeds they rewrite between refreshes.

Each path has a queue of replies; each request takes the next one and the last one repeats, so
``serve(p, status=500)`` then ``serve(p, body)`` is "500 once, then success". A reply can be slow
(``delay_s``), carry headers (``Retry-After``), or be truncated (``truncate_at``: the full
``Content-Length`` is declared, fewer bytes are sent, then the connection closes), be sent ``chunked``
with no ``Content-Length`` at all, or carry a ``reason`` phrase of the vendor's choosing. A redirect is a
reply with a 3xx ``status`` and a ``Location`` header.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    truncate_at: int | None = None
    chunked: bool = False
    reason: str | None = None


_CHUNK_BYTES = 16 * 1024


@dataclass(frozen=True)
class SeenRequest:
    path: str
    headers: dict[str, str]


class _Server(ThreadingHTTPServer):
    # Handler threads are joined on close, so no request outlives its test.
    daemon_threads = False
    fake: FakeVendor


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # An idle keep-alive connection must not keep a handler thread (and the test's teardown) waiting.
    timeout = 5
    # Headers and body go out in separate writes: without this, Nagle and delayed ACKs add ~40 ms each.
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake.watch(self.connection, True)

    def finish(self) -> None:
        self.server.fake.watch(self.connection, False)
        super().finish()

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:
            # A client that went away between requests (a killed refresher): no traceback on stderr.
            self.close_connection = True

    def do_GET(self) -> None:
        fake = self.server.fake
        reply = fake.take(
            SeenRequest(self.path, {k.lower(): v for k, v in self.headers.items()}), self.connection
        )
        try:
            self._send(reply)
        finally:
            fake.watch(self.connection, True)  # back to reading its next request

    def _send(self, reply: Reply) -> None:
        if reply.delay_s and self.server.fake.stopping.wait(reply.delay_s):
            self.close_connection = True
            return
        try:
            self.send_response(reply.status, reply.reason)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(reply.body)))
            if reply.truncate_at is not None:
                self.send_header("Connection", "close")
            self.end_headers()
            if reply.chunked:
                self._write_chunked(reply.body)
            else:
                self.wfile.write(reply.body if reply.truncate_at is None else reply.body[: reply.truncate_at])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (it timed out): what a slow vendor sees too.
            self.close_connection = True
            return
        if reply.truncate_at is not None:
            self.close_connection = True

    def _write_chunked(self, body: bytes) -> None:
        for start in range(0, len(body), _CHUNK_BYTES):
            chunk = body[start : start + _CHUNK_BYTES]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests assert on ``FakeVendor.requests`` instead."""


class FakeVendor:
    """The server plus its script; ``url(path)`` is where a vendor config should point."""

    def __init__(self) -> None:
        self._replies: dict[str, list[Reply]] = {}
        self._lock = threading.Lock()
        self.requests: list[SeenRequest] = []
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01})
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def serve(
        self,
        path: str,
        body: bytes = b"",
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay_s: float = 0.0,
        truncate_at: int | None = None,
        chunked: bool = False,
        reason: str | None = None,
    ) -> str:
        """Queue one reply for ``path`` (path and query, as requested); returns its URL."""
        reply = Reply(body, status, headers or {}, delay_s, truncate_at, chunked, reason)
        with self._lock:
            self._replies.setdefault(path, []).append(reply)
        return self.url(path)

    def publish(self, path: str, body: bytes, *, delay_s: float = 0.0) -> str:
        """Serve ``body`` as JSON at ``path`` from now on, in place of any queued replies: a feed the test
        rewrites between refreshes (``delay_s`` makes it hang); returns its URL."""
        reply = Reply(body, headers={"Content-Type": "application/json"}, delay_s=delay_s)
        with self._lock:
            self._replies[path] = [reply]
        return self.url(path)

    def withdraw(self, path: str) -> None:
        """Stop serving ``path``: a 404 from now on."""
        with self._lock:
            self._replies.pop(path, None)

    def take(self, request: SeenRequest, connection: socket.socket | None = None) -> Reply:
        """The reply to ``request``, which is recorded; its ``connection`` is busy replying till watched again."""
        with self._lock:
            self.requests.append(request)
            self._connections.discard(connection)
            queue = self._replies.get(request.path)
            if not queue:
                return Reply(b"not found", status=404)
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def watch(self, connection: socket.socket, reading: bool) -> None:
        """Whether ``connection`` is waiting for a request (unread bytes on it are a request coming)."""
        with self._lock:
            if reading:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def hits(self, path: str) -> int:
        """Requests for ``path`` so far, counted once the server has read every request a client has
        sent: a client that timed out may return before the server (on a loaded machine) has read it."""
        self._settle()
        with self._lock:
            return sum(1 for request in self.requests if request.path == path)

    def _settle(self, timeout_s: float = 2.0) -> None:
        """Until no connection waits in the backlog and no connection waiting for a request has bytes (or
        its close) unread, seen twice in a row, or ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        quiet = 0
        while quiet < 2 and time.monotonic() < deadline:
            with self._lock:
                sockets = [self._server.socket, *self._connections]
            try:
                pending, _, _ = select.select(sockets, [], [], 0)
            except (OSError, ValueError):  # a connection closed meanwhile
                pending = sockets
            quiet = 0 if pending else quiet + 1
            time.sleep(0.01)

    def close(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
