"""The flat frontmatter reader gives exactly what PyYAML gives, or hands the text to PyYAML."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.flat_yaml import load_flat

# Scalars whose YAML 1.1 meaning is easy to get wrong by hand.
_TRICKY = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "",
    "0",
    "-1",
    "+3",
    "007",
    "0x1F",
    "0o17",
    "017",
    "0b101",
    "1_000",
    "1:20",
    "190:20:30",
    "1e3",
    "1.5e-3",
    ".5",
    "-.inf",
    ".NaN",
    "2026-01-23",
    "2026-1-2",
    "2026-02-30",
    "2025-05-12T21:04:00Z",
    "2025-05-12 21:04:00 +02:00",
    "2025-05-12t21:04:00.5-01:00",
    "person",
    "PersonMemory",
    "project/midnight-forge",
    "a b",
    "a#b",
    "a #b",
    "a: b",
    "a:b",
    "http://x.y/z",
    "-",
    "- a",
    "--x",
    "?x",
    ":x",
    "[x]",
    "{x}",
    "a, b",
    "a]b",
    "&a",
    "*a",
    "!x",
    "|",
    ">",
    "%x",
    "@x",
    "`x",
    '"q"',
    "'q'",
    '"a\\"b"',
    "'it''s'",
    '"[[Alice]]"',
    "'a",
    '"',
    "=",
    "<<",
    "émigré",
    "a\tb",
    "a\x85b",
    "a\u2028b",
    "a\x07b",
    "0.7",
    "1.0",
    "12:30",
]
_KEYS = ["id", "category", "type", "core", "entities", "last_updated", "yes", "null", "on", "x-y", "_k", "2x"]
_flow = st.lists(st.sampled_from(_TRICKY), max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
_value = st.one_of(st.sampled_from(_TRICKY), _flow, st.sampled_from(["[]", "[ ]", "[a,]", "[a,,b]", "[[a]]"]))
_line = st.one_of(
    st.builds(lambda k, v, sep: f"{k}:{sep}{v}", st.sampled_from(_KEYS), _value, st.sampled_from([" ", "  ", ""])),
    st.sampled_from(["", "  ", "# comment", "  - item", "  nested: 1", "key", "a b: c", "'q': 1"]),
    # block lists, as Obsidian writes aliases, tags and cssclasses
    st.builds(lambda k: f"{k}:", st.sampled_from(_KEYS)),
    st.builds(
        lambda lead, v: f"{lead}{v}",
        st.sampled_from(["- ", "  - ", "    - ", " - ", "  -", "-", "  - - "]),
        st.sampled_from(_TRICKY),
    ),
)
_content = st.lists(_line, min_size=1, max_size=8).map("\n".join)


def _pyyaml(content: str):
    try:
        return ("ok", yaml.load(content, Loader=yaml.CSafeLoader))
    except Exception as exc:  # noqa: BLE001 - any failure: the fast reader must defer
        return ("error", type(exc).__name__)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_content)
def test_flat_reader_agrees_with_pyyaml_or_defers(content):
    fast = load_flat(content)
    if fast is None:
        return
    kind, expected = _pyyaml(content)
    assert kind == "ok", f"fast reader accepted what PyYAML rejects: {content!r}"
    assert fast == expected
    assert [type(v) for v in fast.values()] == [type(v) for v in expected.values()]


def test_typical_memory_frontmatter_takes_the_fast_reader():
    content = (
        "id: person-adrian-bell\ncategory: person\ntype: PersonMemory\nname: Adrian Bell\ncore: false\n"
        "entities: [project/midnight-forge, person/niamh-ali]\nlast_contact: 2026-01-23\n"
        'last_updated: 2025-05-12T21:04:00Z\nconfidence: 0.7\nsuperseded_by: ""\nsupersedes: []\n'
    )
    data = load_flat(content)
    assert data == yaml.load(content, Loader=yaml.CSafeLoader)
    assert data["core"] is False and data["last_contact"] == dt.date(2026, 1, 23)
    assert data["last_updated"] == dt.datetime(2025, 5, 12, 21, 4, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "content",
    [
        "entities:\n  - project/x\n    - y\n",
        "entities:\n  - a\n  b\n",
        "a: |\n  text\n",
        "a: b # comment\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "when: 2026-02-30\n",
        "a: {b: 1}\n",
    ],
)
def test_anything_not_plainly_flat_goes_to_pyyaml(content):
    assert load_flat(content) is None


def test_block_lists_of_scalars_take_the_fast_reader():
    content = "aliases:\n  - Help and support\n  - 'It is'\ncssclasses:\n- soft-embed\ntags: []\nmobile: true\n"
    data = load_flat(content)
    assert data == yaml.load(content, Loader=yaml.CSafeLoader)
    assert data == {"aliases": ["Help and support", "It is"], "cssclasses": ["soft-embed"], "tags": [], "mobile": True}


def test_an_impossible_date_is_still_reported_with_its_line():
    text = "---\nid: x\nwhen: 2026-02-30\n---\nbody\n"
    data, error = fm.parse(text, fm.find_block(text))
    assert data is None and error is not None and error.line == 2


def test_agrees_on_every_note_of_the_real_vaults(tmp_path):
    from conftest import HELP_CORPUS, SAMPLE_VAULT
    from test_bench_make_vault import make_vault

    make_vault.generate(tmp_path / "bench", notes=600, seed=5)
    roots = [SAMPLE_VAULT, tmp_path / "bench"] + ([HELP_CORPUS] if HELP_CORPUS.is_dir() else [])
    fast_count = 0
    for root in roots:
        for path in sorted(Path(root).rglob("*.md")):
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            block = fm.find_block(text)
            if block is None:
                continue
            content = text[block.content_start : block.content_end]
            fast = load_flat(content)
            if fast is not None:
                fast_count += 1
                assert _pyyaml(content) == ("ok", fast), path
    assert fast_count > 400
