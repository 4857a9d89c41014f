"""The quote requests ``bench/market.py`` sends: every one unique, so the quote cache never answers.

- ``default_request(i)``: ``bench/http_load.py``'s production shape (a 7B LoRA job measured on an RTX
  4090, every card count each offer sells) with ``gpu_hours`` 1 + i / 10^9: the same job, to a second;
- ``deadline_request(i)``: a long job that must finish within ``deadline_hours`` 24 + i / 100;
- ``varied_requests(count, models, seed)``: a seeded mix of what callers ask (``SHAPES``), each shape's
  numbers drawn anew per request.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

from schemas.quote import QuoteRequest, Task, Workload

__all__ = ["SHAPES", "UNIQUE_STEPS", "deadline_request", "default_request", "varied_requests"]

# default_request(i) for i below this is a job of 1 to 2 hours, each i a new request body.
UNIQUE_STEPS = 1_000_000_000
CITIES = ("shenzhen", "suzhou", "nanjing", "wuxi", "changzhou", "kunshan", "nantong", "shanghai", "南京")
GPUS = ("rtx4090", "a100-80g", "h800", "l40s", "h20")
TASKS: tuple[Task, ...] = ("lora", "qlora", "full_finetune", "inference")
TOKEN_TASKS: tuple[Task, ...] = ("lora", "full_finetune", "pretrain")


def default_request(index: int) -> QuoteRequest:
    workload = Workload(
        gpu_hours=1 + index / UNIQUE_STEPS, reference_gpu="rtx4090", model_params_b=7, task="lora"
    )
    return QuoteRequest(workload=workload, time_value_cny_per_hour=20)


def deadline_request(index: int) -> QuoteRequest:
    return QuoteRequest(
        workload=Workload(gpu_hours=2_000, reference_gpu="rtx4090"), deadline_hours=24 + index / 100
    )


def _hours(rng: random.Random) -> float:
    return round(rng.uniform(1, 5_000), 3)


def _default(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    workload = Workload(gpu_hours=_hours(rng), reference_gpu="rtx4090", model_params_b=7, task="lora")
    return QuoteRequest(workload=workload, time_value_cny_per_hour=20)


def _deadline(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    workload = Workload(gpu_hours=_hours(rng), reference_gpu=rng.choice(GPUS))
    return QuoteRequest(workload=workload, deadline_hours=round(rng.uniform(2, 200), 2))


def _budget(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    params_b = rng.choice((7, 14, 32))
    workload = Workload(gpu_hours=_hours(rng), reference_gpu="rtx4090", model_params_b=params_b)
    return QuoteRequest(workload=workload, budget_cny=round(rng.uniform(50, 20_000), 2))


def _serving(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    hours, model = round(rng.uniform(1, 720), 2), rng.choice(models)
    if rng.random() < 0.5:
        workload = Workload(kind="serving", hours=hours, model=model, replicas=rng.randint(1, 8))
    else:
        target_tokens_per_s = round(rng.uniform(100, 50_000), 1)
        workload = Workload(kind="serving", hours=hours, model=model, target_tokens_per_s=target_tokens_per_s)
    return QuoteRequest(workload=workload)


def _named_model(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    task = rng.choice(TASKS)
    workload = Workload(gpu_hours=_hours(rng), reference_gpu="a100-80g", model=rng.choice(models), task=task)
    return QuoteRequest(workload=workload)


def _data_city(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    workload = Workload(
        gpu_hours=_hours(rng),
        reference_gpu="rtx4090",
        dataset_gb=round(rng.uniform(1, 20_000), 1),
        data_city=rng.choice(CITIES),
    )
    return QuoteRequest(workload=workload)


def _heavy(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    params_b = rng.choice((13, 70))
    workload = Workload(
        gpu_hours=_hours(rng), reference_gpu="h800", model_params_b=params_b, communication="heavy"
    )
    return QuoteRequest(workload=workload)


def _rank_time(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    return QuoteRequest(workload=Workload(gpu_hours=_hours(rng), reference_gpu="rtx4090"), rank_by="time")


def _rank_value(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    return QuoteRequest(
        workload=Workload(gpu_hours=_hours(rng), reference_gpu="rtx4090"),
        rank_by="value",
        time_value_cny_per_hour=round(rng.uniform(1, 500), 2),
    )


def _independent(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    runs = rng.choice((None, 16, 100, 1_000))
    cards_per_run = None if runs is None else rng.choice((1, 2, 8))
    workload = Workload(
        kind="independent",
        gpu_hours=_hours(rng),
        reference_gpu="rtx4090",
        runs=runs,
        cards_per_run=cards_per_run,
    )
    return QuoteRequest(workload=workload)


def _tokens(rng: random.Random, models: Sequence[str]) -> QuoteRequest:
    task = rng.choice(TOKEN_TASKS)
    tokens = float(rng.randint(10**7, 10**11))
    return QuoteRequest(workload=Workload(tokens=tokens, model=rng.choice(models), task=task))


SHAPES: dict[str, Callable[[random.Random, Sequence[str]], QuoteRequest]] = {
    "default": _default,
    "deadline": _deadline,
    "budget": _budget,
    "serving": _serving,
    "named model": _named_model,
    "data city": _data_city,
    "heavy comm": _heavy,
    "rank time": _rank_time,
    "rank value": _rank_value,
    "independent": _independent,
    "tokens": _tokens,
}


def varied_requests(count: int, models: Sequence[str], seed: int = 3) -> list[tuple[str, QuoteRequest]]:
    """``count`` (shape, request) pairs: each shape about as often as the others, in a shuffled order, and
    each request's numbers drawn anew (all from ``seed``)."""
    rng = random.Random(seed)
    names = [name for _, name in zip(range(count), itertools.cycle(SHAPES), strict=False)]
    rng.shuffle(names)
    return [(name, SHAPES[name](rng, models)) for name in names]
