"""The Jiangsu article's worked example as a ``POST /quote`` body: one RTX 4090 for 48 h, or four.

It must come out as ¥384.00 for 48 h on one card and ¥512.00 for 16 h (15–17.14 h) on four."""

from __future__ import annotations

from typing import Any

__all__ = ["JIANGSU_EXAMPLE"]

JIANGSU_EXAMPLE: dict[str, Any] = {
    "workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"},
    "gpus": ["rtx4090"],
    "vendors": ["js-suzhou-ref"],
    "pricing": ["card_hour"],
    "card_counts": [1, 4],
}
