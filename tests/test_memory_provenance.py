"""The provenance score: the lines the brought-in shapes judge, read by a fitted score (real MiniLM)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from palinode_vault.memory.extraction.extract import cleaned_turns, extract_text, pasted_reader, self_names
from palinode_vault.memory.extraction.judge import judge_embedder
from palinode_vault.memory.extraction.pasted import PASTED, Sent, brought_in, own_turns, own_words, surely_marked
from palinode_vault.memory.extraction.provenance import (
    MAX_LINES,
    PLACE,
    SHAPE,
    WEIGHTS,
    Provenance,
    judged_lines,
    load_provenance,
    own_names,
    shape,
    with_embeddings,
)
from palinode_vault.memory.extraction.transcript import USER, Turn
from palinode_vault.models import ScriptedGenerator
from palinode_vault.program import SHIPPED
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

SAMPLE = Path(__file__).resolve().parent.parent / "sample-vault"

# A question over a contract's clauses in the same paragraph: the question-line shape marks only
# the line right under the question.
CLAUSES = (
    "does this clause mean we can cancel any time?\n"
    "Section 4. Termination\n"
    "Either party may terminate this Agreement upon thirty days written notice.\n"
    "Fees paid in advance are non-refundable except where required by law.\n"
    "The Supplier shall return all Customer data within fourteen days of termination."
)
# The person's own lines, typed as a person types them.
OWN = (
    "we picked the smaller office in the end, the big one was twice the rent\n"
    "Marta signs the lease on Friday and I'll sort the internet\n"
    "moving day is the 3rd"
)


@pytest.fixture(scope="module")
def read():
    score, why = load_provenance()
    assert score is not None, why
    embed_many, source = judge_embedder(score.model_id)
    if embed_many is None:
        pytest.skip(source)
    return score.reader(embed_many, 0.8)


def test_the_shipped_weights_read_the_features_this_code_computes():
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    assert tuple(data["shape"]) == SHAPE and tuple(data["place"]) == PLACE
    score = Provenance(data)
    assert score.dimensions == 384  # the default MiniLM
    sets = Path(__file__).resolve().parent.parent / "bench" / "extraction-eval"
    assert data["sets"] and all((sets / f"{name}.json").is_file() for name in data["sets"])  # it names what it learned from


@pytest.mark.requires_models
def test_the_score_marks_pasted_lines_the_shapes_leave(read):
    shapes_only = own_words(CLAUSES)
    assert "fourteen days of termination" in shapes_only  # what the shapes alone leave
    scored = own_turns([(USER, CLAUSES)], read)[0]
    assert scored.startswith("does this clause mean we can cancel any time?")
    assert "non-refundable" not in scored and "fourteen days" not in scored and PASTED in scored


@pytest.mark.requires_models
def test_the_score_keeps_the_persons_own_lines(read):
    assert own_turns([(USER, OWN)], read)[0] == OWN


def test_only_the_lines_the_shapes_judge_are_read():
    """Sure marks (a fence here) stay whatever the score says; the score sees the lines left."""
    text = "look at this\n```\nraise SystemExit(1)\n```\nwe ship on Monday"
    lines = surely_marked(text)
    judged = judged_lines(lines, brought_in(lines), Sent(first=True))
    assert [lines[i] for i, _ in judged] == ["look at this", "we ship on Monday"]
    every_line_pasted = own_turns([(USER, text)], lambda lines, marks, sent: [True] * len(marks))[0]
    assert "raise SystemExit" not in every_line_pasted and "Monday" not in every_line_pasted


def test_the_reader_is_told_where_each_message_was_sent():
    """A message right after the person's own, with no reply between, is where chat apps put a
    paste: the reader is told so, and whether the one before announced it."""
    seen: list[Sent] = []

    def record(lines, marks, sent):
        seen.append(sent)
        return marks

    turns = [
        (USER, "first"),
        (USER, "a teammate sent me this"),
        (USER, "her message"),
        ("assistant", "ok"),
        (USER, "pasting:"),
        (USER, "text"),
    ]
    own_turns(turns, record)
    assert seen == [
        Sent(first=True),
        Sent(after_own=True, before="first"),
        Sent(after_own=True, before="a teammate sent me this"),
        Sent(),
        Sent(announced=True, after_own=True, before="pasting:"),
    ]


def test_a_line_that_names_the_person_is_told_apart():
    """The person's own names (their profile's name and aliases) as whole words: "Hi Noor," was
    written to them. A word that only holds a name ("Noorderzon") is not one."""
    names = own_names("Noor Haddad", ["NH"])
    assert names == {"noor", "haddad", "nh"}
    at = SHAPE.index("names_person")
    assert shape("Hello Noor, the March invoice is attached", names)[at] == 1.0
    assert shape("we went to Noorderzon last summer", names)[at] == 0.0
    assert shape("Hello Noor, the March invoice is attached")[at] == 0.0  # no profile, no names


def test_self_names_come_from_the_profile_with_role_self(tmp_path):
    vault_dir = tmp_path / "v"
    shutil.copytree(SAMPLE, vault_dir, ignore=shutil.ignore_patterns(".palinode"))
    vault = Vault(Settings(vault=vault_dir))
    vault.load()
    assert self_names(vault) == {"noor", "haddad", "nh"}
    (vault_dir / "people" / "noor-haddad.md").unlink()
    vault = Vault(Settings(vault=vault_dir))
    vault.load()
    assert self_names(vault) == frozenset()


def test_embeddings_join_each_line_with_its_paragraph_and_the_line_above():
    judged = [(0, [0.5]), (1, [0.25]), (3, [1.0])]  # lines 0 and 1 one paragraph, line 3 another
    rows = with_embeddings(judged, [[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    assert rows[0] == [0.5, 1.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0]
    assert rows[1] == [0.25, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0, 1.0]
    assert rows[2] == [1.0, 2.0, 2.0, 2.0, 2.0, 0.0, 1.0, 1.0]
    # sent right after the person's own message: its last line is the one read before the first
    rows = with_embeddings(judged, [[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]], [3.0, 4.0])
    assert rows[0] == [0.5, 1.0, 0.0, 0.5, 0.5, 3.0, 4.0, 1.0] and rows[1][5:7] == [1.0, 0.0]


def test_the_reader_embeds_the_line_before_a_message_sent_after_the_persons_own():
    score, _ = load_provenance()
    assert score is not None
    asked: list[list[str]] = []

    def embed_many(texts):
        asked.append(list(texts))
        return [[0.0] * score.dimensions for _ in texts]

    read = score.reader(embed_many, 0.8)
    read(["her message"], [False], Sent(after_own=True, before="a teammate sent me this"))
    read(["my own line"], [False], Sent())
    assert asked == [["her message", "a teammate sent me this"], ["my own line"]]


def test_a_long_message_is_left_to_the_shapes():
    """Past MAX_LINES judged lines, embedding each would cost more than the pass: nothing is
    embedded and the shapes' marks stand."""
    score, _ = load_provenance()
    assert score is not None
    asked: list[int] = []

    def embed_many(texts):
        asked.append(len(texts))
        return [[0.0] * score.dimensions for _ in texts]

    read = score.reader(embed_many, 0.8)
    long = "\n".join(f"line {n} of a long log" for n in range(MAX_LINES + 1))
    lines = surely_marked(long)
    assert read(lines, brought_in(lines), Sent()) == brought_in(lines) and asked == []
    read(["one line"], [False], Sent())
    assert asked == [1]  # a short message is embedded, one text per judged line


