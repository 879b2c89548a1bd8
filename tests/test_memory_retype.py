"""Approving an inbox note as another type (`inbox approve NOTE --as TYPE`, socket `as_type`): the
note is re-written as that type from its own words and filed as a note of that type would be,
in one journaled run that undo reverts. Real files from sample-vault/, the real writer and undo,
the real CLI and a real sidecar over its socket."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from palinode_vault.cli import main
from palinode_vault.core.schemas import validate_memory
from palinode_vault.kinds import BY_NAME, MEMORY_TYPES, TYPE_KIND
from palinode_vault.memory import review
from palinode_vault.memory.retype import STATEMENT_SECTIONS
from palinode_vault.memory.update.workspace import body_of, frontmatter_of
from palinode_vault.memory.weekly.oplog import read_log
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault
from palinode_vault.writer import undo_last

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
STANDUPS = "inbox/async-standups.md"  # an Insight about Tariq (entities: Tariq, then Mira)


@pytest.fixture
def root(sample_vault):
    return sample_vault  # conftest's copy of sample-vault/


def vault(root: Path) -> Vault:
    v = Vault(Settings(vault=root, now=NOW.date()))
    v.load()
    return v


def files(root: Path) -> dict[str, bytes]:
    """The vault's notes and logs (the cache under .palinode/ is not the vault's content)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".palinode" not in p.parts}


def words(text: str) -> list[str]:
    """The lines of a note's body that are the person's words (not headings, not blank)."""
    return [x.strip() for x in body_of(text).splitlines() if x.strip() and not x.startswith("#")]


def test_an_insight_approved_as_a_decision_is_filed_active_in_the_decision_sections(root):
    before = (root / STANDUPS).read_text()
    r = review.approve(vault(root), STANDUPS, NOW, as_type="decision")  # any case
    assert r.path == "decisions/async-standups.md" and not (root / STANDUPS).exists()
    text = (root / r.path).read_text()
    data = frontmatter_of(text)
    assert (data["category"], data["type"], data["status"]) == ("decision", "Decision", "active")
    assert data["id"] == "decision-async-standups"
    assert validate_memory(data, "Decision") == []
    assert "recurrence_count" not in data  # an Insight's own key
    # what it came from stays: confidence, entities, evidence; dated when it was noted
    assert data["confidence"] == 0.4 and data["evidence_refs"] == ["daily/2026-11-09"]
    assert data["entities"] == ["person/tariq-benali", "person/mira-okonkwo"]
    assert "created: 2026-11-09T16:00:00Z" in text
    assert re.findall(r"^## .+$", body_of(text), re.M)[:3] == ["## Statement", "## Rationale", "## Alternatives Rejected"]
    assert body_of(text).startswith("# Decision: The engineers might prefer written standups\n")
    statement = text.split("## Statement\n", 1)[1].split("\n## ", 1)[0]
    assert all(line in statement for line in words(before)[1:])  # every word of the person's, under Statement
    entry = read_log(root)[-1]
    assert entry["op"] == "APPROVE" and entry["type"] == "Decision" and entry["path"] == r.path
    assert "its type changed from Insight to Decision by the person" in entry["reason"]
    undo_last(root)
    assert (root / STANDUPS).read_text() == before and not (root / r.path).exists()


def _replacing_decision(root: Path) -> str:
    """An inbox decision as the update logic writes one that would replace the SMS provider choice."""
    (root / "inbox/texts-through-messagebird.md").write_text(
        "---\nid: decision-texts-through-messagebird\ncategory: decision\ntype: Decision\nstatus: review\n"
        'review_reason: "would supersede decisions/sms-provider-choice.md"\n'
        "review_supersedes: [decisions/sms-provider-choice.md]\nentities: []\n"
        'supersedes: [decision-sms-provider-choice]\nsuperseded_by: ""\nconfidence: 0.50\n'
        "created: 2026-11-30T10:00:00Z\nlast_updated: 2026-11-30T10:00:00Z\n---\n"
        "# Decision: Texts through MessageBird\n\n## Statement\nReminder texts go out through MessageBird.\n\n"
        "## Rationale\nTheir delivery reports arrive within a minute.\n\n## Alternatives Rejected\nNone recorded.\n"
    )
    return "inbox/texts-through-messagebird.md"


