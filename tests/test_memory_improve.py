"""The weekly self-review: repeated corrections found in the journal, core drift found in the
access record, facts explained again and never extracted found in the operations log, proposals
written to inbox/ and PROGRAM.md never edited. Real files, the real journal and undo, the scripted
generator for exact extraction outcomes, the real MiniLM for meaning."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from palinode_vault.core.note import parse_note
from palinode_vault.memory.extraction.extract import extract_text
from palinode_vault.memory.extraction.session import Session, end_session
from palinode_vault.memory.extraction.transcript import Turn
from palinode_vault.memory.weekly import access
from palinode_vault.memory.weekly.consolidate import consolidate
from palinode_vault.memory.weekly.corrections import find
from palinode_vault.memory.weekly.oplog import read_log, unfiled_statement
from palinode_vault.models import ScriptedGenerator, register_generator
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault
from palinode_vault.writer import undo_last

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-vault"


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "v", ignore=shutil.ignore_patterns(".palinode"))
    # The vault's own copy. The scripted items here stand for a model whose confidence means
    # something (unmarked_confidence: 1): the review judges what was filed and corrected.
    # The statement judge off: what is filed rests on the wording alone, so the corrections below
    # are of known writes.
    program = (REPO / "PROGRAM.md").read_text()
    assert "  unmarked_confidence: 0.5 " in program
    program = program.replace("  unmarked_confidence: 0.5 ", "  unmarked_confidence: 1   ", 1)
    (tmp_path / "v" / "PROGRAM.md").write_text(program.replace("  review_judged: 0.6 ", "  review_judged: 0   ", 1))
    return tmp_path / "v"


def vault(root, today):
    v = Vault(Settings(vault=root, now=today))
    v.load()
    return v


def decision(text, confidence=0.9, type_name="Decision"):
    """What the person says, and the model's choice of it (memory/extraction/selection.py)."""
    choice = {"statement": 1, "type": type_name, "about": "", "replaces": "", "because": [], "rejected": []}
    return text, {**choice, "confidence": confidence}


def extract(root, said):
    text, choice = said
    gen = ScriptedGenerator([{"items": [choice]}], default={"items": []})
    register_generator("improvetest", lambda **options: gen)
    talk = f"User: {text}\nAssistant: Noted."
    r = extract_text(vault(root, dt.date.today()), talk, generator="improvetest", source=f"s-{text[:12]}")
    assert [o.op for o in r.outcomes] in (["ADD"], ["INBOX"]), r.outcomes
    return r.outcomes[0].path


def edit(root, path, old, new):
    text = (root / path).read_text()
    assert old in text
    (root / path).write_text(text.replace(old, new, 1))


def test_repeated_corrections_become_a_program_proposal(root):
    # journal and log times are the wall clock, so this week is the real one
    today = dt.date.today()
    program = (root / "PROGRAM.md").read_bytes()
    x = extract(root, decision("We decided to keep the waiting list cache in Redis."))
    edit(root, x, "in Redis", "in Redis, for now")  # the person rewrote it
    y = extract(root, decision("We decided the staging server moves to Hetzner next month."))
    edit(root, y, "status: active", "status: archived")  # the person archived it
    z = None
    for _ in range(2):  # the same wrong decision twice, undone twice
        z = extract(root, decision("From now on invoices are printed as PDF/A files."))
        assert undo_last(root).restored
    kept = extract(root, decision("We decided reminder texts are signed with the clinic name."))
    w = extract(root, decision("We learned clinics like short agendas in the invite.", 0.4, "Insight"))
    assert w.startswith("inbox/")
    # the person approves the inbox item: it moves into insights/ without status: review
    approved = (root / w).read_text().replace("status: review\n", "")
    (root / w).unlink()
    (root / "insights" / Path(w).name).write_text(approved)

    fixes = find(root, vault(root, today).state, today, 7, read_log(root))
    assert sorted((c.kind, c.path) for c in fixes) == sorted([("edited", x), ("archived", y), ("reverted", z), ("reverted", z)])
    assert {c.type for c in fixes} == {"Decision"} and kept not in [c.path for c in fixes]

    r = consolidate(vault(root, today), generator=False, embedder=False)
    path = f"inbox/program-change-{today.isoformat()}.md"
    assert ("PROPOSE", path) in [(o["op"], o["path"]) for o in r.operations]
    text = (root / path).read_text()
    data = parse_note(path, text).frontmatter
    assert (
        data["status"] == "review" and data["type"] == "Insight" and data["id"] == f"insight-program-change-{today.isoformat()}"
    )
    assert "the person corrected 4 Decision memories the manager wrote this week (1 archived, 1 edited, 2 reverted)" in text
    assert f"the person corrected the manager's writes to {z} 2 times this week" in text
    assert "+- **Decision**: the person keeps correcting these (4 this week)." in text
    assert f"+- `{z}`: the person keeps correcting what is written there (2 times this week)." in text
    assert "Insight memories" not in text  # the approved inbox item is not a correction
    assert "```diff\n--- a/PROGRAM.md\n+++ b/PROGRAM.md\n" in text
    assert (root / "PROGRAM.md").read_bytes() == program  # proposed, never made


