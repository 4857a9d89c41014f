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


def test_the_deadline_risk_leads_the_caveats() -> None:
    text = _summary()
    assert "Main caveat: deadline at risk" in text or "Caveats: deadline at risk" in text


@pytest.mark.parametrize(
    "reworded",
    [
        "{hours} h at the low end is past the {deadline} h deadline: the plan may miss it",
        "the plan may miss its deadline ({deadline} h): up to {hours} h",
    ],
)
def test_a_reworded_deadline_warning_is_still_the_first_caveat(
    reworded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TEMPLATES, "warn_deadline", {**TEMPLATES["warn_deadline"], "en": reworded})
    text = _summary()
    said = reworded.format(hours="20.99", deadline="20")
    caveats = text.split("Main caveat: ", 1)[-1].split("Caveats: ", 1)[-1]
    assert caveats.startswith(said)
    # Said once: as the first caveat, not again among the quote's other warnings.
    assert text.count(said) == 1


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
    assert after.replace(reworded.format(hours="20.99", deadline="20"), "") == before.replace(
        "deadline at risk: up to 20.99 h if speed is at the low end, past the 20 h deadline", ""
    )
