"""A request sent before ``initialize`` is refused with an error that says to initialize first.

The SDK refuses it with ``-32602 Invalid request parameters`` and nothing else, which sends a client
looking for a fault in its parameters. The session is what is wrong, so the answer is ``-32600`` (the
request is not valid now) naming the step that is missing.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

__all__ = ["InitializeFirst"]

# What the SDK raises at its gate for a request before ``initialize`` (and only there: a bad argument
# reaches the caller as pydantic's ValidationError, a handler's own refusals say more).
_GATE_MESSAGE = "Invalid request parameters"
_EXEMPT = frozenset({"initialize", "ping"})


class InitializeFirst:
    """Server middleware: the SDK's refusal before ``initialize``, reworded to say so."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as error:
            refused_at_gate = (
                error.error.code == types.INVALID_PARAMS
                and error.error.message == _GATE_MESSAGE
                and ctx.request_id is not None
                and ctx.method not in _EXEMPT
                and ctx.session.client_params is None
            )
            if not refused_at_gate:
                raise
            message = (
                f"Not initialized: send `initialize` (then the `notifications/initialized` notification) "
                f"before `{ctx.method}`"
            )
            raise MCPError(types.INVALID_REQUEST, message) from None
