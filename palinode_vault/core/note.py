"""A parsed note: frontmatter, links with exact positions, headings, block ids, the footer.

`parse_note` is pure: text in, `Note` out. Notes without constructs that could hide or change
a link (code, comments, HTML, escapes, tables, markdown links...) take a fast scanner that finds
exactly what markdown-it would; everything else goes through markdown-it (see tests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple
from urllib.parse import unquote

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.markers import FOOTER_END, FOOTER_START, LEGACY_FOOTER_MARKER
from palinode_vault.core.text import line_col, line_starts
from palinode_vault.kinds import is_memory_path


class Link(NamedTuple):
    """One link as written. Offsets are into the note's normalised text.

    A NamedTuple rather than a dataclass: a vault has tens of thousands of links, and tuples
    pickle (parse workers, parse cache) about ten times faster.
    """

    kind: str  # "wiki" | "embed" | "md" | "md_embed" | "property"
    target: str  # link path as written ('' for a link to a heading of the same note)
    subpath: str  # heading text or '^blockid' after '#', '' if none
    display: str | None  # text after '|' in a wikilink (None for markdown links)
    start: int
    end: int
    line: int
    column: int
    in_footer: bool = False
    prop: str | None = None  # frontmatter key, for property links

    @property
    def is_embed(self) -> bool:
        return self.kind in ("embed", "md_embed")

    def __reduce__(self):
        # NamedTuple's own __new__ is Python code; rebuilding through tuple.__new__ stays in C.
        return (tuple.__new__, (Link, tuple(self)))


class Footer(NamedTuple):
    start: int  # offset of the first footer line (marker)
    end: int  # offset after the footer's last line
    legacy: bool  # Palinode's older single-marker footer
    raw: str = ""  # the footer's text, so checks need not reread the file
    line: int = 1


@dataclass(slots=True)
class Note:
    path: str
    text_hash: str
    frontmatter: dict[str, Any] | None  # None: no frontmatter block (or it does not parse)
    fm_error: fm.FrontmatterError | None
    fm_block: fm.Block | None
    title: str
    headings: list[tuple[int, str, int]]  # (level, text, line)
    block_ids: frozenset[str]
    links: list[Link]
    footer: Footer | None
    body_start: int
    code: list[tuple[int, int]] = field(default_factory=list)
    full_parse: bool = False  # True when markdown-it was needed
    mention_text: str = ""  # lowercase body tokens (no code, no footer), for cross_refs
    key_lines: dict[str, int] = field(default_factory=dict)  # frontmatter key -> line

    def key_line(self, key: str) -> int:
        """The line of a frontmatter key (the opening '---' line when the key is absent)."""
        return self.key_lines.get(key, 1)

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name

    def __reduce__(self):
        # Pickled as the tuple of its fields: the generated state of a slots dataclass is built
        # in Python per object, and parse workers and the parse cache pickle every note.
        return (Note, tuple([getattr(self, name) for name in _NOTE_FIELDS]))


_NOTE_FIELDS = tuple(f.name for f in fields(Note))


# --- the fast path ------------------------------------------------------------------------
# Most notes are plain paragraphs, lists and headings with wikilinks, a few code spans and
# simple markdown links. For those a left-to-right line scanner finds exactly what markdown-it
# finds, about ten times faster. Anything it is not sure of sends the note to markdown-it:
# block constructs below, and (inside the scanner) unclosed code spans or unusual links.

_NEEDS_FULL_TEXT = ("\\", "][", "$$", "\t")  # escapes, reference links, math, tabs
_HTML = re.compile(r"<(?!!--(?:(?!-->|\[\[)[^\n])*-->)")  # HTML, except a one-line comment without links
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
# a heading or an HTML block (a comment too) inside list items or quotes, nested or not
_CONTAINER_BLOCK = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+[#<]")
_LINK_DEF = re.compile(r" {0,3}\[[^\]]*\]:")


def _needs_markdown_it(body: str) -> bool:
    """Constructs anywhere in the note that only markdown-it judges right."""
    return any(t in body for t in _NEEDS_FULL_TEXT) or ("<" in body and _HTML.search(body) is not None)


def _line_needs_markdown_it(line: str, indent: int, previous: str) -> bool:
    """Block constructs the line scanner leaves to markdown-it (`line` is not indented code)."""
    first = line[indent : indent + 1]
    if first == "|":
        return True  # a table
    if first == "[" and _LINK_DEF.match(line):
        return True  # a link reference definition
    if first in ("=", "-") and previous.strip() and _SETEXT.fullmatch(line):
        return True  # a setext heading underline
    if first and (first in "-*+>" or first.isdigit()) and _CONTAINER_BLOCK.match(line):
        return True
    return False


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SPECIAL = re.compile(r"[\[`]")
_BLOCK_STARTS = frozenset(" `~<#|[=-*+>_")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ ]*){3,}|(?:-[ ]*){3,}|(?:_[ ]*){3,})")
_CONTAINER_START = re.compile(r" {0,3}(?:>|(?:[-*+]|\d{1,9}[.)])(?: |$))")
_SIMPLE_MD_LINK = re.compile(r"\[([^\[\]`\n]*)\]\(([^()\s<>]*)\)")


class _NotSure(Exception):
    """The fast scanner met something only markdown-it can judge."""


def _atx_content(raw: str) -> str:
    """Heading text as markdown-it keeps it: a closing run of '#' after a space is dropped."""
    content = raw.rstrip(" \t")
    stripped = content.rstrip("#")
    if stripped != content and (not stripped or stripped[-1] in " \t"):
        content = stripped
    return content.strip()


def _scan_line(line: str, base: int, links: list, code: list) -> None:
    pos = 0
    consumed = 0  # end of the last construct; a '!' before it is not an embed marker
    n = len(line)
    # Searched once per line, not once per '[' (a line of 50,000 '[' took seconds).
    last_md_close = line.rfind("](")
    close = -1  # the first ']]' at or after the current '[[' + 2, reused while still ahead
    while pos < n:
        m = _SPECIAL.search(line, pos)
        if m is None:
            return
        i = m.start()
        if line[i] == "`":
            run = i
            while run < n and line[run] == "`":
                run += 1
            width = run - i
            j = run
            while True:
                j = line.find("`" * width, j)
                if j == -1:
                    raise _NotSure  # may close on a later line, or be literal: ask markdown-it
                k = j + width
                if (k >= n or line[k] != "`") and line[j - 1] != "`":
                    break
                while j < n and line[j] == "`":
                    j += 1
            code.append((base + i, base + j + width))
            pos = consumed = j + width
            continue
        embed = i > consumed and line[i - 1] == "!"
        if line.startswith("[[", i):
            if close < i + 2:
                close = line.find("]]", i + 2)
                if close == -1:
                    close = n  # none on the rest of the line
            found = close < n
            if found and line.find("[[", i + 2, close) == -1 and line[i + 2 : close].strip():
                inner = line[i + 2 : close]
                start = i - 1 if embed else i
                links.append(("embed" if embed else "wiki", inner, base + start, base + close + 2))
                pos = consumed = close + 2
                continue
        else:
            md = _SIMPLE_MD_LINK.match(line, i)
            if md:
                start = i - 1 if embed else i
                links.append(("md_embed" if embed else "md", md.group(2), base + start, base + md.end()))
                pos = consumed = md.end()
                continue
            # Brackets around plain text not followed by '(' or '[' are literal, like a task
            # box "[ ]": markdown-it reads the text inside as text, so carry on after them.
            shut = line.find("]", i + 1)
            if (shut != -1 and line[shut + 1 : shut + 2] not in ("(", "[")
                    and line.find("[", i + 1, shut) == -1 and line.find("`", i + 1, shut) == -1):
                pos = shut + 1
                continue
        if last_md_close >= i:
            raise _NotSure
        pos = i + 1


def _may_open_block(line: str, stripped: str) -> bool:
    """Whether an indented line inside a list could open a block (not just continue text)."""
    first = stripped[0]
    if first in "#`~<|>=_":
        return True
    if first in "-*+" or first.isdigit():
        return bool(_CONTAINER_BLOCK.match(line) or _THEMATIC_BREAK.fullmatch(line) or _SETEXT.fullmatch(line))
    return False


def _fast_scan(body: str):
    """(links, headings, code) the way markdown-it would find them, or None if unsure."""
    links: list[tuple[str, str, int, int]] = []
    headings: list[tuple[int, str, int]] = []
    code: list[tuple[int, int]] = []
    base = 0
    fence: tuple[str, int, int] | None = None  # (char, length, start offset) of an open fence
    indented: list[int] | None = None  # [start, end] of an open indented code block
    previous = ""
    # A line indented by 4+ spaces is code unless it continues a paragraph; inside a list or a
    # quote the indentation counts from the container, which only markdown-it tracks.
    in_paragraph = False
    in_container = False
    size = len(body)
    try:
        for i, line in enumerate(body.split("\n")):
            step = len(line) + 1
            if fence is not None:
                if line and line[0] in " `~":
                    char, length, start = fence
                    stripped = line.strip(" ")
                    if len(line) - len(line.lstrip(" ")) < 4 and stripped.startswith(char * length) and not stripped.strip(char):
                        code.append((start, min(base + step, size)))
                        fence = None
                previous = line
                base += step
                continue
            stripped = line.lstrip(" ")
            if not stripped:  # blank (spaces only): ends a paragraph, continues indented code
                in_paragraph = False
                previous = line
                base += step
                continue
            indent = len(line) - len(stripped)
            if indented is not None:
                if indent >= 4:
                    indented[1] = min(base + step, size)
                    previous = line
                    base += step
                    continue
                code.append((indented[0], indented[1]))
                indented = None
            if indent >= 4 and in_container and (not in_paragraph or _may_open_block(line, stripped)):
                raise _NotSure  # relative to the list item this may be code, a heading...
            if indent >= 4 and not in_paragraph:
                indented = [base, min(base + step, size)]
                previous = line
                base += step
                continue
            if indent == 0 and not previous.strip() and not _CONTAINER_START.match(line):
                in_container = False  # after a blank line, an unindented line closes lists and quotes
            in_paragraph = True
            first = line[0]
            # Most lines start with a letter; only the others can open a block construct.
            if first in "-*+" and line[1:2] == " " and line[2:3].isalpha():
                in_container = True  # a plain list item "- text": none of the checks below apply
            elif indent < 4 and (first in _BLOCK_STARTS or first.isdigit()):
                if _line_needs_markdown_it(line, indent, previous):
                    raise _NotSure
                opened = _FENCE_OPEN.match(line) if stripped[0] in "`~" else None
                if opened:
                    fence = (opened.group(1)[0], len(opened.group(1)), base)
                    in_paragraph = False
                    previous = line
                    base += step
                    continue
                if stripped.startswith("<!--"):
                    code.append((base, min(base + step, size)))  # a one-line HTML comment block
                    in_paragraph = False
                    previous = line
                    base += step
                    continue
                if stripped[0] == "#":
                    m = _ATX.match(line)
                    if m:
                        headings.append((len(m.group(1)), _atx_content(m.group(2) or ""), i + 1))
                        in_paragraph = False
                elif stripped[0] in "*-_" and _THEMATIC_BREAK.fullmatch(line):
                    in_paragraph = False
                elif _CONTAINER_START.match(line):
                    in_container = True
            if "[" in line or "`" in line:
                _scan_line(line, base, links, code)
            previous = line
            base += step
    except _NotSure:
        return None
    if indented is not None:
        code.append((indented[0], indented[1]))
    if fence is not None:  # an unclosed fence runs to the end of the note...
        tail = body.rfind("\n") + 1
        # ...where markdown-it does not count a last line of only spaces without a newline
        end = tail if tail < size and not body[tail:].strip(" ") else size
        code.append((fence[2], end))
    return links, headings, code


# --- parsing --------------------------------------------------------------------------------

# A block id ends its line; Obsidian also accepts it straight after an embed or link (`]]^id`).
_BLOCK_ID = re.compile(r"(?:^|(?<=[\s\]\)]))\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def split_inner(inner: str) -> tuple[str, str, str | None]:
    """`target#sub|shown` -> (target, sub, shown); a table's `\\|` counts as the pipe."""
    inner = inner.replace("\\|", "|")
    left, bar, shown = inner.partition("|")
    target, _, sub = left.partition("#")
    return target.strip(), sub.strip(), (shown if bar else None)