def test_a_replacing_decision_approved_as_an_insight_drops_the_supersede_and_retires_nothing(root):
    path = _replacing_decision(root)
    before = files(root)
    r = review.approve(vault(root), path, NOW, as_type="Insight")
    assert r.path == "insights/texts-through-messagebird.md"
    after = files(root)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert changed == ["inbox/texts-through-messagebird.md", "insights/texts-through-messagebird.md", "logs/operations.jsonl"]
    text = (root / r.path).read_text()
    data = frontmatter_of(text)
    assert not {"supersedes", "superseded_by", "review_supersedes", "review_reason", "status"} & set(data)
    assert (data["category"], data["type"], data["recurrence_count"]) == ("insight", "Insight", 1)
    assert validate_memory(data, "Insight") == []
    # the statement under the title, the reason kept under its heading, the placeholder gone
    assert "# Insight: Texts through MessageBird\n\nReminder texts go out through MessageBird.\n" in text
    assert "## Rationale\nTheir delivery reports arrive within a minute.\n" in text
    assert "None recorded" not in text and "## Statement" not in text
    assert "superseded" not in read_log(root)[-1]["reason"]
    undo_last(root)
    assert files(root) == before


def test_an_insight_about_a_known_person_approved_as_a_person_memory_merges_into_their_note(root):
    before = files(root)
    r = review.approve(vault(root), STANDUPS, NOW, as_type="PersonMemory")
    assert r.path == "people/tariq-benali.md"
    tariq = (root / r.path).read_text()
    assert "Tariq said in passing that the daily call interrupts his mornings" in tariq
    assert not (root / "people/async-standups.md").exists() and not (root / STANDUPS).exists()
    archived = frontmatter_of((root / "archive/inbox/async-standups.md").read_text())
    assert (archived["category"], archived["status"], archived["archived_reason"]) == ("person", "archived", "approved")
    entry = read_log(root)[-1]
    assert entry["op"] == "APPROVE" and entry["type"] == "PersonMemory" and entry["path"] == r.path
    assert "UPDATE" in entry["reason"] and "changed from Insight to PersonMemory by the person" in entry["reason"]
    undo_last(root)
    assert files(root) == before


@pytest.mark.parametrize("as_type", MEMORY_TYPES)
def test_a_note_approved_as_any_type_is_filed_in_its_folder_in_its_schema_with_every_word(root, as_type):
    """A note about no one (nothing to merge into), with a section of the person's own."""
    note = root / "inbox/rooms-book-out.md"
    note.write_text(
        "---\nid: insight-rooms-book-out\ncategory: insight\ntype: Insight\nstatus: review\nconfidence: 0.45\n"
        "entities: []\nrecurrence_count: 2\nevidence_refs: [daily/2026-11-24]\nlast_updated: 2026-11-24T09:00:00Z\n---\n"
        "# Insight: Meeting rooms book out on Mondays\n\nThe two meeting rooms are taken all Monday morning.\n\n"
        "## Seen\n- 2026-11-24: nobody could find a room for the design review.\n"
    )
    before = note.read_text()
    kind = BY_NAME[TYPE_KIND[as_type]]
    about = None
    if kind.name in ("person", "project"):
        # it names no person or project: its title is no one's name, so approving asks whom
        with pytest.raises(review.ReviewError, match=f"names no {kind.name} the vault knows"):
            review.approve(vault(root), "inbox/rooms-book-out.md", NOW, as_type=as_type)
        assert note.read_text() == before
        about = "Room Desk"
    r = review.approve(vault(root), "inbox/rooms-book-out.md", NOW, as_type=as_type, about=about)
    assert r.path.startswith(kind.folder + "/") and not note.exists()
    text = (root / r.path).read_text()
    data = frontmatter_of(text)
    assert data["category"] == kind.name and data["type"] == as_type and validate_memory(data, as_type) == []
    assert data.get("status") == ("active" if as_type in ("Decision", "ProjectSnapshot") else None)
    assert data["confidence"] == 0.45 and data["evidence_refs"] == ["daily/2026-11-24"]
    assert ("recurrence_count" in data) == (as_type == "Insight")
    assert all(line in words(text) for line in words(before)[1:])  # no word of the person's lost
    assert "review_about" not in data
    if about:
        assert r.path == f"{kind.folder}/room-desk.md" and data["name"] == "Room Desk" and "\n# Room Desk\n" in text
    assert "## Seen\n- 2026-11-24: nobody could find a room for the design review.\n" in text
    heads = [h for h in STATEMENT_SECTIONS[as_type] if f"## {h}\n" in text]
    assert not STATEMENT_SECTIONS[as_type] or heads, "the statement sits in the new type's statement section"


