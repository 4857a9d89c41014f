"""One error shape across the service: RFC 9457 problem details, mapped here and nowhere else.

Every problem names what was wrong in ``errors: [{"field": ..., "reason": ...}]`` so a caller (or a
chatbot) can point at the field. Anything unexpected becomes a 500 problem and is logged, never leaked.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException

from schemas.api import Problem
from service.errors import GpuquoteError, StoreUnreachable
from service.store.base import StoreUnavailable

__all__ = ["problem_details_config", "problem_responses"]

logger = logging.getLogger("gpuquote.http")
_JSON_PATH = re.compile(r"at `\$\.?(?P<path>[^`]*)`")
_UNKNOWN_FIELD = re.compile(r"unknown field `(?P<name>[^`]+)`")
_TYPE_BASE = "https://gpuquote.dev/problems/"


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _from_domain_error(error: GpuquoteError) -> ProblemDetailsException:
    errors = [{"field": error.field, "reason": getattr(error, "reason", error.detail)}] if error.field else []
    return ProblemDetailsException(
        status_code=error.status_code,
        title=error.title,
        detail=error.detail,
        type_=_TYPE_BASE + _slug(error.title),
        extra={"errors": errors} if errors else None,
    )


def _from_store_error(error: StoreUnavailable) -> ProblemDetailsException:
    return _from_domain_error(StoreUnreachable(str(error)))


def _field_errors(error: ValidationException) -> list[dict[str, Any]]:
    items = error.extra if isinstance(error.extra, list) else []
    found: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        message = str(item.get("message", ""))
        field = item.get("key")
        match = _JSON_PATH.search(message)
        if match is not None:
            field = match["path"] or None
            message = _JSON_PATH.sub("", message).rstrip(" -")
        if (unknown := _UNKNOWN_FIELD.search(message)) is not None:
            # msgspec names the object holding an unknown field; the caller wants the field itself.
            field = f"{field}.{unknown['name']}" if field and field != "data" else unknown["name"]
        found.append(
            {"field": field or item.get("source") or "body", "reason": message, "in": item.get("source")}
        )
    if not found:
        match = _JSON_PATH.search(error.detail)
        reason = _JSON_PATH.sub("", error.detail).rstrip(" -")
        found.append({"field": (match["path"] or "body") if match else "body", "reason": reason})
    return found


def _from_validation_error(error: ValidationException) -> ProblemDetailsException:
    errors = _field_errors(error)
    detail = "; ".join(f"{item['field']}: {item['reason']}" for item in errors)
    return ProblemDetailsException(
        status_code=error.status_code,
        title="Invalid request",
        detail=detail,
        type_=_TYPE_BASE + "invalid-request",
        extra={"errors": errors},
    )


def _from_http_error(error: HTTPException) -> ProblemDetailsException:
    if isinstance(error, ValidationException):
        return _from_validation_error(error)
    extra: dict[str, Any] | None = None
    headers = dict(error.headers or {})
    if error.status_code in {400, 413, 415}:
        # A body that is not JSON at all, too large or too deep: nothing finer than the body to point at.
        extra = {"errors": [{"field": "body", "reason": error.detail}]}
    if error.status_code == 429 and "RateLimit-Reset" in headers:
        headers["Retry-After"] = headers["RateLimit-Reset"]
    return ProblemDetailsException(
        status_code=error.status_code,
        title=error.detail,
        detail=error.detail,
        headers=headers or None,
        type_=_TYPE_BASE + _slug(error.detail),
        extra=extra,
    )


def _from_unexpected(error: Exception) -> ProblemDetailsException:
    logger.error("unhandled error", exc_info=error)
    return ProblemDetailsException(
        status_code=500,
        title="Internal error",
        detail="the service failed to answer; the error was logged",
        type_=_TYPE_BASE + "internal-error",
    )


def problem_details_config() -> ProblemDetailsConfig:
    return ProblemDetailsConfig(
        exception_to_problem_detail_map={
            GpuquoteError: _from_domain_error,
            StoreUnavailable: _from_store_error,
            HTTPException: _from_http_error,
            Exception: _from_unexpected,
        }
    )


_PROBLEM_DESCRIPTIONS = {
    400: "Malformed input: a parameter or body field has the wrong type or is out of range (named in `errors`)",
    401: "No API key sent",
    403: "The API key is not accepted",
    404: "No such resource",
    409: "A refresh is already running",
    413: "Request body too large",
    415: "The body is not sent as `application/json`",
    422: "Input that parses but cannot be used (an unknown GPU, region or vendor; named in `errors`)",
    429: "Rate limit reached; retry after `Retry-After` seconds",
    503: "The price store cannot be read and no snapshot is held",
}


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problem responses a route can give."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=_PROBLEM_DESCRIPTIONS[status],
            media_type="application/problem+json",
            generate_examples=False,
        )
        for status in statuses
    }