def _comment_ranges(text: str, start: int, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Obsidian `%% ... %%` comments outside code, paired left to right (may span lines)."""
    if "%%" not in text:
        return []
    marks: list[int] = []
    pos = text.find("%%", start)
    while pos != -1:
        if not any(a <= pos < b for a, b in code):
            marks.append(pos)
        pos = text.find("%%", pos + 2)
    ranges = []
    for i in range(0, len(marks) - 1, 2):
        ranges.append((marks[i], marks[i + 1] + 2))
    if len(marks) % 2:  # an unclosed comment runs to the end of the note
        ranges.append((marks[-1], len(text)))
    return ranges


def find_footer(text: str, body_start: int) -> Footer | None:
    """The machine-owned footer (current or legacy format), if present."""
    # A start marker counts only at the start of a line and closed by an end marker with no
    # other start marker in between: a stray or unclosed marker the person left must not make
    # everything from it to the next footer look machine-owned (the fixer would delete it).
    search = body_start
    while True:
        idx = text.find(FOOTER_START, search)
        if idx == -1:
            break
        end = text.find(FOOTER_END, idx)
        if end == -1:
            break
        after = text.find(FOOTER_START, idx + len(FOOTER_START))
        if (idx == 0 or text[idx - 1] == "\n") and (after == -1 or after > end):
            nl = text.find("\n", end)
            stop = len(text) if nl == -1 else nl + 1
            return Footer(idx, stop, False, text[idx:stop], text.count("\n", 0, idx) + 1)
        search = idx + len(FOOTER_START)
    idx = text.find(LEGACY_FOOTER_MARKER, body_start)
    if idx != -1 and (idx == 0 or text[idx - 1] == "\n"):
        # The legacy footer runs from the marker through the `## See also` list that follows.
        pos = text.find("\n", idx)
        pos = len(text) if pos == -1 else pos + 1
        seen_heading = False
        while pos < len(text):
            nl = text.find("\n", pos)
            line_end = len(text) if nl == -1 else nl + 1
            line = text[pos:line_end].strip()
            if line.startswith("#"):
                if seen_heading:
                    break
                seen_heading = True
            elif line and not line.startswith(("-", "*")):
                break
            pos = line_end
        return Footer(idx, pos, True, text[idx:pos], text.count("\n", 0, idx) + 1)
    return None


def _property_links(text: str, block: fm.Block, data: dict[str, Any], starts) -> list[Link]:
    links: list[Link] = []
    region = text[block.content_start : block.content_end]
    cursor = 0
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str) or "[[" not in item:
                continue
            for m in re.finditer(r"\[\[([^\[\]\n]+?)\]\]", item):
                raw = m.group(0)
                at = region.find(raw, cursor)
                if at == -1:
                    at = max(region.find(raw), 0)
                else:
                    cursor = at + len(raw)
                offset = block.content_start + at
                line, col = line_col(starts, offset)
                target, sub, shown = split_inner(m.group(1))
                links.append(Link("property", target, sub, shown, offset, offset + len(raw), line, col, prop=key))
    return links


def title_of(path: str, data: dict[str, Any] | None, headings: list[tuple[int, str, int]]) -> str:
    """Frontmatter name/title, else the first level-1 heading, else the file name."""
    if data:
        for key in ("name", "title"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    for level, text, _ in headings:
        if level == 1 and text:
            return re.sub(r"^(Decision|Insight):\s*", "", text)
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def parse_note(path: str, text: str, text_hash: str = "") -> Note:
    """Parse normalised note text (see core.text.normalise)."""
    block = fm.find_block(text)
    data: dict[str, Any] | None = None
    error = None
    body_start = 0
    if block is not None:
        data, error = fm.parse(text, block)
        body_start = block.end
    body = text[body_start:]
    starts = line_starts(text)
    body_line0 = text.count("\n", 0, body_start)

    fast = None if _needs_markdown_it(body) else _fast_scan(body)
    full = fast is None
    if full:
        from palinode_vault.core.markdown import scan_body

        scan = scan_body(body)
        raw_links = [(r.kind, r.inner, r.start, r.end) for r in scan.links]
        headings = scan.headings
        code = [(a + body_start, b + body_start) for a, b in scan.code]
    else:
        raw_links, headings, code = fast
        code = [(a + body_start, b + body_start) for a, b in code]
    headings = [(lvl, txt, ln + body_line0) for lvl, txt, ln in headings]
    comments = _comment_ranges(text, body_start, code)
    hidden = code + comments
    footer = find_footer(text, body_start)

    links: list[Link] = []
    for kind, inner, s, e in raw_links:
        s += body_start
        e += body_start
        if comments and any(a <= s < b for a, b in comments):
            continue
        if kind in ("md", "md_embed"):
            href = inner.strip()
            if not href or _EXTERNAL.match(href):
                continue  # web and app links are not vault links
            href = unquote(href)
            target, _, sub = href.partition("#")
            shown = None
        else:
            target, sub, shown = split_inner(inner)
        line, col = line_col(starts, s)
        in_footer = footer is not None and footer.start <= s < footer.end
        links.append(Link(kind, target, sub, shown, s, e, line, col, in_footer))
    if block is not None and data:
        links.extend(_property_links(text, block, data, starts))

    block_ids: set[str] = set()
    if "^" in body:
        for m in _BLOCK_ID.finditer(text, body_start):
            if not hidden or not any(a <= m.start(1) < b for a, b in hidden):
                block_ids.add(m.group(1).lower())
    note = Note(
        path=path,
        text_hash=text_hash,
        frontmatter=data,
        fm_error=error,
        fm_block=block,
        title=title_of(path, data, headings),
        headings=headings,
        block_ids=frozenset(block_ids),
        links=links,
        footer=footer,
        body_start=body_start,
        code=code,
        full_parse=full,
    )
    from palinode_vault.core.crossrefs import body_for_mentions, tokens

    if is_memory_path(path):  # only memory notes carry cross_refs
        note.mention_text = " ".join(tokens(body_for_mentions(text, note)))
    if block is not None and data:
        note.key_lines = {k: line_col(starts, span.start)[0] for k, span in fm.key_spans(text, block).items()}
    return note
