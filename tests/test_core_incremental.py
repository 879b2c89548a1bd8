"""Incremental updates give the same findings as a full reload."""

from __future__ import annotations

import os

from palinode_vault.core.note import parse_note
from palinode_vault.core.text import normalise, sha256_text
from palinode_vault.maintenance import lint


def P(slug: str, body: str, entities: str = "[]") -> str:
    return (
        f"---\nid: person-{slug}\ncategory: person\ntype: PersonMemory\nname: {slug.title()}\n"
        f"entities: {entities}\nlast_updated: 2026-11-25\n---\n{body}"
    )


FILES = {
    "people/alice.md": P("alice", "Works with [[bob]] and [[carol]] on [[checkout#Status]].\n", "[person/bob]"),
    "people/bob.md": P("bob", "Knows [[alice]]. See [[Dave]].\n", "[person/alice]"),
    "projects/checkout.md": (
        "---\nid: project-checkout\ncategory: project\ntype: ProjectSnapshot\nname: Checkout\n"
        "last_updated: 2026-11-25\n---\n## Status\nfine\n"
    ),
    "daily/2026-11-30.md": "Met [[bob]] and [[alice#Nope]].\n",
}


def _findings(vault):
    return sorted(tuple(sorted((k, str(v)) for k, v in f.to_json().items())) for f in lint(vault).findings)


def _graph(state):
    return (
        {p: list(t) for p, t in state.resolved.items()},
        {t: dict(c) for t, c in state.incoming.items() if c},
    )


def _assert_same(vault, root, load_vault):
    fresh = load_vault(root)
    assert _findings(vault) == _findings(fresh)
    assert _graph(vault.state) == _graph(fresh.state)


def _refresh(vault, *paths):
    return vault.refresh(set(paths))


def test_edit_a_note(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    (root / "projects/checkout.md").write_text(FILES["projects/checkout.md"].replace("## Status", "## State"))
    affected = _refresh(vault, "projects/checkout.md")
    assert "people/alice.md" in affected  # its anchor broke
    _assert_same(vault, root, load_vault)


def test_add_a_note_that_fixes_a_broken_link(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    before = {(f.check, f.path) for f in lint(vault).findings}
    assert ("broken_link", "people/alice.md") in before
    (root / "people/carol.md").write_text(P("carol", "Hi [[alice]].\n", "[person/alice]"))
    affected = _refresh(vault, "people/carol.md")
    assert "people/alice.md" in affected
    assert ("broken_link", "people/alice.md") not in {(f.check, f.path) for f in lint(vault).findings}
    _assert_same(vault, root, load_vault)


def test_label_link_starts_to_mean_a_new_file(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    (root / "people/dave.md").write_text(P("dave", "[[bob]]\n", "[person/bob]"))
    _refresh(vault, "people/dave.md")
    # [[Dave]] now resolves (case-insensitive) to people/dave.md
    assert vault.state.resolved["people/bob.md"][1] == "people/dave.md"
    _assert_same(vault, root, load_vault)


def test_delete_a_linked_note(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    (root / "people/bob.md").unlink()
    affected = _refresh(vault, "people/bob.md")
    assert {"people/alice.md", "daily/2026-11-30.md"} <= affected
    _assert_same(vault, root, load_vault)


def test_rename_a_note(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    os.rename(root / "people/bob.md", root / "people/robert.md")
    _refresh(vault, "people/bob.md", "people/robert.md")
    _assert_same(vault, root, load_vault)


def test_touch_without_change_keeps_state(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    generation = vault.state.generation
    st = (root / "people/alice.md").stat()
    os.utime(root / "people/alice.md", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _refresh(vault, "people/alice.md") == set()
    assert vault.state.generation == generation


def test_vault_state_upsert_and_remove_directly(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    state = vault.state
    text, _ = normalise(P("carol", "Hi [[alice]] and [[bob]].\n", "[person/alice, person/bob]"))
    affected = state.upsert_note(parse_note("people/carol.md", text, sha256_text(text)))
    assert {"people/carol.md", "people/alice.md", "people/bob.md"} <= affected
    (root / "people/carol.md").write_text(text)
    _assert_same(vault, root, load_vault)
    affected = state.remove("people/carol.md")
    assert "people/alice.md" in affected and "people/carol.md" not in affected
    (root / "people/carol.md").unlink()
    _assert_same(vault, root, load_vault)


def test_attachment_appears(make_vault, load_vault):
    root = make_vault({**FILES, "Home.md": "![[pic.png]]\n"})
    vault = load_vault(root)
    assert vault.state.resolved["Home.md"] == [None]
    (root / "img").mkdir()
    (root / "img/pic.png").write_bytes(b"\x89PNG")
    assert "Home.md" in _refresh(vault, "img/pic.png")
    assert vault.state.resolved["Home.md"] == ["img/pic.png"]
    _assert_same(vault, root, load_vault)


def test_a_note_becomes_unreadable_and_recovers(make_vault, load_vault):
    root = make_vault(FILES)
    vault = load_vault(root)
    (root / "people/bob.md").write_bytes(b"\x00binary")
    _refresh(vault, "people/bob.md")
    assert ("unreadable", "people/bob.md") in {(f.check, f.path) for f in lint(vault).findings}
    _assert_same(vault, root, load_vault)
    (root / "people/bob.md").write_text(FILES["people/bob.md"])
    _refresh(vault, "people/bob.md")
    _assert_same(vault, root, load_vault)


def test_a_snapshot_changes_apart_from_the_vault(make_vault, load_vault):
    """`Vault.snapshot` (memory passes plan on it with no lock held): changes to the snapshot's
    state never reach the live state, and a changed snapshot is a correct state of its own."""
    root = make_vault(FILES)
    live = load_vault(root)
    before = (_graph(live.state), sorted(live.state.files()), _findings(live))
    snap = live.snapshot()
    (root / "people/carol.md").write_text(P("carol", "Knows [[alice]].\n"))
    (root / "people/bob.md").unlink()
    snap.refresh({"people/carol.md", "people/bob.md"})
    assert (_graph(live.state), sorted(live.state.files()), _findings(live)) == before
    assert _graph(snap.state) == _graph(load_vault(root).state)
    assert snap.settings is not live.settings
