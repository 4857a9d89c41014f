"""``POST /quote``: the main endpoint. Thin: decode the body, take the current snapshot, run the engine.

The engine is pure and runs in about a millisecond, so it runs on the event loop: handing it to a thread
would cost more than it saves. The only I/O is the snapshot check (one ``GET`` of the store's version).
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.params import JSONBody

from schemas.quote import QuoteRequest, QuoteResponse
from service.documents import UnreadableDocument
from service.http.problems import (
    BodyProblem,
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


def _body_problem(problem: UnreadableDocument) -> BodyProblem:
    """The 400 a document fault is at this edge (the same kinds for every body, worded for a body)."""
    match problem.kind:
        case "malformed":
            return MalformedJson(f"the body is not valid JSON: {problem.reason}")
        case "too_deep":
            return BodyTooDeep("the JSON body is nested too deeply")
        case "duplicate_key":
            return DuplicateKey(problem.reason, field=problem.field or "body")


def _is_json(content_type: str) -> bool:
    media_type = content_type.lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class _QuoteBodyRequest(Request[Any, Any, Any]):
    """The quote body's edge, decoded here rather than by Litestar (whose conversion is lax: it would
    take ``"48"`` for 48): JSON only (415 otherwise), not empty, then read once by ``service.inputs``
    (the decoder the MCP tools and the command line use): one readable document of bounded depth without
    repeated keys (400 otherwise, before any field's fault), strictly a ``QuoteRequest`` (a refused field
    is a 422 naming it). The decoded ``QuoteRequest`` passes through Litestar's own conversion unchanged,
    and the bytes, already read, are the quote cache's key.
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
        try:
            return decode_json_input(await self.body(), QuoteRequest)
        except UnreadableDocument as problem:
            raise _body_problem(problem) from None


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
    async def quote(
        self, services: Services, request: Request[Any, Any, Any], data: JSONBody[QuoteRequest]
    ) -> QuoteResponse:
        return await services.quote(data, body=await request.body())
