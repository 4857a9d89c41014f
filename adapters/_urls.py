"""URLs from the vendors file and from vendor responses: how they are shown, and whom we follow.

``redact_url`` is the only way a URL reaches an error message, a log line or an offer's ``source``: vendors
put credentials in userinfo (``https://user:pass@host``) and in query strings (``?access_token=...``).
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import httpx

__all__ = ["REDACTED_QUERY", "RedactUrlArguments", "redact_url", "same_origin"]

REDACTED_QUERY = "?…"


def redact_url(url: str) -> str:
    """``url`` safe to show: userinfo dropped, a query string replaced by ``?…``, a fragment dropped.

    ``https://u:p@api.example.com:8443/v1/prices?access_token=x#top`` is shown as
    ``https://api.example.com:8443/v1/prices?…``: the ``?…`` says a query was there without saying what.
    Scheme, host, port and path are kept (a secret in the path cannot be told apart from a route).
    Something that does not parse as a URL is shown as ``(unparsable URL)``, never as itself.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparsable URL)"
    host = parts.netloc.rpartition("@")[2]
    prefix = f"{parts.scheme}://{host}" if parts.scheme or host else ""
    return prefix + parts.path + (REDACTED_QUERY if parts.query else "")


class RedactUrlArguments(logging.Filter):
    """Shows the ``httpx.URL`` arguments of a log record redacted (httpx logs each request's full URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(arg, httpx.URL) for arg in record.args):
            record.args = tuple(
                redact_url(str(arg)) if isinstance(arg, httpx.URL) else arg for arg in record.args
            )
        return True


def same_origin(first: httpx.URL, second: httpx.URL) -> bool:
    """Same scheme, host and port (default ports normalized), as a browser's same-origin rule has it."""
    return (first.scheme, first.host, first.port) == (second.scheme, second.host, second.port)
