"""One input contract for every surface: strict decoding, and its errors told in sentences for people.

``POST /quote``'s body, the MCP tools' arguments and the command line's request are decoded by the same
msgspec rules, strictly (a body is read once, as one JSON document: ``service.documents``): a string is not a number (``"gpu_hours": "48"`` is refused on every surface, ``48``
accepted), ``true`` is not a number, ``1.5`` is not a whole number. A value the schema refuses becomes an
``InvalidRequest`` (422) naming the field by its JSON path (``workload.gpu_hours``, ``card_counts[1]``)
with a reason a person (or a model) can act on; msgspec's own wording never reaches the caller:

==========================================  ==================================================
msgspec says                                the caller reads
==========================================  ==================================================
``Expected `float`, got `str```             ``must be a number, got text``
``Expected `int` >= 1``                     ``must be a whole number ≥ 1``
``Expected `array` of length <= 64``        ``must be a list of at most 64 items``
``Invalid enum value 'speed'``              ``must be one of cost, time, value; got 'speed'``
``Object contains unknown field `colour```  ``unknown field; valid fields: workload, gpus, ...``
``Object missing required field `x```       ``is required``
``Number out of range``                     ``must be a number ≤ 10000000``
==========================================  ==================================================

Query parameters are decoded by Litestar (a query value is always text, so it converts ``"5"`` to 5);
their errors are told in the same sentences (``describe``), without the schema to list valid values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import msgspec
from msgspec import inspect

from schemas.api import OfferSort
from schemas.offer import PricingKind
from service.documents import (
    MAX_DEPTH,
    UnreadableDocument,
    check_well_formed,
    decode_json_value,
    find_duplicate,
    nests_deeper,
    refuse_duplicate,
    repeated_key,
)
from service.errors import InvalidRequest

__all__ = ["convert_input", "decode_json_input", "decode_json_value", "describe", "invalid_input"]

T = TypeVar("T")

_AT = re.compile(r"^(?P<message>.*?) - at `(?:(?P<key>key)` in `)?(?P<path>\$[^`]*)`$", re.DOTALL)
_PATH_TOKEN = re.compile(r"\.(?P<name>[^.\[]+)|\[(?P<index>\d+)\]|\[\.\.\.\]")
_GOT = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
_BOUND = re.compile(r"^Expected `(?P<want>[^`]+)` (?P<op>>=|>|<=|<) (?P<bound>\S+)$")
_LENGTH = re.compile(r"^Expected `(?P<want>[^`]+)` of length (?:(?P<op>>=|<=) )?(?P<count>\d+)$")
_MULTIPLE = re.compile(r"^Expected `(?P<want>[^`]+)` that's a multiple of (?P<bound>\S+)$")
_PATTERN = re.compile(r"^Expected `str` matching regex '(?P<pattern>.*)'$")
_ENUM = re.compile(r"^Invalid enum value (?P<value>.*)$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")

_WANTED = {
    "float": "a number",
    "int": "a whole number",
    "str": "text",
    "bool": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
    "datetime": "a date and time (RFC 3339)",
}
_GOT_WORDS = {
    "float": "a decimal number",
    "int": "a whole number",
    "str": "text",
    "bool": "true/false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}
_OPERATORS = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}
# What one element of each container is called when its length is out of bounds.
_ELEMENTS = {"str": "character", "array": "item", "object": "entry"}

# A sentence, and the name of the field it is about when that is a child of the path msgspec gives (an
# unknown or a missing field): told from the message's match, the schema node there, and whether msgspec
# spoke of a map's key.
_Told: TypeAlias = tuple[str | None, str]
_Teller: TypeAlias = Callable[[re.Match[str], inspect.Type | None, bool], _Told]


def _wanted(types: str) -> str:
    """``array | null`` → ``a list``: null means "not given" and is not worth offering."""
    names = [name.strip() for name in types.split("|")]
    if len(names) > 1:
        names = [name for name in names if name != "null"]
    return " or ".join(_WANTED.get(name, name) for name in names)


def _number(text: str) -> str:
    """A bound as people write it: ``0.0`` → ``0``, ``10000000.0`` → ``10000000``, ``0.001`` stays."""
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)


def _plural(count: str, word: str) -> str:
    return f"{count} {word}" if count == "1" else f"{count} {'entries' if word == 'entry' else word + 's'}"


def _unwrap(node: inspect.Type) -> list[inspect.Type]:
    """The concrete types a node may hold: metadata peeled off, unions split, ``None`` left out."""
    if isinstance(node, inspect.Metadata):
        return _unwrap(node.type)
    if isinstance(node, inspect.UnionType):
        return [inner for branch in node.types for inner in _unwrap(branch)]
    if isinstance(node, inspect.NoneType):
        return []
    return [node]


def _child(node: inspect.Type, name: str | None, index: int | None) -> inspect.Type | None:
    for candidate in _unwrap(node):
        if name is not None and isinstance(candidate, inspect.StructType):
            for field in candidate.fields:
                if field.encode_name == name:
                    return field.type
        if name is None and isinstance(candidate, inspect.DictType) and index is None:
            return candidate.value_type
        if index is not None and isinstance(candidate, inspect.TupleType):
            return candidate.item_types[index] if index < len(candidate.item_types) else None
        if index is not None and isinstance(
            candidate, inspect.ListType | inspect.VarTupleType | inspect.SetType | inspect.FrozenSetType
        ):
            return candidate.item_type
    return None


def _walk(root: Any, path: str, map_key: str | None = None) -> tuple[str, inspect.Type | None]:
    """The path as the caller writes it (``workload.gpu_hours``, ``card_counts[1]``; up to a map and its
    ``map_key`` when known, since msgspec does not name the key) and the schema node there, if ``root`` is
    a type."""
    node: inspect.Type | None = inspect.type_info(root) if root is not None else None
    shown = ""
    in_map = False  # past a map value whose key msgspec does not name: the path shown stops at the map
    for token in _PATH_TOKEN.finditer(path.removeprefix("$")):
        name, index = token["name"], token["index"]
        entering = not in_map and name is None and index is None
        in_map = in_map or entering
        if entering and map_key is not None:
            shown = f"{shown}.{map_key}"
        elif in_map:
            pass
        elif name is not None:
            shown = f"{shown}.{name}" if shown else name
        elif index is not None:
            shown = f"{shown}[{index}]"
        if node is not None:
            node = _child(node, name, int(index) if index is not None else None)
    return shown, node


def _field_names(node: inspect.Type | None) -> list[str]:
    return [
        field.encode_name
        for candidate in (_unwrap(node) if node is not None else [])
        if isinstance(candidate, inspect.StructType)
        for field in candidate.fields
    ]


def _allowed_values(node: inspect.Type | None) -> list[str]:
    values: list[str] = []
    for candidate in _unwrap(node) if node is not None else []:
        if isinstance(candidate, inspect.LiteralType):
            values.extend(str(value) for value in candidate.values)
        elif isinstance(candidate, inspect.EnumType):
            values.extend(str(member.value) for member in candidate.cls)
    return values


def _range_of(node: inspect.Type | None) -> str:
    """``≥ 0.001 and ≤ 10000000`` for a bounded number; empty when the node says nothing."""
    for candidate in _unwrap(node) if node is not None else []:
        if isinstance(candidate, inspect.FloatType | inspect.IntType):
            bounds = [
                f"{symbol} {_number(str(value))}"
                for symbol, value in (
                    ("≥", candidate.ge),
                    (">", candidate.gt),
                    ("≤", candidate.le),
                    ("<", candidate.lt),
                )
                if value is not None
            ]
            return " and ".join(bounds)
    return ""


def _type_mismatch(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    return None, f"must be {_wanted(match['want'])}, got {_GOT_WORDS.get(match['got'], match['got'])}"


def _bound(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    return None, f"must be {_wanted(match['want'])} {_OPERATORS[match['op']]} {_number(match['bound'])}"


def _length(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    want, count = match["want"], match["count"]
    amount = {">=": "at least", "<=": "at most", None: "exactly"}[match["op"]]
    return None, f"must be {_wanted(want)} of {amount} {_plural(count, _ELEMENTS.get(want, 'item'))}"


def _multiple(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    return None, f"must be {_wanted(match['want'])} that is a multiple of {_number(match['bound'])}"


def _pattern(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    return None, f"{'each key must' if key else 'must'} match the pattern {match['pattern']}"


def _enum(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    allowed = _allowed_values(node)
    if allowed:
        return None, f"must be one of {', '.join(allowed)}; got {match['value']}"
    return None, f"{match['value']} is not an accepted value"


def _unknown(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    valid = _field_names(node)
    return match["name"], f"unknown field; valid fields: {', '.join(valid)}" if valid else "unknown field"


def _missing(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    return match["name"], "is required"


def _out_of_range(match: re.Match[str], node: inspect.Type | None, key: bool) -> _Told:
    bounds = _range_of(node)
    return None, f"must be a number {bounds}" if bounds else "is a number too large to use"


# Each msgspec message and its sentence.
_SENTENCES: tuple[tuple[re.Pattern[str], _Teller], ...] = (
    (_GOT, _type_mismatch),
    (_BOUND, _bound),
    (_LENGTH, _length),
    (_MULTIPLE, _multiple),
    (_PATTERN, _pattern),
    (_ENUM, _enum),
    (_UNKNOWN, _unknown),
    (_MISSING, _missing),
    (re.compile(r"^Number out of range$"), _out_of_range),
)


def _reason(message: str, node: inspect.Type | None, *, key: bool) -> _Told:
    for pattern, tell in _SENTENCES:
        if match := pattern.match(message):
            return tell(match, node, key)
    return None, (message[:1].lower() + message[1:]).replace("`", "")


# Query parameters that take one of a fixed set of values, by name (Litestar's error carries no schema).
_QUERY_VALUES: dict[str, Any] = {"pricing": PricingKind, "sort": OfferSort}


def _failing_key(message: str, root: Any, data: Any, path: str) -> str | None:
    """The key of the map at ``path`` whose value ``message`` is about: the first one that fails the same
    way alone (msgspec's path stops at the map, ``speed_ratios[...]``)."""
    tokens = list(_PATH_TOKEN.finditer(path.removeprefix("$")))
    at = next((i for i, token in enumerate(tokens) if token["name"] is None and token["index"] is None), None)
    if at is None or root is None:
        return None
    parent: Any = data
    for token in tokens[:at]:
        if token["name"] is not None and isinstance(parent, dict):
            parent = parent.get(token["name"])
        elif token["index"] is not None and isinstance(parent, list) and int(token["index"]) < len(parent):
            parent = parent[int(token["index"])]
        else:
            return None
    if not isinstance(parent, dict):
        return None
    for key, value in parent.items():
        parent_copy = dict(parent)
        parent.clear()
        parent[key] = value
        try:
            msgspec.convert(data, root)
        except msgspec.ValidationError as error:
            if str(error).startswith(message):
                return str(key)
        finally:
            parent.clear()
            parent.update(parent_copy)
    return None


def describe(message: str, root: Any = None, *, top: str = "body", data: Any = None) -> tuple[str, str]:
    """``(field, reason)`` for one msgspec validation message; ``root`` is the type decoded, when known
    (it lets the reason list valid fields and values), ``top`` what to call the whole input, ``data`` the
    input when known (it names the key of a map whose value fails: ``workload.speed_ratios.h800``)."""
    key = False
    path = ""
    if match := _AT.match(message):
        message, path, key = match["message"], match["path"], match["key"] is not None
    if root is None and not path:
        root = _QUERY_VALUES.get(top)  # a query parameter's enumerated values, for the reason to list
    map_key = None if key or data is None else _failing_key(message, root, data, path)
    shown, node = _walk(root, path, map_key)
    child, reason = _reason(message, node, key=key)
    if child is not None:
        shown = f"{shown}.{child}" if shown else child
    return shown or top, reason


def invalid_input(
    error: msgspec.ValidationError, root: Any = None, *, top: str = "body", data: Any = None
) -> InvalidRequest:
    """The validation error as the ``InvalidRequest`` every surface reports."""
    field, reason = describe(str(error), root, top=top, data=data)
    return InvalidRequest(field, reason)


def _raw(body: bytes) -> Any:
    """The body as plain JSON values, to find a failing map key in; ``None`` when even that fails (a
    number too large for a float)."""
    try:
        return msgspec.json.decode(body)
    except msgspec.MsgspecError:
        return None


def decode_json_input(body: bytes, type_: type[T]) -> T:
    """``body`` read once, as one JSON document, and decoded strictly as ``type_`` (a Struct typed all
    the way down: no ``Any`` field, so a document it decodes from nests no deeper than it).

    ``UnreadableDocument`` when it is not one readable document (malformed, nested deeper than any input
    needs, a key given twice), which wins over a field that is wrong; then ``InvalidRequest`` on a value
    the schema refuses. A body that decodes is parsed once; its keys are then listed by one regular
    expression (``service.documents.repeated_key``). Only a failed decode looks at the document again.
    """
    try:
        value = msgspec.json.decode(body, type=type_)
    except msgspec.ValidationError as error:
        check_well_formed(body)  # a document that is malformed says that first
        refuse_duplicate(find_duplicate(body))  # then one nested too deeply, or saying two things twice
        raise invalid_input(error, type_, data=_raw(body)) from None
    except msgspec.DecodeError as error:
        check_well_formed(body)  # the document decoder's words, the same whatever the type
        raise UnreadableDocument("malformed", str(error)) from None
    except RecursionError:
        raise UnreadableDocument("too_deep", "nested too deeply") from None
    refuse_duplicate(repeated_key(body))
    return value


def convert_input(data: Any, type_: type[T], *, top: str = "arguments") -> T:
    """Already-parsed JSON values (a tool call's arguments, the command line's request) converted as
    strictly as ``decode_json_input`` decodes; ``InvalidRequest`` on a value the schema refuses, and on
    values nested deeper than a body may be."""
    if nests_deeper(data, MAX_DEPTH):
        raise InvalidRequest(top, "nested too deeply")
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as error:
        raise invalid_input(error, type_, top=top, data=data) from None
