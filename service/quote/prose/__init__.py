"""Prose: every sentence the engine writes, in English and Chinese, and the one-paragraph summaries.

No engine types: the summaries read the response's ``Quote`` structs and the names to show. Messages are
keyed by id (``texts.TEMPLATES``, ``en`` and ``zh`` with the same fields); code picks which to say and
fills in figures already formatted (``format_cny``, ``hours_text``). The command line writes its table
with these helpers and its own messages (``service.cli.texts``).
"""

from service.quote.base.money import format_cny, number_text
from service.quote.prose.empty import Nearest, NearestOption, OutsideFilters, TooLarge, empty_summary
from service.quote.prose.names import ProseNames, gpu_name
from service.quote.prose.summary import alternative_sentence, lead_sentences, quote_summary
from service.quote.prose.texts import (
    TEMPLATES,
    Message,
    hours_text,
    join_text,
    partial_text,
    said,
    text,
    text_from,
)

__all__ = [
    "TEMPLATES",
    "Message",
    "Nearest",
    "NearestOption",
    "OutsideFilters",
    "ProseNames",
    "TooLarge",
    "alternative_sentence",
    "empty_summary",
    "format_cny",
    "gpu_name",
    "hours_text",
    "join_text",
    "lead_sentences",
    "number_text",
    "partial_text",
    "quote_summary",
    "said",
    "text",
    "text_from",
]
