"""The summary's caveats are chosen by which message a warning was written from, never by its wording: a
message reworded (its opening changed, a field moved to the front) is still said where it was."""

from __future__ import annotations

from datetime import timedelta

import pytest

from service.quote import Snapshot, build_quote
from service.quote.prose import TEMPLATES
from tests.quote.factories import NOW, offer, options, request, snapshot

# 48 h on 3 × RTX 4090: expected 19.95 h for a 20 h deadline, up to 20.99 h at the low speed-up.
CATALOG = snapshot([offer("v", "4090")])
AT_RISK = request(48, card_counts=[3], deadline_hours=20)


# The same offer priced two days ago: every quote uses a stale price, which the response says once.
STALE = snapshot([offer("v", "4090", fetched_at=NOW - timedelta(days=2))])


def _summary(catalog: Snapshot = CATALOG) -> str:
    return build_quote(catalog, AT_RISK, options=options()).summary


def test_the_deadline_risk_leads_the_summary_and_is_not_repeated_as_a_caveat() -> None:
    text = _summary()
    first = text.split(". ", 1)[0]
    assert "but it may miss the 20 h deadline (up to 20.99 h if speed is at the low end)" in first
    # Only 3 cards were asked for: no plan meets the deadline at its high end, and the sentence says so.
    assert "no plan here is free of that risk" in first
    assert "deadline at risk" not in text


@pytest.mark.parametrize(
    "reworded",
    [
        "{hours} h at the low end is past the {deadline} h deadline: the plan may miss it",
        "the plan may miss its deadline ({deadline} h): up to {hours} h",
    ],
)
def test_a_reworded_deadline_warning_is_still_left_to_the_first_sentence(
    reworded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TEMPLATES, "warn_deadline", {**TEMPLATES["warn_deadline"], "en": reworded})
    text = _summary()
    said = reworded.format(hours="20.99", deadline="20", interrupted="")
    # Picked by its message id: the first sentence tells the risk, so no caveat repeats it.
    assert said not in text
    assert "but it may miss the 20 h deadline" in text.split(". ", 1)[0]


def test_a_reworded_deadline_warning_leaves_the_other_caveats_as_they_were(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message opening with a field once matched every warning: the stale price, already told by the
    response's own warning, came back among the caveats."""
    before = _summary(STALE)
    assert "no offer with a fresh price qualifies" in before
    assert "price fetched" not in before
    reworded = "{hours} h at the low end is past the {deadline} h deadline"
    monkeypatch.setitem(TEMPLATES, "warn_deadline", {**TEMPLATES["warn_deadline"], "en": reworded})
    after = _summary(STALE)
    assert after == before
