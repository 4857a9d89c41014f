"""``POST /quote``: the main endpoint. Thin: decode the body, take the current snapshot, run the engine.

The engine is pure and runs in about a millisecond, so it runs on the event loop: handing it to a thread
would cost more than it saves. The only I/O is the snapshot check (one ``GET`` of the store's version).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from litestar import Controller, Request, post
from litestar.params import JSONBody

from schemas.quote import QuoteRequest, QuoteResponse
from service.errors import InvalidRequest
from service.http.problems import (
    BodyTooDeep,
    DuplicateKey,
    EmptyBody,
    MalformedJson,
    NotJson,
    problem_responses,
)
from service.inputs import decode_json_input
from service.services import Services

__all__ = ["QuoteController"]

_DESCRIPTION = """\
Every feasible way to run a job, ranked by total cost, time or value, with honest ranges.

Give the job's wall-clock hours on ONE card (`workload.gpu_hours`, on `workload.reference_gpu` when set, so
hours convert to other GPU models by each model's relative speed range from `GET /gpus`, or by your measured
`workload.speed_ratios`). Each quote is one offer at one card count, with
speed-up, hours and cost as `{low, expected, high}` (multi-card scaling is a range), billed the way the
vendor bills (card-hour, whole nodes, bundles, prepaid periods), line items that add up to the expected
cost, and warnings (idle cards, converted hours, stale prices, limits at risk). Give `model_params_b` (or a
named `model` from `GET /models`), `task` and `precision` to drop configurations whose memory cannot hold
the model. `summary` is one paragraph, in `lang`,
that a chatbot can repeat. `recommended` is the top of the `rank_by` ranking: the cheapest for `cost`, the
fastest for `time`, the best cost plus hours × `time_value_cny_per_hour` for `value`. Nothing fits: 200
with `quotes: []` and the `excluded` counts by reason.
"""


_DOCUMENT_DECODER = msgspec.json.Decoder()


class _DuplicateKeyFound(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Pairs(list[tuple[str, Any]]):
    """A JSON object kept as its key/value pairs, duplicates included (only to find where one is)."""


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKeyFound(key)
        found[key] = value
    return found


def _duplicate_path(node: Any, path: str = "") -> str | None:
    """The dotted path of the first duplicated key in a tree of ``_Pairs`` and lists."""
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            here = f"{path}.{key}" if path else key
            if key in seen:
                return here
            seen.add(key)
            if (inner := _duplicate_path(value, here)) is not None:
                return inner
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if (inner := _duplicate_path(value, f"{path}[{index}]")) is not None:
                return inner
    return None


def _check_duplicate_keys(body: bytes) -> None:
    """msgspec keeps the last of two equal keys; a body that says two things about one field is refused.

    The body already parsed (and its depth is bounded by then), so the standard parser only has to look
    for repeats; the path is worked out on a second pass only when there is one.
    """
    try:
        json.loads(body, object_pairs_hook=_refuse_duplicates)
    except RecursionError:
        raise BodyTooDeep("the JSON body is nested too deeply") from None
    except _DuplicateKeyFound as duplicate:
        try:
            path = _duplicate_path(json.loads(body, object_pairs_hook=_Pairs)) or duplicate.key
        except RecursionError:
            path = duplicate.key
        raise DuplicateKey(f"duplicate key `{duplicate.key}`", field=path) from None


def _check_document(body: bytes) -> None:
    """The body is one JSON document of bounded depth without repeated keys, or a 400 saying why."""
    try:
        _DOCUMENT_DECODER.decode(body)
    except msgspec.ValidationError:
        pass  # well-formed, with a number too large for a float: the typed decode names its field
    except msgspec.DecodeError as error:
        # msgspec says where ("... (byte 27)"): that goes in the detail, the problem type stays one.
        raise MalformedJson(f"the body is not valid JSON: {error}") from None
    except RecursionError:
        raise BodyTooDeep("the JSON body is nested too deeply") from None
    _check_duplicate_keys(body)


def _is_json(content_type: str) -> bool:
    media_type = content_type.lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class _QuoteBodyRequest(Request[Any, Any, Any]):
    """The quote body's edge, decoded here rather than by Litestar (whose conversion is lax: it would
    take ``"48"`` for 48): JSON only (415 otherwise), not empty, one readable document of bounded depth
    without repeated keys (400 otherwise), then strictly as ``QuoteRequest`` by ``service.inputs``, the
    decoder the MCP tools and the command line use (a refused field is a 422 naming it).

    A body that is unreadable as a document is reported as such even when a field before the fault is
    also wrong: the typed decode stops at the first wrong field, so on failure the document is checked
    first. The decoded ``QuoteRequest`` passes through Litestar's own conversion unchanged.
    """

    async def body(self) -> bytes:
        # Litestar skips decoding an empty body (and would then report the handler's ``data`` missing).
        body = await super().body()
        if not body.strip():
            raise EmptyBody("request body is empty; send the quote request as a JSON object")
        return body

    async def json(self) -> Any:
        media_type = self.content_type[0]
        if not media_type:
            raise NotJson("send the body as application/json; the request has no Content-Type")
        if not _is_json(media_type):
            raise NotJson(f"send the body as application/json, not {media_type}")
        body = await self.body()
        try:
            request = decode_json_input(body, QuoteRequest)
        except (InvalidRequest, msgspec.DecodeError, RecursionError):
            _check_document(body)
            raise
        _check_duplicate_keys(body)
        return request


class QuoteController(Controller):
    tags = ["quote"]  # noqa: RUF012 - litestar reads a plain list

    @post(
        "/quote",
        operation_id="quote",
        status_code=200,
        request_class=_QuoteBodyRequest,
        responses=problem_responses(400, 413, 415, 422, 429, 503),
        summary="Rank every way to run a GPU job by total cost and time",
        description=_DESCRIPTION,
    )
    async def quote(self, services: Services, data: JSONBody[QuoteRequest]) -> QuoteResponse:
        return await services.quote(data)
