"""Consolidation's entity maintenance (earlier mentions linked) and cross-project patterns found by
meaning with the real MiniLM embedder, on a copy of the sample vault; undo reverts each run whole."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

# the same sample-vault copy, loaded vault and snapshot as the consolidation tests
from test_memory_consolidate import root, snapshot, vault  # noqa: E402,F401

from palinode_vault.core.note import parse_note
from palinode_vault.memory.weekly.consolidate import consolidate
from palinode_vault.memory.weekly.oplog import read_log
from palinode_vault.memory.weekly.patterns import group
from palinode_vault.writer import undo_last


@pytest.fixture(scope="module")
def minilm(embedder):
    return embedder


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def append(root: Path, path: str, text: str) -> None:
    with open(root / path, "a") as handle:
        handle.write(text)


# --- entity maintenance -------------------------------------------------------------------------

LENA_DAILIES = {
    "daily/2026-11-28.md": "# Saturday 28 November 2026\n\n## 10:00 session — clinic chain\n"
    "Call with [[lena-fischer|Lena Fischer]] about the clinic chain pilot in Rotterdam.\n",
    "daily/2026-11-29.md": "# Sunday 29 November 2026\n\n## 11:00 session — contract\n"
    "[[lena-fischer|Lena]] sent the pilot contract; Lena Fischer wants an answer by Friday.\n",
}


def test_recurring_person_gets_a_file_and_earlier_mentions_are_linked(root, minilm):
    for path, text in LENA_DAILIES.items():
        write(root, path, text)
    # a memory that already lists her (so consolidation knows she is a person)
    write(
        root,
        "decisions/clinic-chain-pilot.md",
        "---\nid: decision-clinic-chain-pilot\ncategory: decision\ntype: Decision\n"
        'status: active\nentities: [project/harbor-app, person/lena-fischer]\nsupersedes: []\nsuperseded_by: ""\n'
        "confidence: 0.8\ncreated: 2026-11-28T10:00:00Z\nlast_updated: 2026-11-28T10:00:00Z\n---\n"
        "# Decision: Pilot with the clinic chain\n\n## Statement\n[[harbor-app|Harbor]] runs a pilot with "
        "[[lena-fischer]]'s clinic chain.\n",
    )
    # an earlier note naming her in plain text, and one naming her only inside code
    append(root, "insights/agenda-in-the-invite.md", "\nLena Fischer's clinic chain sends agendas too.\n")
    append(root, "insights/estimate-in-ranges.md", "\nA log line: `owner=Lena Fischer`.\n")
    before = snapshot(root)

    r = consolidate(vault(root), generator=False, embedder=minilm)

    ops = [(o["op"], o["path"]) for o in r.operations]
    assert ("ADD", "people/lena-fischer.md") in ops
    person = (root / "people/lena-fischer.md").read_text()
    assert parse_note("people/lena-fischer.md", person).frontmatter["name"] == "Lena Fischer"
    assert "id: person-lena-fischer" in person
    # both surfaces, one write, in the consolidation's run
    agenda = (root / "insights/agenda-in-the-invite.md").read_text()
    assert "\n[[lena-fischer|Lena Fischer]]'s clinic chain sends agendas too.\n" in agenda
    data = parse_note("insights/agenda-in-the-invite.md", agenda).frontmatter
    assert data["entities"][-1] == "person/lena-fischer"
    assert ("UPDATE", "insights/agenda-in-the-invite.md") in ops and "insights/agenda-in-the-invite.md" in r.written
    # the rest of the note is byte for byte as it was (minimal diff)
    old = before["insights/agenda-in-the-invite.md"].decode().splitlines()
    diff = [d for d in difflib.ndiff(old, agenda.splitlines()) if d[:1] in "+-"]
    assert diff == [
        "- entities: []",
        "+ entities: [person/lena-fischer]",
        "+ cross_refs: [person/lena-fischer]",  # derived by the fix plan: the note now mentions her file
        "- Lena Fischer's clinic chain sends agendas too.",
        "+ [[lena-fischer|Lena Fischer]]'s clinic chain sends agendas too.",
    ]
    # a mention in code is not a mention; the decision already had entity and link
    assert (root / "insights/estimate-in-ranges.md").read_bytes() == before["insights/estimate-in-ranges.md"]
    assert ("UPDATE", "decisions/clinic-chain-pilot.md") not in ops
    # structural notes are logs: moved as they were, never linked
    assert (root / "archive/daily/2026-11-29.md").read_bytes() == before["daily/2026-11-29.md"]
    # lint-clean on the wiki contract: every body link has its entity
    # the pilot with Lena came up in three places, but it is one thread (all link her), not a pattern
    assert not [p for op, p in ops if op in ("ADD", "INBOX") and p.startswith(("insights/", "inbox/"))]
    log = [e for e in read_log(root) if e["path"] == "insights/agenda-in-the-invite.md"]
    assert log and "linked the earlier mention 'Lena Fischer' of person/lena-fischer" in log[-1]["reason"]

    undone = undo_last(root)
    assert sorted(undone.restored) == sorted(r.written) and snapshot(root) == before


# --- cross-project patterns ----------------------------------------------------------------------


def _daily(root: Path, date: str, sessions: list[tuple[str, str]]) -> None:
    text = f"# {date}\n\n" + "\n".join(f"## {h}\n{body}\n" for h, body in sessions)
    write(root, f"daily/{date}.md", text)


def test_a_theme_in_three_projects_becomes_an_insight_with_evidence(root, minilm):
    # said almost the same way three times, about three projects: filed in insights/
    _daily(
        root,
        "2026-11-28",
        [
            (
                "09:00 session — reminders",
                "For [[reminder-sms]]: time zone handling bit us again: reminders went out an hour late after the clock change.",
            ),
            ("14:00 session — lunch", "We ordered two new laptops for the design team."),
        ],
    )
    _daily(
        root,
        "2026-11-29",
        [
            (
                "10:00 session — invoices",
                "In [[billing-migration]], time zone handling bit us again: "
                "invoices carried the wrong date after the clock change.",
            )
        ],
    )
    append(
        root,
        "daily/2026-11-30.md",
        "\n## 16:00 session — diary\nOn [[offline-mode]], time zone handling bit us again: "
        "evening bookings landed on the wrong day after the clock change.\n",
    )
    before = snapshot(root)
    r = consolidate(vault(root), generator=False, embedder=minilm)
    added = [o for o in r.operations if o["op"] in ("ADD", "INBOX") and o["path"].startswith(("insights/", "inbox/"))]
    assert len(added) == 1, r.operations
    op = added[0]
    assert (op["op"], op["path"]) == ("ADD", "insights/recurring-time-zone-handling-bit-us-again.md"), op
    text = (root / op["path"]).read_text()
    data = parse_note(op["path"], text).frontmatter
    assert data["evidence_refs"] == ["daily/2026-11-28", "daily/2026-11-29", "daily/2026-11-30"]
    assert data["recurrence_count"] == 3 and data["confidence"] >= 0.6 and "status" not in data
    assert set(data["entities"]) >= {"project/reminder-sms", "project/billing-migration", "project/offline-mode"}
    assert "# Insight: Recurring: Time zone handling bit us again\n" in text
    assert "[[billing-migration]]" in text and "laptops" not in text
    undone = undo_last(root)
    assert sorted(undone.restored) == sorted(r.written) and snapshot(root) == before


def test_a_loose_theme_waits_in_the_inbox(root, minilm):
    # the same kind of problem in plain, different words: alike, but not alike enough to file
    _daily(
        root,
        "2026-11-28",
        [
            (
                "09:00 session — reminders",
                "Worked on [[reminder-sms]]. Reminder times were an hour off again because of the daylight saving change.",
            )
        ],
    )
    _daily(
        root,
        "2026-11-29",
        [
            (
                "10:00 session — invoices",
                "Worked on [[billing-migration]]. Invoices were dated a day "
                "early because the server used UTC instead of the clinic's time zone.",
            )
        ],
    )
    append(
        root,
        "daily/2026-11-30.md",
        "\n## 16:00 session — diary\nWorked on [[offline-mode]]. Bookings made late in "
        "the evening showed up on the wrong day because of the time zone.\n",
    )
    r = consolidate(vault(root), generator=False, embedder=minilm)
    added = [o for o in r.operations if o["op"] in ("ADD", "INBOX") and o["path"].startswith(("insights/", "inbox/"))]
    assert [o["op"] for o in added] == ["INBOX"], r.operations
    data = parse_note(added[0]["path"], (root / added[0]["path"]).read_text()).frontmatter
    assert data["status"] == "review" and data["confidence"] < 0.6
    assert data["evidence_refs"] == ["daily/2026-11-28", "daily/2026-11-29", "daily/2026-11-30"]


def test_two_contexts_are_not_a_pattern_and_known_patterns_get_evidence(root, minilm):
    _daily(
        root,
        "2026-11-28",
        [
            (
                "09:00 session — reminders",
                "For [[reminder-sms]]: time zone handling bit us again: reminders went out an hour late after the clock change.",
            )
        ],
    )
    _daily(
        root,
        "2026-11-29",
        [
            (
                "10:00 session — invoices",
                "In [[billing-migration]], time zone handling bit us again: "
                "invoices carried the wrong date after the clock change.",
            )
        ],
    )
    r = consolidate(vault(root), generator=False, embedder=minilm)
    assert not [o for o in r.operations if o["op"] in ("ADD", "INBOX") and o["path"].startswith(("insights/", "inbox/"))]
    # the sample week repeats the offline-conflicts pattern: new evidence, no second copy
    update = [o for o in r.operations if o["path"] == "insights/offline-conflicts-are-a-pattern.md"]
    assert update and update[0]["op"] == "UPDATE"
    data = parse_note("x.md", (root / "insights/offline-conflicts-are-a-pattern.md").read_text()).frontmatter
    assert data["evidence_refs"][:3] == ["daily/2026-11-10", "daily/2026-11-24", "daily/2026-11-26"]
    assert len(data["evidence_refs"]) > 3 and data["recurrence_count"] == len(data["evidence_refs"])


def test_grouping_needs_distinct_contexts_and_is_deterministic():
    import numpy as np

    v = np.eye(4, dtype=np.float32)
    v[1] = v[2] = v[0]  # three identical statements
    same_context = group(v, ["a", "a", "a", "b"], 0.5, 3)
    assert same_context == []
    three = group(v, ["a", "b", "c", "d"], 0.5, 3)
    assert len(three) == 1 and three[0].members == [0, 1, 2] and three[0].contexts == ["a", "b", "c"]
    assert three[0].confidence == 1.0 and group(v, ["a", "b", "c", "d"], 0.5, 3) == three
    one_thread = [
        frozenset({"lena-fischer"}),
        frozenset({"lena-fischer", "harbor-app"}),
        frozenset({"lena-fischer"}),
        frozenset(),
    ]
    assert group(v, ["a", "b", "c", "d"], 0.5, 3, one_thread) == []


def test_without_an_embedding_model_the_pattern_pass_says_so(root):
    r = consolidate(vault(root), generator=False, embedder=False, dry_run=True)
    assert [o["reason"] for o in r.operations if o["op"] == "SKIP"] == [
        "cross-project patterns: no embedding model (turned off for this run)"
    ]
    assert not any(o["path"] == "insights/offline-conflicts-are-a-pattern.md" for o in r.operations)
