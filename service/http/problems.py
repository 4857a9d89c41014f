"""One error shape across the service: RFC 9457 problem details, mapped here and nowhere else.

Every problem about input names what was wrong in ``errors: [{"field": ..., "reason": ..., "in": ...}]``
so a caller (or a chatbot) can point at it: ``field`` is the JSON path in the body
(``workload.gpu_hours``, ``card_counts[1]``) or the parameter's name, ``in`` where it came from (``body``,
``query``, ``path``). Anything unexpected becomes a 500 problem and is logged, never leaked.

Which status an input problem gets:

- **422 Invalid request** — the input was read, and a field in it is wrong: the wrong type
  (``"gpu_hours": "48"``: a string is not a number), out of range, an unknown field, a missing one, or a
  name the service does not know (an unknown GPU, region or vendor). Schema and meaning are one status,
  one ``type`` (``.../invalid-request``), and the reason is a sentence (``service.inputs``), the same the
  MCP tools and the command line say.
- **400** — the body cannot be read as one JSON document: malformed JSON (one ``type``,
  ``.../malformed-json``, whatever the fault; where it is, the byte offset, is in ``detail``), an empty
  body, nesting deeper than any request needs, or a key given twice. An unknown query parameter on
  ``GET /offers`` is also a 400: its contract refuses parameters it does not define.
- **413** the body is larger than ``MAX_BODY_BYTES``; **415** it is not sent as ``application/json``.

Each problem's ``type`` comes from its title, never from its detail, so a client can switch on it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, ClassVar

import msgspec
from litestar import Request, Response
from litestar.exceptions import ClientException, HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException

from schemas.api import Problem
from service.errors import GpuquoteError, StoreUnreachable
from service.inputs import describe
from service.store.base import StoreUnavailable

__all__ = [
    "BodyProblem",
    "BodyTimeout",
    "BodyTooDeep",
    "DuplicateKey",
    "EmptyBody",
    "MalformedJson",
    "NotJson",
    "problem_details_config",
    "problem_responses",
]

logger = logging.getLogger("gpuquote.http")
_TYPE_BASE = "https://gpuquote.dev/problems/"
_INVALID_REQUEST = "Invalid request"
# Titles for Litestar's own HTTP errors, in the service's sentence case; others use the status phrase.
_TITLES = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    413: "Request body too large",
    415: "Unsupported media type",
    429: "Too many requests",
}


class BodyProblem(ClientException):
    """A request body that cannot be read as one JSON document; ``title`` names the way it failed."""

    status_code = 400
    title: ClassVar[str] = "Unreadable body"

    def __init__(self, detail: str, *, field: str = "body") -> None:
        super().__init__(detail=detail)
        self.field = field


class MalformedJson(BodyProblem):
    title = "Malformed JSON"


class EmptyBody(BodyProblem):
    title = "Request body is empty"


class BodyTooDeep(BodyProblem):
    title = "Body nested too deeply"


class DuplicateKey(BodyProblem):
    title = "Duplicate key"


class NotJson(BodyProblem):
    status_code = 415
    title = "Unsupported media type"


class BodyTimeout(BodyProblem):
    """The body did not arrive in time; the connection is closed after the answer (what is left of the
    body would otherwise be read as the next request)."""

    status_code = 408
    title = "Request body timeout"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.headers = {"Connection": "close"}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


class _Problem(ProblemDetailsException):
    """A problem whose input errors learn where their field came from once the request is known: a
    field named as a query or path parameter is ``in`` there, anything else is in the body."""

    def to_response(self, request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
        errors = self.extra.get("errors") if isinstance(self.extra, Mapping) else None
        if self.status_code == 422 and isinstance(errors, list):
            for error in errors:
                if error.get("in") is None:
                    error["in"] = _location(request, str(error.get("field") or ""))
        return super().to_response(request)


def _location(request: Request[Any, Any, Any], field: str) -> str:
    if field in request.query_params:
        return "query"
    if field in request.path_params:
        return "path"
    return "body"


def _problem(
    status: int,
    title: str,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> ProblemDetailsException:
    return _Problem(
        status_code=status,
        title=title,
        detail=detail,
        headers=headers or None,
        type_=_TYPE_BASE + _slug(title),
        extra={"errors": errors} if errors else None,
    )


def _from_domain_error(error: GpuquoteError) -> ProblemDetailsException:
    reason = getattr(error, "reason", error.detail)
    errors = [{"field": error.field, "reason": reason}] if error.field else None
    return _problem(error.status_code, error.title, error.detail, errors)


def _from_store_error(error: StoreUnavailable) -> ProblemDetailsException:
    return _from_domain_error(StoreUnreachable(str(error)))


def _field_errors(error: ValidationException) -> list[dict[str, Any]]:
    """Litestar's parameter errors (``{"key", "message", "source"}``), each told as a sentence."""
    found: list[dict[str, Any]] = []
    for item in error.extra if isinstance(error.extra, list) else []:
        if not isinstance(item, dict):
            continue
        key = str(item.get("key") or "")
        source = item.get("source")
        field, reason = describe(str(item.get("message", "")), top=key or "body")
        if key and field != key:  # the message named a field inside the parameter
            field = f"{key}.{field}" if key != "data" else field
        location = getattr(source, "value", source)  # Litestar's ParamType, a str enum
        found.append({"field": field, "reason": reason, "in": str(location) if location else None})
    return found or [{"field": "body", "reason": describe(error.detail)[1], "in": None}]


