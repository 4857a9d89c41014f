"""One ASGI middleware per request: its id, its metrics and its access-log line.

- **Request id:** the caller's ``X-Request-ID`` when it is a sane token, else a fresh one; bound to
  ``service.logs.request_id_var`` for every line logged while the request is handled, and echoed back.
- **Metrics:** ``gpuquote_requests_total`` and ``gpuquote_request_duration_seconds`` by method, route
  template (``/offers/{offer_id}``, never the raw path) and status code.
- **Access log:** one JSON line (logger ``gpuquote.access``) with method, path, status and duration in
  milliseconds. The query string is logged with the values of credential-like parameters (``key``,
  ``api_key``, ``access_token``, ``password``, ...) replaced, so a key sent in a URL never reaches the log.

Litestar runs app middleware after routing, so this sees the route template; a request that matches no
route is answered by the router before any middleware runs.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from urllib.parse import parse_qsl, urlencode

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

from service.logs import request_id_var
from service.metrics import REQUEST_DURATION, REQUESTS

__all__ = ["REDACTED", "RequestMiddleware", "redact_query"]

access_logger = logging.getLogger("gpuquote.access")

REDACTED = "REDACTED"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_REQUEST_ID_HEADER = b"x-request-id"
# A parameter whose name contains one of these words carries a credential (api_key, access_token, sig...).
_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|sig|session|credential|code", re.IGNORECASE)
_UNROUTED = "<unrouted>"


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
    return uuid.uuid4().hex


class RequestMiddleware:
    """Pure ASGI: the request id, the request metrics and the access line, in one pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        token = request_id_var.set(request_id)
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableScopeHeaders.from_message(message)["X-Request-ID"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except HTTPException as error:  # raised by middleware below; answered by Litestar further out
            status = error.status_code
            raise
        finally:
            self._record(scope, status, time.perf_counter() - started)
            request_id_var.reset(token)

    @staticmethod
    def _record(scope: HTTPScope, status: int, duration_s: float) -> None:
        method = scope["method"]
        labels = (method, scope.get("path_template", _UNROUTED), str(status))
        REQUESTS.labels(*labels).inc()
        REQUEST_DURATION.labels(*labels).observe(duration_s)
        if access_logger.isEnabledFor(logging.INFO):
            path = scope["path"]
            if query := redact_query(scope["query_string"]):
                path = f"{path}?{query}"
            access_logger.info(
                "%s %s %d",
                method,
                path,
                status,
                extra={
                    "method": method,
                    "path": path,
                    "status": status,
                    "duration_ms": round(duration_s * 1e3, 3),
                },
            )
