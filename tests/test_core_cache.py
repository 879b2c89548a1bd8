"""The parse cache in VAULT/.palinode/cache.db: unchanged vaults parse nothing."""

from __future__ import annotations

import os

FILES = {
    "people/alice-smith.md": "---\nid: person-alice-smith\ncategory: person\ntype: PersonMemory\nname: Alice\n---\nSee [[checkout]].\n",
    "projects/checkout.md": "---\nid: project-checkout\ncategory: project\ntype: ProjectSnapshot\nname: Checkout\n---\n`code` [[alice-smith]]\n",
    "daily/2026-11-30.md": "Worked on [[checkout]].\n",
    "Home.md": "# Home\n",
}


def test_second_load_parses_nothing(make_vault, load_vault):
    root = make_vault(FILES)
    first = load_vault(root)
    assert first.parsed_last_load == 4
    assert (root / ".palinode" / "cache.db").is_file()
    second = load_vault(root)
    assert second.parsed_last_load == 0
    # and the cached notes are the same notes
    for path, note in first.state.notes.items():
        cached = second.state.notes[path]
        assert (cached.links, cached.headings, cached.frontmatter, cached.text_hash) == (
            note.links,
            note.headings,
            note.frontmatter,
            note.text_hash,
        )


def test_touching_mtime_without_changing_content_reparses_nothing(make_vault, load_vault):
    root = make_vault(FILES)
    load_vault(root)
    path = root / "projects/checkout.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    again = load_vault(root)
    assert again.parsed_last_load == 0
    # the hash hit refreshed the stat, so a third load does not even read the file... or at
    # worst reads it again; it never parses
    assert load_vault(root).parsed_last_load == 0


def test_editing_one_note_reparses_one(make_vault, load_vault):
    root = make_vault(FILES)
    load_vault(root)
    (root / "daily/2026-11-30.md").write_text("Worked on [[checkout]] and [[alice-smith]].\n")
    again = load_vault(root)
    assert again.parsed_last_load == 1
    assert [link.target for link in again.state.notes["daily/2026-11-30.md"].links] == ["checkout", "alice-smith"]
    assert load_vault(root).parsed_last_load == 0


def test_deleted_and_new_files(make_vault, load_vault):
    root = make_vault(FILES)
    load_vault(root)
    (root / "Home.md").unlink()
    (root / "New.md").write_text("[[Home]]\n")
    again = load_vault(root)
    assert again.parsed_last_load == 1
    assert "Home.md" not in again.state.notes
    assert again.state.resolved["New.md"] == [None]


def test_a_read_only_vault_runs_without_a_cache(make_vault, load_vault):
    root = make_vault(FILES)
    os.chmod(root, 0o555)
    try:
        if os.access(root, os.W_OK):  # running as root: permissions do not bind
            return
        vault = load_vault(root)
        assert vault.parsed_last_load == 4 and len(vault.state.notes) == 4
    finally:
        os.chmod(root, 0o755)


def test_two_processes_give_what_one_gives(tmp_path, load_vault, monkeypatch):
    """The parallel cold load (this process parsing a share while a worker sends cache rows it
    decodes and stores) and the forked lint of a vault with many memory notes give exactly the
    single-process notes and findings."""
    from test_bench_make_vault import make_vault

    from palinode_vault import maintenance
    from palinode_vault import vault as vault_module
    from palinode_vault.cache import ParseCache

    root = tmp_path / "bench"
    make_vault.generate(root, notes=2400, seed=3)
    one = load_vault(root, workers=1)
    (root / ".palinode" / "cache.db").unlink()
    two = load_vault(root, workers=2)
    assert two.parsed_last_load == one.parsed_last_load > vault_module.PARALLEL_MIN
    monkeypatch.setattr(maintenance, "PARALLEL_LINT_MIN", 1000)  # a smaller vault than a real fork needs
    assert maintenance.memory_file_count(two.state) >= maintenance.PARALLEL_LINT_MIN
    assert two.state.notes == one.state.notes
    cache = ParseCache(root)
    cache.load()
    assert all(cache.by_stat(p, s.size, s.mtime_ns) == two.state.notes[p] for p, s in two.stats.items() if p in two.state.notes)
    cache.close()
    serial = maintenance.lint(one).findings
    forked = maintenance.lint(two, workers=2).findings
    assert len(serial) > 1000 and forked == serial
