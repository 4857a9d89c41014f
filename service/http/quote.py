"""``POST /quote``: the main endpoint. Thin: decode the body, take the current snapshot, run the engine.

The engine is pure and runs in about a millisecond, so it runs on the event loop: handing it to a thread
would cost more than it saves. The only I/O is the snapshot check (one ``GET`` of the store's version).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, post
from litestar.exceptions import SerializationException, ValidationException
from litestar.params import JSONBody

from schemas.quote import QuoteRequest, QuoteResponse
from service.http.problems import problem_responses
from service.services import Services

__all__ = ["QuoteController"]

_DESCRIPTION = """\
Every feasible way to run a job, ranked by total cost, time or value, with honest ranges.

Give the job's wall-clock hours on ONE card (`workload.gpu_hours`, on `workload.reference_gpu` when set, so
hours convert to other GPU models by performance index). Each quote is one offer at one card count, with
speed-up, hours and cost as `{low, expected, high}` (multi-card scaling is a range), billed the way the
vendor bills (card-hour, whole nodes, bundles, prepaid periods), line items that add up to the expected
cost, and warnings (idle cards, converted hours, stale prices, limits at risk). Give `model_params_b` and
`task` to drop configurations whose memory cannot hold the model. `summary` is one paragraph, in `lang`,
that a chatbot can repeat. Nothing fits: 200 with `quotes: []` and the `excluded` counts by reason.
"""


_REQUEST_DECODER = msgspec.json.Decoder(QuoteRequest)


class _QuoteBodyRequest(Request[Any, Any, Any]):
    """Names the field when the body holds a number too large for a float.

    Litestar decodes the body untyped first, and msgspec then reports ``1e400`` "at `$[...][...]`";
    decoding it again typed (only on that failure) says "at `$.workload.gpu_hours`".
    """

    async def json(self) -> Any:
        try:
            return await super().json()
        except SerializationException:
            try:
                _REQUEST_DECODER.decode(await self.body())
            except msgspec.ValidationError as error:
                raise ValidationException(detail=str(error)) from None
            except msgspec.DecodeError:
                pass  # malformed JSON: the original error says where
            raise


class QuoteController(Controller):
    tags = ["quote"]  # noqa: RUF012 - litestar reads a plain list

    @post(
        "/quote",
        operation_id="quote",
        status_code=200,
        request_class=_QuoteBodyRequest,
        responses=problem_responses(400, 413, 422, 429, 503),
        summary="Rank every way to run a GPU job by total cost and time",
        description=_DESCRIPTION,
    )
    async def quote(self, services: Services, data: JSONBody[QuoteRequest]) -> QuoteResponse:
        return await services.quote(data)
