"""The one name resolver: case rule, known names from data, messages, and each surface's field names."""

from __future__ import annotations

import pytest

from adapters.gpus import DEFAULT_GPU_CATALOG
from schemas.vendor import VendorConfig, VendorStatus
from service.errors import InvalidRequest
from service.names import (
    BODY_FIELDS,
    QUERY_PARAMETERS,
    FieldNames,
    KnownNames,
    NameQuery,
    ResolvedNames,
    place_display_name,
    resolve_gpu,
    resolve_names,
)
from service.quote import join_text, text
from tests.builders import make_offer

SUZHOU = make_offer("js-suzhou-ref", "4090", region="jiangsu", city="suzhou")
NANSHAN = make_offer("sz-nanshan-ref", "h800", gpu="h800", region="shenzhen", city="shenzhen")
# Configured but holding no offers yet: its region and city are known all the same.
HANGZHOU = VendorConfig(
    id="zj-hangzhou", name="Hangzhou cloud", region="zhejiang", city="hangzhou", format="static", path="x"
)
KNOWN = KnownNames(vendors=[HANGZHOU], offers=[SUZHOU, NANSHAN])


def resolve(names: dict[str, list[str]], fields: FieldNames = BODY_FIELDS) -> ResolvedNames:
    return resolve_names(NameQuery(**names), known=KNOWN, catalog=DEFAULT_GPU_CATALOG, fields=fields)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ({"regions": ["Jiangsu"]}, ResolvedNames(regions=frozenset({"jiangsu"}))),
        ({"regions": ["  JIANGSU ", "jiangsu"]}, ResolvedNames(regions=frozenset({"jiangsu"}))),
        ({"regions": ["江苏"]}, ResolvedNames(regions=frozenset({"jiangsu"}))),
        ({"cities": ["苏州市", "Shenzhen"]}, ResolvedNames(cities=frozenset({"suzhou", "shenzhen"}))),
        ({"vendors": ["JS-SUZHOU-REF"]}, ResolvedNames(vendors=frozenset({"js-suzhou-ref"}))),
        ({"gpus": ["RTX 4090", " H800 "]}, ResolvedNames(gpus=frozenset({"rtx4090", "h800"}))),
        ({}, ResolvedNames()),
    ],
)
def test_names_match_whatever_the_case_and_come_back_canonical(
    names: dict[str, list[str]], expected: ResolvedNames
) -> None:
    assert resolve(names) == expected


def test_configured_vendors_count_as_known_before_they_have_offers() -> None:
    resolved = resolve({"regions": ["Zhejiang"], "cities": ["hangzhou"], "vendors": ["zj-hangzhou"]})
    assert resolved == ResolvedNames(
        regions=frozenset({"zhejiang"}), cities=frozenset({"hangzhou"}), vendors=frozenset({"zj-hangzhou"})
    )


def test_stored_statuses_count_as_known() -> None:
    known = KnownNames(statuses=[VendorStatus(vendor="gd-dongguan", region="guangdong", city="dongguan")])
    resolved = resolve_names(
        NameQuery(regions=["广东省"], vendors=["GD-Dongguan"]),
        known=known,
        catalog=DEFAULT_GPU_CATALOG,
        fields=BODY_FIELDS,
    )
    assert resolved == ResolvedNames(regions=frozenset({"guangdong"}), vendors=frozenset({"gd-dongguan"}))


