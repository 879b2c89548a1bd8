"""Exclusions: Obsidian's Excluded files, .palinode/ignore and PROGRAM.md ignore_folders, on real files."""

from __future__ import annotations

import json
from pathlib import Path

from palinode_vault.exclusions import Exclusions, folder_prefix, load_exclusions, write_ignore_file

PERSON = (
    "---\nid: person-{slug}\ncategory: person\ntype: PersonMemory\nname: {name}\n"
    "entities: []\ncross_refs: []\nlast_updated: 2026-11-25\n---\nHello [[{link}]].\n"
)
FILES = {
    "people/alice.md": PERSON.format(slug="alice", name="Alice", link="nobody-a"),
    "templates/person.md": PERSON.format(slug="tpl", name="{{name}}", link="nobody-t"),
    "private/diary.md": "Met [[nobody-p]].\n",
    "drafts/idea.md": "See [[nobody-d]].\n",
    "Archive.md": "Old [[nobody-x]].\n",
}


def test_folder_prefixes_are_normalised_and_unsafe_ones_refused():
    assert folder_prefix("templates") == "templates/"
    assert folder_prefix(" /a\\b/ ") == "a/b/"
    assert folder_prefix("./x/./y") == "x/y/"
    for bad in ("", "/", "..", "a/../b", 3, None):
        assert folder_prefix(bad) is None
    assert not Exclusions()


def test_each_source_excludes_its_folders_from_the_loaded_vault(make_vault, load_vault):
    root = make_vault(FILES)
    (root / ".obsidian").mkdir()
    # Obsidian's own syntax: a plain prefix and a /regex/.
    (root / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": ["templates/", "/^drafts\\//", "/[unclosed/"]}))
    write_ignore_file(root, ["private", "../escape"])
    ex = load_exclusions(root)
    assert ex.prefixes == ("templates/", "private/")
    assert [p.pattern for p in ex.patterns] == ["^drafts\\/"]  # the bad pattern is skipped, not an error

    v = load_vault(root)
    assert sorted(v.state.notes) == ["Archive.md", "people/alice.md"]


def test_program_md_ignore_folders(make_vault, load_vault):
    root = make_vault(FILES)
    shipped = Path(__file__).resolve().parents[1] / "PROGRAM.md"
    text = shipped.read_text(encoding="utf-8").replace("ignore_folders: []", "ignore_folders: [templates, private, drafts]")
    assert "ignore_folders: [templates, private, drafts]" in text
    (root / "PROGRAM.md").write_text(text, encoding="utf-8")
    assert load_exclusions(root).prefixes == ("templates/", "private/", "drafts/")
    v = load_vault(root)
    assert sorted(p for p in v.state.notes if p.endswith(".md") and p != "PROGRAM.md") == ["Archive.md", "people/alice.md"]


def test_cli_lint_and_fix_leave_excluded_folders_alone(make_vault, run_cli, digest):
    root = make_vault(FILES)
    write_ignore_file(root, ["templates", "private", "drafts"])
    before = {p: h for p, h in digest(root).items() if p.startswith(("templates/", "private/", "drafts/"))}
    out = json.loads(run_cli("lint", "--vault", root, "--json", "--now", "2026-12-01").stdout)
    targets = {f.get("target") for f in out["findings"]}
    assert "nobody-a" in targets and "nobody-x" in targets
    assert not targets & {"nobody-t", "nobody-p", "nobody-d"}
    run_cli("fix", "--vault", root)
    after = {p: h for p, h in digest(root).items() if p.startswith(("templates/", "private/", "drafts/"))}
    assert after == before


def test_a_change_in_an_excluded_folder_is_dropped_by_refresh(make_vault, load_vault):
    root = make_vault(FILES)
    write_ignore_file(root, ["private"])
    v = load_vault(root)
    (root / "private" / "new.md").write_text("[[x]]\n")
    v.refresh({"private/new.md", "private/diary.md"})
    assert not any(p.startswith("private/") for p in v.state.notes)


def test_a_hostile_app_json_is_ignored(make_vault, load_vault):
    root = make_vault(FILES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text("{not json")
    assert not load_exclusions(root)
    (root / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": "templates/"}))
    assert not load_exclusions(root)
    assert "templates/person.md" in load_vault(root).state.notes
