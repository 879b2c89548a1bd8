"""The line scanner: links, headings and code of a plain note, exactly as markdown-it finds them.

Most notes are paragraphs, lists and headings with wikilinks, fences, a few code spans and simple
markdown links. For those a left-to-right line scanner finds exactly what markdown-it (with our
wikilink rule, core/markdown.py) finds, about ten times faster. Anything it is not sure of sends
the note to markdown-it: constructs found anywhere in the text (`needs_markdown_it`), block
constructs met line by line, unclosed code spans or unusual links (`scan` returns None).
Property tests and the real corpora check that the two agree (tests/test_core_parse.py).

Where a C compiler was there at install, `_line_scan.c` reads first: the same scanner for the
notes it is sure of (on the help vault, every note the Python scanner takes), about five times
faster; when it is not sure, the Python scanner below reads the note
(tests/test_core_line_scan_c.py keeps the two in step).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markdown_it.common.html_re import HTML_TAG_RE
from markdown_it.common.utils import MD_TRIM_CHARS
from markdown_it.rules_block.html_block import HTML_SEQUENCES
from markdown_it.rules_block.table import headerLineRe
from markdown_it.rules_inline.autolink import AUTOLINK_RE, EMAIL_RE

compiled_scan: Callable[[str], Any] | None
compiled_links: Callable[..., Any] | None  # note.body_links in C (the same module)
try:
    from palinode_vault.core._line_scan import links as compiled_links
    from palinode_vault.core._line_scan import scan as compiled_scan
except ImportError:  # built without a C compiler, or PALINODE_PURE_PYTHON=1: the Python scanner alone
    compiled_scan = compiled_links = None

_NEEDS_FULL_TEXT = ("][",)  # reference links (their definitions may be anywhere)
# a one-line HTML comment without links, at the start of a line: an HTML block the scanner takes
_ONE_LINE_COMMENT = re.compile(r"<!--(?:(?!-->|\[\[)[^\n])*-->")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
# a heading or an HTML block (a comment too) inside list items or quotes, nested or not
_CONTAINER_BLOCK = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+[#<]")
_CONTAINER_RUN = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+")  # the markers those share
_LINK_DEF = re.compile(r" {0,3}\[(?:[^\]\\]|\\.)*(?:\]:|\\?$)")  # a definition, or a label going on below
_CONTAINER_LINK_DEF = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+\[(?!\^)(?:[^\]\\]|\\.)*(?:\]:|\\?$)")
# a table's delimiter row (`|---|:-:|`, `--|--`), inside quotes or not; markdown-it's own test
_DELIMITER_ROW = re.compile(r"[ >]*(?!-[ \t])[|:-][|: \t-]*")
# lists and quotes nested this deep on one line: markdown-it stops at its nesting limit
_DEEP_NESTING = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*){5}")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def needs_markdown_it(body: str) -> bool:
    """Constructs anywhere in the note that only markdown-it judges right."""
    return any(t in body for t in _NEEDS_FULL_TEXT)


def _line_needs_markdown_it(line: str, indent: int, previous: str) -> bool:
    """Block constructs the line scanner leaves to markdown-it (`line` is not indented code)."""
    first = line[indent : indent + 1]
    if first == "|":
        return True  # a table
    if first == "[" and not line.startswith("[^", indent) and _LINK_DEF.match(line):
        return True  # a link reference definition (Obsidian's `[^1]: text` is a footnote)
    if first == "<":
        # An HTML block (markdown-it's own start conditions), except a one-line comment; any
        # other `<` starts a paragraph, where inline HTML is read by `_scan_line`.
        return _opens_html_block(line[indent:]) and not _ONE_LINE_COMMENT.match(line, indent)
    if first in ("=", "-") and not _blank(previous) and _SETEXT.fullmatch(line):
        return True  # a setext heading underline
    if first and (first in "-*+>" or first.isdigit()):
        # The three container patterns share their run of markers, and that run has only one
        # way to match: each of them can only match where the run ends, or (five deep) after
        # five characters. One match of the run, then only the pattern that can apply.
        run = _CONTAINER_RUN.match(line)
        if run is not None:
            end = run.end()
            after = line[end : end + 1]
            if after in ("#", "<") and _opens_block(line[end:]):
                return True  # a heading or an HTML block inside the container
            if end >= 5 and _DEEP_NESTING.match(line) or after == "[" and _CONTAINER_LINK_DEF.match(line):
                return True
    if first in "|:->" and not _blank(previous) and _DELIMITER_ROW.fullmatch(line):
        return True  # a table's delimiter row under its header
    return False


_ATX_OPEN = re.compile(r"#{1,6}(?:[ \t]|$)")


def _opens_html_block(text: str) -> bool:
    """Whether a line's content (from its '<') starts an HTML block, as markdown-it decides."""
    return any(sequence[0].search(text) for sequence in HTML_SEQUENCES)


