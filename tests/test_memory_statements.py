"""The update flow's "same fact" judgement, statement by statement, on a real index with MiniLM.

The numbers are PROGRAM.md's (calibrated with bench/bench_update_thresholds.py); the candidates
here are worded differently from the calibration pairs.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

from palinode_vault.core.program import ProgramError, parse_program
from palinode_vault.index import open_index
from palinode_vault.memory.extraction.extract import extract_text
from palinode_vault.memory.update.logic import Item, Updater, keyword_similar, similar_for
from palinode_vault.memory.update.statements import statements
from palinode_vault.memory.update.workspace import Workspace, frontmatter_of
from palinode_vault.models import ScriptedGenerator, register_generator
from palinode_vault.program import SHIPPED, load_program
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

SAMPLE = Path(__file__).resolve().parent.parent / "sample-vault"
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def flow(tmp_path, indexed_sample, embedder):
    """apply(item) -> Outcome, through the real Updater, index dedup and statement matcher."""
    root = tmp_path / "vault"
    shutil.copytree(indexed_sample, root)
    vault = Vault(Settings(vault=root, now=NOW.date()))
    vault.load()
    index = open_index(root, embedder=embedder)
    similar, how = similar_for(vault, index)
    assert how == "index dedup + statements"
    settings = load_program(root).settings

    def apply(item: Item, sim=None):
        apply.ws = Workspace(vault)  # what the pass would write, for tests to read
        return Updater(vault, apply.ws, settings, sim or similar, "test", NOW).apply(item)

    apply.vault = vault
    apply.index = index
    yield apply
    index.close()


def test_a_restated_decision_is_a_noop(flow):
    out = flow(Item("Decision", "Bookings in Postgres", "Harbor's bookings live in Postgres, not in Firebase.", 0.9))
    assert out.op == "NOOP"
    assert out.path in ("decisions/postgres-over-firebase.md", "decisions/managed-postgres-hosting.md")
    assert "coverage" in out.reason and "novelty" in out.reason


def test_a_restated_insight_is_a_noop_though_whole_note_similarity_is_low(flow):
    item = Item("Insight", "Texts beat email", "Patients read the text messages and ignore the emails.", 0.9)
    assert flow(item).op == "NOOP"
    # with the whole-note similarity alone (the keyword fallback here) it would be filed again
    assert flow(Item("Insight", "Texts beat email", item.text, 0.9), keyword_similar(flow.vault)).op == "ADD"


# a new fact about the release train decision (decisions/biweekly-release-train.md)
FREEZE = (
    "Decision",
    "Release freeze in late December",
    "No release goes out between 20 December and 6 January; the two-week train starts again after.",
)


def test_a_new_fact_about_the_same_decision_is_an_update(flow):
    out = flow(Item(*FREEZE, 0.9))
    assert (out.op, out.path) == ("UPDATE", "decisions/biweekly-release-train.md")
    assert "coverage" in out.reason


def test_the_judges_word_alone_does_not_change_a_decision(flow):
    """Filed on the judge's word, the same new fact waits for review: the judge says it is a
    decision, not whether it adds to the one it is close to or replaces it. Nothing says that
    approving it retires that one (proposing it on the words alone was wrong on two frozen sets:
    docs/BENCHMARKS.md, session 15); the note asks the person which (`review_may_supersede`)."""
    out = flow(Item(*FREEZE, 0.9, judged=True))
    assert out.op == "INBOX" and out.path and out.path.startswith("inbox/")
    assert "the judge's word alone does not say whether it adds to decisions/biweekly-release-train.md" in out.reason
    data = frontmatter_of(flow.ws.text(out.path))
    assert "review_supersedes" not in data and data["supersedes"] == []
    assert data["review_may_supersede"] == ["decisions/biweekly-release-train.md"]
    assert "20 December" not in (flow.vault.root / "decisions" / "biweekly-release-train.md").read_text()


def test_a_decision_waiting_for_review_on_an_active_decisions_subject_asks_whether_it_replaces_it(flow):
    """Below the confidence threshold the same new fact waits too, and asks about the decision on
    its subject; an insight waiting beside an insight asks nothing (only decisions replace)."""
    out = flow(Item(*FREEZE, 0.5))
    assert out.op == "INBOX" and "below the confidence threshold; close to decisions/biweekly-release-train.md" in out.reason
    assert frontmatter_of(flow.ws.text(out.path))["review_may_supersede"] == ["decisions/biweekly-release-train.md"]
    insight = Item("Insight", "Texts beat email", "Patients read the text messages and ignore the emails, even on Sundays.", 0.5)
    out = flow(insight)
    assert out.op == "INBOX" and "close to insights/" in out.reason, out.reason
    assert "review_may_supersede" not in frontmatter_of(flow.ws.text(out.path))


def test_a_decision_the_judge_would_file_near_an_active_decision_asks_instead(flow):
    """Below `statement_related` but at `statement_near`, a new decision on the judge's word may
    be the replacement of the decision it is near: filed, it would stand beside it, both active.
    It waits and asks; without `statement_near` and `decision_near` it is filed as a new fact."""
    item = Item(
        "Decision",
        "Database on our own server",
        "From March the booking database runs on our own server in the Lisbon office.",
        0.9,
        judged=True,
    )
    out = flow(item)
    assert out.op == "INBOX" and "is new beside decisions/postgres-over-firebase.md or replaces it" in out.reason, out.reason
    assert frontmatter_of(flow.ws.text(out.path))["review_may_supersede"] == ["decisions/postgres-over-firebase.md"]
    settings = load_program(flow.vault.root).settings
    similar, _ = similar_for(flow.vault, flow.index)

    def with_near(coverage, similarity):
        near = {"statement_near": coverage, "decision_near": similarity}
        changed = settings.model_copy(update={"update": settings.update.model_copy(update=near)})
        ws = Workspace(flow.vault)
        return Updater(flow.vault, ws, changed, similar, "test", NOW).apply(item), ws

    out, _ = with_near(None, None)
    assert out.op == "ADD" and out.path.startswith("decisions/"), out.reason
    # a replacement said in new words covers few statements of the old decision: its whole-note
    # similarity (0.50 here) alone at `decision_near` asks too, whatever the coverage
    out, ws = with_near(0.99, 0.45)
    assert out.op == "INBOX" and "similarity 0.50" in out.reason, out.reason
    assert frontmatter_of(ws.text(out.path))["review_may_supersede"] == ["decisions/postgres-over-firebase.md"]
    assert with_near(0.99, 0.6)[0].op == "ADD"
    # a proposer's own word (not the judge's) files it: the rule is about what the judge does not say
    assert flow(Item("Decision", item.title, item.text, 0.9)).op == "ADD"


def test_a_decision_waiting_below_the_confidence_bar_near_an_active_decision_asks_too(flow):
    """A decision that waits anyway (below the confidence threshold, on anyone's word) near an
    active decision's subject may be its replacement too: it names the decision it is near, so
    the person says which when approving it. Below `decision_near` it asks nothing."""
    item = Item(
        "Decision",
        "Database on our own server",
        "From March the booking database runs on our own server in the Lisbon office.",
        0.5,
    )
    out = flow(item)
    assert out.op == "INBOX" and "confidence 0.50 below" in out.reason, out.reason
    assert frontmatter_of(flow.ws.text(out.path))["review_may_supersede"] == ["decisions/postgres-over-firebase.md"]
    settings = load_program(flow.vault.root).settings
    far = {"statement_near": 0.99, "decision_near": 0.6}
    changed = settings.model_copy(update={"update": settings.update.model_copy(update=far)})
    ws = Workspace(flow.vault)
    similar, _ = similar_for(flow.vault, flow.index)
    out = Updater(flow.vault, ws, changed, similar, "test", NOW).apply(item)
    assert out.op == "INBOX" and "review_may_supersede" not in frontmatter_of(ws.text(out.path))


def test_a_waiting_decision_asks_about_an_active_decision_only_when_the_persons_words_name_it(flow):
    """Closeness in meaning finds decisions on other subjects too: the question (`review_may_supersede`)
    is asked only when the item, or what the person said around it (`Item.said`), has a word of the
    active decision's title or file name."""
    settings = load_program(flow.vault.root).settings
    near_everything = {"statement_near": 0.0, "decision_near": 0.0}
    changed = settings.model_copy(update={"update": settings.update.model_copy(update=near_everything)})
    similar, _ = similar_for(flow.vault, flow.index)

    def wait(said=""):
        ws = Workspace(flow.vault)
        item = Item("Decision", "Leaflet paper", "The waiting-room leaflet is printed on recycled paper from now on.", 0.5)
        item.said = said
        out = Updater(flow.vault, ws, changed, similar, "test", NOW).apply(item)
        assert out.op == "INBOX", out.reason
        return out, frontmatter_of(ws.text(out.path)).get("review_may_supersede")

    out, question = wait()
    closest = re.search(r"decisions/[\w.-]+\.md", out.reason)
    assert closest and question is None, out.reason
    closest = closest.group(0)
    title = flow.vault.state.notes[closest].title
    assert wait(said=f"Noted. Separately, about {title}: no change on that front.")[1] == [closest]


def test_a_replaced_decision_left_active_leads_to_its_successor(flow):
    """stripe-for-billing names its successor in `superseded_by` but was never archived (lint's
    superseded_not_archived): a new fact on its subject is about the decision in force, Paddle."""
    item = Item(
        "Decision",
        "Stripe Tax for Portuguese invoices",
        "Clinics in Portugal are billed through Stripe Billing with Stripe Tax and SEPA direct debit.",
        0.9,
        judged=True,
    )
    out = flow(item)
    assert "stripe-for-billing" not in out.reason and "stripe-for-billing" not in (flow.ws.text(out.path) or "")
    assert "decisions/paddle-for-billing.md" in out.reason


MOLLIE = "Billing goes through Mollie from January, with SEPA direct debit by default."


def test_a_replacement_named_as_history_retires_the_decision_in_force(flow):
    """A proposer that names stripe-for-billing as the decision replaced (t32-04's model did) names
    history: Paddle replaced it and is in force. Paddle is the one retired; Stripe is left as the
    person kept it."""
    stripe = (flow.vault.root / "decisions/stripe-for-billing.md").read_text()
    item = Item("Decision", "Billing through Mollie", MOLLIE, 0.9)
    item.replaces, item.replaces_path = "Bill clinics through Stripe", "decisions/stripe-for-billing.md"
    out = flow(item)
    assert out.op == "SUPERSEDE" and "decisions/paddle-for-billing.md" in out.reason, out.reason
    paddle = frontmatter_of(flow.ws.text("decisions/paddle-for-billing.md") or "")
    assert paddle["status"] == "archived" and paddle["superseded_by"] == frontmatter_of(flow.ws.text(out.path) or "")["id"]
    assert (flow.ws.text("decisions/stripe-for-billing.md") or "") == stripe


def test_replacement_wording_naming_history_retires_the_decision_in_force(flow):
    out = flow(Item("Decision", "Billing through Mollie", MOLLIE + " That replaces the Stripe billing decision.", 0.9))
    assert out.op == "SUPERSEDE" and "decisions/paddle-for-billing.md" in out.reason, out.reason
    assert frontmatter_of(flow.ws.text("decisions/stripe-for-billing.md") or "")["status"] == "active"


def test_the_judges_word_alone_files_no_person_memory(flow):
    """The judge says a statement is about a person, not which one (the code's reading of names
    and pronouns): filed on its word alone, news about Tariq waits for review naming him."""
    item = Item("PersonMemory", "Tariq Benali", "Tariq is on leave for the whole of February.", 0.9, judged=True)
    out = flow(item)
    assert out.op == "INBOX" and "read as people/tariq-benali.md" in out.reason
    assert "February" not in (flow.vault.root / "people/tariq-benali.md").read_text()
    assert flow(Item("PersonMemory", "Tariq Benali", item.text, 0.9)).op == "UPDATE"  # a proposer's word files it


def test_one_new_name_in_a_restated_sentence_is_new_information(flow):
    # the words are all the note's but one, and MiniLM barely moves for it: the name decides
    out = flow(
        Item("Decision", "SMS sender ID in Spain", "Our SMS provider can now show the clinic's name as sender in Spain too.", 0.9)
    )
    assert (out.op, out.path) == ("UPDATE", "decisions/sms-provider-choice.md")


def test_an_unrelated_decision_is_an_add(flow):
    out = flow(
        Item(
            "Decision",
            "Crash reports in Sentry",
            "The clinic app sends its crash reports to a Sentry server we host ourselves.",
            0.9,
        )
    )
    assert out.op == "ADD" and out.path == "decisions/crash-reports-in-sentry.md"


def test_a_person_fact_spread_over_two_lines_is_a_noop(flow):
    text = "Tariq wants the acceptance criteria before he estimates, and gives his estimates as ranges."
    out = flow(Item("PersonMemory", "Tariq Benali", text, 0.9, [("person/tariq-benali", "Tariq")]))
    assert (out.op, out.path) == ("NOOP", "people/tariq-benali.md")
    # no single line holds the words: the closest-line check alone would add it again
    old = flow(Item("PersonMemory", "Tariq Benali", text, 0.9, [("person/tariq-benali", "Tariq")]), keyword_similar(flow.vault))
    assert old.op == "UPDATE"


def test_a_new_person_fact_is_an_update(flow):
    out = flow(
        Item(
            "PersonMemory",
            "Tariq Benali",
            "Tariq will give a talk about idempotent SMS sending in February.",
            0.9,
            [("person/tariq-benali", "Tariq")],
        )
    )
    assert (out.op, out.path) == ("UPDATE", "people/tariq-benali.md")


def test_extraction_files_no_second_copy_of_a_remembered_decision(indexed_sample, tmp_path):
    root = tmp_path / "vault"
    shutil.copytree(indexed_sample, root)
    vault = Vault(Settings(vault=root, now=NOW.date()))
    vault.load()
    text = "Harbor stores bookings and patients in Postgres instead of Firebase."
    choice = {"statement": 1, "type": "Decision", "about": "", "replaces": "", "because": [], "rejected": [], "confidence": 0.9}
    gen = ScriptedGenerator([{"items": [choice]}], default={"items": []})
    register_generator("statements-test", lambda **options: gen)
    r = extract_text(
        vault,
        f"User: As I said before: {text}\nAssistant: Right.",
        generator="statements-test",
        source="test",
        now=NOW,
        dry_run=True,
    )
    assert r.similarity == "index dedup + statements"
    assert [o.op for o in r.outcomes] == ["NOOP"]


def test_statements_are_sentences_and_list_items_without_frontmatter_footer_or_code():
    text = (SAMPLE / "decisions" / "sms-provider-choice.md").read_text(encoding="utf-8")
    got = statements(text)
    assert got[0] == "Send reminders through an EU SMS provider with a Portuguese sender ID"
    assert (
        "In the pilot, patients ignored texts from an unknown number and replied to the ones that showed the clinic's name."
        in got
    )
    assert "The cheapest global provider: no alphanumeric sender ID in Portugal at the time." in got
    assert not any("tariq-benali" in s or "id:" in s or "See also" in s for s in got)  # footer and frontmatter
    research = statements((SAMPLE / "research" / "2026-11-16-sqlite-sync-options.md").read_text(encoding="utf-8"))
    assert not any('"device"' in s for s in research)  # fenced code


def test_the_loader_reads_the_statement_keys():
    u = parse_program(SHIPPED.read_text(encoding="utf-8")).update
    assert u.strong_duplicate == 0.90  # dedup's strong mark keeps its meaning (issue #4)
    assert (u.statement_notes, u.statement_window) == (3, 5)
    assert (u.statement_related, u.statement_same, u.statement_novelty, u.novelty_new) == (0.50, 0.90, 0.34, 0.34)
    assert u.by_statement


def test_an_older_program_without_the_statement_keys_keeps_the_whole_note_rule():
    text = SHIPPED.read_text(encoding="utf-8")
    lines = [line for line in text.split("\n") if not line.lstrip().startswith(("statement_", "novelty_new:"))]
    u = parse_program("\n".join(lines)).update
    assert not u.by_statement and u.novelty_new == 0.34


def test_a_statement_number_out_of_range_names_the_key():
    text = SHIPPED.read_text(encoding="utf-8").replace("statement_related: 0.50", "statement_related: 2")
    with pytest.raises(ProgramError, match="update.statement_related"):
        parse_program(text, "PROGRAM.md")


def test_one_matcher_per_index_keeps_statement_vectors_between_passes(indexed_sample, embedder):
    """A long-lived process (the MCP server, the sidecar) runs many passes on one index: the
    statements it embedded for one save are not embedded again for the next, within a bound."""
    from palinode_vault.memory.update.statements import matcher_for

    index = open_index(indexed_sample, embedder=embedder)
    try:
        first = matcher_for(index)
        assert first is not None and matcher_for(index) is first
        calls: list[list[str]] = []
        real = first._embed_many  # noqa: SLF001 - count the real embedder's calls
        first._embed_many = lambda texts: calls.append(list(texts)) or real(texts)  # noqa: SLF001
        note = (indexed_sample / "decisions/sms-provider-choice.md").read_text(encoding="utf-8")
        a = first.coverage("Reminders go out through an EU SMS provider.", note)
        embedded = len(calls)
        b = matcher_for(index).coverage("Reminders go out through an EU SMS provider.", note)
        assert embedded > 0 and a == b and len(calls) == embedded  # the second pass embedded nothing
        first.max_cached = 3
        first.vectors(["one", "two", "three", "four"])
        assert len(first._cache) == 3 and "one" not in first._cache  # noqa: SLF001 - bounded, oldest out
    finally:
        index.close()


def test_a_decision_restating_what_an_insight_says_is_a_noop(flow):
    """The vault already says it, in another kind of note: restated as a decision, it is no new
    decision (before: a new decision, or one waiting for review beside the insight)."""
    text = "Every demo uses an anonymised copy of a pilot clinic's busiest week, never invented data."
    out = flow(Item("Decision", "Demos with a real week", text, 0.9))
    assert (out.op, out.path) == ("NOOP", "insights/demo-with-real-data.md")
    assert "the vault already says it" in out.reason
    # with a new number it is new information, and the decision flow decides as before
    assert flow(Item("Decision", "Demos with a real week", text.replace("week", "week of 2025"), 0.9)).op != "NOOP"


def test_the_judges_word_restating_a_persons_note_is_a_noop_not_a_review_item(flow):
    text = "Tariq wants the acceptance criteria before he estimates, and gives his estimates as ranges."
    out = flow(Item("PersonMemory", "Tariq Benali", text, 0.9, [("person/tariq-benali", "Tariq")], judged=True))
    assert (out.op, out.path) == ("NOOP", "people/tariq-benali.md")
    assert not [p for p in flow.ws.pending if p.startswith("inbox/")]  # no review item


def test_a_waiting_decision_that_writes_a_name_only_one_active_decision_gives_asks_about_it(flow):
    """Closeness in meaning (MiniLM) reads English only: a decision in another language may be
    measured near nothing. A name an active decision's title writes with a capital, and no other
    active decision's title writes, reads the same in every language: the waiting decision that
    writes it asks about that decision. A name two titles share ("Postgres") asks nothing, nor a
    title word without a capital."""
    settings = load_program(flow.vault.root).settings
    near_nothing = {"statement_near": 0.99, "decision_near": 0.99}
    changed = settings.model_copy(update={"update": settings.update.model_copy(update=near_nothing)})
    similar, _ = similar_for(flow.vault, flow.index)

    def question(text):
        ws = Workspace(flow.vault)
        out = Updater(flow.vault, ws, changed, similar, "test", NOW).apply(Item("Decision", "Farbwerte", text, 0.5))
        assert out.op == "INBOX", out.reason
        return frontmatter_of(ws.text(out.path)).get("review_may_supersede")

    assert question("Ab dem zweiten Quartal pflegen wir die Farbwerte im Quellcode, nicht mehr in figma.") == [
        "decisions/design-tokens-in-figma.md"
    ]
    named = Updater(flow.vault, Workspace(flow.vault), changed, similar, "test", NOW)._named_decision
    assert named(Item("Decision", "Farbwerte", "Die Farbwerte pflegen wir im Quellcode, nicht in Figma.", 0.5)) == (
        "decisions/design-tokens-in-figma.md"
    )
    assert named(Item("Decision", "Server", "Die Auswertungen laufen auf einem eigenen Postgres-Server.", 0.5)) is None
    assert named(Item("Decision", "Farbwerte", "Die Farbwerte und tokens pflegen wir im Quellcode.", 0.5)) is None


def test_extraction_gives_a_waiting_decision_the_persons_other_statements_for_its_question(indexed_sample, tmp_path):
    """The extraction hands each item the person's statements of the pass (`Item.said`): a
    waiting decision near an active decision asks about it when another sentence of the person's
    names it, and asks nothing when the decision is said alone (nearness is set to everything
    here, so that which decision it is near is the only question)."""
    root = tmp_path / "vault"
    shutil.copytree(indexed_sample, root)
    program = SHIPPED.read_text(encoding="utf-8")  # the vault has none of its own: the shipped one, nearness changed
    program, changed = re.subn(r"(?m)^  (statement_near|decision_near): [0-9.]+", r"  \1: 0.0", program)
    assert changed == 2
    (root / "PROGRAM.md").write_text(program, encoding="utf-8")
    decision = "From now on the waiting-room leaflet is printed on recycled paper."
    from memory_helpers import pick

    gen = ScriptedGenerator([], default={"items": [pick(1, confidence=0.4)]})
    register_generator("said-test", lambda **options: gen)

    def waiting(talk):
        vault = Vault(Settings(vault=root, now=NOW.date()))
        vault.load()
        ws = Workspace(vault)
        talk = f"User: {talk}\nAssistant: Noted."
        r = extract_text(vault, talk, generator="said-test", source="test", now=NOW, ws=ws, commit=False)
        out = next(o for o in r.outcomes if o.op == "INBOX" and "leaflet" in o.path)
        return out, frontmatter_of(ws.text(out.path)).get("review_may_supersede")

    out, question = waiting(decision)
    closest = re.search(r"decisions/[\w.-]+\.md", out.reason)
    assert closest and question is None, out.reason
    vault = Vault(Settings(vault=root, now=NOW.date()))
    vault.load()
    named = vault.state.notes[closest.group(0)].title
    assert waiting(f"{decision} Separately, about {named}: no change on that front.")[1] == [closest.group(0)]
