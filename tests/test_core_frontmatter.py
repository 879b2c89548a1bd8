"""Frontmatter: errors with line and column, and single-key edits that leave the rest byte-identical."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.fix import apply_to_text
from palinode_vault.core.note import parse_note


def _parse(text: str):
    block = fm.find_block(text)
    assert block is not None
    return fm.parse(text, block)


ALIAS_BOMB = (
    "---\n"
    + "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcde", "bcdef"))
    + "---\n"
)


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ('---\nid: x\nname: "Alice\ntype: y\n---\n', 3, 7, "quoted scalar"),  # unclosed quote
        ("---\nid: x\nlist:\n\t- a\n---\n", 4, 1, "tab"),
        ("---\nid: x\nlist:\n  - a\n  \t- b\n---\n", 5, 3, "tab"),
        ("---\nid: x\nname: @alice\n---\n", 3, 7, "cannot start any token"),
        ("---\nid: x\nname: a\nid: y\n---\n", 4, 1, "duplicate key 'id'"),
        ('---\n"id": x\nid: y\n---\n', 3, 1, "duplicate key 'id'"),
        ("---\n- a\n- b\n---\n", 2, 1, "not a mapping"),
        ("---\njust text\n---\n", 2, 1, "not a mapping"),
        (ALIAS_BOMB, 2, 1, "alias"),
        ("---\nid: x\nentities: [a, b\n---\n", 3, 11, "flow sequence"),  # unclosed flow list
    ],
)
def test_parse_errors_name_line_and_column(text, line, column, words):
    data, error = _parse(text)
    assert data is None
    assert error is not None
    assert (error.line, error.column) == (line, column), error
    assert words in error.message


def test_error_lines_count_from_the_file_not_the_block():
    text = "---\nid: x\n\n\nname: a: b\n---\nbody\n"
    _, error = _parse(text)
    assert error is not None and error.line == 5


def test_a_note_with_broken_yaml_keeps_its_body_links_and_reports_the_error():
    note = parse_note("people/a.md", '---\nname: "A\n---\nSee [[b]]\n')
    assert note.frontmatter is None and note.fm_error is not None
    assert [link.target for link in note.links] == ["b"]


@pytest.mark.parametrize("text", ["---\n---\nbody\n", "---\n# only a comment\n---\n", "---\n\n---\n"])
def test_empty_frontmatter_is_an_empty_mapping(text):
    assert _parse(text) == ({}, None)


@pytest.mark.parametrize("text", ["no block\n", "---\nid: x\nnever closed\n", "--- \nid: x\n", " ---\nid: x\n---\n"])
def test_no_block(text):
    if text.startswith("--- \n"):
        assert fm.find_block(text) is None  # never closed
    else:
        assert fm.find_block(text) is None


def test_block_closed_with_dots_and_at_end_of_file():
    assert fm.find_block("---\nid: x\n...\nbody") is not None
    block = fm.find_block("---\nid: x\n---")
    assert block is not None and block.end == len("---\nid: x\n---")


# --- set_key keeps everything else --------------------------------------------------------------

FRONT = """\
---
# leading comment
id: 'person-a'   # quoted
name: "Alice Smith"
entities: [person/b, "project/c"]  # trailing
cross_refs:
  - project/c
  - person/b
core: false  # inner circle
aliases:
    - Al
last_updated: 2026-11-01
---
body [[x]]
"""


def _edit(key, value, text=FRONT):
    block = fm.find_block(text)
    span = fm.set_key(text, block, key, value)
    return span, apply_to_text(text, [span])


def _lines_outside(before: str, after: str, key_lines: set[int]) -> None:
    """Every line except the key's own lines is identical and in the same order."""
    b = before.split("\n")
    kept = [line for i, line in enumerate(b, 1) if i not in key_lines]
    a = after.split("\n")
    it = iter(a)
    assert all(any(line == other for other in it) for line in kept), after


def test_set_flow_list_keeps_flow_style_and_trailing_comment():
    _, after = _edit("entities", ["person/b", "project/c", "project/d"])
    assert "entities: [person/b, project/c, project/d]  # trailing\n" in after
    assert after.replace("entities: [person/b, project/c, project/d]  # trailing", "X") == FRONT.replace(
        'entities: [person/b, "project/c"]  # trailing', "X"
    )