def _html_block_end(text: str, in_paragraph: bool) -> re.Pattern[str] | None:
    """The end condition of the HTML block a line's content (from its '<') opens, as markdown-it
    decides (None: no block; a tag alone on its line does not interrupt a paragraph)."""
    for opening, closing, interrupts in HTML_SEQUENCES:
        if opening.search(text):
            return closing if interrupts or not in_paragraph else None
    return None


def _opens_block(text: str) -> bool:
    """Whether a list item's or quote's content starting with '#' or '<' is a heading or an
    HTML block (`- #tag` and `- <span>x</span>` are text)."""
    return bool(_ATX_OPEN.match(text)) if text[0] == "#" else _opens_html_block(text)


def _expand_tabs(line: str) -> tuple[str, bool]:
    """The line with tabs in its leading whitespace expanded to columns (tab stops of 4, as
    markdown-it counts them), and whether a tab follows the first non-blank character."""
    rest = line.lstrip(" \t")
    lead = line[: len(line) - len(rest)]
    column = 0
    for ch in lead:
        column = column + 4 - column % 4 if ch == "\t" else column + 1
    return " " * column + rest, "\t" in rest


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SPECIAL = re.compile(r"[\[`<\\]")
_BLOCK_STARTS = frozenset(" `~<#|[=-*+>_:")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
# A fence opening a quote at the top level (a callout's code), its content indented by at most
# one space past "> ": too little to sit inside a list item of the quote, so it closes only
# on a quote line of its own fence and ends with the quote.
_QUOTE_FENCE_OPEN = re.compile(r">[ ]?[ ]?(`{3,}(?=[^`]*$)|~{3,})")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ ]*){3,}|(?:-[ ]*){3,}|(?:_[ ]*){3,})")
_CONTAINER_START = re.compile(r" {0,3}(?:>|(?:[-*+]|\d{1,9}[.)])(?: |$))")
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)])( *)")


def _blank(line: str) -> bool:
    """Whether a line is empty or whitespace only (`not line.strip()`, without the copy)."""
    return not line or line.isspace()


def _opens_container(line: str) -> bool:
    """`_CONTAINER_START.match(line)` for a line that starts with no space: the regex only where
    the first character can start a quote or a list item (`\\d` is a subset of isdigit)."""
    first = line[0]
    return (first in "->*+" or first.isdigit()) and _CONTAINER_START.match(line) is not None


