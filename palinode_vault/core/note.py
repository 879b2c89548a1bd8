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
from palinode_vault.core import line_scan
from palinode_vault.core.line_scan import compiled_links
from palinode_vault.core.markers import FOOTER_END, FOOTER_START, LEGACY_FOOTER_MARKER
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


# --- parsing --------------------------------------------------------------------------------

# A block id ends its line, at its start or after whitespace; Obsidian also accepts it straight
# after an embed or link (`]]^id`). The pattern starts with its literal `^` (a search for it is
# fast) and `_block_ids` checks the character before.
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*$", re.MULTILINE)
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def split_inner(inner: str) -> tuple[str, str, str | None]:
    """`target#sub|shown` -> (target, sub, shown); a table's `\\|` counts as the pipe."""
    inner = inner.replace("\\|", "|")
    left, bar, shown = inner.partition("|")
    target, _, sub = left.partition("#")
    return target.strip(), sub.strip(), (shown if bar else None)


_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Lowercase words and numbers: what `cross_refs` mention matching compares."""
    return _TOKEN.findall(text.lower())


def body_for_mentions(text: str, note: Note) -> str:
    """The body text that counts: no frontmatter, no machine footer, no code, no %% comments %%."""
    cut: list[tuple[int, int]] = sorted(note.code + comment_ranges(text, note.body_start, note.code))
    if note.footer is not None:
        cut.append((note.footer.start, note.footer.end))
        cut.sort()
    parts = []
    pos = note.body_start
    for a, b in cut:
        if a > pos:
            parts.append(text[pos:a])
        pos = max(pos, b)
    parts.append(text[pos:])
    return " ".join(parts)


def comment_ranges(text: str, start: int, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
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
        # The legacy footer runs from the marker through the `## See also` list that follows;
        # Palinode itself writes the heading first, then the marker, then the list: the
        # heading belongs to the footer then (else a migration leaves two `## See also`).
        heading = _see_also_before(text, idx, body_start)
        pos = text.find("\n", idx)
        pos = len(text) if pos == -1 else pos + 1
        seen_heading = heading is not None
        if heading is not None:
            idx = heading
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


_SEE_ALSO = re.compile(r"#{1,6}[ \t]+see also[ \t#]*", re.IGNORECASE)


def _see_also_before(text: str, marker: int, body_start: int) -> int | None:
    """The offset of a `## See also` heading right above the marker (blank lines between)."""
    end = marker
    while end > body_start:
        start = text.rfind("\n", body_start, end - 1) + 1
        start = max(start, body_start)
        line = text[start : end - 1] if text[end - 1] == "\n" else text[start:end]
        if line.strip():
            return start if _SEE_ALSO.fullmatch(line.strip()) else None
        end = start
    return None


class _LineOf:
    """1-based (line, column) of offsets asked for mostly in increasing order, counting newlines
    from the last offset asked (a table of every line start cost more than the links need;
    offsets asked for in order cost one pass over the text in all)."""

    __slots__ = ("text", "pos", "line", "start")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0  # the last offset asked for
        self.line = 1  # its line
        self.start = 0  # where that line starts

    def __call__(self, offset: int) -> tuple[int, int]:
        if offset < self.pos:
            self.pos, self.line, self.start = 0, 1, 0
        moved = self.text.count("\n", self.pos, offset)
        if moved:
            self.line += moved
            self.start = self.text.rfind("\n", self.pos, offset) + 1
        self.pos = offset
        return self.line, offset - self.start + 1


def _property_links(text: str, block: fm.Block, data: dict[str, Any], line_of: _LineOf) -> list[Link]:
    links: list[Link] = []
    region = text[block.content_start : block.content_end]
    cursor = 0
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str) or "[[" not in item:
                continue
            for m in re.finditer(r"\[\[([^\[\]\n]+?)\]\]", item):
                found = _find_in_source(region, m.group(0), cursor)
                if found is None:
                    continue  # escapes in a quoted value: no span of the file reads as this link
                at, end = found
                cursor = end
                line, col = line_of(block.content_start + at)
                target, sub, shown = split_inner(m.group(1))
                links.append(
                    Link("property", target, sub, shown, block.content_start + at, block.content_start + end, line, col, prop=key)
                )
    return links


def _find_in_source(region: str, raw: str, cursor: int) -> tuple[int, int] | None:
    """Where the frontmatter's text holds a link YAML parsed as `raw`: verbatim, else folded
    (a plain value that goes on over several lines reads as one line: `[[a\\n  b]]` is `[[a b]]`)."""
    at = region.find(raw, cursor)
    if at == -1:
        at = region.find(raw)
    if at != -1:
        return at, at + len(raw)
    folded = re.compile(r"\s+".join(re.escape(part) for part in raw.split()))
    m = folded.search(region, cursor) or folded.search(region)
    return (m.start(), m.end()) if m else None


def _block_ids(text: str, body_start: int, hidden: list[tuple[int, int]]) -> set[str]:
    """The `^id`s of the body (lower-cased) outside code and comments."""
    found: set[str] = set()
    for m in _BLOCK_ID.finditer(text, body_start):
        at = m.start()
        # A match cannot hide another (no `^` inside one): a rejected one is simply passed.
        if at > 0 and not (text[at - 1].isspace() or text[at - 1] in "])"):
            continue
        if not hidden or not any(a <= m.start(1) < b for a, b in hidden):
            found.add(m.group(1).lower())
    return found


def body_links(text: str, body_start: int, raw_links: list[tuple[str, str, int, int]], footer: Footer | None) -> list[Link]:
    """The scanner's (kind, inner, start, end) links of the body (offsets from `body_start`) as
    `Link`s placed in the whole text: split, with line and column, web and app links left out.
    The C scanner's module builds them where it is built; a markdown link with a '%' to unquote,
    or no C module, and `body_links_in_python` does (tests/test_core_line_scan_c.py: the same)."""
    fstart, fend = (footer.start, footer.end) if footer is not None else (-1, -1)
    if compiled_links is not None:
        built = compiled_links(text, body_start, raw_links, fstart, fend, Link)
        if built is not None:
            return built
    return body_links_in_python(text, body_start, raw_links, fstart, fend)


def body_links_in_python(
    text: str, body_start: int, raw_links: list[tuple[str, str, int, int]], footer_start: int, footer_end: int
) -> list[Link]:
    """`body_links` in Python (the footer as its offsets, -1 and -1 for none)."""
    links: list[Link] = []
    line_of = _LineOf(text)
    for kind, inner, s, e in raw_links:
        s += body_start
        e += body_start
        if kind in ("md", "md_embed"):
            href = inner.strip()
            if not href or _EXTERNAL.match(href):
                continue  # web and app links are not vault links
            href = unquote(href)
            target, _, sub = href.partition("#")
            shown = None
        elif "|" in inner or "#" in inner:
            target, sub, shown = split_inner(inner)
        else:  # most links: the path alone (what split_inner gives, without its three splits)
            target, sub, shown = inner.strip(), "", None
        line, col = line_of(s)
        links.append(Link(kind, target, sub, shown, s, e, line, col, footer_start <= s < footer_end))
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
    key_lines: dict[str, int] = {}
    body_start = 0
    if block is not None:
        data, error, key_lines = fm.parse_with_key_lines(text, block)
        body_start = block.end
    body = text[body_start:]
    body_line0 = text.count("\n", 0, body_start)

    fast = None if line_scan.needs_markdown_it(body) else line_scan.scan(body)
    full = fast is None
    if fast is None:
        from palinode_vault.core.markdown import scan_body

        scan = scan_body(body)
        raw_links = [(r.kind, r.inner, r.start, r.end) for r in scan.links]
        headings = scan.headings
        code = [(a + body_start, b + body_start) for a, b in scan.code]
    else:
        raw_links, headings, code = fast
        code = [(a + body_start, b + body_start) for a, b in code]
    headings = [(lvl, txt, ln + body_line0) for lvl, txt, ln in headings]
    comments = comment_ranges(text, body_start, code)
    hidden = code + comments
    footer = find_footer(text, body_start)

    if comments:
        raw_links = [r for r in raw_links if not any(a <= r[2] + body_start < b for a, b in comments)]
    links = body_links(text, body_start, raw_links, footer)
    if block is not None and data:
        links.extend(_property_links(text, block, data, _LineOf(text)))

    block_ids = _block_ids(text, body_start, hidden) if "^" in body else set()
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
    if is_memory_path(path):  # only memory notes carry cross_refs
        note.mention_text = " ".join(tokens(body_for_mentions(text, note)))
    if data:
        note.key_lines = key_lines
    return note