def test_approving_as_the_type_it_has_is_a_plain_approval(root):
    r = review.approve(vault(root), STANDUPS, NOW, as_type="INSIGHT")
    assert r.path == "insights/async-standups.md"
    assert "changed" not in read_log(root)[-1]["reason"]


@pytest.mark.parametrize("as_type", ["Meeting", "ActionItem", "", "decisions", "../Decision", "Decision/x"])
def test_a_type_that_does_not_exist_is_refused_naming_the_types_and_nothing_is_written(root, as_type):
    before = files(root)
    with pytest.raises(review.ReviewError, match="is not a memory type; approve it as one of PersonMemory, ProjectSnapshot"):
        review.approve(vault(root), STANDUPS, NOW, as_type=as_type)
    assert files(root) == before


@pytest.mark.parametrize(
    "path, why",
    [
        ("decisions/postgres-over-firebase.md", "is not a note in inbox/"),
        ("inbox/../PROGRAM.md", "is not a note in inbox/"),
        ("inbox/nothing-here.md", "does not exist"),
        ("inbox/linked.md", "is a symlink"),
    ],
)
def test_approving_as_another_type_checks_the_note_as_approving_does(root, path, why):
    if os.name == "posix":
        (root / "inbox/linked.md").symlink_to(root / "insights/estimate-in-ranges.md")
    elif "linked" in path:
        pytest.skip("symlinks")
    before = files(root)
    with pytest.raises(review.ReviewError, match=why):
        review.approve(vault(root), path, NOW, as_type="Decision")
    assert files(root) == before