def test_one_correction_of_a_kind_proposes_nothing(root):
    today = dt.date.today()
    x = extract(root, decision("We decided to keep the waiting list cache in Redis."))
    edit(root, x, "in Redis", "in Redis, for now")
    r = consolidate(vault(root, today), generator=False, embedder=False, dry_run=True)
    assert not [o for o in r.operations if o["op"] == "PROPOSE"]


def _session(root, day, found):
    sid = access.new_session("test")
    when = dt.datetime.combine(day, dt.time(9, 0), dt.UTC)
    access.record(root, "core", sid, ["people/noor-haddad.md", "projects/harbor-app.md"], now=when)
    access.record(root, "search", sid, found, now=when)


def test_core_drift_proposals_from_sessions_and_repeated_explanations(root):
    today = dt.date(2026, 12, 1)
    # a standing decision marked core that nobody needed this week
    edit(root, "decisions/postgres-over-firebase.md", "status: active\n", "status: active\ncore: true\n")
    with open(root / "logs/operations.jsonl", "a") as handle:
        for n in (1, 2):  # the person explained the same fact again in two sessions; the vault had it
            handle.write(
                json.dumps(
                    {
                        "time": f"2026-11-2{6 + n}T10:00:00Z",
                        "op": "NOOP",
                        "type": "Insight",
                        "path": "insights/demo-with-real-data.md",
                        "confidence": 0.8,
                        "source": f"session-{n}",
                        "reason": "same fact already remembered (similarity 0.97)",
                    }
                )
                + "\n"
            )
    for n in (1, 2):
        _session(root, dt.date(2026, 11, 26 + n), ["decisions/sms-provider-choice.md", "projects/harbor-app.md"])
    before = (root / "decisions/postgres-over-firebase.md").read_bytes()
    # two sessions are not enough to judge (core_sessions_min: 3)
    r = consolidate(vault(root, today), generator=False, embedder=False, dry_run=True)
    assert f"inbox/core-change-{today.isoformat()}.md" not in [o["path"] for o in r.operations]
    _session(root, dt.date(2026, 11, 30), ["decisions/sms-provider-choice.md", "people/tariq-benali.md"])
    _session(root, dt.date(2026, 11, 10), ["people/tariq-benali.md"])  # last month: not this week
    r = consolidate(vault(root, today), generator=False, embedder=False)
    path = f"inbox/core-change-{today.isoformat()}.md"
    propose = [o for o in r.operations if o["op"] == "PROPOSE" and o["path"] == path]
    assert propose and propose[0]["reason"] == (
        "3 core change(s): decisions/postgres-over-firebase.md core: false; decisions/sms-provider-choice.md core: true; "
        "insights/demo-with-real-data.md core: true"
    )
    text = (root / path).read_text()
    assert (
        "- [[postgres-over-firebase]]: `core: true` → `core: false`: no search found it and nothing updated it in 3 sessions"
        in text
    )
    assert (
        "- [[sms-provider-choice]]: `core: false` → `core: true`: it was in the search results of every session this week (3 of 3)"
        in text
    )
    assert "the person explained it again in 2 sessions" in text
    assert "--- a/decisions/postgres-over-firebase.md\n+++ b/decisions/postgres-over-firebase.md\n" in text
    assert "-core: true\n+core: false\n" in text
    data = parse_note(path, text).frontmatter
    assert data["status"] == "review" and "decision/sms-provider-choice" in data["evidence_refs"]
    assert "decision/sms-provider-choice" in data["entities"]  # body links and entities agree
    # nothing flipped: the proposal waits for the person
    assert (root / "decisions/postgres-over-firebase.md").read_bytes() == before
    assert (
        "core: false" in (root / "decisions/sms-provider-choice.md").read_text()
        or "core:" not in (root / "decisions/sms-provider-choice.md").read_text()
    )


def test_access_record_is_bounded_and_skips_bad_lines(root):
    for n in range(40):
        access.record(root, "search", "s", [f"decisions/d{n}.md"], max_bytes=2000)
    with open(root / access.ACCESS_PATH, "a") as handle:
        handle.write("not json\n")
    entries = access.read(root)
    assert (root / access.ACCESS_PATH).stat().st_size <= 2100
    assert entries and entries[-1]["paths"] == ["decisions/d39.md"] and len(entries) < 40


# --- facts explained again and never extracted ------------------------------------------------------

MAC_MINI = [
    "The Harbor app builds run on the old Mac mini under Sam's desk.",
    "Remember that Harbor app builds happen on the old Mac mini by Sam's desk.",
]


@pytest.fixture(scope="module")
def minilm(embedder):
    return embedder