# `[text](dest)`, `[text](dest "title")`; dest may hold one level of balanced parentheses. No
# escapes or HTML in it (those go to markdown-it); code spans in the text: `_link_with_code`.
# The destination and title, from the '(' after the text: `(<dest>)` or `(dest)` (groups 1, 2).
_MD_LINK_TAIL = r"\( *(?:<([^<>\n\\]*)>|((?:[^()\s<>\\]|\([^()\s<>\\]*\))*))(?: +\"[^\"\\\n]*\")? *\)"
_SIMPLE_MD_LINK = re.compile(r"\[([^\[\]`<\\\n]*)\]" + _MD_LINK_TAIL)  # text without code, brackets, HTML, escapes
_LINK_TAIL = re.compile(_MD_LINK_TAIL)
_AUTOLINK_SCHEME_UNSAFE = re.compile(r"(?:javascript|vbscript|file|data):", re.IGNORECASE)


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
            if last_md_close >= pos:
                raise _NotSure  # a "](" in text may close a link opened on an earlier line
            return
        i = m.start()
        if last_md_close >= pos and line.find("](", pos, i) != -1:
            raise _NotSure
        c = line[i]
        if c == "\\":
            # An escaped ASCII punctuation character is plain text (`\[`, `\``, `\<`); a
            # backslash before anything else is a backslash.
            if line[i + 1 : i + 2] in _ASCII_PUNCT and i + 1 < n:
                pos = consumed = i + 2
            else:
                pos = i + 1
            continue
        if c == "<":
            following = line[i + 1 : i + 2]
            if not following or not (following in "/!?" or following.isascii() and following.isalpha()):
                pos = i + 1  # neither inline HTML nor an autolink can start here: text
                continue
            shut = line.find(">", i + 1)
            url = line[i + 1 : shut] if shut != -1 else ""
            if (
                shut != -1
                and "<" not in url
                and (AUTOLINK_RE.search(url) or EMAIL_RE.search(url))
                and not _AUTOLINK_SCHEME_UNSAFE.match(url)
            ):
                pos = consumed = shut + 1  # an autolink: a web link, never a vault link
                continue
            tag = HTML_TAG_RE.match(line, i)
            if tag is not None:
                # Inline HTML (`<u>`, `<span class="x">`, a comment): no link inside. A tag that
                # ends on this line ends at the same place in the whole paragraph (it can only
                # run on past a line end inside whitespace or a quoted value, both before the '>'
                # that matched here); one that does not end here is left to markdown-it.
                pos = consumed = tag.end()
                continue
            raise _NotSure  # inline HTML that goes on below, or a '<' markdown-it may read so
        if c == "`":
            end = _code_span_end(line, i)
            if end is None:
                raise _NotSure  # may close on a later line, or be literal: ask markdown-it
            code.append((base + i, base + end))
            pos = consumed = end
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
                dest = md.group(3) if md.group(2) is None else md.group(2)  # `(<dest>)` or `(dest)`
                links.append(("md_embed" if embed else "md", dest, base + start, base + md.end()))
                pos = consumed = md.end()
                continue
            with_code = None if embed else _link_with_code(line, i)
            if with_code is not None:
                dest, end, spans = with_code
                links.append(("md", dest, base + i, base + end))
                code.extend((base + a, base + b) for a, b in spans)
                pos = consumed = end
                continue
            # Brackets around plain text not followed by '(' or '[' are literal, like a task
            # box "[ ]": markdown-it reads the text inside as text, so carry on after them.
            # (An escape, code or HTML inside could move the closing bracket: not plain text.)
            shut = line.find("]", i + 1)
            if shut != -1 and line[shut + 1 : shut + 2] not in ("(", "[") and not any(ch in "[`<\\" for ch in line[i + 1 : shut]):
                pos = shut + 1
                continue
        if last_md_close >= i:
            raise _NotSure
        pos = i + 1


def _code_span_end(line: str, i: int) -> int | None:
    """The end of the code span whose opening backticks start at i, or None when no run of as many
    closes it on this line (it may close on a later one, or the backticks are literal)."""
    n = len(line)
    run = i
    while run < n and line[run] == "`":
        run += 1
    width = run - i
    j = run
    while True:
        j = line.find("`" * width, j)
        if j == -1:
            return None
        k = j + width
        if (k >= n or line[k] != "`") and line[j - 1] != "`":
            return k
        while j < n and line[j] == "`":
            j += 1


def _link_with_code(line: str, i: int) -> tuple[str, int, list[tuple[int, int]]] | None:
    """A link at i whose text holds code spans (``[`git log`](https://...)``): its destination, end
    and the spans. Code binds tighter than brackets, so a ']' inside a span is the span's. Only
    plain text between the spans (no brackets, HTML or escapes); None for anything else."""
    spans: list[tuple[int, int]] = []
    k, n = i + 1, len(line)
    while k < n and line[k] != "]":
        if line[k] == "`":
            end = _code_span_end(line, k)
            if end is None:
                return None
            spans.append((k, end))
            k = end
        elif line[k] in "[<\\":
            return None
        else:
            k += 1
    tail = _LINK_TAIL.match(line, k + 1) if spans and k < n else None
    if tail is None:
        return None
    return (tail.group(2) if tail.group(1) is None else tail.group(1)), tail.end(), spans


def escaped_split(row: str) -> list[str]:
    """A table row's cells as markdown-it's `escapedSplit` splits them (a `|` right after a
    backslash is part of the cell, the backslash dropped), by `str.split` rather than its
    loop over every character (tests/test_core_parse.py compares the two)."""
    parts = row.split("|")
    if "\\|" not in row:
        return parts
    cells: list[str] = []
    cell = ""
    for part in parts[:-1]:
        if part.endswith("\\"):
            cell += part[:-1] + "|"
        else:
            cells.append(cell + part)
            cell = ""
    cells.append(cell + parts[-1])
    return cells


