"""One JSON document, read once: the typed decode, and a scan of its tokens for what msgspec lets pass.

msgspec decodes strictly and fast, but keeps the last of two equal keys (a body saying two things about
one field) and nests as deep as Python's recursion allows. The values are decoded only by msgspec; what
it lets pass is found without parsing the values again (numbers are never converted, so a 5,000-digit
literal costs nothing):

- ``repeated_key``, after a typed decode that succeeded: the keys are listed by splitting the bytes on
  their quotes; when no key text occurs twice (the usual request, whose field names are all distinct)
  there is no duplicate.
  Depth needs no check there: a document that decoded as a fully typed Struct nests no deeper than it.
- ``find_duplicate``, when a key text does occur twice or a decode failed: a walk over the document's
  tokens (strings, brackets, colons, commas) that returns the path of the first key an object gives
  twice, and stops past ``MAX_DEPTH``, deeper than any request needs.

``bench/body_decode.py`` measures this against the second full parse (``json.loads``) it replaced.

Which fault a document reports when it has several: an unreadable document (malformed, then too deep)
before a key given twice, and both before a field that is wrong, so a caller fixes the JSON first.

Exceptions::

    UnreadableDocument      kind: malformed | too_deep | duplicate_key; ``field`` the key's path
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

__all__ = [
    "MAX_DEPTH",
    "UnreadableDocument",
    "check_well_formed",
    "decode_json_value",
    "find_duplicate",
    "nests_deeper",
    "refuse_duplicate",
    "repeated_key",
]

# Objects and lists nested deeper than this are refused; a quote request needs 3 (a scaling point).
MAX_DEPTH = 32

UnreadableKind = Literal["malformed", "too_deep", "duplicate_key"]

# A whole string (the unrolled form of "(?:[^"\\]|\\.)*", several times faster in Python's engine), or a
# structural character; numbers and literals are skipped, never converted.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]', re.DOTALL)
_QUOTE, _COLON, _COMMA = ord('"'), ord(":"), ord(",")
_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
_DOCUMENT_DECODER = msgspec.json.Decoder()
_STRING_DECODER = msgspec.json.Decoder(str)


class UnreadableDocument(Exception):
    """The bytes are not one readable JSON document; ``reason`` says why, ``field`` where (a key's path)."""

    def __init__(self, kind: UnreadableKind, reason: str, *, field: str | None = None) -> None:
        super().__init__(reason)
        self.kind: UnreadableKind = kind
        self.reason = reason
        self.field = field


@dataclass
class _Level:
    """One object or list being scanned: its path, and the keys seen (an object) or the index (a list)."""

    path: str
    is_object: bool
    keys: set[str] = field(default_factory=set)
    key: str = ""
    index: int = 0

    def child(self) -> str:
        if self.is_object:
            return f"{self.path}.{self.key}" if self.path else self.key
        return f"{self.path}[{self.index}]"


def _key(token: bytes) -> str:
    """A key as JSON means it (``"\\u0061"`` is ``a``); only escaped keys go through the decoder."""
    if b"\\" not in token:
        return token[1:-1].decode("utf-8", "replace")
    try:
        return _STRING_DECODER.decode(token)
    except msgspec.DecodeError:
        return token[1:-1].decode("utf-8", "replace")  # malformed: the typed decode will say so


def find_duplicate(body: bytes, *, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """``(key, path)`` of the first key an object gives twice, or None; ``UnreadableDocument(too_deep)``
    past ``max_depth``. Tolerant of malformed input (its result then means nothing: the decode decides)."""
    levels: list[_Level] = []
    found: tuple[str, str] | None = None
    string: bytes | None = None
    for match in _TOKEN.finditer(body):
        token = match.group()
        first = token[0]
        if first == _QUOTE:
            string = token
            continue
        top = levels[-1] if levels else None
        if first == _COLON:
            if top is not None and top.is_object and string is not None:
                top.key = _key(string)
                if found is None and top.key in top.keys:
                    found = (top.key, top.child())
                top.keys.add(top.key)
        elif first in _OPENERS:
            if len(levels) >= max_depth:
                raise UnreadableDocument("too_deep", "nested too deeply")
            levels.append(_Level(top.child() if top is not None else "", first == ord("{")))
        elif first in _CLOSERS:
            if levels:
                levels.pop()
        elif first == _COMMA and top is not None and not top.is_object:
            top.index += 1
        string = None
    return found


def repeated_key(body: bytes) -> tuple[str, str] | None:
    """``find_duplicate`` for a well-formed document, cheaply when no key occurs twice.

    Without an escaped quote every ``"`` opens or closes a string, so splitting on them gives the strings
    at odd positions, each followed by what comes after it: a key when that starts with a colon. Keys
    are compared as JSON reads them (``"\\u0061"`` is ``a``). A document with an escaped quote, or where
    some key does occur twice, goes to the full walk (which finds its path)."""
    if b'\\"' not in body:
        parts = body.split(b'"')
        keys = [
            key for key, after in zip(parts[1::2], parts[2::2], strict=False) if after.lstrip()[:1] == b":"
        ]
        names: list[bytes] | list[str] = keys
        if b"\\" in b"".join(keys):
            names = [_key(b'"%s"' % key) for key in keys]
        if len(set(names)) == len(names):
            return None
    return find_duplicate(body)


def check_well_formed(body: bytes) -> None:
    """``UnreadableDocument(malformed)`` unless ``body`` is one JSON document (of any values)."""
    try:
        _DOCUMENT_DECODER.decode(body)
    except msgspec.ValidationError:
        pass  # well-formed, with a number too large to hold (the typed decode names its field)
    except msgspec.DecodeError as error:
        # msgspec says where ("... (byte 27)"): the caller's detail keeps it.
        raise UnreadableDocument("malformed", str(error)) from None
    except RecursionError:
        raise UnreadableDocument("too_deep", "nested too deeply") from None


def refuse_duplicate(duplicate: tuple[str, str] | None) -> None:
    """``UnreadableDocument(duplicate_key)`` for a key ``find_duplicate`` found given twice."""
    if duplicate is not None:
        key, path = duplicate
        raise UnreadableDocument("duplicate_key", f"duplicate key `{key}`", field=path)


def decode_json_value(text: str | bytes) -> Any:
    """A JSON value given as text (a command-line flag's), as plain values, read as strictly as a body:
    ``UnreadableDocument`` when it is malformed, too deep or gives a key twice."""
    body = text.encode() if isinstance(text, str) else text
    refuse_duplicate(find_duplicate(body))
    check_well_formed(body)
    return _DOCUMENT_DECODER.decode(body)


def nests_deeper(data: Any, limit: int) -> bool:
    """Whether already-parsed values (a tool call's arguments) nest deeper than ``limit``."""
    return _depth(data, limit) > limit


def _depth(data: Any, limit: int) -> int:
    """How deep ``data`` nests, counting at most to ``limit + 1``."""
    if limit < 0 or not isinstance(data, dict | list | tuple):
        return 0
    children = data.values() if isinstance(data, dict) else data
    return 1 + max((_depth(child, limit - 1) for child in children), default=0)
