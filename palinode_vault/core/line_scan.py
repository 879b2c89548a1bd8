"""The line scanner: links, headings and code of a plain note, exactly as markdown-it finds them.

Most notes are paragraphs, lists and headings with wikilinks, fences, a few code spans and simple
markdown links. For those a left-to-right line scanner finds exactly what markdown-it (with our
wikilink rule, core/markdown.py) finds, about ten times faster. Anything it is not sure of sends
the note to markdown-it: constructs found anywhere in the text (`needs_markdown_it`), block
constructs met line by line, unclosed code spans or unusual links (`scan` returns None).
Property tests and the real corpora check that the two agree (tests/test_core_parse.py).
"""

from __future__ import annotations

import re

_NEEDS_FULL_TEXT = ("\\", "][", "$$", "\t")  # escapes, reference links, math, tabs
_HTML = re.compile(r"<(?!!--(?:(?!-->|\[\[)[^\n])*-->)")  # HTML, except a one-line comment without links
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
# a heading or an HTML block (a comment too) inside list items or quotes, nested or not
_CONTAINER_BLOCK = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*)+[#<]")
_LINK_DEF = re.compile(r" {0,3}\[[^\]]*\]:")
# lists and quotes nested this deep on one line: markdown-it stops at its nesting limit
_DEEP_NESTING = re.compile(r" *(?:(?:[-*+]|\d+[.)])[ \t]+|>[ \t]*){5}")


def needs_markdown_it(body: str) -> bool:
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
    if first and (first in "-*+>" or first.isdigit()) and (_CONTAINER_BLOCK.match(line) or _DEEP_NESTING.match(line)):
        return True
    return False


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SPECIAL = re.compile(r"[\[`]")
_BLOCK_STARTS = frozenset(" `~<#|[=-*+>_")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ ]*){3,}|(?:-[ ]*){3,}|(?:_[ ]*){3,})")
_CONTAINER_START = re.compile(r" {0,3}(?:>|(?:[-*+]|\d{1,9}[.)])(?: |$))")
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)])( *)")
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
        return bool(_CONTAINER_BLOCK.match(stripped) or _THEMATIC_BREAK.fullmatch(stripped)
                    or _SETEXT.fullmatch(stripped) or _CONTAINER_START.match(stripped) and _content_indent(stripped) is None)
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


def scan(body: str):
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
    item_indent: int | None = None  # where the last list item's content starts; None in a quote
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
            if indent >= 4 and in_container:
                if _unsure_in_container(line, stripped, indent, item_indent, in_paragraph):
                    raise _NotSure  # relative to the list item this may be code, a heading...
            elif indent >= 4 and not in_paragraph:
                indented = [base, min(base + step, size)]
                previous = line
                base += step
                continue
            if indent == 0 and not previous.strip() and not _CONTAINER_START.match(line):
                in_container = False  # after a blank line, an unindented line closes lists and quotes
            was_paragraph, in_paragraph = in_paragraph, True
            first = line[0]
            # Most lines start with a letter; only the others can open a block construct.
            if first in "-*+" and line[1:2] == " " and line[2:3].isalpha():
                in_container = True  # a plain list item "- text": none of the checks below apply
                item_indent = 2
            elif indent < 4 and (first in _BLOCK_STARTS or first.isdigit()):
                if _line_needs_markdown_it(line, indent, previous):
                    raise _NotSure
                opened = _FENCE_OPEN.match(line) if stripped[0] in "`~" else None
                if in_container and (opened or stripped[0] in "#<" or _THEMATIC_BREAK.fullmatch(line)):
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