def test_set_block_list_keeps_block_style_and_indent():
    _, after = _edit("cross_refs", ["a/b", "c/d"])
    assert after == FRONT.replace("cross_refs:\n  - project/c\n  - person/b\n", "cross_refs:\n  - a/b\n  - c/d\n")
    _, after = _edit("aliases", ["Al", "Bo"])
    assert after == FRONT.replace("aliases:\n    - Al\n", "aliases:\n    - Al\n    - Bo\n")


def test_set_scalar_keeps_comment():
    _, after = _edit("core", True)
    assert after == FRONT.replace("core: false  # inner circle", "core: true  # inner circle")


def test_new_key_is_appended_before_the_closing_line():
    span, after = _edit("cross_refs_new", ["x/y"])
    assert after == FRONT.replace("last_updated: 2026-11-01\n", "last_updated: 2026-11-01\ncross_refs_new: [x/y]\n")
    assert span.start == span.end  # pure insertion


def test_new_key_in_empty_block():
    text = "---\n---\nbody\n"
    _, after = _edit("entities", ["person/a"], text)
    assert after == "---\nentities: [person/a]\n---\nbody\n"


def test_values_that_need_quotes_are_quoted_and_round_trip():
    for value in ["Alice: Smith", "yes", "#tag", "a, b", "[x]", 'say "hi"', "null", ""]:
        _, after = _edit("name", value)
        data, error = _parse(after)
        assert error is None and data["name"] == value, after


def test_set_key_round_trips_through_yaml():
    _, after = _edit("entities", ["person/b", "project/c", "project/d"])
    data, error = _parse(after)
    assert error is None
    assert data["entities"] == ["person/b", "project/c", "project/d"]
    assert data["cross_refs"] == ["project/c", "person/b"]
    assert data["aliases"] == ["Al"]
    assert data["id"] == "person-a"


def test_block_list_followed_by_a_comment_line_keeps_the_comment():
    text = "---\nid: x\ncross_refs:\n  - a/b\n# why core\ncore: true\n---\n"
    _, after = _edit("cross_refs", ["c/d"], text)
    assert after == "---\nid: x\ncross_refs:\n  - c/d\n# why core\ncore: true\n---\n"


def test_key_lines_are_recorded():
    note = parse_note("people/a.md", FRONT)
    assert note.key_line("id") == 3
    assert note.key_line("entities") == 5
    assert note.key_line("last_updated") == 12
    assert note.key_line("absent") == 1


_YAML_LINES = st.lists(
    st.sampled_from(
        [
            "id: x",
            '"quoted key": 1',
            "'single': [a, b]",
            "list:",
            "  - item",
            "- stray",
            "# comment: no",
            "  indented: value",
            "",
            "url: http://x.y/z",
            "a:b",
            "dup: 1",
            "dup: 2",
            "empty:",
            "weird key : v",
        ]
    ),
    max_size=12,
)


@given(_YAML_LINES)
def test_key_lines_agree_with_key_spans(lines: list[str]):
    """The line of each top-level key is where `key_spans` starts it, whatever the lines."""
    text = "---\n" + "".join(line + "\n" for line in lines) + "---\nbody\n"
    block = fm.find_block(text)
    assert block is not None
    from_spans = {k: text.count("\n", 0, s.start) + 1 for k, s in fm.key_spans(text, block).items()}
    assert fm.key_lines(text, block) == from_spans


@given(_YAML_LINES)
def test_the_key_lines_a_parse_gives_are_key_lines(lines: list[str]):
    """Parsing reads the keys' lines along the way (the flat reader's own, else one pass over
    the lines): where the YAML loads they are `key_lines`, and a repeated key is an error."""
    text = "---\n" + "".join(line + "\n" for line in lines) + "---\nbody\n"
    block = fm.find_block(text)
    assert block is not None
    data, error, key_lines = fm.parse_with_key_lines(text, block)
    if data:
        assert key_lines == fm.key_lines(text, block)
    elif data is None:
        assert error is not None and key_lines == {}
    if lines.count("dup: 1") + lines.count("dup: 2") > 1 and data is not None:
        raise AssertionError(f"a repeated key loaded: {data}")