def _from_validation_error(error: ValidationException) -> ProblemDetailsException:
    errors = _field_errors(error)
    detail = "; ".join(f"{item['field']}: {item['reason']}" for item in errors)
    # A value the decoder refused (Litestar's msgspec conversion of parameters) is a field error like any
    # other; a ValidationException the service raised itself keeps its own status.
    status = 422 if isinstance(error.__cause__, msgspec.ValidationError) else error.status_code
    return _problem(status, _INVALID_REQUEST if status == 422 else "Bad request", detail, errors)


def _from_http_error(error: HTTPException) -> ProblemDetailsException:
    if isinstance(error, ValidationException):
        return _from_validation_error(error)
    headers = dict(error.headers or {})
    if error.status_code == 429 and "RateLimit-Reset" in headers:
        headers["Retry-After"] = headers["RateLimit-Reset"]
    errors: list[dict[str, Any]] | None = None
    if isinstance(error, BodyProblem):
        title = error.title
        errors = [{"field": error.field, "reason": error.detail, "in": "body"}]
    else:
        title = _TITLES.get(error.status_code) or HTTPStatus(error.status_code).phrase
        if error.status_code in {400, 413, 415}:
            # The body as a whole: too large, or not readable at all; nothing finer to point at.
            errors = [{"field": "body", "reason": error.detail, "in": "body"}]
    return _problem(error.status_code, title, error.detail, errors, headers)


def _from_unexpected(error: Exception) -> ProblemDetailsException:
    logger.error("unhandled error", exc_info=error)
    return _problem(500, "Internal error", "the service failed to answer; the error was logged")


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
    400: "The body is not one readable JSON document (malformed, empty, nested too deeply, a key given "
    "twice), or an unknown query parameter; named in `errors`",
    401: "No API key sent",
    403: "The API key is not accepted, or admin is disabled (no admin key is configured)",
    404: "No such resource",
    409: "A refresh is already running",
    413: "Request body too large",
    415: "The body is not sent as `application/json`",
    422: "A field is wrong: the wrong type (a string is not a number), out of range, unknown or missing, or "
    "a name the service does not know (an unknown GPU, region, city or vendor); `errors` names each "
    "field (`field`, its JSON path or parameter name, and `in`: body, query or path) with the reason",
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
