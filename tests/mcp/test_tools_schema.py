"""``openapi/tools.json``: in sync with the code, self-contained, and accepting exactly what the API does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator

from schemas.quote import QuoteRequest
from service.cli.commands import openapi_document
from service.tools.schema import FIELD_NOTES, tool_schema, tools_document

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "tools.json"


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(openapi_document())
    return loaded


def test_committed_tools_match_the_code(spec: dict[str, Any]) -> None:
    assert COMMITTED.read_text(encoding="utf-8") == tools_document(spec), (
        "openapi/tools.json is out of date: run `gpuquote openapi`"
    )


def test_the_quote_tool_is_described_by_its_route(spec: dict[str, Any]) -> None:
    (tool,) = json.loads(tools_document(spec))
    operation = spec["paths"]["/quote"]["post"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "quote"
    assert tool["function"]["description"].startswith(operation["summary"].rstrip("."))
    assert operation["description"].strip() in tool["function"]["description"]


def _walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_parameters_are_self_contained_and_every_field_is_described() -> None:
    schema = tool_schema(QuoteRequest)
    assert not [node for node in _walk(schema) if isinstance(node, dict) and "$ref" in node]
    assert schema["additionalProperties"] is False
    properties = {**schema["properties"], **schema["properties"]["workload"]["properties"]}
    undescribed = [name for name, value in properties.items() if not value.get("description")]
    assert undescribed == []


@pytest.mark.parametrize("struct_type", list(FIELD_NOTES))
def test_every_field_note_names_a_real_field(struct_type: type[msgspec.Struct]) -> None:
    schema = msgspec.json.schema(struct_type)
    definitions = schema["$defs"]
    for dotted in FIELD_NOTES[struct_type]:
        node = definitions[struct_type.__name__]
        for name in dotted.split("."):
            node = node["properties"][name]
            if "$ref" in node:
                node = definitions[node["$ref"].removeprefix("#/$defs/")]


@pytest.mark.parametrize(
    "arguments",
    [
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "card_counts": [1, 4]},
        {"workload": {"gpu_hours": 48, "reference_gpu": None}, "budget_cny": None},
        {"workload": {"gpu_hours": 10}, "scaling": {"4": [2.8, 3.2]}, "rank_by": "value"},
        {"workload": {"gpu_hours": 10}, "scaling": "nvlink", "lang": "zh", "pricing": ["term"]},
        {"workload": {"gpu_hours": 0}},
        {"workload": {"gpu_hours": 48, "model_params_b": -7}},
        {"workload": {"gpu_hours": 48}, "card_counts": []},
        {"workload": {"gpu_hours": 48}, "card_counts": [0]},
        {"workload": {"gpu_hours": 48}, "rank_by": "speed"},
        {"workload": {"gpu_hours": 48}, "scaling": {"four": [2, 3]}},
        {"workload": {"gpu_hours": 48}, "colour": "blue"},
        {"workload": {"gpu_hours": 48, "colour": "blue"}},
        {"gpu_hours": 48},
    ],
)
def test_the_schema_accepts_exactly_what_the_api_decodes(arguments: dict[str, Any]) -> None:
    try:
        msgspec.convert(arguments, QuoteRequest)
        decodes = True
    except msgspec.ValidationError:
        decodes = False
    assert Draft202012Validator(tool_schema(QuoteRequest)).is_valid(arguments) is decodes


def test_every_operation_reads_as_a_tool_definition(spec: dict[str, Any]) -> None:
    """A tool definition is operationId + summary + description: each must be there and say something."""
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert re.fullmatch(r"[a-z][a-z0-9_]*", operation["operationId"]), where
            assert 3 <= len(operation["summary"]) <= 80, where
            assert len(operation.get("description", "").split()) >= 5, where
