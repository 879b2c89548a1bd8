"""text.normalise / apply_spans: BOM, CRLF and mixed endings survive edits byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palinode_vault.core.fix import apply_to_text
from palinode_vault.core.text import BOM, Span, apply_spans, line_col, line_starts, normalise


def test_plain_lf_text_is_unchanged():
    text, shape = normalise("a\nb\n")
    assert text == "a\nb\n" and not shape.bom and shape.cr_positions == () and shape.newline == "\n"


def test_bom_and_crlf_are_removed_and_remembered():
    text, shape = normalise(BOM + "a\r\nb\r\nc")
    assert text == "a\nb\nc"
    assert shape.bom and shape.cr_positions == (1, 3) and shape.newline == "\r\n"


def test_mixed_endings_keep_their_places():
    raw = "a\r\nb\nc\r\nd\n"
    text, shape = normalise(raw)
    assert text == "a\nb\nc\nd\n"
    # edit "b" and "d": the CRLF after a and c, the LF after b and d stay
    out = apply_spans(raw, shape, [Span(2, 3, "B"), Span(6, 7, "D")])
    assert out == "a\r\nB\nc\r\nD\n"


def test_lone_cr_is_content_not_a_line_ending():
    raw = "a\rb\r\nc"
    text, shape = normalise(raw)
    assert text == "a\rb\nc"
    assert apply_spans(raw, shape, [Span(0, 1, "A")]) == "A\rb\r\nc"


def test_inserted_lines_use_the_dominant_line_ending():
    raw = BOM + "---\r\nid: x\r\n---\r\nbody\r\n"
    text, shape = normalise(raw)
    out = apply_spans(raw, shape, [Span(len(text), len(text), "\nnew\n")])
    assert out == raw + "\r\nnew\r\n"
    assert out.startswith(BOM)


def test_a_span_covering_a_newline_takes_the_whole_crlf():
    raw = "a\r\nb\r\n"
    text, shape = normalise(raw)
    assert apply_spans(raw, shape, [Span(1, 2, " ")]) == "a b\r\n"
    # ending just before the newline leaves the CR in place
    assert apply_spans(raw, shape, [Span(0, 1, "x")]) == "x\r\nb\r\n"


def test_overlapping_spans_are_refused():
    text, shape = normalise("abcdef")
    with pytest.raises(ValueError):
        apply_spans("abcdef", shape, [Span(0, 3, "x"), Span(2, 4, "y")])


def test_no_spans_returns_raw():
    raw = BOM + "x\r\n"
    _, shape = normalise(raw)
    assert apply_spans(raw, shape, []) is raw


def test_line_col():
    starts = line_starts("ab\ncd\n\nef")
    assert line_col(starts, 0) == (1, 1)
    assert line_col(starts, 4) == (2, 2)
    assert line_col(starts, 6) == (3, 1)
    assert line_col(starts, 8) == (4, 2)


# --- property: bytes outside spans never change ----------------------------------------------

_chunk = st.text(alphabet=st.sampled_from(list("ab é#[]|-\r")), max_size=6).filter(
    lambda s: not s.endswith("\r")
)  # a lone CR before LF would be CRLF
_ending = st.sampled_from(["\n", "\r\n"])


@st.composite
def _raw_and_spans(draw):
    lines = draw(st.lists(st.tuples(_chunk, _ending), max_size=8))
    last = draw(_chunk)
    bom = draw(st.booleans())
    # Build raw and, independently of core.text, the raw offset of every normalised offset.
    raw = BOM if bom else ""
    norm = ""
    raw_at: list[int] = []
    for chunk, ending in lines:
        for ch in chunk:
            raw_at.append(len(raw))
            raw += ch
            norm += ch
        raw_at.append(len(raw))
        raw += ending
        norm += "\n"
    for ch in last:
        raw_at.append(len(raw))
        raw += ch
        norm += ch
    raw_at.append(len(raw))
    cuts = sorted(draw(st.lists(st.integers(0, len(norm)), max_size=6)))
    spans = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        spans.append(Span(a, b, draw(st.text(alphabet=st.sampled_from(list("xy\n")), max_size=4))))
    crlf = sum(1 for _, e in lines if e == "\r\n")
    newline = "\r\n" if lines and crlf >= len(lines) - crlf else "\n"
    return raw, norm, raw_at, spans, newline


@settings(max_examples=400, deadline=None)
@given(_raw_and_spans())
def test_bytes_outside_spans_are_unchanged(case):
    raw, norm, raw_at, spans, newline = case
    text, shape = normalise(raw)
    assert text == norm
    out = apply_spans(raw, shape, spans)
    expected = []
    cursor = 0
    for span in spans:
        expected.append(raw[cursor : raw_at[span.start]])
        expected.append(span.new.replace("\n", newline))
        cursor = raw_at[span.end]
    expected.append(raw[cursor:])
    assert out == "".join(expected)
    # and the normalised view of the result is the plain edit of the normalised text
    if "\r" not in norm:
        assert normalise(out)[0] == apply_to_text(norm, spans)
