"""The statement judge: its shipped weights, its ratings on the real MiniLM, its place in the pass,
and the training script that writes it."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from palinode_vault.memory.extraction.cues import type_by_wording
from palinode_vault.memory.extraction.extract import extract_text
from palinode_vault.memory.extraction.judge import (
    NEIGHBOURS,
    PLACEMENT,
    WEIGHTS,
    Judge,
    Placed,
    judge_embedder,
    load_judge,
    neighbour_values,
    placement,
)
from palinode_vault.memory.extraction.numbered import number_statements
from palinode_vault.memory.extraction.transcript import parse_transcript
from palinode_vault.memory.weekly.oplog import read_log, unfiled_statement
from palinode_vault.models import ScriptedGenerator, register_generator
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

ROOT = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
TYPES = ["Decision", "ProjectSnapshot", "Insight", "PersonMemory", "ResearchRef", "ActionItem"]
# No type's wording (cues.py) in it: only its meaning says it is a memory.
UNCUED = "The invoicing service goes to monthly batches from February."
FILE_JUDGED = "  file_judged: 0.9 "


@pytest.fixture
def vault(sample_vault):
    v = Vault(Settings(vault=sample_vault, now=NOW.date()))
    v.load()
    return v


def rated(judge, talk):
    """The judge's ratings of a conversation's statements, read where the pass reads them."""
    turns = parse_transcript(talk)
    statements = number_statements(turns)
    return judge.rate([s.text for s in statements], judge_embedder(judge.model_id)[0], TYPES, placement(statements, turns))


def run(vault, text):
    gen = ScriptedGenerator([{"items": []}], default={"items": []})  # the model chooses nothing
    register_generator("judgetest", lambda **options: gen)
    return extract_text(vault, text, generator="judgetest", source="test", now=NOW)


def test_the_shipped_weights_belong_to_the_default_embedding_model():
    judge, why = load_judge()
    assert judge is not None, why
    data = json.loads(WEIGHTS.read_text())
    assert set(data["trained_on"]) >= {"cases", "heldout", "heldout2", "heldout3", "heldout4", "heldout5"}
    embed_many, source = judge_embedder(judge.model_id)
    assert embed_many is not None, source
    assert len(embed_many(["one sentence"])[0]) == judge.dimensions == 384


MEMORIES = [
    UNCUED,
    "The warehouse app now runs on the new tablets in all three depots.",
    "We settled on weekly payouts to the drivers, starting in March.",
    "Priya takes over the mobile team when Olek leaves in January.",
    "The onboarding survey showed that most users never open the settings page.",
    "Support tickets are answered within four hours on weekdays from now on.",
    "The Lyon office moves to the fourth floor after the lease renewal.",
    "Our staging database is restored from the nightly backup every Monday.",
]
CHAT = [
    "It's raining again here, typical December.",
    "Thanks, that helped a lot.",
    "lol same here, long week",
    "Can you make that shorter?",
    "ok cool",
    "Good morning!",
    "What time is it in Tokyo right now?",
    "haha that's a good one",
]


def test_the_judge_tells_statements_that_are_memories_from_chat():
    """Every plain statement of a memory, said on its own without a cue word, rates above every
    line of chat. How high one said alone rates is the weights' calibration (the sets' memories
    are said among other sentences), so the threshold is asserted only for the sentence the pass
    tests below rely on."""
    judge, _ = load_judge()
    embed_many, _ = judge_embedder(judge.model_id)
    assert type_by_wording(UNCUED, TYPES) is None
    memories, chat = judge.rate(MEMORIES, embed_many, TYPES), judge.rate(CHAT, embed_many, TYPES)
    assert [r.sentence for r in memories] == MEMORIES
    assert min(r.memory for r in memories) > max(r.memory for r in chat)
    assert memories[0].memory > 0.5 > max(r.memory for r in chat)  # UNCUED reaches review_judged
    # a change in how a project runs is its status or a decision (the 50-set weights said the
    # first, the 53-set ones the second), never a person's memory or an insight
    assert memories[1].type in ("ProjectSnapshot", "Decision")
    # the type is always one PROGRAM.md allows
    assert {r.type for r in judge.rate(MEMORIES + CHAT, embed_many, ["Insight"])} == {"Insight"}


def test_a_statement_the_judge_rates_a_memory_waits_in_inbox_when_the_model_misses_it(vault):
    r = run(vault, f"User: Quick update. {UNCUED}\nAssistant: Noted.")
    assert [(o.op, o.confidence) for o in r.outcomes] == [("INBOX", 0.5)]
    assert "the model did not choose it (the judge rated it a " in r.outcomes[0].reason
    assert UNCUED in (vault.root / r.outcomes[0].path).read_text()
    assert r.judge.startswith("judge judge.json on ")
    skip = [unfiled_statement(e) for e in read_log(vault.root) if e["op"] == "SKIP"]
    assert len(skip) == 1 and skip[0][1] == UNCUED and skip[0][0].startswith("the judge rated it a ")


def test_the_judge_follows_program_md(vault):
    program = (ROOT / "PROGRAM.md").read_text()
    line = "  review_judged: 0.6 "
    assert line in program
    for off in (
        program.replace(line, "  review_judged: 0   ", 1),
        "".join(x for x in program.splitlines(keepends=True) if not x.startswith(line)),
    ):
        (vault.root / "PROGRAM.md").write_text(off)  # off, or a PROGRAM.md from before the key
        r = run(vault, f"User: {UNCUED}\nAssistant: Noted.")
        assert r.outcomes == [] and r.judge.startswith("off (PROGRAM.md review_judged")
    judge, _ = load_judge()
    rating = rated(judge, f"User: {UNCUED}\nAssistant: Noted.")[0].memory
    above = f"{(1.0 + rating) / 2:.7f}"  # between its rating and 1
    assert rating < float(above) <= 1.0
    (vault.root / "PROGRAM.md").write_text(program.replace(line, f"  review_judged: {above}", 1))
    assert run(vault, f"User: {UNCUED}\nAssistant: Noted.").outcomes == []  # rated below the threshold


def test_weights_for_another_model_or_malformed_weights_turn_the_judge_off(tmp_path):
    data = json.loads(WEIGHTS.read_text())
    assert judge_embedder("other-model.gguf:abc")[0] is None
    assert "trained on other-model.gguf" in judge_embedder("other-model.gguf:abc")[1]
    bad = tmp_path / "judge.json"
    bad.write_text(json.dumps({**data, "classes": data["classes"][1:]}))
    assert load_judge(bad) == (None, f"judge weights {bad} unreadable: judge weights are malformed (classes or row widths)")
    assert load_judge(tmp_path / "none.json")[0] is None
    with pytest.raises(ValueError, match="384-dimension"):
        Judge(data).rate(["a b c"], lambda texts: [[0.0] * 8 for _ in texts], TYPES)


def test_placement_says_where_each_statement_was_said():
    """The judge reads a sentence beside where it was said (judge.PLACEMENT): its place on its line
    and in its turn, the person's first turn, an answer to a question, a digit, its length, and the
    line itself."""
    talk = (
        "User: Thanks! The beta slipped to January. Tariq owns the fix now.\n"
        "Lesson learned: test on the oldest tablets first.\n"
        "Assistant: Who tells the clinics?\n"
        "User: Mira writes to all three clinics on Monday."
    )
    turns = parse_transcript(talk)
    statements = number_statements(turns)
    assert [s.text for s in statements] == [
        "The beta slipped to January.",
        "Tariq owns the fix now.",
        "Lesson learned: test on the oldest tablets first.",
        "Mira writes to all three clinics on Monday.",
    ]
    placed = placement(statements, turns)
    names = list(PLACEMENT)
    values = [dict(zip(names, p.values)) for p in placed]
    assert [v["first_on_line"] for v in values] == [1, 0, 1, 1]
    assert [v["last_on_line"] for v in values] == [0, 1, 1, 1]
    assert [v["sentences_on_line"] for v in values] == [0.4, 0.4, 0.2, 0.2]
    assert [v["first_in_turn"] for v in values] == [1, 0, 0, 1]
    assert [v["last_in_turn"] for v in values] == [0, 0, 1, 1]
    assert [v["first_turn"] for v in values] == [1, 1, 1, 0]
    assert [v["after_question"] for v in values] == [0, 0, 0, 1]  # the answer to "Who tells the clinics?"
    assert [v["digit"] for v in values] == [0, 0, 0, 0]
    assert values[3]["length"] == pytest.approx(8 / 40)
    assert placed[0].line == placed[1].line == "Thanks! The beta slipped to January. Tariq owns the fix now."
    assert placed[3].line == statements[3].text
    # its neighbours: the person's statements before and after it in the same message
    assert [(p.previous, p.next) for p in placed] == [
        ("", "Tariq owns the fix now."),
        ("The beta slipped to January.", "Lesson learned: test on the oldest tablets first."),
        ("Tariq owns the fix now.", ""),
        ("", ""),  # alone in its message: the assistant's question is not the person's
    ]
    assert placed[0].turn == turns[0].content and placed[3].turn == turns[2].content
    # a sentence rated on its own is read as one line of one message
    alone = Placed.alone("Sync ships on 12 May.")
    assert alone.values == (1.0, 1.0, 0.2, 1.0, 1.0, 1.0, 0.0, 1.0, 5 / 40) and alone.line == "Sync ships on 12 May."
    assert alone.turn == alone.line and alone.previous == alone.next == ""


def test_neighbour_values_say_how_alike_a_sentence_and_what_was_said_around_it_are():
    vectors = {"before": [1.0, 0.0, 1.0], "after": [0.0, 1.0, 0.0], "line": [1.0, 1.0, 1.0], "message": [0.0, 0.0, 0.0]}
    at = Placed((), "line", "message", "before", "after")
    assert at.texts() == ["line", "message", "before", "after"]  # what is embedded beside the sentence
    values = dict(zip(NEIGHBOURS, neighbour_values([1.0, 0.0, 1.0], at, vectors)))
    assert values["like_previous"] == pytest.approx(1.0) and values["like_next"] == 0.0
    assert values["has_previous"] == values["has_next"] == 1.0
    assert values["like_line"] == pytest.approx(2 / (2**0.5 * 3**0.5))
    assert values["like_turn"] == 0.0  # a zero vector is like nothing
    alone = Placed((), "line")  # no neighbour, and the line is the whole message
    assert alone.texts() == ["line", "line"]
    none = dict(zip(NEIGHBOURS, neighbour_values([1.0, 0.0, 1.0], alone, vectors)))
    assert none["has_previous"] == none["has_next"] == none["like_previous"] == none["like_next"] == 0.0
    assert none["like_turn"] == none["like_line"]


def test_weights_reading_another_placement_or_a_torn_line_embedding_are_refused():
    data = json.loads(WEIGHTS.read_text())
    assert data["placement"] == list(PLACEMENT) and data["line_scale"] > 0  # the shipped weights read both
    assert data["neighbours"] == list(NEIGHBOURS) and data["hidden"]  # and their neighbours, through a hidden layer
    with pytest.raises(ValueError, match="a placement this code does not compute"):
        Judge({**data, "placement": ["first_on_line", "mood"]})
    with pytest.raises(ValueError, match="neighbours this code does not compute"):
        Judge({**data, "neighbours": ["like_previous", "mood"]})
    with pytest.raises(ValueError, match="malformed"):
        Judge({**data, "hidden": data["hidden"][1:]})  # one embedding row short: the halves differ
    with pytest.raises(ValueError, match="malformed"):
        Judge({**data, "weights": data["weights"][1:]})  # one hidden unit without its output row
    with pytest.raises(ValueError, match="malformed"):
        Judge({**data, "hidden": [row[1:] for row in data["hidden"][:-1]] + [data["hidden"][-1]]})  # a torn row


def test_the_training_script_writes_weights_the_judge_reads(tmp_path):
    out = tmp_path / "judge.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "train_judge.py"), "--sets", "cases,heldout", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["sentences"] > 20 and report["labels"]["none"] > 0
    assert set(report["cross_validation"]["by_set"]) == {"cases", "heldout"}  # each held out in turn
    filing = report["cross_validation"]["filing"]  # what filing on the judge's word would file
    assert all(0 <= v["right"] <= v["filed"] for v in filing.values())
    judge, why = load_judge(out)
    assert judge is not None and why == "judge judge.json"
    data = json.loads(out.read_text())
    assert list(data["trained_on"]) == ["cases", "heldout"]
    # the judge reads a statement exactly as the script trained it: same features, same layers
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import train_judge
    finally:
        sys.path.remove(str(ROOT / "bench"))
    rows = train_judge.labelled_sentences(["heldout"])[:40]
    x, _ = train_judge.feature_matrix(rows, data["function_words"], data["function_scale"])
    trained = train_judge.probabilities(x, (np.array(data["hidden"]), np.array(data["weights"])))
    embed_many = judge_embedder(judge.model_id)[0]
    ratings = judge.rate([r["sentence"] for r in rows], embed_many, TYPES, [r["placed"] for r in rows])
    assert [r.memory for r in ratings] == pytest.approx(list(1.0 - trained[:, 0]), abs=1e-3)
    assert {r.memory > 0.5 for r in ratings} == {True, False}  # not one answer for every statement


def test_a_choice_of_the_models_that_neither_wording_nor_the_judge_supports_is_dropped(vault):
    chat = "It's raining again here, typical December."
    choice = {"statement": 1, "type": "Insight", "about": "", "replaces": "", "because": [], "rejected": [], "confidence": 0.9}
    gen = ScriptedGenerator([{"items": [choice]}] * 2)
    register_generator("judgetest", lambda **options: gen)
    r = extract_text(vault, f"User: {chat}\nAssistant: Stay dry.", generator="judgetest", source="test", now=NOW)
    assert r.outcomes == []
    assert "statement 1 (turn 1, characters 0-42): neither its wording nor the judge (" in " ".join(r.dropped)
    # with the judge off, the model's choice waits for review: no wording says what it is
    program = (ROOT / "PROGRAM.md").read_text()
    (vault.root / "PROGRAM.md").write_text(program.replace("  review_judged: 0.6 ", "  review_judged: 0   ", 1))
    r = extract_text(vault, f"User: {chat}\nAssistant: Stay dry.", generator="judgetest", source="test", now=NOW)
    assert [(o.op, o.confidence) for o in r.outcomes] == [("INBOX", 0.5)]
    assert "no wording says what it is and the judge is off" in r.outcomes[0].reason


def test_a_pass_leaves_at_most_review_per_pass_items_waiting_the_judges_likeliest_first(vault):
    """Whoever proposes (here the model chooses every statement, at a confidence under the
    threshold), no more than PROGRAM.md's `review_per_pass` items of one pass wait in inbox/, and
    they are the statements the judge rates likeliest."""
    from memory_helpers import pick

    talk = (
        "User: The invoicing service goes to monthly batches from February. Tariq will send the conflict "
        "log format to Mira by Friday. The offline beta slipped to January because the duplicate-booking bug "
        "is still open. Lesson from this week: real support tickets taught the classifier more than synthetic ones.\n"
        "Assistant: Noted."
    )
    statements = number_statements(parse_transcript(talk))
    assert len(statements) == 4
    # the review budget alone: nothing filed on the judge's word (its own test is below)
    program = (ROOT / "PROGRAM.md").read_text()
    (vault.root / "PROGRAM.md").write_text(program.replace(FILE_JUDGED, "  file_judged: 0 ", 1))
    gen = ScriptedGenerator([{"items": [pick(n, confidence=0.4) for n in (1, 2, 3, 4)]}], default={"items": []})
    register_generator("budgettest", lambda **options: gen)
    r = extract_text(vault, talk, generator="budgettest", source="test", now=NOW, dry_run=True)
    waiting = [o for o in r.outcomes if o.op == "INBOX"]
    assert len(waiting) == 2
    assert sum("items waiting for review in one pass" in d for d in r.dropped) >= 2
    judge, _ = load_judge()
    ratings = rated(judge, talk)
    likeliest = sorted(range(4), key=lambda i: -ratings[i].memory)[:2]
    texts = "".join(r.diffs[o.path] for o in waiting)
    assert all(statements[i].text[:30] in texts for i in likeliest)


def test_a_statement_the_judge_types_at_file_judged_is_filed_on_its_word(vault):
    """The model chooses nothing; the judge gives the statement its type with a probability at or
    above PROGRAM.md's `file_judged`: it is filed (here an action item added to the person's note),
    at that probability, saying so. With `file_judged: 0` the same statement waits for review."""
    said = "Tariq will send the conflict log format to Mira by Friday."
    talk = f"User: Quick update. {said}\nAssistant: Noted."
    judge, _ = load_judge()
    (rating,) = rated(judge, talk)
    assert rating.type == "ActionItem" and rating.typed >= 0.7  # over file_judged: the shipped weights' reading

    program = (ROOT / "PROGRAM.md").read_text()
    assert FILE_JUDGED in program
    (vault.root / "PROGRAM.md").write_text(program.replace(FILE_JUDGED, "  file_judged: 0 ", 1))
    gen = ScriptedGenerator([{"items": []}], default={"items": []})
    register_generator("judgetest", lambda **options: gen)
    off = extract_text(vault, talk, generator="judgetest", source="test", now=NOW, dry_run=True)
    assert [(o.op, o.confidence) for o in off.outcomes] == [("INBOX", 0.5)]

    (vault.root / "PROGRAM.md").write_text(program)
    r = run(vault, talk)
    assert [(o.op, o.path) for o in r.outcomes] == [("UPDATE", "people/tariq-benali.md")]
    assert r.outcomes[0].confidence == pytest.approx(rating.typed, abs=0.01)
    assert "filed on the judge's word (ActionItem at " in r.outcomes[0].reason
    assert "conflict log format" in (vault.root / "people/tariq-benali.md").read_text()


def test_a_choice_the_judge_verifies_files_only_on_a_calibrated_word(vault):
    """The model chooses a statement at 0.9 and the judge agrees on its type: verified. With the
    default model (`unmarked_confidence` 0.5) its 0.9 was never calibrated, so unless the judge's
    own word files it (here `file_judged: 0`) it waits for review, saying why; a model whose
    confidence means something (`unmarked_confidence: 1`) files it at its own number."""
    from memory_helpers import pick

    talk = f"User: Quick update. {UNCUED}\nAssistant: Noted."
    judge, _ = load_judge()
    (rating,) = rated(judge, talk)
    assert rating.type == "Decision" and rating.memory >= 0.6  # verified by the judge
    program = (ROOT / "PROGRAM.md").read_text().replace(FILE_JUDGED, "  file_judged: 0 ", 1)
    gen = ScriptedGenerator([{"items": [pick(1, "Decision", confidence=0.9)]}] * 2, default={"items": []})
    register_generator("calibrated", lambda **options: gen)
    (vault.root / "PROGRAM.md").write_text(program)
    r = extract_text(vault, talk, generator="calibrated", source="test", now=NOW, dry_run=True)
    assert [(o.op, o.confidence) for o in r.outcomes] == [("INBOX", 0.5)]
    assert "waits for review: verified, but the model's confidence is not calibrated" in r.outcomes[0].reason
    assert "  unmarked_confidence: 0.5 " in program
    (vault.root / "PROGRAM.md").write_text(program.replace("  unmarked_confidence: 0.5 ", "  unmarked_confidence: 1   ", 1))
    r = extract_text(vault, talk, generator="calibrated", source="test", now=NOW, dry_run=True)
    assert [(o.op, o.confidence) for o in r.outcomes] == [("ADD", 0.9)] and r.outcomes[0].path.startswith("decisions/")


def test_only_the_likeliest_statement_of_a_pass_is_filed_on_the_judges_word(vault):
    """`file_judged` was read off the likeliest statement of each held-out conversation: a second
    statement over it was never measured, so it waits for review; the likeliest is filed."""
    first = "Tariq will send the conflict log format to Mira by Friday."
    second = "Hana will send the Dutch translations to Sam by Thursday."
    judge, _ = load_judge()
    talk = f"User: Two things. {second} {first}\nAssistant: Noted."
    ratings = rated(judge, talk)  # read where they were said: second, then first, on one line
    assert all(r.type == "ActionItem" and r.typed >= 0.7 for r in ratings)  # both over file_judged
    likeliest, other = sorted(ratings, key=lambda x: -x.typed)
    assert likeliest.typed > other.typed
    person = {first: "people/tariq-benali.md", second: "people/hana-kobayashi.md"}
    r = run(vault, talk)
    filed = [o for o in r.outcomes if o.op != "INBOX"]
    assert [(o.op, o.path) for o in filed] == [("UPDATE", person[likeliest.sentence])]
    assert "filed on the judge's word" in filed[0].reason
    waiting = [o for o in r.outcomes if o.op == "INBOX"]
    assert len(waiting) == 1 and other.sentence[:30] in r.diffs[waiting[0].path]


def test_the_judge_is_trained_on_the_memorys_own_sentence_not_its_context(tmp_path, monkeypatch):
    """A sentence holding fewer of a memory's keywords than the sentence holding most of them is
    its context (`central` False): `--context leave-out` does not train on it as that type."""
    from script_helpers import load_script

    train = load_script("bench/train_judge.py")
    case = {
        "id": "x-01",
        "transcript": "User: Paddle's contract came back at 5% per sale. Billing moves to Moloni invoices from March. "
        "\nAssistant: Noted.",
        "expected": [{"type": "Decision", "keywords": ["moloni", "march", "paddle"]}],
    }
    (tmp_path / "one.json").write_text(json.dumps([case]))
    monkeypatch.setattr(train, "EVAL", tmp_path)
    rows = {r["sentence"][:12]: (r["label"], r["central"]) for r in train.labelled_sentences(["one"])}
    assert rows == {
        "Paddle's con": ("Decision", False),  # one keyword: the context of the decision
        "Billing move": ("Decision", True),  # two: the decision itself
    }
    assert train.CONTEXT == "leave-out" and json.loads(WEIGHTS.read_text())["context"] == train.CONTEXT


def test_a_sentence_still_holding_its_secret_is_trained_as_no_memory_and_counts_more(tmp_path, monkeypatch):
    """A secret every layer before the judge missed, said at length next to a real memory: the
    sentence is trained as no memory whatever keywords it holds, `SECRET_WEIGHT` times over, so the
    judge does not carry it into a review note (docs/BENCHMARKS.md, session 20)."""
    from script_helpers import load_script

    train = load_script("bench/train_judge.py")
    case = {
        "id": "x-02",
        "transcript": "User: Ruth gets the export by Friday, the zip opens with gaivota-5512 as usual. "
        "Hana starts on Monday.\nAssistant: Noted.",
        "expected": [{"type": "ActionItem", "keywords": ["export", "friday"]}],
        "secret": "gaivota-5512",
    }
    (tmp_path / "one.json").write_text(json.dumps([case]))
    monkeypatch.setattr(train, "EVAL", tmp_path)
    rows = {r["sentence"][:10]: (r["label"], r["secret"]) for r in train.labelled_sentences(["one"])}
    assert rows == {"Ruth gets ": ("none", True), "Hana start": ("none", False)}
    assert train._holds("left 12, right 33, left 8", "the safe: left 12, right 33, left 8")
    assert not train._holds(None, "anything") and not train._holds("4471", "room 44 and 71")
    # rows counted more pull the fit their way
    x = np.array([[1.0, 1.0]] * 4)
    y = np.array([0, 1, 1, 1])
    for hidden in (0, train.HIDDEN):  # a softmax regression and the hidden layer alike
        even = train.fit(x, y, hidden=hidden)
        weighted = train.fit(x, y, weight=np.array([10.0, 1.0, 1.0, 1.0]), hidden=hidden)
        assert train.probabilities(x[:1], weighted)[0, 0] > 0.5 > train.probabilities(x[:1], even)[0, 0]
    assert train.SECRET_WEIGHT > 1 and json.loads(WEIGHTS.read_text())["secret_weight"] == train.SECRET_WEIGHT


def test_each_memory_sentence_is_trained_again_as_said_alone(tmp_path, monkeypatch):
    """`alone_copies`: a memory's own sentence, not its context, chat or a secret, is copied with
    the placement of a one-sentence message (docs/ARCHITECTURE.md, session 21)."""
    from script_helpers import load_script

    train = load_script("bench/train_judge.py")
    case = {
        "id": "x-03",
        "transcript": "User: Morning! Billing moves to Moloni invoices from March. Thanks for yesterday.\nAssistant: Noted.",
        "expected": [{"type": "Decision", "keywords": ["moloni", "march"]}],
    }
    (tmp_path / "one.json").write_text(json.dumps([case]))
    monkeypatch.setattr(train, "EVAL", tmp_path)
    rows = train.labelled_sentences(["one"])
    [copy] = train.alone_copies(rows)
    [said] = [r for r in rows if r["label"] == "Decision"]
    assert copy["copy"] and copy["sentence"] == said["sentence"] and copy["label"] == "Decision"
    assert copy["placed"] == Placed.alone(said["sentence"]) != said["placed"]
    assert not train.alone_copies([{**said, "secret": True}]) and not train.alone_copies([{**said, "central": False}])
    assert train.ALONE_COPIES and json.loads(WEIGHTS.read_text())["alone_copies"] is True


def test_each_conversation_is_trained_again_as_typed_in_a_hurry(tmp_path, monkeypatch):
    """`register_copies`: the person's prose in lower case, without apostrophes, a few letters
    swapped; code, quotes and the assistant's turns as they were; each sentence keeps its label
    (docs/BENCHMARKS.md, session 26)."""
    import random

    from script_helpers import load_script

    train = load_script("bench/train_judge.py")
    text = "We're moving Billing to Moloni.\n```\nKEEP = 'As Is'\n```\n> Quoted Line stays."
    monkeypatch.setattr(train, "TYPO_RATE", 0.0)
    assert (
        train.casual(text, random.Random(1)) == "were moving billing to moloni.\n```\nKEEP = 'As Is'\n```\n> Quoted Line stays."
    )
    monkeypatch.setattr(train, "TYPO_RATE", 1.0)  # every word of five letters or more: two inner letters swapped
    words = train.casual("Brand moves from Porto", random.Random(1)).split()
    assert [sorted(w) for w in words] == [sorted(w) for w in "brand moves from porto".split()]
    originals = ["brand", "moves", "porto"]
    assert words[2] == "from" and all(w != o and (w[0], w[-1]) == (o[0], o[-1]) for w, o in zip(words[:2] + words[3:], originals))
    assert train.casual(text, random.Random(1)) == train.casual(text, random.Random(1))  # seeded: the same copy each run
    monkeypatch.setattr(train, "TYPO_RATE", 0.07)
    case = {
        "id": "x-04",
        "transcript": "User: The weather in Porto's been awful all week. Billing moves to Moloni invoices from March. "
        "We'll see how the clinics take it.\nAssistant: Noted, Billing Is Set.",
        "expected": [{"type": "Decision", "keywords": ["moloni", "march"]}],
    }
    (tmp_path / "one.json").write_text(json.dumps([case]))
    monkeypatch.setattr(train, "EVAL", tmp_path)
    rows = train.labelled_sentences(["one"])
    copies = train.register_copies(rows, ["one"])
    assert [c["label"] for c in copies] == [r["label"] for r in rows] == ["Decision", "none"]
    assert all(c["copy"] == "register" and c["sentence"] == c["sentence"].lower() for c in copies)
    assert copies[0]["sentence"].replace(".", "").split()[-2:] == ["from", "march"] and "'" not in copies[1]["sentence"]
    assert train.REGISTER_COPIES and json.loads(WEIGHTS.read_text())["register_copies"] is True


def test_file_judged_is_the_lowest_threshold_from_which_precision_stays_at_the_bar():
    from script_helpers import load_script

    train = load_script("bench/train_judge.py")

    def curve(*precisions, filed=100_000):  # many statements: a standard error of 0.001
        return {str(t): {"filed": filed, "right": 0, "precision": p} for t, p in zip(train.FILE_THRESHOLDS, precisions)}

    bar = train.FILE_PRECISION
    assert bar == 0.9  # the margin over issue 16's 0.8 that first runs called for (bench/train_judge.py)

    def at(*offsets):  # precisions relative to the bar
        return curve(*(None if o is None else round(bar + o, 3) for o in offsets))

    # 0.6 0.7 0.75 0.8 0.85 0.9 0.95: a dip at 0.75-0.8 means 0.7 is noise, not a point to file from
    assert train.file_threshold(at(-0.06, 0.0, -0.03, -0.01, 0.04, 0.05, 0.03)) == 0.85
    assert train.file_threshold(at(0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07)) == 0.6
    assert train.file_threshold(at(-0.3, -0.2, -0.1, -0.1, -0.1, -0.05, -0.01)) is None
    assert train.file_threshold(at(0.05, 0.05, 0.05, 0.05, 0.05, 0.05, None)) == 0.6  # nothing reaches 0.95: no evidence
    assert train.file_threshold(at(None, None, None, None, None, None, None)) is None
    # within its standard error of the bar is at the bar: 0.899 of 336 (0.016), not 0.86 of 450
    measured = {"0.85": (450, 0.86), "0.9": (336, 0.899), "0.95": (201, 0.915)}
    assert train.file_threshold({t: {"filed": n, "right": 0, "precision": p} for t, (n, p) in measured.items()}) == 0.9
    assert train.file_threshold(curve(None, None, None, None, 0.86, 0.899, 0.915)) == 0.95  # 0.899 of 100,000
