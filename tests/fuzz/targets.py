"""The checks the fuzzers run: pure functions of one input, raising AssertionError on a bug.

Shared by the atheris harnesses (fuzz_parser.py, fuzz_resolver.py, fuzz_fixer.py) and the
hypothesis tests in test_fuzz.py, so a crash found by either replays in the other.
Everything runs in memory on the pure core: no files, no sockets.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from palinode_vault.core.fix import plan_fix  # noqa: E402
from palinode_vault.core.lint import analysis_for  # noqa: E402
from palinode_vault.core.markers import FOOTER_START, LEGACY_FOOTER_MARKER  # noqa: E402
from palinode_vault.core.note import parse_note  # noqa: E402
from palinode_vault.core.resolve import Resolver  # noqa: E402
from palinode_vault.core.text import apply_spans, normalise, sha256_text  # noqa: E402
from palinode_vault.core.vault_state import VaultState  # noqa: E402

# Fragments that steer random input towards the interesting grammar.
SEEDS = [
    "---\nid: person-fuzz\ncategory: person\ntype: PersonMemory\nname: Fuzz\nentities: [person/alice-smith]\n---\n",
    "[[alice-smith]]",
    "[[Alice Smith]]",
    "![[img.png]]",
    "[[checkout#Plan|the plan]]",
    "[[#^block]]",
    "[t](../people/bob-jones.md)",
    "`[[code]]`",
    "```\n[[fenced]]\n```\n",
    "%% [[hidden]] %%",
    "| [[a\\|b]] | c |",
    "<!-- palinode:see-also -->\n## See also\n- [[x]]\n<!-- /palinode:see-also -->\n",
    "<!-- palinode-auto-footer -->",
    "cross_refs: [project/checkout]\n",
    "> quote [[bob-jones]]\n",
    "- item\n  - [[nested]]\n",
    "\r\n",
    "\ufeff",
    "## Heading\n",
]

OTHERS = {
    "people/alice-smith.md": "---\nid: person-alice-smith\ncategory: person\ntype: PersonMemory\nname: Alice Smith\n---\n# Alice Smith\n",
    "people/bob-jones.md": "---\nid: person-bob-jones\ncategory: person\ntype: PersonMemory\nname: Bob Jones\naliases: [Bobby]\n---\n# Bob Jones\n",
    "projects/checkout.md": "---\nid: project-checkout\ncategory: project\ntype: ProjectSnapshot\nname: Checkout\nstatus: active\n---\n# Checkout\n\n## Plan\ntext ^block\n",
    "daily/2026-11-20.md": "# 2026-11-20\n[[alice-smith]]\n",
}
FUZZ_PATH = "people/fuzz.md"


def text_from(data: bytes) -> str:
    """Bytes to text the way the reader would see them (invalid UTF-8 is not a parser input)."""
    return data.decode("utf-8", "replace").replace("\x00", "")


def check_parser(raw: str) -> None:
    """parse_note never crashes; offsets are inside the text and point at link syntax."""
    raw = raw.replace("\x00", "")  # a file with NUL is an `unreadable` finding, never parsed
    text, _ = normalise(raw)
    note = parse_note(FUZZ_PATH, text, sha256_text(text))
    for link in note.links:
        assert 0 <= link.start < link.end <= len(text), (link, len(text))
        assert text[link.start] in "[!", (link, text[link.start : link.end])
    # markdown-it (like Obsidian's editor) also ends a line at a lone "\r"
    lines = text.replace("\r", "\n").count("\n") + 1
    for _, _, line in note.headings:
        assert 1 <= line <= lines, (line, lines)


def check_resolver(data: bytes) -> None:
    """Resolution never crashes and only ever answers a file that exists."""
    parts = text_from(data).split("\n")
    files = [p.strip("/") for p in parts[:-1] if p.strip("/")]
    target = parts[-1]
    resolver = Resolver(files)
    for source in files[:1] or ["note.md"]:
        got = resolver.resolve(target, source)
        # an empty path means the linking note itself ([[#Heading]])
        assert got is None or got in resolver or got == source, (target, got)
        if got is not None and got != source:
            assert got.lower() in {f.lower() for f in files}
        # every link we write lands on the file it means, from the note it is written in
        for wanted in resolver.files()[:8]:
            if wanted.strip() == wanted and not wanted.startswith(("./", "../")) and "/./" not in wanted and "/../" not in wanted:
                assert resolver.resolve(resolver.link_path(wanted, source), source) == wanted, (wanted, source)


def _raw_offset(raw: str, norm_offset: int) -> int:
    """Independent of core.text: walk the raw text counting normalised characters."""
    i = 1 if raw.startswith("\ufeff") else 0
    n = 0
    while n < norm_offset:
        i += 2 if raw.startswith("\r\n", i) else 1
        n += 1
    return i


def _state_with(text: str) -> tuple[VaultState, object]:
    notes = {p: parse_note(p, t, sha256_text(t)) for p, t in OTHERS.items()}
    note = parse_note(FUZZ_PATH, text, sha256_text(text))
    notes[FUZZ_PATH] = note
    files = sorted(notes) + ["attachments/img.png"]
    return VaultState.build(files, notes), note


def check_fixer(raw: str) -> None:
    """plan_fix never crashes, keeps every byte outside its spans, and is idempotent."""
    raw = raw.replace("\x00", "")  # a file with NUL is an `unreadable` finding, never parsed
    text, shape = normalise(raw)
    if text.count(FOOTER_START) + text.count(LEGACY_FOOTER_MARKER) > 1:
        # Known (docs/RELIABILITY.md): with two machine footers (or one and a legacy one), one fix removes or updates the
        # first and the next fix the second; it converges in two runs, nothing of the person's
        # is touched. Outside this property until fix handles every footer in one run.
        return
    state, note = _state_with(text)
    plan = plan_fix(state, note, text, analysis_for(state))
    if not plan.spans:
        return
    spans = sorted(plan.spans, key=lambda s: s.start)
    for a, b in zip(spans, spans[1:]):
        assert a.end <= b.start, ("overlapping spans", a, b)
    new_raw = apply_spans(raw, shape, spans)
    # every gap between spans is byte-identical, in order
    pos_new = cursor = 0
    for span in spans:
        start = _raw_offset(raw, span.start)
        gap = raw[cursor:start]
        assert new_raw[pos_new : pos_new + len(gap)] == gap, ("bytes outside a span changed", gap)
        pos_new += len(gap)
        inserted = span.new.replace("\n", shape.newline) if shape.newline != "\n" else span.new
        assert new_raw.startswith(inserted, pos_new), ("span text", inserted)
        pos_new += len(inserted)
        cursor = _raw_offset(raw, span.end)
    assert new_raw[pos_new:] == raw[cursor:], "bytes after the last span changed"
    # idempotent: the fixed text needs no further fix
    text2, _ = normalise(new_raw)
    state2, note2 = _state_with(text2)
    again = plan_fix(state2, note2, text2, analysis_for(state2))
    assert not again.spans, ("fix is not idempotent", again.reasons, text2)
