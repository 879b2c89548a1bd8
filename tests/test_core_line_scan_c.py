"""The line scanner in C (core/_line_scan.c) answers exactly as the Python scanner does, or not at all.

`line_scan.scan` asks the C scanner first and the Python scanner when it answers False; the parse
tests (tests/test_core_parse.py) check what comes out against markdown-it. Here the two scanners
are compared directly: drawn notes (the parse tests' lines, with Unicode digits, spaces and
punctuation the C code must classify as Python does, tabs) and every note of the help vault in every
language.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_parse import _line

from palinode_vault.core import frontmatter as fm
from palinode_vault.core import line_scan
from palinode_vault.core.text import normalise

SOURCE = Path(line_scan.__file__).with_name("_line_scan.c")
compiled = line_scan.compiled_scan
needs_compiled = pytest.mark.skipif(compiled is None, reason="core/_line_scan.c is not built here (no C compiler at install)")


def test_the_c_scanner_is_built_where_a_compiler_is():
    if os.environ.get("PALINODE_PURE_PYTHON") == "1":
        pytest.skip("PALINODE_PURE_PYTHON=1: nothing compiled on purpose")
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}): the package runs the Python scanner alone")
    assert compiled is not None, "a C compiler is here but core/_line_scan.c was not built: pip install -e . again"
    from palinode_vault.core import _line_scan

    built = Path(_line_scan.__file__)
    if SOURCE.is_file():  # a checkout (an installed wheel carries no source)
        assert built.stat().st_mtime >= SOURCE.stat().st_mtime, (
            f"{built.name} is older than {SOURCE.name}: pip install -e . again"
        )


# Lines whose characters the C code classifies itself: digits of other scripts (str.isdigit and
# re's \d differ on some), no-break and ideographic spaces (markdown-it trims them around table
# cells, str.strip() around headings), titles, angle destinations and parentheses in links.
_UNICODE_LINES = st.sampled_from(
    [
        "١. item [[a]]",
        "١٢) b",
        "² c [[x]]",
        "1234567890. d",
        "10. e",
        "|\xa0a\xa0| b |",
        "| a | b\u202f|",
        "|---|---|",
        "| [[x]] | `y` |",
        "#\xa0x",
        "# x\u3000",
        "## x ##",
        "\u3000- x",
        "- \xa0x",
        "> ```",
        ">  ~~~",
        "  - [[x]]",
        "    [[y]]",
        "[a]: b",
        "[^1]: note [[z]]",
        "`` a ` b ``",
        '[x](y "t")',
        "[x](<a b>)",
        "[x](a(b)c)",
        "![x](y.png)",
        "a](b",
        "\\[[x]] \\` [[w]]",
        "- [[a]] ]: x",
        "* * *",
        "1) a",
        "2. b",
        "<b>",
        "a <u>b</u> [[c]]",
        "a < b [[c]]",
        # inline HTML and autolinks, which the C code matches as markdown-it's expressions do
        'a <a href="x">[[y]]</a>',
        "b <br/> <br /> <br",
        "c <!-- d --> [[x]] <!-- e - f --> [[y]]",
        "d <!--> [[x]] <!---> [[y]]",
        "e <https://e.com/[[x]]> <me@ex.com> <a@b-.c> <javascript:x> <FILE:y>",
        "f <?php x ?> [[y]] <!DOCTYPE html> <![CDATA[ [[x]] ]]>",
        "g <span class='a' data-x=1 hidden>[[z]]</span> <a b= > <a\xa0b> </p > </3>",
        'h <x y="[[q]]"> <x y=\'1\' z="2"/> [[w]]',
        # tabs: leading ones count as columns (tab stops of 4), others leave the line to Python
        "\t- [[x]]",
        "\t\t- [[x]]",
        " \t1. [[x]]",
        "-\t[[y]]",
        "  \t```",
        "\t```",
        "> \t```",
        "| a\t| b |",
        "|---|\t|",
        "a\t[[b]]",
        "\t",
        " \t ",
        "~~~",
        "```js",
        # HTML blocks: each of markdown-it's seven start conditions, its end, names in any case
        # (ASCII only: the long s of "<\u017fcript>" is no "s"), Unicode spaces after a tag
        "<SCRIPT type=x>",
        "</Style>",
        "x </textarea> y",
        "<?php",
        "?>",
        "<!DOCTYPE html",
        "<![CDATA[",
        "<![cdata[",
        "]]> [[z]]",
        "<\u017fcript>",
        "<DIV\xa0class=a>",
        "</h1>",
        "<colgroup/>",
        "<custom-tag a='1'>\u3000",
        "</x >",
        "<!-- [[c]] -->",
        "--> [[d]]",
        " <!-- e -->",
        "- <div>",
        "> <!-- f -->",
        "===",
        "---",
        "",
        "   ",
    ]
)
_c_notes = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(st.one_of(_line, _UNICODE_LINES), min_size=1, max_size=14),
    st.sampled_from(["", "\n", "\n  ", "\n\t"]),
)


@needs_compiled
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_c_notes)
def test_the_c_scanner_answers_as_the_python_scanner(body):
    assert compiled is not None
    found = compiled(body)
    if found is not False:
        assert found == line_scan.scan_in_python(body)


@needs_compiled
def test_the_c_scanner_takes_plain_notes_and_leaves_the_rest():
    assert compiled is not None
    body = "# Title\n\nSee [[a]] and ![[b.png]], `[[code]]` and [c](d.md).\n\n- [[e]]\n  - f\n\n```\n[[g]]\n```\n"
    assert compiled(body) == line_scan.scan_in_python(body)
    assert compiled(body) is not False
    callout = "> [!note]\n>\n> a | b\n> -- | --\n> [[x]] | [`y`](z.md)\n"  # a table in a callout
    assert compiled(callout) == line_scan.scan_in_python(callout) and compiled(callout) is not False
    html = "<div>\n[[x]]\n</div>\n\n<!-- a\n[[y]]\n-->\n[[z]]\n"  # HTML blocks at the top level are code
    assert compiled(html) == line_scan.scan_in_python(html) == ([("wiki", "z", 37, 42)], [], [(0, 19), (20, 37)])
    for unsure in ("a\tb [[x]]", "- <div>\n[[x]]", "a\n<span>\n[[x]]", "a <!-- x - y --> [[x]]", "a\rb", "| a |\n|\t-|"):
        assert compiled(unsure) is False, repr(unsure)
        assert line_scan.scan(unsure) == line_scan.scan_in_python(unsure)


@needs_compiled
def test_the_c_scanner_agrees_on_every_language_of_the_help():
    from conftest import SHARED

    corpus = SHARED / "corpora" / "obsidian-help-all"
    if not corpus.is_dir():
        pytest.skip(f"corpus not available: {corpus} (needs the shared folder beside the repo)")
    assert compiled is not None
    taken = 0
    for path in sorted(corpus.rglob("*.md")):
        text, _ = normalise(path.read_text(encoding="utf-8"))
        block = fm.find_block(text)
        body = text[block.end :] if block else text
        found = compiled(body)
        if found is not False:
            taken += 1
            assert found == line_scan.scan_in_python(body), path.relative_to(corpus).as_posix()
    assert taken >= 6260  # of 6,278: every note the Python scanner takes (6,265)


@needs_compiled
@pytest.mark.parametrize(
    "body",
    [
        "[" * 50_000,
        "`" * 3_000 + ("`" * 2_999 + "a") * 300,  # a wide code span opener over many shorter runs
        "[x" * 20_000,
        "<a " * 20_000,
        "[[a" * 20_000,
        "- " * 20_000 + "[[x]]",
        "> " * 3_000 + "x",
        "|a" * 20_000 + "\n|-" * 2,
        "[`a` " * 20_000 + "](x)",  # link texts with code spans, each cut short by the next '['
        "[```" + "[``" * 20_000,
    ],
    ids=[
        "brackets",
        "backtick-runs",
        "open-labels",
        "open-tags",
        "open-wikilinks",
        "deep-list",
        "deep-quote",
        "wide-table",
        "labels-with-code",
        "label-with-open-code",
    ],
)
def test_hostile_lines_get_the_python_scanners_answer(body):
    # Each takes one pass in C (no search restarted per bracket or per backtick run); the suite's
    # timeout is the only clock here (speed is measured in bench/, docs/BENCHMARKS.md).
    assert compiled is not None
    found = compiled(body)
    assert found is False or found == line_scan.scan_in_python(body)


# --- the links of a note, built in C (note.body_links) ------------------------------------------

compiled_links = line_scan.compiled_links
# what a link's inner text can hold: pipes (a table's `\|` too), headings and blocks, spaces of
# every kind around the parts, percent escapes, web and app schemes, other scripts
_INNER = st.lists(
    st.sampled_from(
        ["a", "Ω", "é", "1", "-", " ", "\xa0", "\u3000", "\t", "|", "\\|", "\\", "#", "#^", "^b"]
        + ["%20", "%", "http:", "x:", "./", "../", "/", ".md"]
    ),
    max_size=8,
).map("".join)
_KIND = st.sampled_from(["wiki", "embed", "md", "md_embed"])


@st.composite
def _raw_links(draw):
    """A text and raw (kind, inner, start, end) links of its body, as a scanner gives them."""
    lines = draw(st.lists(st.sampled_from(["", "x", "a b c", "Ω é", "  "]), min_size=1, max_size=6))
    text = "\n".join(lines) + "\n" * draw(st.integers(0, 2))
    body_start = draw(st.integers(0, len(text)))
    starts = sorted(draw(st.lists(st.integers(0, len(text) - body_start), max_size=6)))
    raw = [(draw(_KIND), draw(_INNER), s, s + draw(st.integers(0, 9))) for s in starts]
    if draw(st.booleans()):  # a scanner's order, except where a note's parts come out of order
        raw.reverse()
    footer = sorted(draw(st.lists(st.integers(-1, len(text) + 1), min_size=2, max_size=2)))
    return text, body_start, raw, footer


@needs_compiled
@settings(max_examples=3000, deadline=None)
@given(_raw_links())
def test_the_c_links_are_the_python_links(drawn):
    from palinode_vault.core.note import Link, body_links_in_python

    text, body_start, raw, (fstart, fend) = drawn
    assert compiled_links is not None
    built = compiled_links(text, body_start, raw, fstart, fend, Link)
    python = body_links_in_python(text, body_start, raw, fstart, fend)
    if built is None:  # a markdown link with a '%' to unquote: Python's
        assert any(k in ("md", "md_embed") and "%" in inner for k, inner, _, _ in raw)
        return
    assert built == python
    assert all(type(link) is Link for link in built)


@needs_compiled
def test_the_c_links_refuse_what_is_not_a_scanners_answer():
    from palinode_vault.core.note import Link

    assert compiled_links is not None
    with pytest.raises(TypeError):
        compiled_links("x", 0, [("wiki", "a", 0)], -1, -1, Link)  # a tuple short of its end
    with pytest.raises(TypeError):
        compiled_links("x", 0, [["wiki", "a", 0, 1]], -1, -1, Link)  # a list, not a tuple
    with pytest.raises(TypeError):
        compiled_links("x", 0, [], -1, -1, dict)  # not a tuple type
    with pytest.raises(ValueError):
        compiled_links("x", 0, [("wiki", "a", 5, 6)], -1, -1, Link)  # past the text's end


@needs_compiled
def test_the_c_links_agree_on_every_language_of_the_help(monkeypatch):
    from conftest import SHARED

    from palinode_vault.core import note

    corpus = SHARED / "corpora" / "obsidian-help-all"
    if not corpus.is_dir():
        pytest.skip(f"corpus not available: {corpus} (needs the shared folder beside the repo)")
    paths = sorted(corpus.rglob("*.md"))
    texts = [normalise(path.read_text(encoding="utf-8"))[0] for path in paths]
    built = [note.parse_note(p.name, t).links for p, t in zip(paths, texts)]
    monkeypatch.setattr(note, "compiled_links", None)
    python = [note.parse_note(p.name, t).links for p, t in zip(paths, texts)]
    assert sum(map(len, built)) > 60_000
    for path, a, b in zip(paths, built, python):
        assert a == b, path.relative_to(corpus).as_posix()
