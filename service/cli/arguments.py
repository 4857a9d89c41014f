"""``gpuquote quote``'s arguments: which flag sets each request field, the values a flag takes apart
(``--speed-ratio h800=3.2``, ``--cards 1,4,8``), and the request's errors told in the flags' names."""

from __future__ import annotations

import re
from typing import Any

from service.documents import UnreadableDocument
from service.errors import InvalidRequest
from service.inputs import decode_json_value

__all__ = ["ArgumentError", "argument_error", "card_counts", "names", "scaling", "speed_ratios"]


# Request fields (as the API names them) → the flag that sets them here.
_FLAGS = {
    "workload.gpu_hours": "--gpu-hours",
    "workload.hours": "--serving-hours",
    "workload.kind": "--serving-hours",
    "workload.replicas": "--replicas",
    "workload.reference_gpu": "--reference-gpu",
    "workload.speed_ratios": "--speed-ratio",
    "workload.model_params_b": "--params-b",
    "workload.model": "--model",
    "workload.precision": "--precision",
    "workload.task": "--task",
    "workload.communication": "--communication",
    "workload.cross_node_factor": "--cross-node-factor",
    "workload.data_city": "--data-city",
    "workload.dataset_gb": "--dataset-gb",
    "workload.tokens": "--tokens",
    "workload.mfu": "--mfu",
    "workload.runs": "--runs",
    "workload.cards_per_run": "--cards-per-run",
    "workload.target_tokens_per_s": "--target-tokens-per-s",
    "workload.concurrent_requests": "--concurrent-requests",
    "workload.replica_tokens_per_s": "--replica-tokens-per-s",
    "workload.growth_factor": "--growth-factor",
    "workload.checkpoint_interval_h": "--checkpoint-interval-h",
    "workload.checkpoint_minutes": "--checkpoint-minutes",
    "workload.restart_minutes": "--restart-minutes",
    "workload": "--gpu-hours",
    "gpus": "--gpu",
    "regions": "--region",
    "cities": "--city",
    "vendors": "--vendor",
    "pricing": "--pricing",
    "card_counts": "--cards",
    "deadline_hours": "--deadline-hours",
    "budget_cny": "--budget-cny",
    "deadline_confidence": "--deadline-confidence",
    "budget_confidence": "--budget-confidence",
    "allow_spot": "--allow-spot",
    "rank_by": "--rank-by",
    "time_value_cny_per_hour": "--time-value",
    "scaling": "--scaling",
    "limit": "--limit",
    "lang": "--lang",
}


class ArgumentError(ValueError):
    """A flag's value the request cannot use; the message names the flag and says why in a sentence."""

    def __init__(self, flag: str, reason: str) -> None:
        super().__init__(f"{flag}: {reason}")


def _flag(field: str) -> str:
    field = re.sub(r"\[\d+\]", "", field)
    while field and field not in _FLAGS:
        field = field.rpartition(".")[0]
    return _FLAGS.get(field, "--" + field.replace("_", "-") if field else "arguments")


# A field name inside a reason: ``workload.<name>`` or a snake_case top-level field (``card_counts``).
_FIELD_IN_REASON = re.compile(r"\b(?:workload\.[a-z_]+|[a-z]+(?:_[a-z]+)+)\b")


def _reason_in_flags(reason: str) -> str:
    """The reason with each request field it names (a cross-field check names two) told as its flag."""
    return _FIELD_IN_REASON.sub(lambda match: _FLAGS.get(match[0], match[0]), reason)


def argument_error(error: InvalidRequest) -> ArgumentError:
    """The request's error (the same sentence every surface gives), told in this command's own flags."""
    return ArgumentError(_flag(error.field or ""), _reason_in_flags(error.reason))


def speed_ratios(values: list[str] | None) -> dict[str, Any] | None:
    """``--speed-ratio h800=3.2`` (repeated or comma-separated) → ``{"h800": 3.2}``."""
    ratios: dict[str, Any] = {}
    for item in names(values) or []:
        gpu, _, ratio = item.partition("=")
        try:
            ratios[gpu.strip()] = float(ratio)
        except ValueError:
            raise ArgumentError("--speed-ratio", f"{item!r} is not GPU=RATIO, e.g. h800=3.2") from None
    return ratios or None


def card_counts(value: str | None) -> list[int] | None:
    if not value:
        return None
    counts: list[int] = []
    for item in (item.strip() for item in value.split(",")):
        if not item:
            raise ArgumentError("--cards", f"{value!r} has an empty item; give counts like 1,4,8")
        if not item.isdigit():
            raise ArgumentError("--cards", f"{item!r} is not a whole number of cards; give counts like 1,4,8")
        counts.append(int(item))
    return counts


def names(values: list[str] | None) -> list[str] | None:
    """Repeated and comma-separated values, flattened: ``--gpu a,b --gpu c`` → ``[a, b, c]``."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def scaling(value: str | None) -> Any:
    if value is None or not value.lstrip().startswith("{"):
        return value
    try:
        return decode_json_value(value)
    except UnreadableDocument as problem:
        reason = "is not valid JSON" if problem.kind == "malformed" else problem.reason
        raise ArgumentError(
            "--scaling", f"{reason}; give a profile name or '{{\"4\": [2.8, 3.2]}}'"
        ) from None
