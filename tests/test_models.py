"""The bundled table of open models and the model-name resolver."""

from __future__ import annotations

import msgspec
import pytest

from adapters.models import NAMED_MODELS, UnknownModelName, resolve_model
from schemas.model import ModelList, NamedModel


@pytest.mark.parametrize(
    ("spelling", "model_id"),
    [
        ("Qwen2.5-72B", "qwen2.5-72b"),
        ("qwen2.5-72b-instruct", "qwen2.5-72b"),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("  QWEN2.5-72B  ", "qwen2.5-72b"),
        ("Qwen2.5-72B-Instruct-GPTQ-Int4", "qwen2.5-72b"),
        ("qwen2.5-0.5b", "qwen2.5-0.5b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b"),
        ("deepseek-r1", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
        ("DeepSeek-V3", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
        ("DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1-distill-qwen-32b"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "deepseek-r1-distill-llama-70b"),
        ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("llama3.1-8b", "llama-3.1-8b"),
        ("Llama 3.3 70B", "llama-3.3-70b"),
        ("Llama-3.2-1B-Instruct", "llama-3.2-1b"),
        ("THUDM/glm-4-9b-chat", "glm-4-9b"),
        ("glm4-9b", "glm-4-9b"),
        ("01-ai/Yi-1.5-34B-Chat", "yi-34b"),
        ("Yi-6B", "yi-6b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo"),
        ("mistralai/Mistral-Small-24B-Instruct-2501", "mistral-small-24b"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("Mixtral-8x22B", "mixtral-8x22b"),
    ],
)
def test_common_spellings_resolve(spelling: str, model_id: str) -> None:
    assert resolve_model(spelling).id == model_id


def test_an_unknown_name_lists_close_matches_not_a_guess() -> None:
    with pytest.raises(UnknownModelName) as raised:
        resolve_model("Qwen2-72B")
    assert raised.value.raw_name == "Qwen2-72B"
    assert "qwen2.5-72b" in raised.value.close_matches
    assert len(raised.value.close_matches) <= 5
    assert "qwen2.5-72b" in raised.value.reason


@pytest.mark.parametrize("name", ["gpt-4", "", "   "])
def test_a_name_with_nothing_close_is_refused(name: str) -> None:
    with pytest.raises(UnknownModelName) as raised:
        resolve_model(name)
    assert raised.value.close_matches == []


@pytest.mark.parametrize(
    ("model_id", "total_b", "active_b"),
    [
        ("qwen2.5-72b", 72.7, None),
        ("qwen2.5-7b", 7.61, None),
        ("llama-3.1-8b", 8.03, None),
        ("llama-3.1-70b", 70.6, None),
        ("llama-3.1-405b", 405, None),
        ("deepseek-v3", 671, 37),
        ("deepseek-r1", 671, 37),
        ("qwen3-30b-a3b", 30.5, 3.3),
        ("qwen3-235b-a22b", 235, 22),
        ("mixtral-8x7b", 46.7, 12.9),
        ("mixtral-8x22b", 141, 39),
        ("mistral-7b", 7.24, None),
        ("glm-4-9b", 9.4, None),
        ("yi-34b", 34.4, None),
    ],
)
def test_parameter_counts_match_the_model_cards(
    model_id: str, total_b: float, active_b: float | None
) -> None:
    model = resolve_model(model_id)
    assert (model.params_total_b, model.params_active_b) == (total_b, active_b)


def test_every_entry_has_a_source_and_a_lowercase_unique_id() -> None:
    ids = [model.id for model in NAMED_MODELS]
    assert len(ids) == len(set(ids))
    for model in NAMED_MODELS:
        assert model.id == model.id.lower()
        assert model.source.strip(), model.id
        assert resolve_model(model.id) is model
        for alias in model.aliases:
            assert resolve_model(alias) is model


def test_mixture_of_experts_entries_activate_fewer_parameters_than_they_hold() -> None:
    moe = [model for model in NAMED_MODELS if model.params_active_b is not None]
    assert {model.id for model in moe} >= {"deepseek-v3", "deepseek-r1", "mixtral-8x7b", "qwen3-235b-a22b"}
    for model in moe:
        assert model.params_active_b is not None
        assert model.params_active_b < model.params_total_b, model.id


def test_the_families_the_table_promises_are_there() -> None:
    ids = {model.id for model in NAMED_MODELS}
    assert {f"qwen2.5-{size}" for size in ("0.5b", "1.5b", "3b", "7b", "14b", "32b", "72b")} <= ids
    assert {"llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b", "yi-6b", "yi-9b"} <= ids
    assert {
        f"deepseek-r1-distill-{base}"
        for base in ("qwen-1.5b", "qwen-7b", "qwen-14b", "qwen-32b", "llama-8b", "llama-70b")
    } <= ids


def test_the_model_list_encodes_dense_models_without_an_active_count() -> None:
    body = msgspec.json.decode(msgspec.json.encode(ModelList(models=list(NAMED_MODELS))))
    by_id = {entry["id"]: entry for entry in body["models"]}
    assert "params_active_b" not in by_id["qwen2.5-72b"]
    assert by_id["deepseek-v3"]["params_active_b"] == 37
    assert msgspec.convert(by_id["mixtral-8x7b"], type=NamedModel) == resolve_model("mixtral-8x7b")
