"""Open models by name, with their parameter counts from the model cards (``GET /models``)."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["ModelList", "NamedModel"]

Billions = Annotated[float, msgspec.Meta(gt=0, le=100_000)]


class NamedModel(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A widely used open model, its parameters in billions.

    ``params_active_b`` is set for mixture-of-experts models only (the parameters one token passes
    through); dense models leave it out. Memory is sized on ``params_total_b`` for every model, because
    all experts' weights stay resident; the active count speaks to compute per token only.
    """

    id: str
    name: str
    params_total_b: Billions
    params_active_b: Billions | None = None
    source: str
    aliases: list[str] = []


class ModelList(msgspec.Struct, kw_only=True):
    """The bundled table of open models, in catalog order."""

    models: list[NamedModel]
