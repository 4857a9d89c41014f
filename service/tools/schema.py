"""Tool definitions for language models, generated from the request Structs and the OpenAPI document.

A tool's name and description come from its HTTP route's OpenAPI operation (summary + description), so
the chatbot reads what the API reference says; its parameters come from ``msgspec.json.schema`` of the
Struct the route decodes, so they accept exactly what the API accepts. ``openapi/tools.json`` holds the
function-calling definition of ``quote`` (``gpuquote openapi`` writes it; a test fails when it drifts),
and ``gpuquote mcp`` lists the same definitions.

The schema is rewritten for tool use: ``$ref`` inlined (several tool runtimes do not resolve them),
``X | None`` as ``{"type": [X, "null"]}``, reST literals as Markdown, and a description added to
each field that has none (``FIELD_NOTES``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from adapters import DEFAULT_GPU_CATALOG
from schemas.api import OfferSort
from schemas.offer import PricingKind
from schemas.quote import FilterList, FilterName, QuoteRequest
from service.services.offers import OFFER_PAGE_DEFAULT, OFFER_PAGE_MAX

__all__ = [
    "FIELD_NOTES",
    "ListOffersArgs",
    "VendorStatusArgs",
    "operation_description",
    "quote_tool",
    "tool_schema",
    "tools_document",
]

JsonSchema = dict[str, Any]

_GPU_IDS = ", ".join(sorted(DEFAULT_GPU_CATALOG.models))


NameFilter = FilterName | FilterList
PricingFilter = PricingKind | Annotated[list[PricingKind], msgspec.Meta(max_length=4)]


class ListOffersArgs(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Which offers to list, by ``GET /offers``'s parameter names. A name filter takes one value or an
    any-of list; leave a filter out for no filter."""

    gpu: NameFilter | None = None
    region: NameFilter | None = None
    city: NameFilter | None = None
    vendor: NameFilter | None = None
    pricing: PricingFilter | None = None
    spot: bool | None = None
    min_cny_per_card_hour: Annotated[float, msgspec.Meta(ge=0)] | None = None
    max_cny_per_card_hour: Annotated[float, msgspec.Meta(gt=0)] | None = None
    min_gpu_memory_gb: Annotated[int, msgspec.Meta(ge=1)] | None = None
    min_cards: Annotated[int, msgspec.Meta(ge=1)] | None = None
    min_available_cards: Annotated[int, msgspec.Meta(ge=0)] | None = None
    sort: OfferSort | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=OFFER_PAGE_MAX)] = OFFER_PAGE_DEFAULT
    offset: Annotated[int, msgspec.Meta(ge=0)] = 0
    # The names this tool took before it followed GET /offers; still accepted, merged with the above.
    gpus: FilterList | None = None
    regions: FilterList | None = None
    cities: FilterList | None = None
    vendors: FilterList | None = None


