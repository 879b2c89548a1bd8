"""The auto-generated `## See also` footer: a derived view of entities without an inline link."""

from __future__ import annotations

import re

from palinode_vault.core.markers import FOOTER_END, FOOTER_HEADING, FOOTER_START
from palinode_vault.core.note import Note
from palinode_vault.core.text import Span

_ENTRY = re.compile(r"^\s*[-*]\s+\[\[([^\]|#]+)")


def render(link_texts: list[str]) -> str:
    """The footer block for these link texts (empty string for none)."""
    if not link_texts:
        return ""
    lines = [FOOTER_START, FOOTER_HEADING, *[f"- [[{t}]]" for t in link_texts], FOOTER_END]
    return "\n".join(lines) + "\n"


def current_entries(note: Note) -> list[str]:
    """Link texts listed in the note's machine-owned footer, in order."""
    if note.footer is None:
        return []
    return [m.group(1).strip() for line in note.footer.raw.split("\n") if (m := _ENTRY.match(line))]


def is_current(note: Note, link_texts: list[str]) -> bool:
    """True when the footer is exactly what `render` would write (legacy footers never are)."""
    if note.footer is None:
        return not link_texts
    if note.footer.legacy:
        return False
    return note.footer.raw.rstrip("\n") == render(link_texts).rstrip("\n")


def footer_span(text: str, note: Note, link_texts: list[str]) -> Span | None:
    """The edit that makes the footer match, or None when it already does.

    A new footer goes at the end after one blank line; an empty one is removed together with
    the blank line we put before it. Person-written `## See also` sections have no markers and
    are never matched here.
    """
    if is_current(note, link_texts):
        return None
    block = render(link_texts)
    if note.footer is not None:
        start, end = note.footer.start, note.footer.end
        if not block:
            # also take the blank line that separated the footer from the body
            while start - 2 >= note.body_start and text[start - 1] == "\n" and text[start - 2] == "\n":
                start -= 1
        elif not text[start:end].endswith("\n") and end == len(text):
            block = block.rstrip("\n")
        return Span(start, end, block)
    if not block:
        return None
    # append: make sure the body ends with a newline, then a blank line, then the footer
    end = len(text)
    if end == 0 or text.endswith("\n\n"):
        prefix = ""
    elif text.endswith("\n"):
        prefix = "\n"
    else:
        prefix = "\n\n"
    return Span(end, end, prefix + block)
