"""One ASGI middleware per request: its id, its metrics and its access-log line.

- **Request id:** the caller's ``X-Request-ID`` when it is a sane token, else a fresh one; bound to
  ``service.logs.request_id_var`` for every line logged while the request is handled, and echoed back.
- **Metrics:** ``gpuquote_requests_total`` and ``gpuquote_request_duration_seconds`` by method, route
  template (``/offers/{offer_id}``, never the raw path) and status code.
- **Access log:** one JSON line (logger ``gpuquote.access``) with method, path, status and duration in
  milliseconds. The query string is logged with the values of credential-like parameters (``key``,
  ``api_key``, ``access_token``, ``password``, ...) replaced, so a key sent in a URL never reaches the log.

- **Slow bodies:** a request body must arrive whole within ``body_timeout_s`` of the first read of it;
  past that the request ends with a 408 (``Connection: close``), so a client that sends half a body and
  waits holds neither a connection nor the server's graceful shutdown.
- **HEAD:** answered as the GET of the same path without its body (``HEAD /`` checks the explorer page).

It wraps Litestar's own handler (``create_app`` sets it around ``app.asgi_handler``), outside routing and
exception handling: the router writes the route template into the scope this passes on, read once the
response is sent; a request no route matches (a 404 or 405) is counted and logged under ``<unrouted>``.

It runs on every request, so it does the least work per request (bench/http_load.py measures ``/health``
against a bare route): a fresh id is 128 random bits from the process's PRNG (a correlation id, not a
secret; reseeded in every forked worker), the metric children are looked up once per method, route and
status, the header is appended to the response's list, and when the access logger's only destination is
the JSON queue (``service.logs.direct_handler``, the served configuration) the line is queued from its
fields without a ``LogRecord``; otherwise the record is made directly (no caller lookup: the JSON line
has no source file or line).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from litestar.enums import ScopeType
from litestar.types import ASGIApp, HTTPScope, Message, Receive, ReceiveMessage, Scope, Send

from service.http.problems import BodyTimeout
from service.logs import direct_handler, request_id_var
from service.metrics import REQUEST_DURATION, REQUESTS

if TYPE_CHECKING:
    from prometheus_client.metrics import Counter, Histogram

__all__ = ["REDACTED", "RequestMiddleware", "redact_query"]

access_logger = logging.getLogger("gpuquote.access")

REDACTED = "REDACTED"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_REQUEST_ID_HEADER = b"x-request-id"
_INFO = logging.INFO
# A parameter whose name contains one of these words carries a credential (api_key, access_token, sig...).
_SECRET_NAME = re.compile(
    r"key|token|secret|pass|pwd|jwt|bearer|auth|sig|session|credential|cookie|code", re.IGNORECASE
)
_UNROUTED = "<unrouted>"
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def redact_query(query_string: bytes) -> str:
    """The query string with the value of every credential-like parameter replaced by ``REDACTED``."""
    if not query_string:
        return ""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    return urlencode(
        [(name, REDACTED if _SECRET_NAME.search(name) else value) for name, value in pairs], safe="{}/:,"
    )


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == _REQUEST_ID_HEADER:
            presented = value.decode("latin-1")
            if _SANE_REQUEST_ID.fullmatch(presented):
                return presented
            break
    return f"{random.getrandbits(128):032x}"


# (method, route template, status) -> the metric children: a few dozen entries, built on first use.
_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def _metric_children(method: str, path_template: str, status: int) -> tuple[Counter, Histogram]:
    key = (method, path_template, status)
    children = _children.get(key)
    if children is None:
        labels = (method, path_template, str(status))
        children = _children[key] = (REQUESTS.labels(*labels), REQUEST_DURATION.labels(*labels))
    return children


def _timed_receive(receive: Receive, timeout_s: float) -> Receive:
    """``receive`` that raises ``BodyTimeout`` when the body is not complete ``timeout_s`` after the first
    read of it; once the body is complete (or the client gone) it waits as long as the app asks."""
    deadline: float | None = None
    complete = False

    async def receive_body() -> ReceiveMessage:
        nonlocal deadline, complete
        if complete:
            return await receive()
        loop = asyncio.get_running_loop()
        if deadline is None:
            deadline = loop.time() + timeout_s
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise BodyTimeout(f"the request body did not arrive within {timeout_s:g} s") from None
        complete = message["type"] != "http.request" or not message.get("more_body", False)
        return message

    return receive_body


def _without_body(send: Send) -> Send:
    """``send`` for a HEAD request answered by its GET: the headers as they are, the body left out."""

    async def send_headers(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return send_headers


class RequestMiddleware:
    """Pure ASGI: the request id, the request metrics and the access line, in one pass."""

    def __init__(self, app: ASGIApp, *, body_timeout_s: float = 10.0) -> None:
        self.app = app
        self._body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        token = request_id_var.set(request_id)
        status = 500
        method = scope["method"]
        if method == "HEAD":
            scope = {**scope, "method": "GET"}
            send = _without_body(send)
        elif method in _WITH_BODY:
            receive = _timed_receive(receive, self._body_timeout_s)

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers")
                if not isinstance(headers, list):  # Litestar sends a list; anything else is copied into one
                    headers = message["headers"] = list(headers or ())
                headers.append((_REQUEST_ID_HEADER, request_id.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._record(scope, method, status, time.perf_counter() - started)
            request_id_var.reset(token)

    @staticmethod
    def _record(scope: HTTPScope, method: str, status: int, duration_s: float) -> None:
        requests, durations = _metric_children(method, scope.get("path_template", _UNROUTED), status)
        requests.inc()
        durations.observe(duration_s)
        if access_logger.isEnabledFor(_INFO):
            path = scope["path"]
            if query := redact_query(scope["query_string"]):
                path = f"{path}?{query}"
            fields = {
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(duration_s * 1e3, 3),
            }
            handler = direct_handler(access_logger)
            if handler is not None:
                handler.emit_info(access_logger.name, f"{method} {path} {status}", fields)
                return
            access_logger.handle(
                access_logger.makeRecord(
                    access_logger.name, _INFO, "", 0, "%s %s %d", (method, path, status), None, extra=fields
                )
            )