def test_an_alias_never_invents_a_place() -> None:
    with pytest.raises(InvalidRequest) as raised:
        resolve({"cities": ["南京"]})  # a real city, but no vendor here is in it
    assert raised.value.reason == "unknown city '南京'; valid: hangzhou, shenzhen, suzhou"


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        ({"regions": ["Beijing"]}, "unknown region 'Beijing'; valid: jiangsu, shenzhen, zhejiang"),
        ({"regions": ["beijing", "jiangsu", "tianjin"]}, "unknown region 'beijing', 'tianjin'; valid: "),
        (
            {"vendors": ["nobody"]},
            "unknown vendor 'nobody'; valid: js-suzhou-ref, sz-nanshan-ref, zj-hangzhou",
        ),
        ({"cities": ["wuhan"]}, "unknown city 'wuhan'; valid: hangzhou, shenzhen, suzhou"),
    ],
)
def test_an_unknown_place_or_vendor_lists_the_valid_ones(names: dict[str, list[str]], reason: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        resolve(names)
    assert raised.value.reason.startswith(reason)


def test_with_nothing_known_yet_names_are_taken_as_written() -> None:
    resolved = resolve_names(
        NameQuery(regions=[" Jiangsu", "江苏省"], vendors=["JS-X"]),
        known=KnownNames(),
        catalog=DEFAULT_GPU_CATALOG,
        fields=BODY_FIELDS,
    )
    assert resolved == ResolvedNames(regions=frozenset({"jiangsu"}), vendors=frozenset({"js-x"}))


@pytest.mark.parametrize("name", ["a100", "A100", " NVIDIA A100 "])
def test_an_ambiguous_gpu_names_the_models_it_could_mean(name: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        resolve_gpu(name, DEFAULT_GPU_CATALOG, field="gpus")
    assert raised.value.reason == f"ambiguous GPU {name!r}: could be a100-80g (80 GB) or a100-40g (40 GB)"


def test_an_unknown_gpu_says_why_and_lists_the_catalog() -> None:
    with pytest.raises(InvalidRequest) as raised:
        resolve_gpu("4090 48G", DEFAULT_GPU_CATALOG, field="gpus")
    reason = raised.value.reason
    assert reason.startswith("unknown GPU '4090 48G': no 4090 with 48 GB in the catalog; valid: a100-40g, ")
    assert reason.endswith(", v100-32g")


@pytest.mark.parametrize(
    ("fields", "names", "field"),
    [
        (QUERY_PARAMETERS, {"gpus": ["a100"]}, "gpu"),
        (QUERY_PARAMETERS, {"regions": ["mars"]}, "region"),
        (QUERY_PARAMETERS, {"cities": ["mars"]}, "city"),
        (QUERY_PARAMETERS, {"vendors": ["mars"]}, "vendor"),
        (BODY_FIELDS, {"gpus": ["a100"]}, "gpus"),
        (BODY_FIELDS, {"regions": ["mars"]}, "regions"),
        (BODY_FIELDS, {"cities": ["mars"]}, "cities"),
        (BODY_FIELDS, {"vendors": ["mars"]}, "vendors"),
    ],
)
def test_errors_name_the_field_the_surface_calls_it(
    fields: FieldNames, names: dict[str, list[str]], field: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        resolve(names, fields)
    assert raised.value.field == field
    assert raised.value.detail.startswith(f"{field}: ")


def test_resolved_names_admit_offers_matching_every_filter() -> None:
    resolved = resolve({"regions": ["jiangsu", "shenzhen"], "cities": ["Suzhou"]})
    assert [resolved.admits(offer) for offer in (SUZHOU, NANSHAN)] == [True, False]
    assert ResolvedNames().admits(NANSHAN)


@pytest.mark.parametrize(
    ("place", "lang", "shown"),
    [("suzhou", "zh", "苏州"), ("suzhou", "en", "Suzhou"), ("hubei-wuhan", "en", "Hubei Wuhan"),
     ("hubei-wuhan", "zh", "Hubei Wuhan")],
)  # fmt: skip
def test_a_place_without_a_chinese_name_is_written_as_english_writes_it(
    place: str, lang: str, shown: str
) -> None:
    assert place_display_name(place, lang) == shown


def test_chinese_prose_sets_no_space_around_chinese_names_and_lists_with_a_dunhao() -> None:
    remote = text("warn_data_remote", "zh", city="无锡", data_city="苏州")
    assert (
        remote
        == "数据在苏州，该报价在无锡：跨城读取会带来 IO 等待，建议先拷贝到本地（提供数据集大小可计算拷贝时间）"
    )
    assert join_text("join_list", ["江苏", "深圳"], "zh") == "江苏、深圳"
    # Latin names keep their spaces.
    assert text("warn_data_remote", "zh", city="Hubei Wuhan", data_city="苏州").startswith(
        "数据在苏州，该报价在 Hubei"
    )
