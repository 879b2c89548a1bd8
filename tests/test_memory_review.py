"""The person's review of inbox/: approve moves a memory into its folder (or merges it into the
person's or project's note), reject archives it; both journaled, logged and undoable. Real files,
the real writer and undo, the real CLI and a real sidecar over its socket."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from palinode_vault.cli import main
from palinode_vault.memory import review
from palinode_vault.memory.extraction.extract import extract_text
from palinode_vault.memory.update.workspace import frontmatter_of
from palinode_vault.memory.weekly.oplog import read_log
from palinode_vault.models import ScriptedGenerator, register_generator
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault
from palinode_vault.writer import undo_last

SAMPLE = Path(__file__).resolve().parent.parent / "sample-vault"
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "v", ignore=shutil.ignore_patterns(".palinode"))
    return tmp_path / "v"


def vault(root: Path) -> Vault:
    v = Vault(Settings(vault=root, now=NOW.date()))
    v.load()
    return v


def said(root: Path, text: str) -> str:
    """The inbox note a plainly worded statement the model did not offer becomes (with the judge
    off, so that the wording decides and not the fitted judge's numbers)."""
    program = (SAMPLE.parent / "PROGRAM.md").read_text()
    (root / "PROGRAM.md").write_text(program.replace("  review_judged: 0.6 ", "  review_judged: 0   ", 1))
    gen = ScriptedGenerator([{"items": []}])
    register_generator("reviewtest", lambda **options: gen)
    r = extract_text(vault(root), f"User: {text}\nAssistant: Noted.", generator="reviewtest", source="t", now=NOW)
    assert [o.op for o in r.outcomes] == ["INBOX"], r.outcomes
    return r.outcomes[0].path


def test_approve_moves_the_note_into_its_folder_and_ends_the_review(root):
    before = (root / "inbox/async-standups.md").read_text()
    r = review.approve(vault(root), "inbox/async-standups.md", NOW)
    assert r.path == "insights/async-standups.md" and not (root / "inbox/async-standups.md").exists()
    after = (root / r.path).read_text()
    assert "status:" not in after and "last_updated: 2026-12-01T12:00:00Z" in after
    # the rest of the note is as the person left it
    kept = [x for x in before.splitlines() if not x.startswith(("status:", "last_updated:"))]
    assert all(x in after.splitlines() for x in kept)
    assert read_log(root)[-1]["op"] == "APPROVE" and read_log(root)[-1]["path"] == r.path
    assert [w["path"] for w in review.waiting(vault(root))] == ["inbox/group-bookings-request.md"]
    undo_last(root)
    assert (root / "inbox/async-standups.md").read_text() == before and not (root / r.path).exists()


def test_an_approved_decision_becomes_active(root):
    path = said(root, "We decided to drop the fax integration, because no clinic has sent a fax since March.")
    r = review.approve(vault(root), path, NOW)
    assert r.path == "decisions/drop-the-fax-integration.md"
    text = (root / r.path).read_text()
    assert "status: active" in text and "status: review" not in text and "id: decision-drop-the-fax-integration" in text


def test_an_approved_fact_about_a_known_person_is_merged_into_their_note(root):
    path = said(root, "Tariq prefers written specs.")
    assert path == "inbox/tariq-benali-2.md"
    r = review.approve(vault(root), path, NOW)
    assert r.path == "people/tariq-benali.md"
    assert "Tariq prefers written specs." in (root / "people/tariq-benali.md").read_text()
    archived = (root / "archive/inbox/tariq-benali-2.md").read_text()
    assert "status: archived" in archived and "archived_reason: approved" in archived
    assert not (root / path).exists() and not (root / "people/tariq-benali-2.md").exists()
    entry = read_log(root)[-1]
    assert entry["op"] == "APPROVE" and entry["path"] == "people/tariq-benali.md" and "UPDATE" in entry["reason"]


def test_reject_archives_and_never_deletes(root):
    before = (root / "inbox/group-bookings-request.md").read_bytes()
    r = review.reject(vault(root), "inbox/group-bookings-request.md", NOW)
    assert r.path == "archive/inbox/group-bookings-request.md"
    text = (root / r.path).read_text()
    assert "status: archived" in text and "archived_reason: rejected" in text and "group rehab sessions" in text
    assert read_log(root)[-1]["op"] == "REJECT"
    undo_last(root)
    assert (root / "inbox/group-bookings-request.md").read_bytes() == before


@pytest.mark.parametrize(
    "path, why",
    [
        ("decisions/postgres-over-firebase.md", "is not a note in inbox/"),
        ("inbox/../PROGRAM.md", "is not a note in inbox/"),
        ("inbox/nothing-here.md", "does not exist"),
    ],
)
def test_only_an_inbox_note_waiting_for_review_can_be_reviewed(root, path, why):
    def files():  # the vault's notes and logs (the cache under .palinode/ is not the vault's content)
        return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".palinode" not in p.parts}

    before = files()
    for action in (review.approve, review.reject):
        with pytest.raises(review.ReviewError, match=why):
            action(vault(root), path, NOW)
    assert files() == before


