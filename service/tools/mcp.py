"""``gpuquote mcp``: a Model Context Protocol server on stdio for chatbots and agents.

Tools: ``quote`` (``POST /quote``), ``list_offers`` (``GET /offers``) and ``vendor_status``
(``GET /vendors``). They run the same functions over the same store as the HTTP routes, configured by the
same ``GPUQUOTE_*`` environment (``GPUQUOTE_REDIS_URL`` shares the service's prices; unset, the bundled
reference catalog is loaded). Descriptions come from the routes' OpenAPI operations and input schemas from
the Structs the routes decode (``service.tools.schema``).

Arguments are decoded exactly as the HTTP body is (``service.inputs``: strictly, so ``"48"`` is not a
number). A mistake the caller can fix (a field of the wrong type or out of range, an unknown GPU) is a tool
result with ``isError`` reading ``<field>: <reason>``, the field's JSON path and the same sentence
``POST /quote`` puts in its problem's ``errors``, so the model can correct its call; an unknown tool name
is a protocol error. stdout carries the protocol: logs go to stderr.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from schemas.api import OfferPage, VendorList
from schemas.quote import QuoteRequest, QuoteResponse
from service import VERSION
from service.errors import GpuquoteError
from service.inputs import convert_input
from service.names import FieldNames, NameQuery, resolve_names
from service.services import AppServices, build_services
from service.services.freshness import vendor_freshness
from service.services.offers import OfferFilter, known_names, list_offers
from service.settings import Settings
from service.store.base import StoreUnavailable
from service.tools._initialize_first import InitializeFirst
from service.tools._stdio import draining_streams
from service.tools.schema import ListOffersArgs, VendorStatusArgs, operation_description, tool_schema

__all__ = ["TOOLS", "build_server", "run_stdio"]

_INSTRUCTIONS = (
    "GPU-rental prices from vendors in Shenzhen and Jiangsu (CNY). Call `quote` with the job's GPU-hours "
    "to get ranked total-cost options and a one-paragraph `summary` to repeat to the user; `list_offers` "
    "and `vendor_status` show the raw prices and how fresh they are."
)


async def _quote(services: AppServices, request: QuoteRequest) -> QuoteResponse:
    return await services.quote(request)


def _names(value: str | Sequence[str] | None, earlier: Sequence[str] | None) -> list[str]:
    """One value or a list, and the same filter under its earlier plural name, as one any-of list."""
    given = [value] if isinstance(value, str) else list(value or ())
    return given + list(earlier or ())


def _field(name: str, earlier: str, value: object, earlier_value: object) -> str:
    """The argument an error names: the one the caller used (``gpu`` when both)."""
    return earlier if earlier_value and not value else name


async def _list_offers(services: AppServices, args: ListOffersArgs) -> OfferPage:
    snapshot = await services.snapshots.current()
    query = OfferFilter(
        gpus=_names(args.gpu, args.gpus),
        regions=_names(args.region, args.regions),
        cities=_names(args.city, args.cities),
        vendors=_names(args.vendor, args.vendors),
        pricing=[args.pricing] if isinstance(args.pricing, str) else list(args.pricing or ()),
        spot=args.spot,
        min_cny_per_card_hour=args.min_cny_per_card_hour,
        max_cny_per_card_hour=args.max_cny_per_card_hour,
        min_gpu_memory_gb=args.min_gpu_memory_gb,
        min_cards=args.min_cards,
        min_available_cards=args.min_available_cards,
        sort=args.sort,
    )
    # The tool's arguments are GET /offers's parameters, so errors name them alike.
    fields = FieldNames(
        gpus=_field("gpu", "gpus", args.gpu, args.gpus),
        regions=_field("region", "regions", args.region, args.regions),
        cities=_field("city", "cities", args.city, args.cities),
        vendors=_field("vendor", "vendors", args.vendor, args.vendors),
    )
    return list_offers(
        snapshot,
        query,
        catalog=services.catalog,
        vendors=services.vendors,
        fields=fields,
        limit=args.limit,
        offset=args.offset,
        now=datetime.now(UTC),
        max_age_s=services.settings.price_max_age_s,
    )


async def _vendor_status(services: AppServices, args: VendorStatusArgs) -> VendorList:
    snapshot = await services.snapshots.current()
    field = _field("vendor", "vendors", args.vendor, args.vendors)
    wanted = resolve_names(
        NameQuery(vendors=_names(args.vendor, args.vendors)),
        known=known_names(snapshot, services.vendors),
        catalog=services.catalog,
        fields=FieldNames(gpus="gpu", regions="region", cities="city", vendors=field),
    ).vendors
    return vendor_freshness(
        snapshot,
        services.vendors,
        now=datetime.now(UTC),
        max_age_s=services.settings.price_max_age_s,
        only=wanted,
    )


@dataclass(frozen=True, slots=True)
class _Tool:
    operation_id: str  # the HTTP route the tool mirrors: its OpenAPI text describes the tool
    args_type: type[msgspec.Struct]
    result_type: type[msgspec.Struct]
    run: Callable[[AppServices, Any], Awaitable[msgspec.Struct]]
    note: str = ""  # where the tool's arguments differ from the route's parameters


TOOLS: Mapping[str, _Tool] = {
    "quote": _Tool("quote", QuoteRequest, QuoteResponse, _quote),
    "list_offers": _Tool(
        "list_offers",
        ListOffersArgs,
        OfferPage,
        _list_offers,
        note="The arguments are `GET /offers`'s query parameters by the same names; where the route takes a "
        "parameter repeated (`city=suzhou&city=nanjing`), the tool takes one value or a list "
        '(`"city": ["suzhou", "nanjing"]`). The earlier plural names (`gpus`, `regions`, `cities`, '
        "`vendors`) are still accepted.",
    ),
    "vendor_status": _Tool("list_vendors", VendorStatusArgs, VendorList, _vendor_status),
}


def tool_definitions(spec: Mapping[str, Any]) -> list[types.Tool]:
    return [
        types.Tool(
            name=name,
            description=" ".join(filter(None, (operation_description(spec, tool.operation_id), tool.note))),
            input_schema=tool_schema(tool.args_type),
            output_schema=tool_schema(tool.result_type),
            annotations=types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
        )
        for name, tool in TOOLS.items()
    ]


def _failure(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _success(result: msgspec.Struct) -> types.CallToolResult:
    payload = msgspec.to_builtins(result)
    content: list[types.ContentBlock] = [types.TextContent(text=json.dumps(payload, ensure_ascii=False))]
    if isinstance(result, QuoteResponse):
        # The paragraph first: it is what a model should repeat; the JSON backs it up.
        content.insert(0, types.TextContent(text=result.summary))
    return types.CallToolResult(content=content, structured_content=payload)


async def call_tool(
    services: AppServices, name: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    tool = TOOLS.get(name)
    if tool is None:
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}; tools: {', '.join(TOOLS)}")
    try:
        args = convert_input(dict(arguments or {}), tool.args_type)
        return _success(await tool.run(services, args))
    except GpuquoteError as error:
        reason = getattr(error, "reason", None)
        return _failure(f"{error.field}: {reason}" if error.field and reason else error.detail)
    except StoreUnavailable as error:
        return _failure(f"the price store is unreachable: {error}")


def build_server(settings: Settings, spec: Mapping[str, Any]) -> Server[AppServices]:
    """The MCP server; ``spec`` is the OpenAPI document whose operations describe the tools."""
    tools = tool_definitions(spec)

    @asynccontextmanager
    async def lifespan(_: Server[AppServices]) -> AsyncIterator[AppServices]:
        async with build_services(settings).running() as services:
            yield services

    async def on_list_tools(
        ctx: ServerRequestContext[AppServices], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[AppServices], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(ctx.lifespan_context, params.name, params.arguments)

    server = Server(
        "gpuquote",
        version=VERSION,
        instructions=_INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.append(InitializeFirst())
    return server


async def run_stdio(settings: Settings, spec: Mapping[str, Any]) -> None:
    server = build_server(settings, spec)
    async with stdio_server() as (read_stream, write_stream):
        reader, writer = draining_streams(read_stream, write_stream)
        await server.run(reader, writer, server.create_initialization_options())