class VendorStatusArgs(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """Whose freshness to report, by ``GET /vendors``'s parameter name; every vendor when left out."""

    vendor: NameFilter | None = None
    vendors: FilterList | None = None  # the earlier name; still accepted, merged with ``vendor``


_QUOTE_NOTES = {
    "workload.gpu_hours": "Wall-clock hours the job takes on ONE card of `reference_gpu`, e.g. 48 (all of "
    "it, for kind independent). Or give `tokens` instead, with a model and task.",
    "workload.kind": "batch (default): one job of `gpu_hours` (or `tokens`) of work, shortened by more "
    "cards; independent: the same work as runs that never talk to each other (a sweep, batch image "
    "generation), `runs` of `cards_per_run` cards in whole rounds, no scaling loss; serving: a model held "
    "for `hours` of wall-clock time by `replicas` (or enough for `target_tokens_per_s`), never shortened.",
    "workload.hours": "For kind serving: wall-clock hours the model stays up, e.g. 720 for a month.",
    "workload.replicas": "For kind serving: copies of the model served side by side (default 1); or give "
    "`target_tokens_per_s` and the service works out the replicas per GPU model.",
    "workload.tokens": "Training tokens (or, for task inference, tokens generated) instead of `gpu_hours`: "
    "with a model (or `model_params_b`) and a task they give the job's FLOPs (6 N D full fine-tune or "
    "pre-train, 4 N D LoRA/QLoRA, 2 N per token inference; N active parameters), and its hours on each GPU "
    "model from that model's peak BF16 rate and the MFU range.",
    "workload.mfu": "Your measured model FLOPs utilization, 0.01–1 (e.g. 0.4), replacing the default range "
    "0.2–0.5 (0.35 expected) that sizes a `tokens` job.",
    "workload.runs": "For kind independent: how many equal runs (e.g. 200 for a sweep); left out, the work "
    "divides freely across cards (a batch of many images).",
    "workload.cards_per_run": "For kind independent: cards each run takes; left out, the fewest that hold "
    "the model (1 without a model).",
    "workload.target_tokens_per_s": "For kind serving: tokens per second to serve in all; the replicas each "
    "offer needs follow from what one replica of its GPU serves (memory bandwidth, compute), instead of "
    "`replicas`.",
    "workload.concurrent_requests": "For kind serving with a target: requests each replica serves at once "
    "(default 8, where batching still costs little latency).",
    "workload.replica_tokens_per_s": "For kind serving with a target: your measured tokens per second of "
    "one replica, replacing the estimate.",
    "workload.growth_factor": "How much the work may grow (2: it doubles): each quote says whether its "
    "offer can carry the grown job (cards, nodes, stock) and what it would cost.",
    "workload.communication": "How much the job communicates between cards: light, moderate, heavy "
    "(tensor/pipeline parallel, large dense gradients). Left out: moderate, or heavy on the cards a model "
    "has to be split across because one does not hold it. With each offer's interconnect it sets the "
    "speed-up; a heavy job across Ethernet nodes can be slower than one machine.",
    "workload.cross_node_factor": "Efficiency kept per doubling of nodes past one machine (0–1], measured "
    "on your cluster; replaces the factor derived from the offer's fabric and `communication`.",
    "workload.data_city": "City where the job's data lives, any city (e.g. shanghai or 上海, also one "
    "with no offers); offers elsewhere add the copy time of `dataset_gb` and warn of IO waits.",
    "workload.dataset_gb": "Size of the job's data in GB (needs `data_city`): copy time for offers in "
    "another city, and storage/traffic fees where the vendor lists them.",
    "workload.reference_gpu": "The GPU `gpu_hours` was measured on, e.g. rtx4090; hours convert to other "
    "models by each model's relative speed range (measured throughput to peak compute, GET /gpus), which "
    f"widens the hours and cost ranges. Ids: {_GPU_IDS}.",
    "workload.speed_ratios": 'Measured speeds relative to `reference_gpu`, e.g. {"h800": 3.2}; each '
    "replaces the catalog's range for that model.",
    "workload.model_params_b": "Model size in billions of parameters; with `task`, offers whose cards "
    "cannot hold the model are left out.",
    "workload.task": "What the job does; with `model_params_b` or `model`, sets the memory needed per "
    "parameter.",
    "workload.model": "A named open model instead of `model_params_b`, e.g. qwen2.5-72b or "
    "Qwen/Qwen2.5-72B-Instruct (GET /models lists them); mixture-of-experts models are sized on total "
    "parameters.",
    "workload.precision": "Bytes per weight for inference and the LoRA/QLoRA base: bf16 (default; QLoRA "
    "keeps its 4-bit base), fp8, int8, int4. Full fine-tune and pre-train are not changed.",
    "workload.checkpoint_interval_h": "Hours between the job's checkpoints (default 1): each interruption "
    "(a card failing, spot capacity taken back) loses half of it plus the restart.",
    "workload.checkpoint_minutes": "Minutes one checkpoint takes to write; with it each quote suggests the "
    "checkpoint interval that loses least (Young/Daly).",
    "workload.restart_minutes": "Minutes from an interruption to running again (default 15): getting the "
    "cards back and reloading the checkpoint, or the model for a serving replica.",
    "gpus": f"Only these GPU models (ids or vendor spellings). Ids: {_GPU_IDS}.",
    "regions": "Only these regions, e.g. jiangsu, shenzhen.",
    "cities": "Only these cities, e.g. suzhou, nanjing, shenzhen (also in Chinese: 苏州).",
    "vendors": "Only these vendor ids (the `vendor_status` tool lists them).",
    "pricing": "Only these billing models: per card-hour, per node-hour, multi-card bundle, prepaid term.",
    "min_gpu_memory_gb": "Only GPUs with at least this much memory per card, in GB.",
    "card_counts": "Card counts to price every offer at; left out, every count each offer sells (within a "
    "machine, whole nodes of a cluster, up to the service's cap) and, with a deadline, the fewest cards "
    "that meet it.",
    "deadline_hours": "Leave out options that take longer than this many wall-clock hours (judged as "
    "`deadline_confidence` says).",
    "budget_cny": "Leave out options that cost more than this many yuan (CNY) (judged as `budget_confidence` "
    "says).",
    "deadline_confidence": "expected (default): an option meets the deadline when its expected hours do; "
    "high: only when its high end does (low speed and bad-luck interruptions). With expected, `safe` and "
    "the summary name the best option whose high end meets it when the recommendation's does not.",
    "budget_confidence": "expected (default) or high: the same as `deadline_confidence`, for the budget "
    "and `cost_cny`.",
    "allow_spot": "Quote spot / interruptible offers (cheaper; the vendor can take them back). Left out: "
    "yes for a batch job, whose interruptions are priced into its quotes, no for serving; true or false "
    "decides for either.",
    "rank_by": "cost: cheapest first; time: fastest first; value: cost plus hours × "
    "`time_value_cny_per_hour`.",
    "time_value_cny_per_hour": "What an hour of waiting costs the caller, in CNY; used by rank_by=value.",
    "scaling": 'Multi-card speed-up: measured points such as {"4": [2.8, 3.2], "8": [4.5, 5.5]} (card '
    "count → [low, high] speed-up over one card), or a named curve: default, nvlink, comm_heavy.",
    "limit": "How many quotes to return; the cheapest, fastest and recommended always come back.",
    "lang": "Language of the summary: en (English) or zh (Chinese).",
}


# Descriptions for fields the Structs leave undescribed; a Struct's own `Meta(description=...)` wins.
FIELD_NOTES: Mapping[type[msgspec.Struct], Mapping[str, str]] = {
    QuoteRequest: _QUOTE_NOTES,
    ListOffersArgs: {
        "gpu": f"Only these GPU models (ids or vendor spellings; one or a list). Ids: {_GPU_IDS}.",
        "region": "Only these regions, e.g. jiangsu, shenzhen (one or a list).",
        "city": "Only offers in these cities, e.g. suzhou, nanjing (also in Chinese: 南京; one or a list). "
        "An offer is in the city of the data-centre zone its stock is in.",
        "vendor": "Only these vendor ids (the `vendor_status` tool lists them; one or a list).",
        "pricing": "Only these billing models (one or a list).",
        "spot": "true: only spot (preemptible) offers; false: leave them out.",
        "min_cny_per_card_hour": "Only offers whose `cny_per_card_hour` (CNY per card-hour across pricing "
        "models) is at least this.",
        "max_cny_per_card_hour": "Only offers whose `cny_per_card_hour` is at most this, in CNY.",
        "min_gpu_memory_gb": "Only GPUs with at least this much memory per card, in GB.",
        "min_cards": "Only offers one rental of which holds at least this many cards (`max_cards`).",
        "min_available_cards": "Only offers with at least this many cards in stock; offers that publish no "
        "stock are left out.",
        "sort": "Order: price, memory, cards or stock ascending; -price, -memory, -cards, -stock descending.",
        "limit": "Page size.",
        "offset": "Offers to skip, for the next page.",
        "gpus": "Earlier name of `gpu` (a list); still accepted.",
        "regions": "Earlier name of `region` (a list); still accepted.",
        "cities": "Earlier name of `city` (a list); still accepted.",
        "vendors": "Earlier name of `vendor` (a list); still accepted.",
    },
    VendorStatusArgs: {
        "vendor": "Only these vendor ids (one or a list).",
        "vendors": "Earlier name of `vendor` (a list); still accepted.",
    },
}


def _inline(node: Any, definitions: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str):
        name = reference.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"recursive schema through {name}: cannot inline")
        target = {**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(target, definitions, seen | {name})
    return {key: _inline(value, definitions, seen) for key, value in node.items()}


def _nullable(node: JsonSchema) -> JsonSchema:
    """``{"anyOf": [{"type": "number", ...}, {"type": "null"}]}`` → ``{"type": ["number", "null"], ...}``.

    The same values pass (an explicit ``null`` still decodes as "not given"), in the flat form tool
    runtimes read best; a ``null`` default says nothing, so it goes.
    """
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or branches[1] != {"type": "null"}:
        return node
    value = branches[0]
    if not isinstance(value.get("type"), str):
        return node
    rest = {
        key: item for key, item in node.items() if key != "anyOf" and not (key == "default" and item is None)
    }
    merged = {**value, **rest, "type": [value["type"], "null"]}
    if "enum" in value:
        merged["enum"] = [*value["enum"], None]
    return merged


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _tidy(value) for key, value in node.items() if key != "title"}
    if isinstance(node.get("description"), str):
        node["description"] = node["description"].replace("``", "`")
    if node.get("required") == []:
        del node["required"]
    # Some tool runtimes want a type on every enum; msgspec leaves it out for Literal strings.
    if "enum" in node and "type" not in node and all(isinstance(v, str) for v in node["enum"]):
        node = {"type": "string", **node}
    return _nullable(node)


