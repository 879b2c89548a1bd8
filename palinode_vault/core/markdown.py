"""The markdown-it parser with Obsidian's wikilinks, and exact source offsets for what it finds.

markdown-it gives block tokens a line map but inline tokens only their own content (with list,
quote and table prefixes removed, and `\\|` unescaped in tables). Our inline rules record offsets
inside that content; `_ContentMap` maps them back onto the note's text.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline


@dataclass(frozen=True, slots=True)
class RawLink:
    """A link as found in the body, before resolution."""

    kind: str  # "wiki" | "embed" | "md" | "md_embed"
    inner: str  # for wiki/embed: the text between the brackets; for md: the destination
    start: int  # normalised-text offsets of the whole link
    end: int


@dataclass(frozen=True, slots=True)
class BodyScan:
    links: list[RawLink]
    headings: list[tuple[int, str, int]]  # (level, text, line)
    code: list[tuple[int, int]]  # offsets covered by code (blocks and spans)


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src = state.src
    pos = state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    inner_start = pos + (3 if embed else 2)
    # The first "]]" from here on; reused while still ahead, so a line of many "[" (which
    # markdown-it retries at every position) is searched once, not once per bracket.
    memo = getattr(state, "_palinode_close", None)
    if memo is not None and memo[0] <= inner_start and (memo[1] == -1 or memo[1] >= inner_start):
        close = memo[1]
    else:
        close = src.find("]]", inner_start)
        state._palinode_close = (inner_start, close)  # type: ignore[attr-defined]
    if close == -1:
        return False
    inner = src[inner_start:close]
    if not inner.strip() or "\n" in inner or "[[" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"embed": embed, "inner": inner, "pos": pos, "end": close + 2}
        token.content = inner
    state.pos = close + 2
    return True


def _with_position(rule, token_type: str):
    """Wrap a built-in inline rule so the token it pushes remembers where it started.

    (Pending plain text is flushed as a token first, so look for the rule's own token type.)
    """

    def positioned(state: StateInline, silent: bool) -> bool:
        start = state.pos
        before = len(state.tokens)
        ok = rule(state, silent)
        if ok and not silent:
            for token in state.tokens[before:]:
                if token.type == token_type:
                    token.meta = dict(token.meta or {}, pos=start, end=state.pos)
                    break
        return ok

    return positioned


def _not_a_footnote(reference_rule):
    """Obsidian reads `[^label]: text` as a footnote, never as a link reference definition
    (CommonMark would make `[^1]` a link to `text`); such a line stays a paragraph."""

    def reference(state, start_line: int, end_line: int, silent: bool) -> bool:
        pos = state.bMarks[start_line] + state.tShift[start_line]
        if state.src.startswith("[^", pos):
            return False
        return reference_rule(state, start_line, end_line, silent)

    return reference


def _inline_where_links_can_be(state) -> None:
    """The core `inline` rule, run only on inline tokens that can hold what we collect.

    Every token `scan_body` reads from an inline parse starts with `[` (links, images,
    wikilinks) or a backtick (code spans); a paragraph, heading or cell without either yields
    only text, emphasis, entities, autolinks and HTML, none of which we keep. Skipping those
    parses changes no link, heading or code range (tests check it against the full parse on
    the corpora) and saves most of markdown-it's inline work on real notes.
    """
    md, env = state.md, state.env
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            content = token.content
            if "[" in content or "`" in content:
                md.inline.parse(content, md, env, token.children)


def build_parser(every_inline: bool = False) -> MarkdownIt:
    """CommonMark + tables + strikethrough, with wikilinks and positioned links/code spans.

    Inline content is parsed only where a link or code span can be (`every_inline=True`: all
    of it, as markdown-it itself does; the tests compare the two).
    """
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    if not every_inline:
        md.core.ruler.at("inline", _inline_where_links_can_be)
        md.core.ruler.disable("text_join")  # merges adjacent text tokens, which we never read
    block_rules = {r.name: r.fn for r in md.block.ruler.__rules__}
    md.block.ruler.at("reference", _not_a_footnote(block_rules["reference"]))
    rules = {r.name: r.fn for r in md.inline.ruler.__rules__}
    md.inline.ruler.at("backticks", _with_position(rules["backticks"], "code_inline"))
    md.inline.ruler.at("link", _with_position(rules["link"], "link_open"))
    md.inline.ruler.at("image", _with_position(rules["image"], "image"))
    # After backticks (code spans are consumed first), before link ("[[" is not a md link).
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    return md


_PARSER: MarkdownIt | None = None


def parser() -> MarkdownIt:
    global _PARSER
    if _PARSER is None:
        _PARSER = build_parser()
    return _PARSER


class _ContentMap:
    """Maps offsets in an inline token's content to offsets in the text it was parsed from."""

    cursor_after = 0

    def __init__(self, text: str, starts: list[int], token):
        self.segments: list[tuple[int, int, list[int] | None]] = []  # (content_off, text_off, esc)
        lines = token.content.split("\n")
        first, last = token.map
        c_off = 0
        line_no = first
        top = min(last, len(starts)) - 1
        for j, cline in enumerate(lines):
            # Content lines are source lines minus a prefix (indent, "> ", list marker); the
            # last one is also right-stripped. Headings lose closing "#"s: fall back to find.
            # A leading line of only form feeds and the like is stripped from the content
            # entirely (Python's strip), so skip source lines that do not hold this one.
            # Leading tabs come out of markdown-it expanded to spaces, so the content's text
            # after its leading whitespace is what must match the source.
            tail = cline.lstrip(" ")
            shift = len(cline) - len(tail)
            while True:
                ls = starts[min(line_no, top)]
                le = text.find("\n", ls)
                src_line = text[ls : (len(text) if le == -1 else le)]
                body = src_line.rstrip() if j == len(lines) - 1 else src_line
                if line_no >= top or body.endswith(tail) or (tail and tail in src_line):
                    break
                line_no += 1
            if body.endswith(cline):
                at, shift = len(body) - len(cline), 0
            elif body.endswith(tail):
                at = len(body) - len(tail)
            else:
                found = src_line.find(tail)
                at, shift = (found, shift) if found != -1 else (0, 0)
            self.segments.append((c_off + shift, ls + at, None))
            c_off += len(cline) + 1
            line_no += 1

    def __call__(self, offset: int) -> int:
        seg = self.segments[0]
        for candidate in self.segments:
            if candidate[0] <= offset:
                seg = candidate
            else:
                break
        c_off, t_off, esc = seg
        rel = offset - c_off
        if esc:
            rel += sum(1 for i in esc if i < rel)
        return t_off + rel


def scan_body(body: str, md: MarkdownIt | None = None) -> BodyScan:
    """Links, headings and code ranges of a note's body, with offsets and lines in `body`
    (`md`: another parser from `build_parser`, for tests)."""
    from palinode_vault.core.text import line_starts

    # markdown-it ends a line at a lone "\r" (CRLF is already normalised away); our offsets and
    # line numbers count "\n" only, so its line map pointed links at the wrong bytes. A space
    # keeps every offset, and the line scanner treats a lone "\r" the same way.
    if "\r" in body:
        body = body.replace("\r", " ")
    tokens = (md or parser()).parse(body)
    starts = line_starts(body)
    n_lines = len(starts)
    links: list[RawLink] = []
    headings: list[tuple[int, str, int]] = []
    code: list[tuple[int, int]] = []
    in_table = False
    table_cursor: dict[int, int] = {}
    heading_level = 0

    def offset_of_line(i: int) -> int:
        return starts[i] if i < n_lines else len(body)

    for token in tokens:
        kind = token.type
        if kind == "table_open":
            in_table = True
        elif kind == "table_close":
            in_table = False
        elif kind in ("fence", "code_block") and token.map:
            code.append((offset_of_line(token.map[0]), offset_of_line(token.map[1])))
        elif kind == "html_block" and token.map:
            # Obsidian does not index links inside raw HTML blocks either.
            code.append((offset_of_line(token.map[0]), offset_of_line(token.map[1])))
        elif kind == "heading_open":
            heading_level = int(token.tag[1])
        elif kind == "inline" and token.map and token.children is not None:
            if in_table:
                row = token.map[0]
                cmap = _table_map(body, starts, token, table_cursor.get(row, 0))
                table_cursor[row] = cmap.cursor_after
            else:
                cmap = _ContentMap(body, starts, token)
            if heading_level:
                headings.append((heading_level, token.content.strip(), token.map[0] + 1))
                heading_level = 0
            for child in token.children:
                meta = child.meta
                if not meta or "pos" not in meta:
                    continue
                s, e = cmap(meta["pos"]), cmap(meta["end"] - 1) + 1
                if child.type == "wikilink":
                    links.append(RawLink("embed" if meta["embed"] else "wiki", meta["inner"], s, e))
                elif child.type == "link_open":
                    links.append(RawLink("md", str(child.attrGet("href") or ""), s, e))
                elif child.type == "image":
                    links.append(RawLink("md_embed", str(child.attrGet("src") or ""), s, e))
                elif child.type == "code_inline":
                    code.append((s, e))
    return BodyScan(links, headings, code)


def _table_map(body: str, starts: list[int], token, cursor: int) -> _ContentMap:
    """A map for one table cell, searching the row from where the previous cell ended.

    markdown-it unescapes `\\|` inside cells, so a cell's `|` stands for two source characters.
    """
    cmap = _ContentMap.__new__(_ContentMap)
    row = token.map[0]
    ls = starts[row]
    le = body.find("\n", ls)
    src_line = body[ls : (len(body) if le == -1 else le)]
    content = token.content
    escaped = content.replace("|", "\\|")
    at = src_line.find(escaped, cursor) if content else -1
    esc: list[int] | None = [i for i, ch in enumerate(content) if ch == "|"] or None
    if at == -1:
        at = max(src_line.find(content, cursor), cursor)
        esc = None
        cmap.cursor_after = at + len(content)
    else:
        cmap.cursor_after = at + len(escaped)
    cmap.segments = [(0, ls + at, esc)]
    return cmap
