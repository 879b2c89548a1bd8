"""sample-vault/ (see docs/SAMPLE_VAULT.md): the exact findings, what fix repairs, what remains."""

from __future__ import annotations

import json

NOW = "2026-12-01"

# The fourteen deliberate problems and the by-design date findings: (check, path, line).
PROBLEMS = {
    ("wiki_drift", "insights/demo-with-real-data.md", 5),
    ("wiki_drift", "research/2026-11-05-sms-reminder-no-show-study.md", 17),
    ("unresolvable_label", "decisions/design-tokens-in-figma.md", 20),
    ("broken_link", "people/tariq-benali.md", 32),
    ("broken_anchor", "insights/clinics-reply-to-sms-not-email.md", 20),
    ("footer_stale", "decisions/sms-provider-choice.md", 30),
    ("missing_frontmatter", "people/ruth-mbeki.md", 1),
    ("invalid_frontmatter", "projects/billing-migration.md", 5),
    ("superseded_not_archived", "decisions/stripe-for-billing.md", 5),
    ("footer_stale", "people/sam-whitaker.md", 33),
    ("orphan", "insights/agenda-in-the-invite.md", 1),
    ("duplicate_id", "decisions/managed-postgres-hosting.md", 2),
    ("duplicate_id", "decisions/postgres-over-firebase.md", 2),
    ("schema", "decisions/managed-postgres-hosting.md", 2),
    # by design: dates
    ("stale", "insights/estimate-in-ranges.md", 8),
    ("inbox_stale", "inbox/async-standups.md", 5),
    ("core_review", "people/elena-vasquez.md", 8),
    ("core_review", "projects/pilot-launch.md", 7),
}

# cross_refs is correct in these three, and has nothing to say in the last three.
CROSS_REFS_OK = {
    "decisions/postgres-over-firebase.md",
    "insights/offline-conflicts-are-a-pattern.md",
    "research/2026-10-21-local-first-software.md",
    "people/ruth-mbeki.md",
    "projects/billing-migration.md",
    "insights/agenda-in-the-invite.md",
}

FIXED_BY_FIX = {
    ("wiki_drift", "insights/demo-with-real-data.md", 5),
    ("wiki_drift", "research/2026-11-05-sms-reminder-no-show-study.md", 17),
    ("unresolvable_label", "decisions/design-tokens-in-figma.md", 20),
    ("footer_stale", "decisions/sms-provider-choice.md", 30),
    ("footer_stale", "people/sam-whitaker.md", 33),
}


def _lint(run_cli, root):
    result = run_cli("lint", "--vault", root, "--json", "--now", NOW)
    data = json.loads(result.stdout)
    return result, data


def _memory_paths(root):
    from palinode_vault.kinds import is_memory_path

    return {p.relative_to(root).as_posix() for p in root.rglob("*.md") if is_memory_path(p.relative_to(root).as_posix())}


def test_expected_findings(sample_vault, run_cli):
    result, data = _lint(run_cli, sample_vault)
    assert result.exit_code == 1  # errors: missing/invalid frontmatter, duplicate id, supersession
    got = {(f["check"], f["path"], f["line"]) for f in data["findings"]}
    cross = {(c, p) for c, p, _ in got if c == "cross_refs_stale"}
    assert got - {g for g in got if g[0] == "cross_refs_stale"} == PROBLEMS
    expected_cross = _memory_paths(sample_vault) - CROSS_REFS_OK
    assert cross == {("cross_refs_stale", p) for p in expected_cross}
    assert len(cross) == 28
    assert data["total_files"] == 34
    broken = [f for f in data["findings"] if f["check"] == "broken_link"]
    assert broken[0]["target"] == "mira-okonkow"
    invalid = next(f for f in data["findings"] if f["check"] == "invalid_frontmatter")
    assert invalid["column"] == 7


def test_links_in_code_and_comments_are_not_links(sample_vault, load_vault):
    state = load_vault(sample_vault).state
    note = state.notes["research/2026-11-16-sqlite-sync-options.md"]
    targets = {link.target for link in note.links}
    for hidden in ("not-a-real-note", "placeholder-patient", "placeholder-therapist", "patient-name", "realm-sync-notes"):
        assert hidden not in targets
    all_targets = {link.target for n in state.notes.values() for link in n.links}
    assert not {"not-a-real-note", "placeholder-patient", "realm-sync-notes"} & all_targets


