"""YAML frontmatter: find it, read it (python-frontmatter's YAML handler), and edit single keys.

Edits touch only the lines of the key being changed (or append one key at the end), so other
keys, their order, quoting and comments stay exactly as the person wrote them.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from palinode_vault.core.flat_yaml import load_flat_with_key_lines
from palinode_vault.core.text import Span

_HANDLER = YAMLHandler()
_OPEN = "---"
_CLOSERS = ("---", "...")
_TOP_KEY = re.compile(r"^([^\s#:\-][^:]*?|\"[^\"]*\"|'[^']*'):(?=\s|$)")
MAX_ALIAS_NODES = 10_000  # a YAML "billion laughs" expands far beyond this
_ALIAS_BOMB = "YAML anchors/aliases expand to too many values (an alias bomb?)"


@dataclass(frozen=True, slots=True)
class FrontmatterError:
    message: str
    line: int  # 1-based line in the file
    column: int

    def __reduce__(self):  # faster to unpickle than the generated slots state (parse cache)
        return (FrontmatterError, (self.message, self.line, self.column))


@dataclass(frozen=True, slots=True)
class Block:
    """Where the frontmatter sits in normalised text."""

    start: int  # offset of the opening '---'
    content_start: int  # first character of the YAML
    content_end: int  # end of the YAML (start of the closing line)
    end: int  # offset just after the closing line's newline (the body starts here)

    def __reduce__(self):  # faster to unpickle than the generated slots state (parse cache)
        return (Block, (self.start, self.content_start, self.content_end, self.end))


def find_block(text: str) -> Block | None:
    """The frontmatter block, if the text starts with a '---' line that is closed later."""
    if not text.startswith(_OPEN):
        return None
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].rstrip() != _OPEN:
        return None
    pos = first_nl + 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl == -1 else nl
        if text[pos:line_end].rstrip() in _CLOSERS:
            end = line_end if nl == -1 else nl + 1
            return Block(0, first_nl + 1, pos, end)
        if nl == -1:
            return None
        pos = nl + 1
    return None


def parse(text: str, block: Block) -> tuple[dict[str, Any] | None, FrontmatterError | None]:
    """Load the YAML of a block: (mapping, None) or (None, error with file line and column)."""
    data, error, _ = parse_with_key_lines(text, block)
    return data, error


def parse_with_key_lines(text: str, block: Block) -> tuple[dict[str, Any] | None, FrontmatterError | None, dict[str, int]]:
    """`parse`, and `key_lines` when the YAML loads (one pass over the lines finds both the
    keys' lines and a duplicate key)."""
    content = text[block.content_start : block.content_end]
    first_line = text.count("\n", 0, block.content_start) + 1
    if not content.strip():
        return {}, None, {}
    data, error, keys = _load(content, first_line)
    if data is None:
        return None, error, {}
    return data, None, {key: first_line + i for key, i in keys.items()}


def _load(content: str, first_line: int) -> tuple[dict[str, Any] | None, FrontmatterError | None, dict[str, int]]:
    """`parse_with_key_lines` of non-blank YAML; key lines counted from the block's first line."""
    if "\t" in content:
        # PyYAML reports tabs obscurely; name the line ourselves.
        for i, line in enumerate(content.split("\n")):
            stripped = line.lstrip(" ")
            if stripped.startswith("\t"):
                error = FrontmatterError(
                    "tab used for indentation in YAML frontmatter; use spaces",
                    first_line + i,
                    len(line) - len(stripped) + 1,
                )
                return None, error, {}
    keys: dict[str, int] | None = None
    try:
        flat = load_flat_with_key_lines(content)
        data, keys = flat if flat is not None else (None, None)
        if data is None:
            if "*" in content and _alias_bomb(content):
                return None, FrontmatterError(_ALIAS_BOMB, first_line, 1), {}
            data = _HANDLER.load(content)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        context_mark = getattr(exc, "context_mark", None)
        if context_mark is not None and mark is not None and not content[mark.index :].strip():
            # An unclosed quote or bracket fails at the end of the block; the useful place
            # is where it was opened ("while scanning a quoted scalar", line 3 column 7).
            problem = f"{exc.context}: {problem}" if getattr(exc, "context", None) else problem
            mark = context_mark
        at_line = first_line + (mark.line if mark else 0)
        column = (mark.column + 1) if mark else 1
        return None, FrontmatterError(f"YAML does not parse: {problem}", at_line, column), {}
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an impossible date
        return None, FrontmatterError(f"YAML value cannot be read: {exc}", first_line, 1), {}
    if data is None:
        return {}, None, {}
    if not isinstance(data, dict):
        what = f"frontmatter is a {type(data).__name__}, not a mapping of keys to values"
        return None, FrontmatterError(what, first_line, 1), {}
    duplicate = None
    if keys is None:  # the flat reader's lines are the keys' (it defers a repeated key)
        keys, duplicate = _top_keys(content)
    if duplicate:
        key, offset = duplicate
        return None, FrontmatterError(f"duplicate key '{key}' in frontmatter", first_line + offset, 1), {}
    if ("*" in content or "&" in content) and _too_many_nodes(data):
        return None, FrontmatterError(_ALIAS_BOMB, first_line, 1), {}
    return {str(k): v for k, v in data.items()}, None, keys


def _top_keys(content: str) -> tuple[dict[str, int], tuple[str, int] | None]:
    """Each top-level key's line in `content` (0-based; a repeated key's last line, as
    `key_spans` has it) and the first repeated key with its line, if any."""
    lines: dict[str, int] = {}
    duplicate = None
    for i, line in enumerate(content.split("\n")):
        m = _TOP_KEY.match(line)
        if m:
            key = m.group(1).strip("\"'")
            if duplicate is None and key in lines:
                duplicate = key, i
            lines[key] = i
    return lines, duplicate


def _alias_bomb(content: str) -> bool:
    """True when the YAML's aliases would expand past `MAX_ALIAS_NODES` nodes.

    Checked on the composed node graph, before anything is built: merge keys (`<<: *a`) make
    PyYAML's constructor copy mappings again and again, so a small document can take minutes
    and gigabytes to load (every PyYAML release so far). Composing is linear in the text.
    """
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(content)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    budget = MAX_ALIAS_NODES
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return False


def _too_many_nodes(data: Any) -> bool:
    budget = MAX_ALIAS_NODES
    stack = [data]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# --- locating and editing keys -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeySpan:
    key: str
    start: int  # offset of the key's first line
    end: int  # offset after the last line belonging to the key (after its newline)
    flow: bool  # value written inline (`key: [a, b]` or `key: value`) rather than a block list
    indent: str  # indentation of block list items


def key_lines(text: str, block: Block) -> dict[str, int]:
    """The 1-based file line of each top-level key (the lines `key_spans` starts them on)."""
    first = text.count("\n", 0, block.content_start) + 1
    lines, _ = _top_keys(text[block.content_start : block.content_end])
    return {key: first + i for key, i in lines.items()}


def key_spans(text: str, block: Block) -> dict[str, KeySpan]:
    """Top-level keys of a frontmatter block and the lines each one covers."""
    spans: dict[str, KeySpan] = {}
    pos = block.content_start
    current: tuple[str, int, bool] | None = None
    indent = "  "
    last_content_end = pos
    while pos < block.content_end:
        nl = text.find("\n", pos, block.content_end)
        line_end = block.content_end if nl == -1 else nl + 1
        line = text[pos:line_end].rstrip("\n")
        m = _TOP_KEY.match(line)
        if m:
            if current:
                spans[current[0]] = KeySpan(current[0], current[1], last_content_end, current[2], indent)
            value = line[m.end() :].strip()
            current = (m.group(1).strip("\"'"), pos, bool(value) and not value.startswith("#"))
            indent = "  "
            last_content_end = line_end
        elif current is not None and line.strip():
            if line.lstrip().startswith("- "):
                indent = line[: len(line) - len(line.lstrip())]
            if line[:1] in (" ", "\t", "-"):  # continuation of this key's value
                last_content_end = line_end
        pos = line_end
    if current:
        spans[current[0]] = KeySpan(current[0], current[1], last_content_end, current[2], indent)
    return spans


_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@+-]*$")