def test_weights_of_another_shape_or_model_are_refused(tmp_path):
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    bad = tmp_path / "provenance.json"
    bad.write_text(json.dumps({**data, "shape": list(SHAPE[:-1])}), encoding="utf-8")
    score, why = load_provenance(bad)
    assert score is None and "unreadable" in why and "the shapes decide" in why
    bad.write_text(json.dumps({**data, "weights": data["weights"][:-1]}), encoding="utf-8")
    assert load_provenance(bad)[0] is None
    assert load_provenance(tmp_path / "missing.json") == (None, "no missing.json: the shapes decide")
    score = Provenance(data)
    read = score.reader(lambda texts: [[0.0] * 8 for _ in texts], 0.8)
    with pytest.raises(ValueError, match="384-dimension"):
        read(["a line of mine"], [False], Sent())


@pytest.mark.requires_models
def test_a_pass_reads_pasted_text_as_program_md_says():
    turns = [Turn(USER, CLAUSES)]
    off, _, how = cleaned_turns(turns, None)
    assert "fourteen days" in off[0].content and how.startswith("by shape (PROGRAM.md pasted_judged")
    on, _, how = cleaned_turns(turns, 0.8)
    if how.startswith("by shape"):
        pytest.skip(how)  # no embedding model here
    assert "fourteen days" not in on[0].content and how.startswith("provenance score (provenance.json, ")
    assert pasted_reader(0.0)[0] is None


@pytest.mark.requires_models
def test_an_extraction_pass_numbers_none_of_the_lines_the_score_marks(tmp_path):
    """Through `extract_text` on a copy of the sample vault: the pass says how it read pasted text
    (`ExtractResult.pasted`), and none of its numbered statements holds a clause line the shapes
    alone would have left; with `pasted_judged: 0` in the vault's PROGRAM.md the shapes decide."""
    root = tmp_path / "v"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    vault = Vault(Settings(vault=root))
    generator = ScriptedGenerator([], default={"items": []})
    conversation = (
        f"User: {CLAUSES}\nAssistant: It lets either side end it with thirty days' notice.\n"
        "User: We renew the contract with them for one more year."
    )
    r = extract_text(vault, conversation, generator=generator, dry_run=True)
    if r.pasted.startswith("by shape"):
        pytest.skip(r.pasted)  # no embedding model here
    assert r.pasted.startswith("provenance score")
    assert [s.text for s in r.statements] == ["We renew the contract with them for one more year."]
    assert not any("fourteen days" in s.text or "non-refundable" in s.text for s in r.statements)
    program = SHIPPED.read_text(encoding="utf-8")
    assert "  pasted_judged: 0.8 " in program
    (root / "PROGRAM.md").write_text(program.replace("  pasted_judged: 0.8 ", "  pasted_judged: 0   ", 1), encoding="utf-8")
    r = extract_text(vault, conversation, generator=generator, dry_run=True)
    assert r.pasted.startswith("by shape (PROGRAM.md pasted_judged")
    assert any("fourteen days" in s.text for s in r.statements)