def test_a_note_no_longer_under_review_is_refused(root):
    note = root / "inbox/async-standups.md"
    note.write_text(note.read_text().replace("status: review", "status: archived"))
    with pytest.raises(review.ReviewError, match="not waiting for review"):
        review.approve(vault(root), "inbox/async-standups.md", NOW)


def test_the_cli_lists_approves_and_rejects(root):
    runner = CliRunner()
    listed = runner.invoke(main, ["inbox", "list", "--vault", str(root), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [x["path"] for x in json.loads(listed.output)["items"]] == [
        "inbox/async-standups.md",
        "inbox/group-bookings-request.md",
    ]
    ok = runner.invoke(main, ["inbox", "approve", "--vault", str(root), str(root / "inbox/async-standups.md"), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["path"] == "insights/async-standups.md"
    no = runner.invoke(main, ["inbox", "reject", "--vault", str(root), "inbox/group-bookings-request.md"])
    assert no.exit_code == 0 and "archive/inbox/group-bookings-request.md" in no.output
    bad = runner.invoke(main, ["inbox", "approve", "--vault", str(root), "inbox/async-standups.md"])
    assert bad.exit_code != 0 and "inbox/async-standups.md does not exist" in bad.output


@pytest.mark.timeout(120)
def test_the_socket_lists_approves_and_rejects(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                items = (await client.call("inbox.list"))["items"]
                assert [x["path"] for x in items] == ["inbox/async-standups.md", "inbox/group-bookings-request.md"]
                approved = await client.call("inbox.approve", {"path": "inbox/async-standups.md"})
                assert approved["path"] == "insights/async-standups.md" and approved["run"]
                assert "insights/async-standups.md" in approved["written"]
                rejected = await client.call("inbox.reject", {"path": "inbox/group-bookings-request.md"})
                assert rejected["path"] == "archive/inbox/group-bookings-request.md"
                with pytest.raises(Exception, match="not a note in inbox/"):
                    await client.call("inbox.approve", {"path": "people/tariq-benali.md"})
                assert (await client.call("inbox.list"))["items"] == []

    run(body())
    assert (root / "insights/async-standups.md").is_file() and (root / "archive/inbox/group-bookings-request.md").is_file()
    _ = asyncio  # the helpers run the event loop


def test_the_weekly_review_counts_a_rejection_as_a_correction_and_an_approval_not(root):
    from palinode_vault.memory.weekly.corrections import find

    keep = said(root, "We decided to drop the fax integration, because no clinic has sent a fax since March.")
    drop = said(root, "We decided to move standups to Tuesdays, because Mondays are full.")
    review.approve(vault(root), keep)
    review.reject(vault(root), drop)
    today = dt.date.today()  # the journal's times are the wall clock
    found = find(root, vault(root).state, today, 7, read_log(root))
    assert [(c.kind, c.path, c.type) for c in found] == [("rejected", drop, "Decision")]


def test_an_approved_note_whose_name_is_taken_gets_the_next_name_and_a_matching_id(root):
    path = said(root, "We decided to drop the fax integration, because no clinic has sent a fax since March.")
    taken = root / "decisions/drop-the-fax-integration.md"
    taken.write_text(
        "---\nid: decision-drop-the-fax-integration\ncategory: decision\ntype: Decision\nstatus: active\n---\n"
        "# Decision: Drop the fax integration\n\nAn older note by the person.\n"
    )
    before = taken.read_bytes()
    r = review.approve(vault(root), path, NOW)
    assert r.path == "decisions/drop-the-fax-integration-2.md" and taken.read_bytes() == before
    assert "id: decision-drop-the-fax-integration-2" in (root / r.path).read_text()


def test_an_inbox_note_without_type_is_filed_by_its_category(root):
    """Palinode writes no `type:`; category decides (issue 22), so a decision is not filed as an insight."""
    (root / "inbox/no-fax.md").write_text(
        "---\nid: decision-no-fax\ncategory: decision\nstatus: review\nconfidence: 0.6\n"
        "last_updated: 2026-11-20T09:00:00Z\n---\n# No fax\n\n"
        "## Decision\nWe stop the fax integration.\n\n## Rationale\nNo clinic has sent a fax since March.\n"
    )
    assert {w["path"]: w["type"] for w in review.waiting(vault(root))}["inbox/no-fax.md"] == "Decision"
    r = review.approve(vault(root), "inbox/no-fax.md", NOW)
    assert r.path.startswith("decisions/"), r.path
    assert "status: active" in (root / r.path).read_text()


def _replacing_decision(root: Path, supersedes: str, review_supersedes: str | None) -> str:
    """An inbox decision as the update logic writes one that would replace another (by hand here,
    so that its keys can be anything a hand edit or a hostile note could make them)."""
    extra = f"review_supersedes: {review_supersedes}\n" if review_supersedes is not None else ""
    (root / "inbox/texts-through-messagebird.md").write_text(
        "---\nid: decision-texts-through-messagebird\ncategory: decision\ntype: Decision\nstatus: review\n"
        f'entities: []\nsupersedes: {supersedes}\n{extra}superseded_by: ""\nconfidence: 0.50\n'
        "---\n# Decision: Texts through MessageBird\n\n## Statement\nReminder texts go out through MessageBird.\n"
    )
    return "inbox/texts-through-messagebird.md"


@pytest.mark.parametrize(
    "supersedes, named",
    [
        ("[decision-sms-provider-choice]", "[decisions/sms-provider-choice.md]"),
        ("[decision-sms-provider-choice, decision-kept-by-hand]", "[decisions/sms-provider-choice.md]"),
        ("[decision-sms-provider-choice]", "[../../etc/passwd]"),  # a hostile path: read from nowhere
    ],
)
def test_approving_with_keep_active_retires_none_of_the_decisions_named(root, supersedes, named):
    """The person says the decision only adds to the one the update logic named: that one stays
    active, and the approved decision lists neither its path nor any id (a hostile path changes nothing)."""
    before = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "decisions").glob("*.md")}
    r = review.approve(vault(root), _replacing_decision(root, supersedes, named), NOW, keep_active=True)
    assert r.path == "decisions/texts-through-messagebird.md"
    assert all((root / p).read_bytes() == b for p, b in before.items() if p != r.path)
    data = frontmatter_of((root / r.path).read_text())
    assert "review_supersedes" not in data and data["status"] == "active"
    assert data["supersedes"] == []
    assert "superseded" not in read_log(root)[-1]["reason"]


def test_the_cli_and_the_socket_approve_keeping_the_named_decision_active(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    sms = root / "decisions/sms-provider-choice.md"
    path = _replacing_decision(root, "[decision-sms-provider-choice]", "[decisions/sms-provider-choice.md]")
    ok = CliRunner().invoke(main, ["inbox", "approve", "--vault", str(root), path, "--keep-active"])
    assert ok.exit_code == 0, ok.output
    assert frontmatter_of(sms.read_text())["status"] == "active"
    assert undo_last(root).restored

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                done = await client.call("inbox.approve", {"path": path, "keep_active": True})
                assert "decisions/sms-provider-choice.md" not in done["written"]

    run(body())
    assert frontmatter_of(sms.read_text())["status"] == "active"


def test_keep_active_on_a_note_that_is_no_decision_changes_nothing_it_would_not(root):
    (root / "inbox/short-texts.md").write_text(
        "---\nid: insight-short-texts\ncategory: insight\ntype: Insight\nstatus: review\nentities: []\n"
        "confidence: 0.50\n---\n# Insight: Short texts\n\nShort reminder texts get more replies.\n"
    )
    r = review.approve(vault(root), "inbox/short-texts.md", NOW, keep_active=True)
    assert "supersedes" not in frontmatter_of((root / r.path).read_text())


def test_keep_active_and_a_named_replacement_together_retire_only_the_one_the_person_names(root):
    path = _replacing_decision(root, "[decision-sms-provider-choice]", "[decisions/sms-provider-choice.md]")
    r = review.approve(vault(root), path, NOW, supersedes=["decisions/stripe-for-billing.md"], keep_active=True)
    assert "status: active" in (root / "decisions/sms-provider-choice.md").read_text()
    assert "superseded_by: decision-texts-through-messagebird" in (root / "decisions/stripe-for-billing.md").read_text()
    assert frontmatter_of((root / r.path).read_text())["supersedes"] == ["decision-stripe-for-billing"]


@pytest.mark.parametrize(
    "supersedes, named, retired",
    [
        ("[decision-sms-provider-choice]", "[decisions/sms-provider-choice.md]", ["decisions/sms-provider-choice.md"]),
        # no path written (a hand-made note): the one active decision with that id
        ("[decision-sms-provider-choice]", None, ["decisions/sms-provider-choice.md"]),
        # an id two notes have (the sample vault's planted duplicate): neither is retired
        ("[decision-postgres-over-firebase]", None, []),
        # a path whose id the decision does not say it supersedes
        ("[]", "[decisions/sms-provider-choice.md]", []),
        # paths outside decisions/, escaping the vault, or a note already archived
        ("[decision-sms-provider-choice]", "[people/tariq-benali.md]", []),
        ("[decision-sms-provider-choice]", "[../../etc/passwd]", []),
        ("[decision-sms-provider-choice]", "[decisions/../people/tariq-benali.md]", []),
        ("[decision-weekly-release-train]", "[decisions/weekly-release-train.md]", []),
        ("[decision-sms-provider-choice]", "not a list", ["decisions/sms-provider-choice.md"]),
    ],
)
def test_approving_a_replacing_decision_retires_only_the_active_decision_it_names(root, supersedes, named, retired):
    before = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "decisions").glob("*.md")}
    before["people/tariq-benali.md"] = (root / "people/tariq-benali.md").read_bytes()
    r = review.approve(vault(root), _replacing_decision(root, supersedes, named), NOW)
    assert r.path == "decisions/texts-through-messagebird.md"
    changed = sorted(p for p, b in before.items() if (root / p).read_bytes() != b)
    assert changed == retired
    for p in retired:
        text = (root / p).read_text()
        assert "status: archived" in text and "superseded_by: decision-texts-through-messagebird" in text
    assert ("superseded" in read_log(root)[-1]["reason"]) == bool(retired)
    undo_last(root)
    assert all((root / p).read_bytes() == b for p, b in before.items())


def _maybe_replacing(root: Path, asked: str = "[decisions/sms-provider-choice.md]") -> str:
    """An inbox decision as the update logic writes one that may replace an active decision or add
    to it (`review_may_supersede`), by hand here so that the value can be anything."""
    (root / "inbox/texts-through-messagebird.md").write_text(
        "---\nid: decision-texts-through-messagebird\ncategory: decision\ntype: Decision\nstatus: review\n"
        f'entities: []\nsupersedes: []\nreview_may_supersede: {asked}\nsuperseded_by: ""\nconfidence: 0.50\n'
        "---\n# Decision: Texts through MessageBird\n\n## Statement\nReminder texts go out through MessageBird.\n"
    )
    return "inbox/texts-through-messagebird.md"


def test_a_decision_that_may_replace_another_is_approved_only_once_the_person_says_whether_it_does(root):
    path = _maybe_replacing(root)
    before = _files(root)
    with pytest.raises(review.ReviewError, match=r"may replace decisions/sms-provider-choice.md .*--keep-active"):
        review.approve(vault(root), path, NOW)
    assert _files(root) == before  # refused: nothing written
    assert [x["may_replace"] for x in review.waiting(vault(root)) if x["path"] == path] == [["decisions/sms-provider-choice.md"]]
    # it replaces it: that one is retired, as a SUPERSEDE would have
    r = review.approve(vault(root), path, NOW, supersedes=["decisions/sms-provider-choice.md"])
    sms = frontmatter_of((root / "decisions/sms-provider-choice.md").read_text())
    assert (sms["status"], sms["superseded_by"]) == ("archived", "decision-texts-through-messagebird")
    data = frontmatter_of((root / r.path).read_text())
    assert "review_may_supersede" not in data and data["supersedes"] == ["decision-sms-provider-choice"]
    assert undo_last(root).restored
    # it adds to it: both stay active, and the key is answered
    r = review.approve(vault(root), path, NOW, keep_active=True)
    assert frontmatter_of((root / "decisions/sms-provider-choice.md").read_text())["status"] == "active"
    assert "review_may_supersede" not in frontmatter_of((root / r.path).read_text())


@pytest.mark.parametrize(
    "asked", ["[]", '[""]', "[3, null]", "not a list", "[../../etc/passwd]", "[people/tariq-benali.md]", "[decisions/../x.md]"]
)
def test_a_may_supersede_naming_no_path_asks_nothing(root, asked):
    r = review.approve(vault(root), _maybe_replacing(root, asked), NOW)
    assert r.path == "decisions/texts-through-messagebird.md"
    assert frontmatter_of((root / "decisions/sms-provider-choice.md").read_text())["status"] == "active"


def test_approved_as_an_insight_a_decision_that_may_replace_another_asks_nothing(root):
    r = review.approve(vault(root), _maybe_replacing(root), NOW, as_type="Insight")
    assert r.path.startswith("insights/") and "review_may_supersede" not in (root / r.path).read_text()
    assert frontmatter_of((root / "decisions/sms-provider-choice.md").read_text())["status"] == "active"


def test_the_cli_and_the_socket_say_what_a_decision_may_replace_and_refuse_a_plain_approval(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    path = _maybe_replacing(root)
    listed = CliRunner().invoke(main, ["inbox", "list", "--vault", str(root)])
    assert "does it replace decisions/sms-provider-choice.md?" in listed.output
    refused = CliRunner().invoke(main, ["inbox", "approve", "--vault", str(root), path])
    assert refused.exit_code != 0 and "say which" in refused.output

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                items = (await client.call("inbox.list", {}))["items"]
                assert [x["may_replace"] for x in items if x["path"] == path] == [["decisions/sms-provider-choice.md"]]
                done = await client.call("inbox.approve", {"path": path, "supersedes": ["decisions/sms-provider-choice.md"]})
                assert "decisions/sms-provider-choice.md" in done["written"]

    run(body())
    assert frontmatter_of((root / "decisions/sms-provider-choice.md").read_text())["status"] == "archived"


def _nobody(root: Path, text: str = "She moved to Porto in March and works remotely now.") -> str:
    """The inbox note of a person memory that names no one: the model offered it as a PersonMemory
    (the judge off, so that nothing fitted decides), and the code could not read whom it is about."""
    program = (SAMPLE.parent / "PROGRAM.md").read_text()
    (root / "PROGRAM.md").write_text(program.replace("  review_judged: 0.6 ", "  review_judged: 0   ", 1))
    pick = {"statement": 1, "type": "PersonMemory", "about": "", "replaces": "", "because": [], "rejected": [], "confidence": 0.9}
    gen = ScriptedGenerator([{"items": [pick]}])
    register_generator("reviewtest", lambda **options: gen)
    r = extract_text(vault(root), f"User: {text}\nAssistant: Noted.", generator="reviewtest", source="t", now=NOW)
    assert [(o.op, o.type) for o in r.outcomes] == [("INBOX", "PersonMemory")], r.outcomes
    assert frontmatter_of((root / r.outcomes[0].path).read_text())["review_about"] == ""
    return r.outcomes[0].path


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.md") if ".palinode" not in p.parts}


def test_a_memory_naming_nobody_is_approved_only_once_the_person_says_whom_it_is_about(root):
    path = _nobody(root)
    before = _files(root)
    with pytest.raises(review.ReviewError, match=r"names no person the vault knows: say who or what it is about"):
        review.approve(vault(root), path, NOW)
    assert _files(root) == before  # refused: nothing written
    # an existing person, by her note: merged into it, the inbox note archived as approved
    r = review.approve(vault(root), path, NOW, about="people/elena-vasquez.md")
    assert r.path == "people/elena-vasquez.md"
    assert "She moved to Porto in March" in (root / r.path).read_text()
    archived = f"archive/{path}"
    assert frontmatter_of((root / archived).read_text())["archived_reason"] == "approved"
    assert "about Elena Vasquez" in read_log(root)[-1]["reason"]
    undo_last(root)
    assert _files(root) == before


@pytest.mark.parametrize(
    ("about", "filed"),
    [
        ("Elena Vasquez", "people/elena-vasquez.md"),  # by name
        ("person/elena-vasquez", "people/elena-vasquez.md"),  # by entity ref
        ("elena-vasquez", "people/elena-vasquez.md"),  # by slug
        ("  Rui   Duarte ", "people/rui-duarte.md"),  # a new person, a note of that name
    ],
)
def test_whom_a_memory_is_about_is_a_note_a_ref_a_name_or_a_new_name(root, about, filed):
    path = _nobody(root)
    r = review.approve(vault(root), path, NOW, about=about)
    assert r.path == filed and not (root / path).exists()
    data = frontmatter_of((root / filed).read_text())
    assert "review_about" not in data and data.get("status") != "review"
    if filed == "people/rui-duarte.md":
        assert data["name"] == "Rui Duarte" and data["id"] == "person-rui-duarte"
        assert "She moved to Porto in March" in (root / filed).read_text()


def test_the_person_may_write_whom_in_review_about_before_approving(root):
    path = _nobody(root)
    note = root / path
    note.write_text(note.read_text().replace('review_about: ""', "review_about: Tariq Benali"))
    assert review.approve(vault(root), path, NOW).path == "people/tariq-benali.md"


@pytest.mark.parametrize(
    ("about", "why"),
    [
        ("people/nobody.md", "is no note in people/"),
        ("projects/offline-mode.md", "is no note in people/"),  # a project is not whom a person memory is about
        ("[[Elena]]", "cannot name a note"),
        ("x" * 200, "cannot name a note"),
        ("---", "no letters or digits"),
    ],
)
def test_a_name_that_cannot_say_whom_is_refused_with_no_write(root, about, why):
    path = _nobody(root)
    before = _files(root)
    with pytest.raises(review.ReviewError, match=why):
        review.approve(vault(root), path, NOW, about=about)
    assert _files(root) == before


def test_a_symlinked_note_is_not_whom_a_memory_is_about(root, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nid: person-x\ncategory: person\nname: X\n---\n# X\n")
    (root / "people/x.md").symlink_to(outside)
    path = _nobody(root)
    with pytest.raises(review.ReviewError, match="is a symlink"):
        review.approve(vault(root), path, NOW, about="people/x.md")
    assert "Porto" not in outside.read_text()


def test_about_is_for_person_and_project_memories_and_approving_as_an_insight_needs_no_name(root):
    path = _nobody(root)
    with pytest.raises(review.ReviewError, match="only a person or project memory is about someone"):
        review.approve(vault(root), "inbox/async-standups.md", NOW, about="Elena Vasquez")
    r = review.approve(vault(root), path, NOW, as_type="Insight")
    assert r.path.startswith("insights/")
    assert "review_about" not in frontmatter_of((root / r.path).read_text())


def test_the_cli_and_the_socket_approve_saying_whom(root):
    from sidecar_helpers import SidecarClient, run, running_sidecar

    path = _nobody(root)
    listed = CliRunner().invoke(main, ["inbox", "list", "--vault", str(root)])
    assert f"{path}  PersonMemory" in listed.output and "(about whom? approve it --about NAME)" in listed.output
    refused = CliRunner().invoke(main, ["inbox", "approve", "--vault", str(root), path])
    assert refused.exit_code != 0 and "--about NAME" in refused.output
    ok = CliRunner().invoke(main, ["inbox", "approve", "--vault", str(root), path, "--about", "Noor Haddad", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["path"] == "people/noor-haddad.md"
    assert undo_last(root).restored

    async def body():
        async with running_sidecar(root, quiet=0.3, auto_fix=False):
            async with await SidecarClient.open(root) as client:
                items = {x["path"]: x for x in (await client.call("inbox.list"))["items"]}
                assert items[path]["needs_about"] is True
                assert items["inbox/async-standups.md"]["needs_about"] is False
                with pytest.raises(Exception, match="names no person"):
                    await client.call("inbox.approve", {"path": path})
                done = await client.call("inbox.approve", {"path": path, "about": "Noor Haddad"})
                assert done["path"] == "people/noor-haddad.md"

    run(body())
    assert "She moved to Porto in March" in (root / "people/noor-haddad.md").read_text()
