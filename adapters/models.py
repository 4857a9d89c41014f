"""Widely used open models by name, with parameter counts from their model cards, and the name resolver.

A caller may name a model instead of giving ``model_params_b``: ``"Qwen2.5-72B"``,
``"Qwen/Qwen2.5-72B-Instruct"``, ``"deepseek-r1"``. ``resolve_model`` matches case-insensitively, drops
the organisation prefix (``Qwen/``, ``meta-llama/``) and the suffixes that do not change the weights'
size (``-Instruct``, ``-Chat``, ``-Base``, ``-hf``, quantization tags, versions such as ``-v0.3`` and
release dates such as ``-2507``), and ignores punctuation (``llama3.1-8b`` is ``llama-3.1-8b``). A name it
cannot place raises ``UnknownModelName`` listing up to five close ids; it never guesses.

Memory is sized on ``params_total_b``: a mixture-of-experts model keeps every expert's weights resident,
so DeepSeek-V3 needs memory for 671B parameters although a token passes through 37B. Counts are in
billions; where a card rounds (``8B``), the exact count comes from the released weights and the source
says so. A quantization tag in a name is dropped for matching only: the caller states bytes per weight.
"""

from __future__ import annotations

import difflib
import re

from schemas.model import NamedModel

__all__ = ["NAMED_MODELS", "UnknownModelName", "resolve_model"]


class UnknownModelName(ValueError):
    """A model name that matches no entry of the table."""

    def __init__(self, raw_name: str, reason: str, close_matches: list[str]) -> None:
        super().__init__(f"unknown model {raw_name!r}: {reason}")
        self.raw_name = raw_name
        self.reason = reason
        self.close_matches = close_matches


_HF = "huggingface.co/"
_FROM_WEIGHTS = "; exact count from the released weights"


def _dense(model_id: str, name: str, params_b: float, source: str, *aliases: str) -> NamedModel:
    return NamedModel(id=model_id, name=name, params_total_b=params_b, source=source, aliases=list(aliases))


def _moe(model_id: str, name: str, total_b: float, active_b: float, source: str, *aliases: str) -> NamedModel:
    return NamedModel(
        id=model_id,
        name=name,
        params_total_b=total_b,
        params_active_b=active_b,
        source=source,
        aliases=list(aliases),
    )


def _qwen25(size: str, params_b: float) -> NamedModel:
    return _dense(
        f"qwen2.5-{size.lower()}",
        f"Qwen2.5 {size}",
        params_b,
        f"{_HF}Qwen/Qwen2.5-{size}-Instruct model card: {params_b}B parameters",
    )


def _qwen3(size: str, params_b: float) -> NamedModel:
    return _dense(
        f"qwen3-{size.lower()}",
        f"Qwen3 {size}",
        params_b,
        f"{_HF}Qwen/Qwen3-{size} model card: {params_b}B parameters",
    )


def _r1_distill(base: str, size: str, params_b: float, base_model: str) -> NamedModel:
    repo = f"deepseek-ai/DeepSeek-R1-Distill-{base}-{size}"
    return _dense(
        f"deepseek-r1-distill-{base.lower()}-{size.lower()}",
        f"DeepSeek-R1-Distill-{base}-{size}",
        params_b,
        f"{_HF}{repo} model card (distilled into {base_model}){_FROM_WEIGHTS}",
    )


_DEEPSEEK_V3_NOTE = (
    "671B total, 37B activated per token (the 685B on the hub adds the optional 14B multi-token "
    "prediction module)"
)