def session_end(root, sid, said, items=()):
    """A session on the socket that ends with the real extraction pass; the model offers `items`."""
    gen = ScriptedGenerator([{"items": list(items)}], default={"items": []})
    register_generator("unfiledtest", lambda **options: gen)
    turns = [Turn("user", said), Turn("assistant", "Noted.")]
    return end_session(vault(root, dt.date.today()), Session(sid, turns), generator="unfiledtest")


def unfiled(root):
    return [(e["source"], u[1]) for e in read_log(root) if (u := unfiled_statement(e))]


@pytest.mark.parametrize("meaning", ["minilm", "shared words"])
def test_improve_proposes_a_fact_explained_in_two_sessions_and_never_extracted(root, request, meaning):
    today = dt.date.today()
    embedder = request.getfixturevalue("minilm") if meaning == "minilm" else False
    program = (root / "PROGRAM.md").read_bytes()
    session_end(root, "monday", MAC_MINI[0] + " Tariq prefers written specs.")
    session_end(root, "thursday", MAC_MINI[1])
    # a type's wording first, then a plain statement naming a known project
    assert unfiled(root) == [
        ("session-monday", "Tariq prefers written specs."),
        ("session-monday", MAC_MINI[0]),
        ("session-thursday", MAC_MINI[1]),
    ]
    r = consolidate(vault(root, today), generator=False, embedder=embedder)
    path = f"inbox/program-change-{today.isoformat()}.md"
    propose = [o for o in r.operations if o["op"] == "PROPOSE" and o["path"] == path]
    assert propose and "Tariq" not in propose[0]["reason"]  # said once: not a repeat
    text = (root / path).read_text()
    day = today.isoformat()
    assert (
        f"the person explained the same thing in 2 sessions this week and extraction filed nothing for it: "
        f'"{MAC_MINI[0]}" (session-monday, {day}), "{MAC_MINI[1]}" (session-thursday, {day})'
    ) in text
    assert (
        "\n+- **ProjectSnapshot: facts the person had to explain again.** Extract them even when they look minor, "
        f'like "{MAC_MINI[0]}" (said in 2 sessions in the week to {day}, never extracted).\n'
    ) in text
    assert text.count("SKIP session-") == 2 and "### Sometimes extract" in text  # the edit lands in "Always extract"
    assert (root / "PROGRAM.md").read_bytes() == program  # proposed, never made


def test_improve_ignores_a_fact_explained_once_or_twice_in_one_session(root, minilm):
    today = dt.date.today()
    session_end(root, "monday", MAC_MINI[0] + " " + MAC_MINI[1])
    assert [s for s, _ in unfiled(root)] == ["session-monday", "session-monday"]
    r = consolidate(vault(root, today), generator=False, embedder=minilm, dry_run=True)
    assert not [o for o in r.operations if o["op"] == "PROPOSE" and "program-change" in o["path"]]


def test_improve_ignores_a_repeated_fact_a_memory_filed_this_week_says(root, minilm):
    today = dt.date.today()
    session_end(root, "monday", MAC_MINI[0])
    session_end(root, "thursday", MAC_MINI[1])
    # on Friday the model got it: the vault has it now
    found = decision("")[1]  # the model chose statement 1
    r = session_end(root, "friday", "We decided the Harbor app builds run on the old Mac mini under Sam's desk.", [found])
    assert [o.op for o in r.outcomes][:1] in (["ADD"], ["UPDATE"])
    assert [s for s, _ in unfiled(root)] == ["session-monday", "session-thursday"]
    r = consolidate(vault(root, today), generator=False, embedder=minilm, dry_run=True)
    assert not [o for o in r.operations if o["op"] == "PROPOSE" and "program-change" in o["path"]]


def test_said_again_is_judged_by_programs_restated_number(root, minilm):
    """`self_improvement.restated` decides when two statements say the same thing: at 0.99 the
    two rewordings are different facts; a PROGRAM.md without the key skips the check and says so."""
    today = dt.date.today()
    session_end(root, "monday", MAC_MINI[0])
    session_end(root, "thursday", MAC_MINI[1])
    text = (root / "PROGRAM.md").read_text()
    line = "  restated: 0.75 "
    assert line in text
    (root / "PROGRAM.md").write_text(text.replace(line, "  restated: 0.99 ", 1))
    strict = consolidate(vault(root, today), generator=False, embedder=minilm, dry_run=True)
    assert not [o for o in strict.operations if o["op"] == "PROPOSE" and "program-change" in o["path"]]
    (root / "PROGRAM.md").write_text("".join(kept for kept in text.splitlines(keepends=True) if not kept.startswith(line)))
    older = consolidate(vault(root, today), generator=False, embedder=minilm, dry_run=True)
    assert not [o for o in older.operations if o["op"] == "PROPOSE" and "program-change" in o["path"]]
    assert any(o["op"] == "SKIP" and "self_improvement.restated" in o["reason"] for o in older.operations)