def render_scalar(value: Any) -> str:
    """A YAML scalar in the plain style where safe, else double-quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    text = str(value)
    if _PLAIN_SAFE.match(text) and text.lower() not in {"true", "false", "null", "yes", "no", "on", "off", "~"}:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_key(key: str, value: Any, *, flow: bool = True, indent: str = "  ") -> str:
    """Lines for one top-level key, ending in a newline."""
    if isinstance(value, (list, tuple)):
        if flow or not value:
            return f"{key}: [{', '.join(render_scalar(v) for v in value)}]\n"
        return f"{key}:\n" + "".join(f"{indent}- {render_scalar(v)}\n" for v in value)
    return f"{key}: {render_scalar(value)}\n"


def set_key(text: str, block: Block, key: str, value: Any) -> Span:
    """A span that sets one top-level key, keeping the style of its current value if any."""
    spans = key_spans(text, block)
    existing = spans.get(key)
    if existing is None:
        insert_at = block.content_end
        prefix = "" if insert_at == block.content_start or text[insert_at - 1] == "\n" else "\n"
        return Span(insert_at, insert_at, prefix + render_key(key, value))
    rendered = render_key(key, value, flow=existing.flow, indent=existing.indent)
    old = text[existing.start : existing.end]
    if not old.endswith("\n"):
        rendered = rendered[:-1]
    # Keep a trailing comment on a one-line value, e.g. `core: false  # inner circle`.
    first_line = old.split("\n", 1)[0]
    comment = re.search(r"\s+#[^\"']*$", first_line)
    if existing.flow and comment and "\n" not in old.rstrip("\n"):
        rendered = rendered.rstrip("\n") + comment.group(0) + ("\n" if old.endswith("\n") else "")
    return Span(existing.start, existing.end, rendered)
