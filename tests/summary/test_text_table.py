"""The text table: every message in every language, non-empty, with the same fields in each.

A message missing its Chinese, or whose Chinese drops a figure the English shows, would reach a user as
a ``KeyError`` or as a sentence without its number; these tests catch both before then. They also check
that every name the code looks up by prefix (pricing kinds, term periods, exclusion reasons) has its
message.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import get_args

import msgspec
import pytest

from schemas.offer import PricingKind, TermPeriod
from schemas.quote import Excluded, Lang
from service.cli.texts import TABLE_TEMPLATES
from service.quote.prose import TEMPLATES, empty_summary, join_text, text

LANGS: tuple[Lang, ...] = get_args(Lang)


def fields(template: str) -> dict[str, str]:
    """The ``{fields}`` a template fills in, each with its format spec and conversion."""
    return {
        name: f"{spec}!{conversion}"
        for _, name, spec, conversion in string.Formatter().parse(template)
        if name is not None
    }


def problems(table: Mapping[str, Mapping[Lang, str]]) -> list[str]:
    """What is wrong with ``table``: a language missing or empty, or languages using different fields."""
    found = []
    for key, templates in table.items():
        missing = [lang for lang in LANGS if not templates.get(lang)]
        if missing:
            found.append(f"{key}: no text in {', '.join(missing)}")
            continue
        english = fields(templates["en"])
        found += [
            f"{key}: {lang} fills {sorted(fields(templates[lang]))}, en fills {sorted(english)}"
            for lang in LANGS
            if fields(templates[lang]) != english
        ]
    return found


@pytest.mark.parametrize("table", [TEMPLATES, TABLE_TEMPLATES], ids=["engine", "command line"])
def test_every_message_has_every_language_with_the_same_fields(
    table: Mapping[str, Mapping[Lang, str]],
) -> None:
    assert problems(table) == []


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"greeting": {"en": "hello"}}, "greeting: no text in zh"),
        ({"greeting": {"en": "hello", "zh": ""}}, "greeting: no text in zh"),
        ({"greeting": {"en": "", "zh": "你好"}}, "greeting: no text in en"),
        ({"cost": {"en": "costs {cost}", "zh": "费用"}}, "cost: zh fills [], en fills ['cost']"),
        (
            {"cost": {"en": "costs {cost}", "zh": "费用 {price}"}},
            "cost: zh fills ['price'], en fills ['cost']",
        ),
        ({"ratio": {"en": "{index:g}", "zh": "{index}"}}, "ratio: zh fills ['index'], en fills ['index']"),
    ],
)
def test_the_check_catches_a_broken_message(table: dict[str, dict[Lang, str]], problem: str) -> None:
    assert problems(table) == [problem]


@pytest.mark.parametrize(
    "key",
    [
        *(f"pricing_{kind}" for kind in get_args(PricingKind)),
        *(f"period_{period}" for period in get_args(TermPeriod)),
        *(f"{prefix}_{reason}" for prefix in ("reason", "hint") for reason in Excluded.__struct_fields__),
    ],
)
def test_every_looked_up_name_has_a_message(key: str) -> None:
    assert set(TEMPLATES.get(key, {})) == set(LANGS), key


@pytest.mark.parametrize("reason", Excluded.__struct_fields__)
def test_every_exclusion_reason_has_a_table_column_word(reason: str) -> None:
    assert set(TABLE_TEMPLATES.get(f"table_reason_{reason}", {})) == set(LANGS), reason


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("reason", Excluded.__struct_fields__)
def test_each_exclusion_reason_is_named_with_its_hint(reason: str, lang: Lang) -> None:
    summary = empty_summary(msgspec.structs.replace(Excluded(), **{reason: 3}), offers_loaded=5, lang=lang)
    assert text("empty_excluded", lang, count=3, reason=text(f"reason_{reason}", lang)) in summary
    assert text(f"hint_{reason}", lang) in summary


@pytest.mark.parametrize(("lang", "joined"), [("en", "One. Two. Three."), ("zh", "One.Two.Three.")])
def test_sentences_join_by_the_language_rule_skipping_empty_ones(lang: Lang, joined: str) -> None:
    assert join_text("join_sentences", ["One.", "", "Two.", "Three."], lang) == joined
    assert join_text("join_sentences", [], lang) == ""