def test_the_cli_approves_as_another_type_and_refuses_an_unknown_one(root):
    runner = CliRunner()
    before = files(root)
    bad = runner.invoke(main, ["inbox", "approve", "--vault", str(root), STANDUPS, "--as", "Meeting"])
    assert bad.exit_code != 0 and "'Meeting' is not a memory type" in bad.output and "ResearchRef" in bad.output
    assert files(root) == before
    ok = runner.invoke(main, ["inbox", "approve", "--vault", str(root), STANDUPS, "--as", "decision", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["path"] == "decisions/async-standups.md"
    said = runner.invoke(main, ["inbox", "approve", "--vault", str(root), "inbox/group-bookings-request.md", "--as", "research"])
    assert said.exit_code == 0, said.output
    assert said.output.startswith("approved as ResearchRef: inbox/group-bookings-request.md -> research/")
    helped = runner.invoke(main, ["inbox", "approve", "--help"])
    assert "--as TYPE" in helped.output and "PersonMemory" in helped.output


@pytest.mark.timeout(120)
def test_the_socket_approves_as_another_type(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                with pytest.raises(Exception, match="'Meeting' is not a memory type"):
                    await client.call("inbox.approve", {"path": STANDUPS, "as_type": "Meeting"})
                assert (root / STANDUPS).is_file()
                approved = await client.call("inbox.approve", {"path": STANDUPS, "as_type": "Decision"})
                assert approved["path"] == "decisions/async-standups.md" and approved["run"]
                assert "decisions/async-standups.md" in approved["written"]
                undone = await client.call("undo", {})
                assert "decisions/async-standups.md" in undone["restored"]
                items = (await client.call("inbox.list"))["items"]
                assert [(x["path"], x["type"]) for x in items][0] == (STANDUPS, "Insight")

    run(body())
    assert not (root / "decisions/async-standups.md").exists()


# The person names the decision an approved decision replaces (`--supersedes`, socket `supersedes`).
RELEASES = "decisions/biweekly-release-train.md"


def test_a_decision_approved_as_superseding_another_retires_it_in_the_same_run(root):
    before = files(root)
    r = review.approve(vault(root), STANDUPS, NOW, as_type="Decision", supersedes=[RELEASES])
    new = frontmatter_of((root / r.path).read_text())
    old = frontmatter_of((root / RELEASES).read_text())
    assert new["status"] == "active" and new["supersedes"] == ["decision-biweekly-release-train"]
    assert "review_supersedes" not in new
    assert (old["status"], old["superseded_by"]) == ("archived", new["id"])
    logged = [e for e in read_log(root) if e["op"] == "APPROVE"][-1]
    assert f"superseded {RELEASES}" in json.dumps(logged)
    assert undo_last(root).restored and files(root) == before


@pytest.mark.parametrize(
    "named,why",
    [
        ("decisions/no-such-decision.md", "does not exist"),
        ("people/tariq-benali.md", "is not a note in decisions/"),
        ("decisions/../people/tariq-benali.md", "is not a note in decisions/"),
        ("../outside.md", "is not a note in decisions/"),
    ],
)
def test_a_decision_that_cannot_be_superseded_is_refused_and_nothing_is_written(root, named, why):
    before = files(root)
    with pytest.raises(review.ReviewError, match=why):
        review.approve(vault(root), STANDUPS, NOW, as_type="Decision", supersedes=[named])
    assert files(root) == before


def test_an_archived_decision_or_a_note_that_is_no_decision_is_not_superseded(root):
    archived = next(
        p.relative_to(root).as_posix() for p in (root / "decisions").glob("*.md") if "status: archived" in p.read_text()
    )
    before = files(root)
    with pytest.raises(review.ReviewError, match="is not an active decision"):
        review.approve(vault(root), STANDUPS, NOW, as_type="Decision", supersedes=[archived])
    with pytest.raises(review.ReviewError, match="only a decision supersedes a decision"):
        review.approve(vault(root), STANDUPS, NOW, supersedes=[RELEASES])  # it waits as an Insight
    (root / "decisions/linked.md").symlink_to(root / RELEASES)
    with pytest.raises(review.ReviewError, match="symlink"):
        review.approve(vault(root), STANDUPS, NOW, as_type="Decision", supersedes=["decisions/linked.md"])
    (root / "decisions/linked.md").unlink()
    assert files(root) == before


def test_the_cli_and_the_socket_approve_a_decision_as_superseding_another(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    runner = CliRunner()
    ok = runner.invoke(
        main, ["inbox", "approve", "--vault", str(root), STANDUPS, "--as", "Decision", "--supersedes", str(root / RELEASES)]
    )
    assert ok.exit_code == 0, ok.output
    assert frontmatter_of((root / RELEASES).read_text())["status"] == "archived"
    assert undo_last(root).restored

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                with pytest.raises(Exception, match="does not exist"):
                    await client.call(
                        "inbox.approve", {"path": STANDUPS, "as_type": "Decision", "supersedes": ["decisions/x.md"]}
                    )
                done = await client.call("inbox.approve", {"path": STANDUPS, "as_type": "Decision", "supersedes": [RELEASES]})
                assert RELEASES in done["written"]

    run(body())
    assert frontmatter_of((root / RELEASES).read_text())["status"] == "archived"