_MAX_AUTOCOMPLETED_CELLS = 0x10000  # markdown-it's limit on cells a table's rows may lack


def _table_columns(header: str, delimiter: str) -> int:
    """How many columns the table starting at `header` has (0: not a table), by markdown-it's
    own test (rules_block/table.py) on two top-level lines without tabs."""
    d = delimiter.lstrip(" ")
    if len(delimiter) - len(d) >= 4 or len(d) < 2 or d[0] not in "|-:" or d[1] not in "|-: ":
        return 0
    if (d[0] == "-" and d[1] == " ") or d.strip("|-: "):
        return 0
    aligns = 0
    cols = d.split("|")
    for k, col in enumerate(cols):
        t = col.strip(MD_TRIM_CHARS)
        if not t:
            if k == 0 or k == len(cols) - 1:
                continue
            return 0
        if not headerLineRe.search(t):
            return 0
        aligns += 1
    text = header.lstrip(" ").strip(MD_TRIM_CHARS)
    if "|" not in text:
        return 0
    columns = escaped_split(text)
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return len(columns) if len(columns) == aligns else 0


def _row_cells(line: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of a table row's cells, offsets in `line`, as markdown-it splits
    them (`escaped_split`: an unescaped `|` separates; `\\|` is a `|` in the cell's content)."""
    lead = len(line) - len(line.lstrip(" "))
    text = line[lead:].strip(MD_TRIM_CHARS)
    start = lead + line[lead:].find(text[:1]) if text else lead
    contents = escaped_split(text)
    cells = []
    pos = 0
    for content in contents:
        # the cell's source runs to the next unescaped '|': its content plus one '\\' per '|'
        width = len(content) + content.count("|")
        cells.append((start + pos, start + pos + width, content))
        pos += width + 1
    if cells and cells[0][2] == "":
        cells.pop(0)
    if cells and cells[-1][2] == "":
        cells.pop()
    return cells


def _quote_content(line: str) -> int:
    """Where a quote line's content starts: after its '>' and one space."""
    return 2 if line.startswith("> ") else 1


def _quoted_table_columns(header: str, delimiter: str) -> int:
    """`_table_columns` for two lines of a quote at the top level (0: not a table, or a nested
    quote or tabs, which only markdown-it follows, or an indented header, which after a blank
    line may belong to a list item in the quote)."""
    if "\t" in header or "\t" in delimiter:
        return 0
    content = header[_quote_content(header) :]
    if content[:1] in (" ", ">"):
        return 0
    return _table_columns(content, delimiter[_quote_content(delimiter) :])


def _scan_table(
    lines: list[str], i: int, base: int, columns: int, links: list, code: list, quoted: bool = False
) -> tuple[int, int]:
    """Scan the table whose header is lines[i]; return the index and offset of the line after it.
    `quoted`: the table is in a quote at the top level, and its rows are what follows each '>'."""
    autocompleted = 0
    j = i
    while j < len(lines):
        row = lines[j]
        lead = 0
        if quoted:
            if row[:1] != ">":
                if not row.strip(" \t"):
                    break  # a blank line ends the table and the quote
                raise _NotSure  # a lazy line: the quote goes on without its '>'
            lead = _quote_content(row)
            row = row[lead:]
        if j >= i + 2:
            stripped = row.lstrip(" ")
            if not stripped.strip(MD_TRIM_CHARS) or len(row) - len(stripped) >= 4:
                break  # a blank line, or one indented like code, ends the table
            if "\t" in row or stripped[0] in "`~>*-+_<" or stripped[0].isdigit():
                raise _NotSure  # a fence, quote, rule, list or HTML may end the table
            if stripped[0] == "#" and _ATX_OPEN.match(stripped):
                break  # a heading ends it (markdown-it's terminators); a row may start with `#tag`
        if j != i + 1:  # the delimiter row holds no inline content
            cells = _row_cells(row)
            if j >= i + 2:
                autocompleted += columns - len(cells)
                if autocompleted > _MAX_AUTOCOMPLETED_CELLS:
                    break
            for start, end, _ in cells[:columns]:  # cells past the header's count are dropped
                cell = row[start:end]
                if cell.strip(MD_TRIM_CHARS) != cell.strip(" "):
                    raise _NotSure  # whitespace other than spaces around a cell: markdown-it decides
                if "[" in cell or "`" in cell or "<" in cell or "\\" in cell or "](" in cell:
                    spaces = len(cell) - len(cell.lstrip(" "))
                    _scan_line(cell.strip(" "), base + lead + start + spaces, links, code)
        base += lead + len(row) + 1
        j += 1
    return j, base


def _may_open_block(line: str, stripped: str) -> bool:
    """Whether an indented line inside a list could open a block (not just continue text)."""
    first = stripped[0]
    if first in "#`~<|>=_:":
        return True
    if first == "[":
        return not stripped.startswith("[^") and _LINK_DEF.match(stripped) is not None
    if first in "-*+" or first.isdigit():
        return bool(
            _CONTAINER_BLOCK.match(stripped)
            or _THEMATIC_BREAK.fullmatch(stripped)
            or _DELIMITER_ROW.fullmatch(stripped)
            or _SETEXT.fullmatch(stripped)
            or _CONTAINER_START.match(stripped)
            and _content_indent(stripped) is None
        )
    return False


def _content_indent(line: str) -> int | None:
    """Column where a list item's content starts, or None for a quote (or a list item holding
    one, a nested item on the same line, an empty item, or content indented like code), whose
    indentation only markdown-it follows."""
    m = _LIST_ITEM.match(line)
    if m is None or line[m.end() : m.end() + 1] == ">" or _CONTAINER_START.match(line, m.end()):
        return None
    spaces = len(m.group(2))
    if m.end() == len(line):
        return None  # an empty item: where its content starts depends on the lines after it
    return m.end() if spaces <= 4 else None


def _unsure_in_container(line: str, stripped: str, indent: int, item_indent: int | None, in_paragraph: bool) -> bool:
    """Whether a line indented by 4+ spaces inside an open list or quote is beyond the scanner."""
    if item_indent is None:
        return True
    if indent < item_indent:  # left of the item's content: only plain lazy text is certain
        return not (in_paragraph and stripped[0].isalnum())
    if indent - item_indent >= 4:  # code inside the item, unless it continues a paragraph
        return not in_paragraph
    return _may_open_block(line, stripped)


def _deep_item_fence(line: str, stripped: str, indent: int, item_indent: int | None) -> re.Match[str] | None:
    """The opening of a fence inside the list item whose content starts at `item_indent`, on a
    line indented by 4+ columns but less than 4 past the item's content (`\t```` under `1. `)."""
    if item_indent is None or stripped[0] not in "`~" or not 0 <= indent - item_indent < 4:
        return None
    return _FENCE_OPEN.match(line[item_indent:])


def _goes_on_with_the_quote(line: str) -> None:
    """Check that a non-blank line inside a quote's fence goes on with the quote (a `>` within
    three spaces); any other line may be a lazy continuation or end the quote: markdown-it decides."""
    lead = len(line) - len(line.lstrip(" "))
    if lead >= 4 or line[lead] != ">":
        raise _NotSure


def _closes_quote_fence(line: str, fence: tuple[str, int, int]) -> bool:
    """Whether a quote line (`>` within three spaces) is the closing line of the quote's fence."""
    char, length, _ = fence
    quoted = line.lstrip(" ")
    content = quoted[1:]
    stripped = content.lstrip(" \t")
    if not stripped.startswith(char * length):
        return False
    if "\t" in content[: len(content) - len(stripped)]:
        raise _NotSure  # tabs after '>': columns only markdown-it counts
    content = quoted[_quote_content(quoted) :]
    return len(content) - len(content.lstrip(" ")) < 4 and not stripped.rstrip(" \t").strip(char)


def _closes_item_fence(line: str, fence: tuple[str, int, int, int]) -> bool:
    """Whether a line inside a list item's fence closes it. A line indented less than the item's
    content (not blank) ends the item and the fence with it: markdown-it decides what follows."""
    char, length, _, item = fence
    if "\t" in line:
        line = _expand_tabs(line)[0]  # leading tabs as the columns markdown-it counts
    rest = line.lstrip(" ")
    if not rest.strip(" \t"):
        return False  # blank lines belong to the fence
    lead = len(line) - len(rest)
    if lead < item:
        raise _NotSure
    return lead - item < 4 and rest.startswith(char * length) and not rest.rstrip(" \t").strip(char)


def scan(body: str):
    """(links, headings, code) the way markdown-it would find them, or None if unsure."""
    if compiled_scan is not None:
        found = compiled_scan(body)
        if found is not False:
            return found
    return scan_in_python(body)


def scan_in_python(body: str):
    """`scan` in Python: every note the C scanner is not sure of, and every note without it."""
    links: list[tuple[str, str, int, int]] = []
    headings: list[tuple[int, str, int]] = []
    code: list[tuple[int, int]] = []
    base = 0
    fence: tuple[str, int, int] | None = None  # (char, length, start offset) of an open fence
    quote_fence: tuple[str, int, int] | None = None  # the same, for a fence inside a quote
    item_fence: tuple[str, int, int, int] | None = None  # ... inside a list item (+ its content column)
    html: tuple[re.Pattern[str], int] | None = None  # (end condition, start offset) of an HTML block
    indented: list[int] | None = None  # [start, end] of an open indented code block
    previous = ""
    # A line indented by 4+ spaces is code unless it continues a paragraph; inside a list or a
    # quote the indentation counts from the container, which only markdown-it tracks.
    in_paragraph = False
    in_container = False
    item_indent: int | None = None  # where the last list item's content starts; None in a quote
    size = len(body)
    if "\r" in body:
        body = body.replace("\r", " ")  # a lone CR is a space to markdown-it too (core/markdown.py)
    lines = body.split("\n")
    after_table = 0  # lines before this index belong to a table already scanned
    top_quote = False  # the line is in a quote at the top level, read from its first line
    try:
        for i, line in enumerate(lines):
            step = len(line) + 1
            if i < after_table:
                continue
            if quote_fence is not None:
                if line.strip(" \t"):
                    _goes_on_with_the_quote(line)  # raises when the quote may end here
                    if _closes_quote_fence(line, quote_fence):
                        code.append((quote_fence[2], min(base + step, size)))
                        quote_fence = None
                    previous = line
                    base += step
                    continue
                code.append((quote_fence[2], base))  # a blank line ends the quote and its fence
                quote_fence = None
            if html is not None:
                # markdown-it tests the end condition on the line without its leading whitespace
                content = line.lstrip(" \t")
                if not html[0].search(content):
                    previous = line
                    base += step
                    continue
                if content:  # the closing line belongs to the block
                    code.append((html[1], min(base + step, size)))
                    html = None
                    previous = line
                    base += step
                    continue
                code.append((html[1], base))  # a blank line ends it and is read as usual
                html = None
            if item_fence is not None:
                if _closes_item_fence(line, item_fence):  # raises when the item may end here
                    code.append((item_fence[2], min(base + step, size)))
                    item_fence = None
                previous = line
                base += step
                continue
            if fence is not None:
                if line and line[0] in " `~":
                    char, length, start = fence
                    stripped = line.lstrip(" ").rstrip(" \t")  # markdown-it allows trailing tabs too
                    if len(line) - len(line.lstrip(" ")) < 4 and stripped.startswith(char * length) and not stripped.strip(char):
                        code.append((start, min(base + step, size)))
                        fence = None
                previous = line
                base += step
                continue
            text_line = line  # the source line, for offsets
            tab_inside = False
            if "\t" in line:
                # Block structure counts columns: read leading tabs as the spaces they stand
                # for (markdown-it does the same); a tab further in is left to markdown-it
                # (after a list marker it counts from the marker; in text it is text).
                line, tab_inside = _expand_tabs(line)
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
            if indent >= 4 and in_container:
                opened = _deep_item_fence(line, stripped, indent, item_indent) if not tab_inside else None
                if opened is not None and item_indent is not None:
                    # a fence inside the list item, indented past column 4 (a tab, mostly)
                    item_fence = (opened.group(1)[0], len(opened.group(1)), base, item_indent)
                    in_paragraph = False
                    previous = line
                    base += step
                    continue
                if _unsure_in_container(line, stripped, indent, item_indent, in_paragraph):
                    raise _NotSure  # relative to the list item this may be code, a heading...
            elif indent >= 4 and not in_paragraph:
                indented = [base, min(base + step, size)]
                previous = line
                base += step
                continue
            if tab_inside:
                raise _NotSure
            if indent == 0 and _blank(previous) and not _opens_container(line):
                # After a blank line, an unindented line closes lists and quotes (a table
                # below a list, too, is at the top level).
                in_container = False
            # a quote at the top level, followed from its first line (after a blank line, or the note's)
            quote_opens = line[0] == ">" and (i == 0 or _blank(previous))
            top_quote = quote_opens or line[0] == ">" and top_quote and previous[:1] == ">"
            if "|" in line and indent < 4 and i + 1 < len(lines):
                delimiter = lines[i + 1]
                columns = 0
                # a table opening a quote or after a blank line in it (callouts hold tables)
                in_quote = top_quote and (quote_opens or not previous[1:].strip(" \t")) and delimiter[:1] == ">"
                if in_quote:
                    columns = _quoted_table_columns(line, delimiter)
                elif "\t" in text_line or "\t" in delimiter:
                    shape = delimiter.lstrip(" \t")
                    if len(shape) >= 2 and shape[0] in "|-:" and not shape.strip("|-: \t"):
                        raise _NotSure  # a table with tabs in its first rows: markdown-it decides
                elif delimiter.lstrip(" ")[:1] in ("|", "-", ":"):
                    columns = _table_columns(line, delimiter)
                    if columns and in_container:
                        raise _NotSure  # a table inside a list item or quote
                if columns:
                    after_table, base = _scan_table(lines, i, base, columns, links, code, in_quote)
                    in_paragraph = False
                    previous = lines[after_table - 1]
                    continue
            was_paragraph, in_paragraph = in_paragraph, True
            first = line[0]
            # Most lines start with a letter; only the others can open a block construct.
            if (
                first in "-*+"
                and line[1:2] == " "
                and (line[2:3].isalpha() or line[2:4] == "[[" and "]" in line and "]:" not in line and "\\" not in line)
            ):
                # A plain list item "- text" or "- [[link]]": none of the checks below apply
                # (a ']' but no ']:' or escape on the line: `_CONTAINER_LINK_DEF` cannot match).
                in_container = True
                item_indent = 2
            elif indent < 4 and (first in _BLOCK_STARTS or first.isdigit()):
                if stripped[0] == "<" and not in_container and not _ONE_LINE_COMMENT.match(line):
                    # An HTML block at the top level: skipped like code up to its end condition.
                    closing = _html_block_end(stripped, was_paragraph)
                    if closing is not None:
                        if closing.search(stripped):
                            code.append((base, min(base + step, size)))  # it ends on its own line
                        else:
                            html = (closing, base)
                        in_paragraph = False
                        previous = line
                        base += step
                        continue
                if _line_needs_markdown_it(line, indent, previous):
                    raise _NotSure
                if first == ">":
                    quoted = _QUOTE_FENCE_OPEN.match(line)
                    if quoted:
                        quote_fence = (quoted.group(1)[0], len(quoted.group(1)), base)
                        in_container, item_indent, in_paragraph = True, None, False
                        previous = line
                        base += step
                        continue
                opened = _FENCE_OPEN.match(line) if stripped[0] in "`~" else None
                if in_container and (
                    opened
                    or stripped[0] in "*-_"
                    and _THEMATIC_BREAK.fullmatch(line)
                    or stripped.startswith("<!--")
                    or stripped[0] == "#"
                    and _ATX.match(line)
                ):
                    if indent and opened and item_indent is not None and item_indent <= indent:
                        # a fence inside the list item whose content starts at `item_indent`
                        item_fence = (opened.group(1)[0], len(opened.group(1)), base, item_indent)
                        in_paragraph = False
                        previous = line
                        base += step
                        continue
                    if indent:
                        raise _NotSure  # a block inside a list item, or closing it: markdown-it decides
                    in_container = False  # unindented, it closes every open list and quote
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
                    if was_paragraph and not in_container and stripped[0].isdigit() and not stripped.startswith(("1.", "1)")):
                        raise _NotSure  # only a list starting at 1 may interrupt a paragraph
                    in_container = True
                    item_indent = _content_indent(line)
            if "[" in line or "`" in line or "<" in line or "\\" in line or "](" in line:
                _scan_line(text_line, base, links, code)
            previous = line
            base += step
    except _NotSure:
        return None
    if indented is not None:
        code.append((indented[0], indented[1]))
    # An unclosed fence or HTML block runs to the end of the note, where markdown-it does not
    # count a last line of only spaces without a newline.
    tail = body.rfind("\n") + 1
    end = tail if tail < size and not body[tail:].strip(" \t") else size
    if html is not None:
        code.append((html[1], end))
    if quote_fence is not None:
        code.append((quote_fence[2], end))
    if fence is not None:
        code.append((fence[2], end))
    if item_fence is not None:
        code.append((item_fence[2], end))
    return links, headings, code