NAMED_MODELS: tuple[NamedModel, ...] = (
    _qwen25("0.5B", 0.49),
    _qwen25("1.5B", 1.54),
    _qwen25("3B", 3.09),
    _qwen25("7B", 7.61),
    _qwen25("14B", 14.7),
    _qwen25("32B", 32.5),
    _qwen25("72B", 72.7),
    _qwen3("0.6B", 0.6),
    _qwen3("1.7B", 1.7),
    _qwen3("4B", 4.0),
    _qwen3("8B", 8.2),
    _qwen3("14B", 14.8),
    _qwen3("32B", 32.8),
    _moe(
        "qwen3-30b-a3b",
        "Qwen3 30B-A3B",
        30.5,
        3.3,
        f"{_HF}Qwen/Qwen3-30B-A3B model card: 30.5B total, 3.3B activated",
    ),
    _moe(
        "qwen3-235b-a22b",
        "Qwen3 235B-A22B",
        235,
        22,
        f"{_HF}Qwen/Qwen3-235B-A22B model card: 235B total, 22B activated",
    ),
    _dense(
        "llama-3.1-8b", "Llama 3.1 8B", 8.03, f"{_HF}meta-llama/Llama-3.1-8B model card (8B){_FROM_WEIGHTS}"
    ),
    _dense(
        "llama-3.1-70b",
        "Llama 3.1 70B",
        70.6,
        f"{_HF}meta-llama/Llama-3.1-70B model card (70B){_FROM_WEIGHTS}",
    ),
    _dense("llama-3.1-405b", "Llama 3.1 405B", 405, f"{_HF}meta-llama/Llama-3.1-405B model card: 405B"),
    _dense("llama-3.2-1b", "Llama 3.2 1B", 1.23, f"{_HF}meta-llama/Llama-3.2-1B model card: 1.23B"),
    _dense("llama-3.2-3b", "Llama 3.2 3B", 3.21, f"{_HF}meta-llama/Llama-3.2-3B model card: 3.21B"),
    _dense(
        "llama-3.3-70b",
        "Llama 3.3 70B",
        70.6,
        f"{_HF}meta-llama/Llama-3.3-70B-Instruct model card (70B, the Llama 3.1 70B architecture)"
        f"{_FROM_WEIGHTS}",
    ),
    _moe(
        "deepseek-v3", "DeepSeek-V3", 671, 37, f"{_HF}deepseek-ai/DeepSeek-V3 model card: {_DEEPSEEK_V3_NOTE}"
    ),
    _moe(
        "deepseek-r1",
        "DeepSeek-R1",
        671,
        37,
        f"{_HF}deepseek-ai/DeepSeek-R1 model card: {_DEEPSEEK_V3_NOTE}; built on DeepSeek-V3-Base",
        "deepseek-r1-zero",
    ),
    # The 1.5B checkpoint does not tie its input and output embeddings, hence 1.78B over Qwen2.5's 1.54B.
    _r1_distill("Qwen", "1.5B", 1.78, "Qwen2.5-Math-1.5B"),
    _r1_distill("Qwen", "7B", 7.62, "Qwen2.5-Math-7B"),
    _r1_distill("Qwen", "14B", 14.8, "Qwen2.5-14B"),
    _r1_distill("Qwen", "32B", 32.8, "Qwen2.5-32B"),
    _r1_distill("Llama", "8B", 8.03, "Llama-3.1-8B"),
    _r1_distill("Llama", "70B", 70.6, "Llama-3.3-70B-Instruct"),
    _dense("glm-4-9b", "GLM-4-9B", 9.4, f"{_HF}THUDM/glm-4-9b model card (9B){_FROM_WEIGHTS}"),
    _dense("yi-6b", "Yi 6B", 6.06, f"{_HF}01-ai/Yi-6B model card (6B){_FROM_WEIGHTS}", "yi-1.5-6b"),
    _dense("yi-9b", "Yi 9B", 8.83, f"{_HF}01-ai/Yi-9B model card (9B){_FROM_WEIGHTS}", "yi-1.5-9b"),
    _dense("yi-34b", "Yi 34B", 34.4, f"{_HF}01-ai/Yi-34B model card (34B){_FROM_WEIGHTS}", "yi-1.5-34b"),
    _dense(
        "mistral-7b",
        "Mistral 7B",
        7.24,
        f"{_HF}mistralai/Mistral-7B-v0.1 model card (7B){_FROM_WEIGHTS} (7.25B for v0.3's larger vocabulary)",
    ),
    _dense(
        "mistral-nemo",
        "Mistral NeMo 12B",
        12.2,
        f"{_HF}mistralai/Mistral-Nemo-Base-2407 model card (12B){_FROM_WEIGHTS}",
        "mistral-nemo-12b",
    ),
    _dense(
        "mistral-small-24b",
        "Mistral Small 3 24B",
        23.6,
        f"{_HF}mistralai/Mistral-Small-24B-Instruct-2501 model card (24B){_FROM_WEIGHTS}",
        "mistral-small-3",
    ),
    _moe(
        "mixtral-8x7b",
        "Mixtral 8x7B",
        46.7,
        12.9,
        "mistral.ai/news/mixtral-of-experts: 46.7B total, 12.9B used per token; "
        f"{_HF}mistralai/Mixtral-8x7B-v0.1",
    ),
    _moe(
        "mixtral-8x22b",
        "Mixtral 8x22B",
        141,
        39,
        f"mistral.ai/news/mixtral-8x22b: 141B total, 39B active; {_HF}mistralai/Mixtral-8x22B-v0.1",
    ),
)

# Suffixes that name a variant of the same weights (tuning, packaging, version, release date).
_VARIANT_SUFFIX = re.compile(
    r"-(?:instruct|chat|base|it|hf|thinking|fp8|fp16|bf16|awq|gptq|gguf|int4|int8|v\d+(?:\.\d+)*|\d{4})$"
)


def _normalized(raw_name: str) -> str:
    """``"Qwen/Qwen2.5-72B-Instruct"`` → ``"qwen2.5-72b"``: the spelling the table's ids use."""
    name = re.sub(r"[\s_]+", "-", raw_name.strip().lower().rsplit("/", 1)[-1]).removeprefix("meta-")
    while (stripped := _VARIANT_SUFFIX.sub("", name)) != name:
        name = stripped
    return name


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", _normalized(name))


def _index(models: tuple[NamedModel, ...]) -> dict[str, NamedModel]:
    index: dict[str, NamedModel] = {}
    for model in models:
        for spelling in (model.id, *model.aliases):
            key = _key(spelling)
            if index.setdefault(key, model) is not model:
                raise ValueError(f"{spelling!r} names both {index[key].id!r} and {model.id!r}")
    return index


_BY_KEY = _index(NAMED_MODELS)
_IDS = [model.id for model in NAMED_MODELS]


def resolve_model(name: str) -> NamedModel:
    """The table's entry for a model name; raises ``UnknownModelName`` with close ids rather than guess."""
    model = _BY_KEY.get(_key(name))
    if model is not None:
        return model
    wanted = _normalized(name)
    if not wanted:
        raise UnknownModelName(name, "no model name given", [])
    close = difflib.get_close_matches(wanted, _IDS, n=5, cutoff=0.6)
    listed = ", ".join(close) if close else "none"
    raise UnknownModelName(name, f"no open model called {wanted!r} in the table; close: {listed}", close)
