"""The real Obsidian help vault (../shared/corpora/obsidian-help-en): resolution as in Obsidian,
lint reports only the real findings, and fix writes nothing to a non-memory vault."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.corpus

INTERNAL_LINKS = "Linking notes and files/Internal links.md"

# The only links Obsidian leaves unresolved: the deliberate examples in Internal links.md.
UNRESOLVED = {
    (INTERNAL_LINKS, 154, "Example"),
    (INTERNAL_LINKS, 155, "Example"),
    (INTERNAL_LINKS, 162, "Example"),
    (INTERNAL_LINKS, 163, "Example"),
    (INTERNAL_LINKS, 168, "Example.md"),
    (INTERNAL_LINKS, 169, "Example.md"),
}

FINDINGS = {
    ("broken_link", INTERNAL_LINKS, 154, "Example"),
    ("broken_link", INTERNAL_LINKS, 155, "Example#Details"),
    ("broken_link", INTERNAL_LINKS, 162, "Example"),
    ("broken_link", INTERNAL_LINKS, 163, "Example#Details"),
    ("broken_link", INTERNAL_LINKS, 168, "Example.md"),
    ("broken_link", INTERNAL_LINKS, 169, "Example.md#Details"),
    # Nothing links to it and it links nowhere (its only alias is not a link).
    ("orphan", "Editing and formatting/Multiple cursors.md", 1, None),
}


def test_only_the_deliberate_examples_are_unresolved(help_corpus, load_vault):
    state = load_vault(help_corpus).state
    unresolved = {
        (path, link.line, link.target)
        for path, note in state.notes.items()
        for link, target in zip(note.links, state.resolved[path])
        if target is None
    }
    assert unresolved == UNRESOLVED
    total = sum(len(n.links) for n in state.notes.values())
    assert total > 1500  # the corpus really was parsed


def test_same_folder_wins_for_duplicate_names(help_corpus, load_vault):
    state = load_vault(help_corpus).state

    def target(source, name):
        note = state.notes[source]
        return {t for link, t in zip(note.links, state.resolved[source]) if link.target == name}

    assert target("Obsidian Publish/Introduction to Obsidian Publish.md", "Security and privacy") == {
        "Obsidian Publish/Security and privacy.md"
    }
    assert target("Obsidian Sync/Introduction to Obsidian Sync.md", "Security and privacy") == {
        "Obsidian Sync/Security and privacy.md"
    }


def test_no_broken_anchors_and_anchors_are_checked(help_corpus, load_vault):
    from palinode_vault.core.resolve import anchor_exists

    state = load_vault(help_corpus).state
    checked = blocks = 0
    for path, note in state.notes.items():
        for link, target in zip(note.links, state.resolved[path]):
            if link.subpath and target in state.notes:
                t = state.notes[target]
                assert anchor_exists(link.subpath, t.headings, t.block_ids), (path, link.line, link.subpath)
                checked += 1
                blocks += link.subpath.startswith("^")
    assert checked > 300 and blocks > 10


def test_lint_json_reports_exactly_the_real_findings(help_corpus, run_cli):
    result = run_cli("lint", "--vault", help_corpus, "--json")
    assert result.exit_code == 0  # warnings and infos only
    report = json.loads(result.stdout)
    got = {(f["check"], f["path"], f["line"], f.get("target")) for f in report["findings"]}
    assert got == FINDINGS
    assert report["counts"] == {"broken_link": 6, "orphan": 1}
    assert report["total_files"] == 0  # no memory-tier files in a help vault


def test_fix_writes_nothing(help_corpus, run_cli, digest):
    before = digest(help_corpus)
    result = run_cli("fix", "--vault", help_corpus, "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["written"] == [] and data["skipped"] == []
    assert digest(help_corpus) == before
    assert not (help_corpus / ".palinode" / "journal").exists()
    dry = run_cli("fix", "--vault", help_corpus, "--dry-run")
    assert dry.stdout == ""
    assert digest(help_corpus) == before


def test_scan_counts(help_corpus, run_cli):
    data = json.loads(run_cli("scan", "--vault", help_corpus, "--json").stdout)
    assert data["memory_files"] == 0
    assert data["unresolved"] == 6
    assert data["orphans"] == 1
    assert data["markdown_files"] == 173
    assert data["findings"] == {"broken_link": 6, "orphan": 1}
