"""Bad input fails at decode, naming the field; good input gets the documented defaults."""

from __future__ import annotations

import json
import math

import msgspec
import pytest

from schemas.quote import QuoteRequest

_decoder = msgspec.json.Decoder(QuoteRequest)


def _decode(body: dict[str, object]) -> QuoteRequest:
    return _decoder.decode(json.dumps(body).encode())


def test_defaults() -> None:
    request = _decode({"workload": {"gpu_hours": 48}})
    assert request.card_counts == [1, 2, 4, 8, 16]
    assert (request.rank_by, request.limit, request.lang) == ("cost", 10, "en")


def test_scaling_accepts_points_or_a_profile() -> None:
    assert _decode({"workload": {"gpu_hours": 1}, "scaling": {"4": [2.8, 3.2]}}).scaling == {"4": (2.8, 3.2)}
    assert _decode({"workload": {"gpu_hours": 1}, "scaling": "nvlink"}).scaling == "nvlink"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workload": {"gpu_hours": 0}}, "$.workload.gpu_hours"),
        ({"workload": {"gpu_hours": -3}}, "$.workload.gpu_hours"),
        ({"workload": {"gpu_hours": 1e300}}, "$.workload.gpu_hours"),
        ({"workload": {"gpu_hours": "48"}}, "$.workload.gpu_hours"),
        ({"workload": {}}, "gpu_hours"),
        ({}, "workload"),
        ({"workload": {"gpu_hours": 1}, "card_counts": []}, "$.card_counts"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [0]}, "$.card_counts[0]"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [4, 1025]}, "$.card_counts[1]"),
        ({"workload": {"gpu_hours": 1}, "limit": 0}, "$.limit"),
        ({"workload": {"gpu_hours": 1}, "limit": 101}, "$.limit"),
        ({"workload": {"gpu_hours": 1}, "rank_by": "speed"}, "$.rank_by"),
        ({"workload": {"gpu_hours": 1}, "lang": "fr"}, "$.lang"),
        ({"workload": {"gpu_hours": 1}, "pricing": ["spot"]}, "$.pricing[0]"),
        ({"workload": {"gpu_hours": 1, "task": "train"}}, "$.workload.task"),
        ({"workload": {"gpu_hours": 1}, "deadline_hours": 0}, "$.deadline_hours"),
        ({"workload": {"gpu_hours": 1}, "budget_cny": -1}, "$.budget_cny"),
        ({"workload": {"gpu_hours": 1}, "scaling": "fast"}, "$.scaling"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"four": [2.8, 3.2]}}, "$.scaling"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"4": [2.8]}}, "$.scaling"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"4": [0.5, 3.2]}}, "$.scaling"),
        ({"workload": {"gpu_hours": 1}, "colour": "red"}, "colour"),
        ({"workload": {"gpu_hours": 1, "gpu": "rtx4090"}}, "gpu"),
    ],
)
def test_bad_input_names_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(msgspec.ValidationError) as raised:
        _decode(body)
    assert field in str(raised.value)


def test_a_number_beyond_float_range_is_rejected() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"gpu_hours"):
        _decoder.decode(b'{"workload": {"gpu_hours": 1e400}}')


def test_infinity_is_rejected_when_converting_python_values() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"gpu_hours"):
        msgspec.convert({"workload": {"gpu_hours": math.inf}}, QuoteRequest)
