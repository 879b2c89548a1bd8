"""A fast reader for the flat frontmatter most notes have, with PyYAML's exact meaning.

Memory notes carry a dozen `key: value` lines (`category: person`, `core: false`,
`entities: [project/x, person/y]`, `last_updated: 2026-01-23`). Loading those through PyYAML
composes an event stream and a node tree per note, which was a fifth of a cold scan. Here each
line is split by hand and every scalar is typed by PyYAML's own resolver and constructors
(YAML 1.1 booleans, dates, numbers...), memoised by text since the same values recur in every
note. Anything not plainly flat (block lists, multi-line or quoted-with-escapes values, anchors,
tags, comments after values, flow mappings...) returns None and goes to PyYAML whole.
"""

from __future__ import annotations

import re
from typing import Any

from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*?))?[ ]*")
# Characters that may not start a plain scalar, or that make it something else.
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_NOT_IN_FLOW_ITEM = re.compile(r"[\[\]{}:#\"'&*!|>%@`]")
# PyYAML refuses these characters, and reads \x85, \u2028 and \u2029 as line breaks.
_UNUSUAL = re.compile("[^\x0a\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]")
_MEMO_MAX = 50_000

_resolver = Resolver()
_constructor = SafeConstructor()
_memo: dict[str, Any] = {}


class _NotFlat(Exception):
    pass


def _plain(text: str) -> Any:
    """A plain scalar's value exactly as PyYAML's safe loader builds it (immutable, memoised)."""
    try:
        return _memo[text]
    except KeyError:
        pass
    if not text or text[0] in _NOT_PLAIN_START and not (text[0] == "-" and text[1:2] not in ("", " ")):
        raise _NotFlat
    if ": " in text or " #" in text or text.endswith(":"):
        raise _NotFlat
    tag = _resolver.resolve(ScalarNode, text, (True, False))
    try:
        value = _constructor.yaml_constructors[tag](_constructor, ScalarNode(tag, text))
    except Exception as exc:  # an impossible date, say: PyYAML reports it with its position
        raise _NotFlat from exc
    if len(_memo) >= _MEMO_MAX:
        _memo.clear()
    _memo[text] = value
    return value


def _quoted(text: str) -> str:
    quote = text[0]
    inner = text[1:-1]
    if len(text) < 2 or text[-1] != quote or quote in inner or (quote == '"' and "\\" in inner):
        raise _NotFlat
    return inner


def _value(text: str) -> Any:
    if not text:
        return None
    first = text[0]
    if first in "\"'":
        return _quoted(text)
    if first == "[":
        if not text.endswith("]"):
            raise _NotFlat
        inner = text[1:-1]
        if not inner.strip():
            return []
        if _NOT_IN_FLOW_ITEM.search(inner):
            raise _NotFlat
        return [_plain(item.strip()) for item in inner.split(",")]
    return _plain(text)


def _item(text: str) -> Any:
    """One `- item` of a block list: a plain or quoted scalar."""
    if not text:
        raise _NotFlat  # an empty item is null: PyYAML decides
    if text[0] in "\"'":
        return _quoted(text)
    return _plain(text)


def load_flat(content: str) -> dict[Any, Any] | None:
    """The mapping PyYAML would load from `content`, or None when it is not plainly flat.

    Flat: `key: value` lines, and block lists of scalars under an empty key (`aliases:` then
    `  - Name` lines, all at one indentation), as Obsidian writes `aliases`, `tags` and
    `cssclasses`.
    """
    loaded = load_flat_with_key_lines(content)
    return loaded[0] if loaded is not None else None


def load_flat_with_key_lines(content: str) -> tuple[dict[Any, Any], dict[str, int]] | None:
    """`load_flat`, with the 0-based line of each key as written; None also when a key is
    written twice (PyYAML and the duplicate check decide)."""
    if _UNUSUAL.search(content):
        return None  # tabs, carriage returns, control characters: PyYAML decides
    data: dict[Any, Any] = {}
    lines: dict[str, int] = {}
    empty_key: Any = _NotFlat  # the last key with no value, which a block list may follow
    items: list[Any] | None = None
    item_indent = -1
    try:
        for i, line in enumerate(content.split("\n")):
            if not line.strip(" ") or line.startswith("#"):
                continue
            if line[0] in " -" and empty_key is not _NotFlat:
                stripped = line.lstrip(" ")
                indent = len(line) - len(stripped)
                if not stripped.startswith("- ") or (items is not None and indent != item_indent):
                    return None  # not an item, or one at another indentation: PyYAML decides
                if items is None:
                    items, item_indent = [], indent
                    data[empty_key] = items
                items.append(_item(stripped[2:].strip(" ")))
                continue
            m = _KEY_LINE.fullmatch(line)
            if m is None or m.group(1) in lines:
                return None
            lines[m.group(1)] = i
            key = _plain(m.group(1))
            data[key] = _value(m.group(2) or "")
            empty_key = key if not m.group(2) else _NotFlat
            items = None
    except _NotFlat:
        return None
    return (data, lines) if data else None
