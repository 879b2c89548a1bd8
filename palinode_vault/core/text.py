"""Raw file text versus the text the parser sees, and span edits that map back byte-exactly.

The parser works on *normalised* text: no BOM, every line ending a single "\\n". Files keep
whatever they had (a BOM, CRLF, mixed endings), so an edit is a list of spans in normalised
coordinates that `apply_spans` maps back onto the raw text, touching nothing else.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from dataclasses import dataclass

BOM = "\ufeff"


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a text encoded as UTF-8 (the hash the protocol and the journal use)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Span:
    """Replace normalised text[start:end] with `new`."""

    start: int
    end: int
    new: str


@dataclass(frozen=True, slots=True)
class RawShape:
    """What normalisation removed: a BOM and the positions of removed carriage returns."""

    bom: bool
    cr_positions: tuple[int, ...]  # normalised offsets of "\n" that were "\r\n" in the file
    newline: str  # dominant line ending, used for inserted lines


def normalise(raw: str) -> tuple[str, RawShape]:
    """Strip a BOM and turn CRLF into LF, remembering where, so edits can be mapped back."""
    bom = raw.startswith(BOM)
    body = raw[1:] if bom else raw
    if "\r\n" not in body:
        return body, RawShape(bom, (), "\n")
    out: list[str] = []
    crs: list[int] = []
    pos = 0  # offset in body
    norm_len = 0
    while True:
        idx = body.find("\r\n", pos)
        if idx == -1:
            out.append(body[pos:])
            break
        chunk = body[pos:idx]
        out.append(chunk)
        out.append("\n")
        norm_len += len(chunk)
        crs.append(norm_len)
        norm_len += 1
        pos = idx + 2
    text = "".join(out)
    lf_only = text.count("\n") - len(crs)
    newline = "\r\n" if len(crs) >= lf_only else "\n"
    return text, RawShape(bom, tuple(crs), newline)


def _raw_offset(shape: RawShape, offset: int) -> int:
    """Raw offset of a normalised offset: add one per removed CR before it, and the BOM."""
    return offset + bisect_left(shape.cr_positions, offset) + (1 if shape.bom else 0)


def apply_spans(raw: str, shape: RawShape, spans: list[Span]) -> str:
    """Apply normalised-coordinate spans to the raw text; bytes outside the spans are kept.

    Inserted text uses the file's dominant line ending. Spans must not overlap.
    """
    if not spans:
        return raw
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    for a, b in zip(ordered, ordered[1:]):
        if b.start < a.end:
            raise ValueError(f"overlapping edits at {a.start}-{a.end} and {b.start}-{b.end}")
    parts: list[str] = []
    cursor = 0
    for span in ordered:
        start = _raw_offset(shape, span.start)
        end = _raw_offset(shape, span.end)
        parts.append(raw[cursor:start])
        new = span.new
        if shape.newline != "\n":
            new = new.replace("\n", shape.newline)
        parts.append(new)
        cursor = end
    parts.append(raw[cursor:])
    return "".join(parts)


def line_starts(text: str) -> list[int]:
    """Offsets where each line begins (index 0 is line 1)."""
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def line_col(starts: list[int], offset: int) -> tuple[int, int]:
    """1-based line and column of an offset."""
    from bisect import bisect_right

    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1