def _property(schema: JsonSchema, dotted: str) -> JsonSchema:
    node = schema
    for name in dotted.split("."):
        node = node["properties"][name]
    return node


def tool_schema(struct_type: type[msgspec.Struct]) -> JsonSchema:
    """The Struct's JSON Schema, rewritten for tool use (see the module docstring)."""
    raw = msgspec.json.schema(struct_type)
    schema: JsonSchema = _tidy(_inline(raw, raw.get("$defs", {})))
    schema.pop("$defs", None)
    for dotted, note in FIELD_NOTES.get(struct_type, {}).items():
        _property(schema, dotted).setdefault("description", note)
    return schema


def operation_description(spec: Mapping[str, Any], operation_id: str) -> str:
    """``summary. description`` of the OpenAPI operation with this id."""
    for operations in spec["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                summary = str(operation.get("summary", "")).rstrip(".")
                return f"{summary}. {operation.get('description', '')}".strip()
    raise KeyError(f"no operation {operation_id!r} in the OpenAPI document")


def quote_tool(spec: Mapping[str, Any]) -> JsonSchema:
    """The function-calling definition of ``quote`` (the ``tools=[...]`` entry of a chat completion)."""
    return {
        "type": "function",
        "function": {
            "name": "quote",
            "description": operation_description(spec, "quote"),
            "parameters": tool_schema(QuoteRequest),
        },
    }


def tools_document(spec: Mapping[str, Any]) -> str:
    """What ``openapi/tools.json`` must hold, as stable, sorted JSON."""
    return json.dumps([quote_tool(spec)], indent=2, sort_keys=True, ensure_ascii=False) + "\n"
