"""What the summary says about a plan's risks: the recommendation's, in its first sentence, with the plan
without them ("¥20.00 more removes the risk"), and interruptions material enough to tell beside a plan's
figures ("plus about 15 h for 20 expected interruptions").

A risk is what ``Quote.risks`` lists: a high end past the deadline or the budget (the expected figures
within them), or spot capacity the vendor can take back (a batch job resumes from its checkpoint; a
serving replica is down ``replica_down_share`` of the time, which another replica covers).
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.quote import Interruptions, Lang, Quote, QuoteRequest
from service.quote.base.money import format_cny
from service.quote.prose.texts import hours_text, join_text, number_text, significant_text, text

__all__ = ["MATERIAL_SHARE", "interruptions_told", "risk_clause", "told_in_first_sentence"]

MATERIAL_SHARE = 0.01
"""Interruptions whose hours lost are at least this share of a job's expected hours are told beside
its figures (in the summary and a warning of its own)."""


def interruptions_told(hours_expected: float, interruptions: Interruptions | None) -> bool:
    """Whether a quote's interruptions are material to it (their hours at least ``MATERIAL_SHARE`` of its
    expected hours, as the response shows both); a serving replica's time down never lengthens a job."""
    if interruptions is None or interruptions.replica_down_share is not None:
        return False
    return hours_expected > 0 and interruptions.hours_lost >= MATERIAL_SHARE * hours_expected


def _spot_risk(recommended: Quote, request: QuoteRequest, lang: Lang) -> str:
    """What spot capacity risks: a batch job's work since its checkpoint, a serving replica's time up."""
    interruptions = recommended.interruptions
    if interruptions is None or interruptions.replica_down_share is None:
        return text("risk_spot", lang)
    cover = text("spot_cover_one" if request.workload.replicas == 1 else "spot_cover_many", lang)
    share = significant_text(100 * interruptions.replica_down_share, digits=2)
    return text("risk_spot_serving", lang, share=share, cover=cover)


def risk_clause(
    recommended: Quote, safe: Quote | None, request: QuoteRequest, option: Callable[[Quote], str], lang: Lang
) -> str:
    """The recommendation's risks and the best plan without them, for its own sentence ("" without)."""
    risks = recommended.risks
    if not risks:
        return ""
    told: list[str] = []
    if "deadline" in risks and request.deadline_hours is not None:
        count = 0 if recommended.interruptions is None else recommended.interruptions.high_includes
        told.append(
            text(
                "risk_deadline",
                lang,
                deadline=number_text(request.deadline_hours),
                hours=hours_text(recommended.hours.high),
                interrupted=text("deadline_interrupted", lang, count=count) if count else "",
            )
        )
    if "budget" in risks and request.budget_cny is not None:
        cost, budget = format_cny(recommended.cost_cny.high), format_cny(request.budget_cny)
        told.append(text("risk_budget", lang, budget=budget, cost=cost))
    if "spot" in risks:
        told.append(_spot_risk(recommended, request, lang))
    clause = text("risk_lead", lang, risks=join_text("join_and", told, lang))
    if safe is None:
        return clause + text("risk_none_safe", lang)
    extra_cny = safe.cost_cny.expected - recommended.cost_cny.expected
    if format_cny(abs(extra_cny)) == format_cny(0):
        key = "risk_safe_same"
    else:
        key = "risk_safe_more" if extra_cny > 0 else "risk_safe_less"
    return clause + text(key, lang, cost=format_cny(abs(extra_cny)), option=option(safe))


def told_in_first_sentence(recommended: Quote) -> frozenset[str]:
    """The recommendation's warnings its own sentence already says: its risks, material interruptions."""
    told = {"warn_deadline", "warn_budget", "warn_spot", "warn_spot_serving"} if recommended.risks else set()
    if interruptions_told(recommended.hours.expected, recommended.interruptions):
        told.add("warn_interruptions")
    return frozenset(told)
