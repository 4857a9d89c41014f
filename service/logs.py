"""Structured JSON logs, each line carrying the id of the request it belongs to.

The id comes from the caller's ``X-Request-ID`` (when it is a sane token) or is made here, and is echoed
back in the response so a caller can quote it when reporting a problem.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["JsonFormatter", "RequestIdMiddleware", "configure_logging", "uvicorn_log_config"]

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_HEADER = b"x-request-id"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (request_id := request_id_var.get()) is not None:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def uvicorn_log_config(level: str = "INFO") -> dict[str, Any]:
    """uvicorn's loggers through the same JSON formatter."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json"}},
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.access": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
        },
    }


class RequestIdMiddleware:
    """Pure ASGI middleware: binds a request id for the logs and returns it as ``X-Request-ID``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        presented = dict(scope["headers"]).get(_HEADER, b"").decode("latin-1")
        request_id = presented if _SANE_REQUEST_ID.match(presented) else uuid.uuid4().hex
        token = request_id_var.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableScopeHeaders.from_message(message)["X-Request-ID"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)
