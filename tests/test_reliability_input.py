"""Bad input (issue 7, item 3): each gives a clear finding naming the file and line, and no write.

Every case is a real file in a real vault, read by the real walker, linted, then `fix`ed: the
bad file's bytes must not change, the finding must say what is wrong and where, and nothing
may crash or hang. Files that are odd but valid (BOM, CRLF, mixed endings) must come through
`fix` with every byte outside the edited span intact.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import unicodedata

import pytest
from reliability_helpers import snapshot

TOP = "---\nid: person-{slug}\ncategory: person\ntype: PersonMemory\nname: {name}\nentities: [person/ana]\n"
BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]\n" for i in range(9)
)

# (file, content, expected check, expected line, words the message must contain)
BAD_FRONTMATTER = [
    ("people/tabs.md", TOP.format(slug="tabs", name="Tabs") + "\tnick: t\n---\n# Tabs\n", "invalid_frontmatter", 7, "tab"),
    ("people/at.md", TOP.format(slug="at", name="At") + "nick: @alice\n---\n# At\n", "invalid_frontmatter", 7, "does not parse"),
    (
        "people/dup.md",
        TOP.format(slug="dup", name="Dup") + "name: Again\n---\n# Dup\n",
        "invalid_frontmatter",
        7,
        "duplicate key 'name'",
    ),
    ("people/bomb.md", "---\n" + BOMB + "---\n# Bomb\n", "invalid_frontmatter", 2, "alias"),
    ("people/list.md", "---\n- a\n- b\n---\n# List\n", "invalid_frontmatter", 2, "not a mapping"),
    ("people/scalar.md", "---\njust a sentence\n---\n# Scalar\n", "invalid_frontmatter", 2, "not a mapping"),
    (
        "people/unclosed.md",
        TOP.format(slug="unclosed", name="Unclosed") + "tags: [a, b\n---\n# U\n",
        "invalid_frontmatter",
        7,
        "",
    ),
]


@pytest.fixture
def bad_vault(make_vault):
    files: dict[str, str | bytes] = {
        "people/ana.md": TOP.format(slug="ana", name="Ana").replace("[person/ana]", "[]") + "---\n# Ana\n",
        "people/badutf.md": b"---\nid: person-badutf\n---\n# A\ncaf\xe9 au lait\n",
        "people/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "daily/nul-late.md": b"# ok\n" + b"text\n" * 20000 + b"\x00",
    }
    for rel, content, *_ in BAD_FRONTMATTER:
        files[rel] = content
    return make_vault(files)


def _findings(load_vault, root):
    from palinode_vault.maintenance import lint

    vault = load_vault(root)
    return vault, {(f.path, f.check): f for f in lint(vault).findings}


def test_bad_frontmatter_and_encodings_are_findings_with_lines_and_never_written(bad_vault, load_vault, run_cli):
    before = snapshot(bad_vault)
    vault, found = _findings(load_vault, bad_vault)
    for rel, _, check, line, words in BAD_FRONTMATTER:
        f = found.get((rel, check))
        assert f is not None, f"no {check} for {rel}: {[k for k in found if k[0] == rel]}"
        assert f.line == line, (rel, f.line, f.message)
        assert words.lower() in f.message.lower(), f.message
        assert "by hand" in f.message  # says what to do
    assert found[("people/badutf.md", "unreadable")].line == 5
    assert "invalid UTF-8" in found[("people/badutf.md", "unreadable")].message
    assert "binary" in found[("people/binary.md", "unreadable")].message
    assert found[("daily/nul-late.md", "unreadable")].line == 20002  # a NUL far into the file
    # The CLI prints path:line for each, exits 1 (errors), and fix writes none of them.
    out = run_cli("lint", "--vault", bad_vault)
    assert out.exit_code == 1
    for rel, _, check, line, _ in BAD_FRONTMATTER:
        assert f"{rel}:{line}: error {check}" in out.output
    fixed = run_cli("fix", "--vault", bad_vault, "--json")
    assert fixed.exit_code == 0
    after = snapshot(bad_vault)
    for rel in before:
        if rel != "people/ana.md":
            assert after[rel] == before[rel], f"{rel} was rewritten"


def test_alias_bomb_is_refused_quickly(make_vault, load_vault):
    # 9 levels of 9 aliases expand to 387 million values; it must be refused, not expanded.
    root = make_vault({"people/bomb.md": "---\n" + BOMB + "---\n# Bomb\n"})
    started = time.monotonic()
    _, found = _findings(load_vault, root)
    assert ("people/bomb.md", "invalid_frontmatter") in found
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("shape", ["bom", "crlf", "mixed", "bom+crlf"])
def test_bom_crlf_mixed_endings_keep_every_byte_outside_the_edit(shape, make_vault, load_vault):
    from palinode_vault.maintenance import fix

    text = (
        "---\nid: person-eve\ncategory: person\ntype: PersonMemory\nname: Eve\nentities: [person/ana]\n"
        "last_updated: 2026-11-20T10:00:00Z\n---\n# Eve\n\nLine one.\nLine two.\n"
    )
    if "crlf" in shape:
        text = text.replace("\n", "\r\n")
    if shape == "mixed":
        lines = text.split("\n")
        text = "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines[:-1]))
    raw = (b"\xef\xbb\xbf" if "bom" in shape else b"") + text.encode()
    root = make_vault(
        {
            "people/eve.md": raw,
            "people/ana.md": "---\nid: person-ana\ncategory: person\ntype: PersonMemory\nname: Ana\n---\n# Ana\n",
        }
    )
    vault = load_vault(root)
    result = fix(vault, ["people/eve.md"])
    assert result.written == ["people/eve.md"]
    after = (root / "people" / "eve.md").read_bytes()
    assert after.startswith(raw), "bytes before the appended footer changed"
    added = after[len(raw) :]
    assert b"palinode:see-also" in added
    if "crlf" in shape:
        assert b"\n" not in added.replace(b"\r\n", b""), "a CRLF file got LF line endings"
    assert fix(load_vault(root), ["people/eve.md"]).written == []  # idempotent


def test_50_mb_note_is_a_finding_not_read_into_the_parser(make_vault, load_vault):
    root = make_vault({"people/ana.md": "# Ana\n"})
    big = root / "daily" / "huge.md"
    big.parent.mkdir()
    with open(big, "wb") as handle:
        line = b"All work and no play makes [[ana]] a dull person.\n"
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            handle.write(line)
    before = big.stat().st_size
    started = time.monotonic()
    _, found = _findings(load_vault, root)
    f = found[("daily/huge.md", "unreadable")]
    assert "50.0 MB" in f.message and "limit" in f.message
    assert time.monotonic() - started < 30
    assert big.stat().st_size == before


def test_100000_links_parse_in_bounded_time_with_lines(make_vault, load_vault):
    body = "".join(f"- see [[missing-{i}]]\n" for i in range(100_000))
    root = make_vault({"daily/many.md": "# Many\n" + body})
    started = time.monotonic()
    vault, _ = _findings(load_vault, root)
    from palinode_vault.maintenance import lint

    broken = [f for f in lint(vault).findings if f.path == "daily/many.md" and f.check == "broken_link"]
    assert len(broken) == 100_000
    assert broken[-1].line == 100_001 and broken[-1].target == "missing-99999"
    assert time.monotonic() - started < 120  # a few seconds here; generous for a loaded machine


PATHOLOGICAL = {
    "nested-dash-list": "- " * 10_000 + "[[ana]]\n",
    "nested-ordered-list": "1. " * 10_000 + "[[ana]]\n",
    "nested-quotes": "> " * 10_000 + "[[ana]]\n",
    "nested-quote-list": "> - " * 5_000 + "[[ana]]\n",
    "indented-list-2000": "".join("  " * i + "- [[ana]]\n" for i in range(2_000)),
    "brackets": "[" * 50_000 + "x" + "]" * 50_000 + "\n",
    "open-wikilinks": "[[" * 50_000 + "\n",
    "open-md-link": "[" * 50_000 + "](ana.md)\n",
    "emphasis": "*" * 50_000 + "x" + "*" * 50_000 + "\n",
    "backticks": "`a " * 30_000 + "\n",
    "html": "<div>" * 10_000 + "\n",
    "fences": "```\n" * 10_000,
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_markdown_neither_crashes_nor_hangs(name):
    """Deep nesting must not hit the recursion limit; quadratic inputs must stay fast."""
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.text import sha256_text

    text = PATHOLOGICAL[name]
    limit = sys.getrecursionlimit()
    started = time.monotonic()
    note = parse_note("daily/x.md", text, sha256_text(text))
    assert time.monotonic() - started < 20, f"{name} took {time.monotonic() - started:.1f} s"
    assert sys.getrecursionlimit() == limit
    for link in note.links:
        assert 0 <= link.start < link.end <= len(text)


def test_symlinks_that_loop_or_leave_the_vault(make_vault, load_vault, tmp_path):
    from palinode_vault.maintenance import fix

    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    secret.write_text("---\nid: person-x\ncategory: person\ntype: PersonMemory\nname: X\nentities: [person/ana]\n---\n# X\n")
    root = make_vault(
        {
            "people/ana.md": "---\nid: person-ana\ncategory: person\ntype: PersonMemory\nname: Ana\nentities: [person/bob]\n---\n# Ana\n",
            "people/bob.md": "---\nid: person-bob\ncategory: person\ntype: PersonMemory\nname: Bob\nentities: [person/ana]\n---\n# Bob\n",
        }
    )
    os.symlink(secret, root / "people" / "outside.md")
    os.symlink(outside, root / "people" / "outdir")
    os.symlink(".", root / "people" / "loop")
    os.symlink("l2.md", root / "people" / "l1.md")
    os.symlink("l1.md", root / "people" / "l2.md")
    os.symlink("ana.md", root / "people" / "alias.md")  # inside, to a note: seen, never replaced
    secret_before = secret.read_bytes()
    vault = load_vault(root)
    assert sorted(vault.state.notes) == ["people/alias.md", "people/ana.md", "people/bob.md"]
    result = fix(vault)
    assert sorted(result.written) == ["people/ana.md", "people/bob.md"]
    assert {"path": "people/alias.md", "reason": "a symlink; fix the note it points to"} in result.skipped
    assert os.path.islink(root / "people" / "alias.md")
    assert secret.read_bytes() == secret_before


NAMES = ["a#b", "a|b", "a^b", "🚀 launch", "Ünïcode", "café"]


def test_odd_file_names_resolve_the_obsidian_way(make_vault, load_vault):
    files = {f"daily/{name}.md": f"# {name}\n" for name in NAMES}
    files["daily/links.md"] = "[[a#b]] [[a|b]] [[a^b]] [[🚀 launch]] [[ünïcode]] [[café]]\n"
    root = make_vault(files)
    _, found = _findings(load_vault, root)
    broken = {f.target for (p, c), f in found.items() if p == "daily/links.md" and c == "broken_link"}
    # '#' and '|' split a wikilink (heading, display text): Obsidian forbids them in names, and
    # [[a#b]] means note "a"; the finding names the file and line. Emoji and accents resolve.
    f = found[("daily/links.md", "broken_link")]
    assert f.line == 1 and "'a'" in f.message
    assert broken <= {"a#b", "a|b", "a"}


def test_nfd_file_name_and_nfc_link(make_vault, load_vault):
    """macOS writes NFD names; links are typed NFC. Reported (not a crash), with a fix that resolves."""
    nfd, nfc = unicodedata.normalize("NFD", "josé"), unicodedata.normalize("NFC", "josé")
    root = make_vault({f"daily/{nfd}.md": "# José\n", "daily/links.md": f"[[{nfc}]]\n"})
    _, found = _findings(load_vault, root)
    link_findings = [f for (p, _), f in found.items() if p == "daily/links.md"]
    assert all(f.line == 1 for f in link_findings)


def test_case_only_rename_in_the_sidecar(make_vault, load_vault):
    """people/Ana.md -> people/ana.md: the state matches a fresh load, links still resolve."""
    from palinode_vault.settings import Settings
    from palinode_vault.sidecar.app import Sidecar

    root = make_vault(
        {
            "people/Ana.md": "---\nid: person-ana\ncategory: person\ntype: PersonMemory\nname: Ana\n---\n# Ana\n\nSee [[bob]].\n",
            "people/bob.md": "---\nid: person-bob\ncategory: person\ntype: PersonMemory\nname: Bob\nentities: [person/ana]\n---\n# Bob\n\nWith [[Ana]].\n",
        }
    )

    async def body():
        sidecar = Sidecar(Settings(vault=root, quiet_seconds=3600, workers=1))
        await sidecar.start()
        try:
            os.rename(root / "people" / "Ana.md", root / "people" / "ana.md")
            await sidecar.on_changes({"people/ana.md"}, set(), {"people/Ana.md"})
            return sorted(sidecar.vault.state.notes), {(f.check, f.path) for f in sidecar.all_findings()}
        finally:
            await sidecar.stop()

    notes, findings = asyncio.run(asyncio.wait_for(body(), 60))
    assert notes == ["people/ana.md", "people/bob.md"]
    from palinode_vault.maintenance import lint

    fresh = {(f.check, f.path) for f in lint(load_vault(root)).findings}
    # a fresh load and the sidecar agree, except date-based checks on the sidecar's real "today"
    assert {x for x in findings if x[0] not in ("stale",)} == {x for x in fresh if x[0] not in ("stale",)}
    assert ("broken_link", "people/bob.md") not in findings


def test_file_deleted_between_the_event_and_the_read(make_vault):
    """The watcher reports a change, the file is gone when read: no crash, no ghost note."""
    from palinode_vault.settings import Settings
    from palinode_vault.sidecar.app import Sidecar
    from palinode_vault.vault import read_note_text

    root = make_vault({"people/ana.md": "---\nid: person-ana\ncategory: person\ntype: PersonMemory\nname: Ana\n---\n# Ana\n"})
    gone = read_note_text(root, "people/never.md", 1 << 20)
    assert "disappeared" in gone.message

    async def body():
        sidecar = Sidecar(Settings(vault=root, quiet_seconds=0, workers=1))
        await sidecar.start()
        try:
            (root / "people" / "tmp.md").write_text("# soon gone\n")
            await sidecar.on_changes({"people/tmp.md"}, set(), set())
            (root / "people" / "tmp.md").unlink()
            # events for a file that is no longer there, as added and as modified
            await sidecar.on_changes({"people/tmp.md"}, {"people/ana.md", "people/ghost.md"}, set())
            await sidecar.on_changes(set(), {"people/tmp.md"}, set())
            await asyncio.sleep(0)  # let the scheduler look at what is due
            return set(sidecar.vault.state.notes), sidecar.last_error
        finally:
            await sidecar.stop()

    notes, error = asyncio.run(asyncio.wait_for(body(), 60))
    assert notes == {"people/ana.md"}
    assert error is None
