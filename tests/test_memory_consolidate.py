"""Consolidation on the sample vault (rules in code; the model only for unclear pairs), core, undo."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from palinode_vault.cli import main
from palinode_vault.memory.update.workspace import section_bounds
from palinode_vault.memory.weekly.consolidate import consolidate, is_due, next_run
from palinode_vault.memory.weekly.core_memory import core_set
from palinode_vault.memory.weekly.oplog import read_log
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault
from palinode_vault.writer import undo_last

SAMPLE = Path(__file__).resolve().parent.parent / "sample-vault"
TODAY = dt.date(2026, 12, 1)


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "v", ignore=shutil.ignore_patterns(".palinode"))
    return tmp_path / "v"


def vault(root):
    v = Vault(Settings(vault=root, now=TODAY))
    v.load()
    return v


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".palinode" not in p.parts}


def test_consolidation_follows_program(root):
    r = consolidate(vault(root), generator=False)
    ops = [(o["op"], o["path"]) for o in r.operations]
    assert ("SUPERSEDE", "decisions/stripe-for-billing.md") in ops
    assert ("KEEP", "decisions/managed-postgres-hosting.md") in ops  # complementary: both stay active
    assert ("ARCHIVE", "archive/inbox/async-standups.md") in ops  # 22 days > 14
    assert ("FLAG", "insights/estimate-in-ranges.md") in ops  # stale: flagged, not archived
    assert ("DEMOTE", "people/elena-vasquez.md") in ops and ("DEMOTE", "projects/pilot-launch.md") in ops
    moved = sorted(p for op, p in ops if op == "MOVE")
    assert moved == [f"archive/daily/2026-11-{d}.md" for d in ("24", "25", "26", "27", "30")]
    assert (root / "daily/2026-12-01.md").exists()  # today's log waits
    assert (root / "archive/daily/2026-11-24.md").read_bytes() == (SAMPLE / "daily/2026-11-24.md").read_bytes()
    stripe = (root / "decisions/stripe-for-billing.md").read_text()
    assert "status: archived" in stripe and "superseded_by: decision-paddle-for-billing" in stripe
    assert "status: active" in (root / "decisions/postgres-over-firebase.md").read_text()
    offline = (root / "projects/offline-mode.md").read_text()
    assert "- 2026-11-24:" in offline and "rejected by the server" in offline  # specifics kept
    assert "mid-December with three clinics" in (root / "projects/offline-mode-history.md").read_text()
    stale = (root / "archive/inbox/async-standups.md").read_text()
    assert "status: archived" in stale and "archived_reason: stale" in stale
    assert not (root / "inbox/async-standups.md").exists()
    assert (root / "people/ruth-mbeki.md").read_bytes() == (SAMPLE / "people/ruth-mbeki.md").read_bytes()
    assert (root / "projects/billing-migration.md").read_bytes() == (SAMPLE / "projects/billing-migration.md").read_bytes()
    assert "inbox/group-bookings-request.md" not in r.written  # two mentions stay below the pattern threshold
    assert any(e["op"] == "CORE_REVIEW" for e in read_log(root))


def test_dry_run_writes_nothing_and_shows_diffs(root):
    before = snapshot(root)
    r = consolidate(vault(root), dry_run=True, generator=False)
    assert r.written == [] and r.diffs and snapshot(root) == before
    assert {o["op"] for o in r.operations} >= {"MOVE", "SUPERSEDE", "DEMOTE"}


def test_undo_reverts_a_consolidation(root):
    before = snapshot(root)
    r = consolidate(vault(root), generator=False)
    assert r.written
    undone = undo_last(root)
    assert sorted(undone.restored) == sorted(r.written) and snapshot(root) == before


def test_cli_json_shapes(root):
    out = CliRunner().invoke(
        main, ["consolidate", "--vault", str(root), "--now", "2026-12-01", "--dry-run", "--json", "--no-model"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["written"] == [] and all({"op", "path", "reason"} <= set(o) for o in data["operations"])
    out = CliRunner().invoke(main, ["core", "--vault", str(root), "--now", "2026-12-01", "--json"])
    data = json.loads(out.output)
    assert {"files", "chars"} <= set(data) and data["chars"] <= 12000
    assert data["files"][0]["path"] == "people/noor-haddad.md"


def test_core_set_respects_the_budget_from_program(root):
    program = root / "PROGRAM.md"
    program.write_text((SAMPLE.parent / "PROGRAM.md").read_text().replace("max_chars: 12000", "max_chars: 3000"))
    result = core_set(vault(root))
    assert result.chars <= 3000 and result.left_out
    assert result.files[0]["path"] == "people/noor-haddad.md"


def test_schedule_reads_the_weekday(root):
    assert next_run(TODAY, "sunday") == dt.date(2026, 12, 6)
    assert not is_due(root, TODAY)
    assert is_due(root, dt.date(2026, 12, 6))


def test_self_review_proposes_without_editing_program(root):
    program = root / "PROGRAM.md"
    program.write_text((SAMPLE.parent / "PROGRAM.md").read_text())
    before = program.read_bytes()
    lines = [
        json.dumps(
            {
                "time": f"2026-11-2{i + 5}T10:00:00Z",
                "op": "INBOX",
                "type": "Insight",
                "path": f"inbox/m{i}.md",
                "confidence": 0.5,
                "source": "s",
                "reason": "x; type unclear ('MeetingNote'), filed as Insight",
            }
        )
        for i in range(3)
    ]
    with open(root / "logs/operations.jsonl", "a") as handle:
        handle.write("\n".join(lines) + "\n")
    r = consolidate(vault(root), generator=False)
    assert ("PROPOSE", "inbox/program-change-2026-12-01.md") in [(o["op"], o["path"]) for o in r.operations]
    proposal = (root / "inbox/program-change-2026-12-01.md").read_text()
    assert "status: review" in proposal and "```diff" in proposal and "MeetingNote" in proposal
    assert program.read_bytes() == before


def test_hostile_entities_values_are_skipped_not_fatal(root):
    """Issue 17: consolidation's steps read `entities:` (supersession, entity maintenance,
    pruning, patterns); a mapping, a number, nulls or mixed items must not crash the pass, are
    never rewritten, and the notes that could not be linked are reported."""
    odd = {
        "decisions/postgres-over-firebase.md": "7",
        "decisions/managed-postgres-hosting.md": "[1, null, true, {x: 2}, project/harbor-app]",
        "people/mira-okonkwo.md": "{a: 1}",
        "projects/offline-mode.md": "[null, person/mira-okonkwo, 3]",
        "insights/estimate-in-ranges.md": "[{nested: [1, 2]}]",
    }
    for rel, value in odd.items():
        path = root / rel
        text = path.read_text()
        line = next((x for x in text.splitlines() if x.startswith("entities:")), None)
        text = text.replace(line, f"entities: {value}") if line else text.replace("\n---\n", f"\nentities: {value}\n---\n", 1)
        path.write_text(text)
    r = consolidate(vault(root), generator=False, embedder=False)
    assert r.written  # the rest of the pass went on
    for rel, value in odd.items():
        assert f"\nentities: {value}\n" in (root / rel).read_text(), rel  # left as written
    done = CliRunner().invoke(main, ["lint", "--vault", str(root)])
    assert "Traceback" not in (done.output or "") and done.exception is None or isinstance(done.exception, SystemExit)


def test_daily_sentences_go_to_the_project_sections_their_words_say(root):
    """Consolidation reads a daily note's sentences with the extraction's cue words
    (cue_words/<lang>.toml): a decision's wording, a lesson's, a blocker's."""
    (root / "daily/2026-11-28.md").write_text(
        "# Saturday 28 November 2026\n\n"
        "Worked on [[offline-mode]] for an hour. We settled on a ten-minute sync interval for the tablets. "
        "Turns out the cheapest tablets lose wifi when the screen locks. "
        "The photo upload is stuck until the hosting quota is raised. The coffee machine was fixed.\n",
        encoding="utf-8",
    )
    consolidate(vault(root), generator=False)
    text = (root / "projects/offline-mode.md").read_text()

    def section(name):
        start, end = section_bounds(text, name)
        return text[start:end]

    assert "We settled on a ten-minute sync interval for the tablets." in section("Key Decisions")
    assert "Turns out the cheapest tablets lose wifi when the screen locks." in section("Lessons Learned")
    assert "The photo upload is stuck until the hosting quota is raised." in section("Blockers")
    assert "coffee machine" not in section("Key Decisions") + section("Lessons Learned") + section("Blockers")