def test_scan_counts(sample_vault, run_cli):
    data = json.loads(run_cli("scan", "--vault", sample_vault, "--json", "--now", NOW).stdout)
    assert data["markdown_files"] == 44
    assert data["memory_files"] == 34
    # mira-okonkow, and [[Jonas Lindqvist]], which Obsidian does not resolve either
    # (docs/SAMPLE_VAULT.md says 1: it counts only the broken target)
    assert data["unresolved"] == 2
    assert data["orphans"] == 1
    run_cli("fix", "--vault", sample_vault, "--now", NOW)
    assert json.loads(run_cli("scan", "--vault", sample_vault, "--json", "--now", NOW).stdout)["unresolved"] == 1


def test_fix_then_remaining_findings_then_nothing(sample_vault, run_cli, digest):
    untouched = {
        p: (sample_vault / p).read_bytes()
        for p in (
            "decisions/postgres-over-firebase.md",
            "insights/offline-conflicts-are-a-pattern.md",
            "research/2026-10-21-local-first-software.md",
            "people/ruth-mbeki.md",
            "projects/billing-migration.md",
            "Home.md",
            "daily/2026-11-30.md",
        )
    }
    reminder = (sample_vault / "projects/reminder-sms.md").read_text()
    result = run_cli("fix", "--vault", sample_vault, "--json", "--now", NOW)
    data = json.loads(result.stdout)
    assert len(data["written"]) == 28
    assert sorted(s["path"] for s in data["skipped"]) == ["people/ruth-mbeki.md", "projects/billing-migration.md"]
    for path, before in untouched.items():
        assert (sample_vault / path).read_bytes() == before, path
    # the person's own See also survives; only cross_refs was added
    after = (sample_vault / "projects/reminder-sms.md").read_text()
    assert "<!-- palinode:see-also -->" not in after
    assert after.split("\n---\n", 1)[1] == reminder.split("\n---\n", 1)[1]

    _, remaining = _lint(run_cli, sample_vault)
    # fix added a cross_refs line to most files, so compare (check, path) after it
    got = {(f["check"], f["path"]) for f in remaining["findings"]}
    assert got == {(c, p) for c, p, _ in PROBLEMS - FIXED_BY_FIX}
    assert not any(f.get("fixable") for f in remaining["findings"])

    before = digest(sample_vault)
    again = json.loads(run_cli("fix", "--vault", sample_vault, "--json", "--now", NOW).stdout)
    assert again["written"] == []
    assert digest(sample_vault) == before


def test_fix_results_in_detail(sample_vault, run_cli):
    run_cli("fix", "--vault", sample_vault, "--now", NOW)
    demo = (sample_vault / "insights/demo-with-real-data.md").read_text()
    assert demo.endswith("<!-- palinode:see-also -->\n## See also\n- [[dev-raman]]\n<!-- /palinode:see-also -->\n")
    study = (sample_vault / "research/2026-11-05-sms-reminder-no-show-study.md").read_text().split("\n")
    assert study[8].startswith("entities:") and "person/hana-kobayashi" in study[8]
    tokens = (sample_vault / "decisions/design-tokens-in-figma.md").read_text()
    assert "[[Jonas Lindqvist]]" not in tokens and tokens.count("[[jonas-lindqvist|Jonas Lindqvist]]") >= 1
    sms = (sample_vault / "decisions/sms-provider-choice.md").read_text()
    assert "<!-- palinode:see-also -->\n## See also\n- [[elena-vasquez]]\n<!-- /palinode:see-also -->" in sms
    assert "- [[tariq-benali]]\n<!-- /palinode" not in sms
    sam = (sample_vault / "people/sam-whitaker.md").read_text()
    assert "palinode-auto-footer" not in sam
    assert "<!-- palinode:see-also -->\n## See also\n- [[pilot-launch]]\n<!-- /palinode:see-also -->" in sam


def test_undo_restores_the_sample_vault(sample_vault, run_cli, digest):
    before = digest(sample_vault)
    run_cli("fix", "--vault", sample_vault, "--now", NOW)
    assert digest(sample_vault) != before
    result = run_cli("undo", "--vault", sample_vault, "--json")
    assert len(json.loads(result.stdout)["restored"]) == 28
    assert digest(sample_vault) == before
