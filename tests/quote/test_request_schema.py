"""Bad input fails at decode (``service.inputs``, strict, as every surface decodes), naming the field by its
JSON path with a sentence; good input gets the documented defaults."""

from __future__ import annotations

import json
import math

import msgspec
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.inputs import convert_input, decode_json_input

_decoder = msgspec.json.Decoder(QuoteRequest)


def _decode(body: dict[str, object]) -> QuoteRequest:
    return _decoder.decode(json.dumps(body).encode())


def test_defaults() -> None:
    request = _decode({"workload": {"gpu_hours": 48}})
    assert request.card_counts is None  # every count each offer sells
    assert (request.rank_by, request.limit, request.lang) == ("cost", 10, "en")


def test_scaling_accepts_points_or_a_profile() -> None:
    assert _decode({"workload": {"gpu_hours": 1}, "scaling": {"4": [2.8, 3.2]}}).scaling == {"4": (2.8, 3.2)}
    assert _decode({"workload": {"gpu_hours": 1}, "scaling": "nvlink"}).scaling == "nvlink"


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"workload": {"gpu_hours": 0}}, "workload.gpu_hours", "must be a number ≥ 0.001"),
        ({"workload": {"gpu_hours": -3}}, "workload.gpu_hours", "must be a number ≥ 0.001"),
        ({"workload": {"gpu_hours": 1e300}}, "workload.gpu_hours", "must be a number ≤ 10000000"),
        ({"workload": {"gpu_hours": "48"}}, "workload.gpu_hours", "must be a number, got text"),
        ({"workload": {"kind": "serving", "hours": "2"}}, "workload.hours", "must be a number, got text"),
        ({}, "workload", "is required"),
        ({"workload": {"gpu_hours": 1}, "card_counts": []}, "card_counts", "must be a list of at least 1 item"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [0]}, "card_counts[0]", "must be a whole number ≥ 1"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [4, 1025]}, "card_counts[1]", "must be a whole number ≤ 1024"),
        ({"workload": {"gpu_hours": 1}, "limit": 0}, "limit", "must be a whole number ≥ 1"),
        ({"workload": {"gpu_hours": 1}, "limit": 101}, "limit", "must be a whole number ≤ 100"),
        ({"workload": {"gpu_hours": 1}, "rank_by": "speed"}, "rank_by", "must be one of cost, time, value; got 'speed'"),
        ({"workload": {"gpu_hours": 1}, "lang": "fr"}, "lang", "must be one of en, zh; got 'fr'"),
        ({"workload": {"gpu_hours": 1}, "pricing": ["spot"]}, "pricing[0]", "must be one of "),
        ({"workload": {"gpu_hours": 1, "task": "train"}}, "workload.task", "must be one of full_finetune, inference, lora, pretrain, qlora; got 'train'"),
        ({"workload": {"gpu_hours": 1}, "deadline_hours": 0}, "deadline_hours", "must be a number ≥ 0.01"),
        ({"workload": {"gpu_hours": 1}, "budget_cny": -1}, "budget_cny", "must be a number ≥ 0.01"),
        ({"workload": {"gpu_hours": 1}, "scaling": "fast"}, "scaling", "must be one of comm_heavy, default, nvlink; got 'fast'"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"four": [2.8, 3.2]}}, "scaling", "each key must match the pattern "),
        ({"workload": {"gpu_hours": 1}, "scaling": {"4": [2.8]}}, "scaling.4", "must be a list of exactly 2 items"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"4": [0.5, 3.2]}}, "scaling.4", "must be a number ≥ 1"),
        ({"workload": {"gpu_hours": 1}, "colour": "red"}, "colour", "unknown field; valid fields: workload, gpus, "),
        ({"workload": {"gpu_hours": 1, "gpu": "rtx4090"}}, "workload.gpu", "unknown field; valid fields: "),
        ([], "body", "must be an object, got a list"),
    ],
)  # fmt: skip
def test_bad_input_names_the_field_in_a_sentence(body: object, field: str, reason: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        decode_json_input(json.dumps(body).encode(), QuoteRequest)
    assert raised.value.field == field
    assert raised.value.reason.startswith(reason)


def test_a_number_beyond_float_range_is_rejected_with_the_fields_range() -> None:
    with pytest.raises(InvalidRequest) as raised:
        decode_json_input(b'{"workload": {"gpu_hours": 1e400}}', QuoteRequest)
    assert (raised.value.field, raised.value.reason) == (
        "workload.gpu_hours",
        "must be a number ≥ 0.001 and ≤ 10000000",
    )


def test_infinity_is_rejected_when_converting_python_values() -> None:
    with pytest.raises(InvalidRequest) as raised:
        convert_input({"workload": {"gpu_hours": math.inf}}, QuoteRequest)
    assert (raised.value.field, raised.value.reason) == ("workload.gpu_hours", "must be a number ≤ 10000000")


def test_converting_is_as_strict_as_decoding() -> None:
    # The MCP tools and the command line convert parsed values; a string is no more a number there.
    with pytest.raises(InvalidRequest) as raised:
        convert_input({"workload": {"gpu_hours": "48"}}, QuoteRequest)
    assert (raised.value.field, raised.value.reason) == ("workload.gpu_hours", "must be a number, got text")
    with pytest.raises(InvalidRequest) as whole:
        convert_input([], QuoteRequest)
    assert whole.value.field == "arguments"
