"""The extraction pass: a conversation in, a few linked, dated memories out (PROGRAM.md).

Named stages, each with what it keeps of where an item came from:

1. **Redaction**: secrets out of the transcript before anything reads it (secrets.py), and
   pasted, quoted, fenced or injected text replaced (`pasted.own_words`).
2. **Numbered statements** (numbered.py): the person's own sentences, numbered, each with its
   turn and offsets; questions, small talk, tool output and credential talk left out.
3. **Selection** (selection.py): the model chooses statements by number under a JSON schema of
   enums (statement, type, about, replaces, because, rejected) and writes no words of its own;
   `compose` builds each memory from the person's words.
4. **Judging** (judge.py): the statement judge rates every statement (a memory or not, and which
   type) from its embedding, its cue words (cues.py) and where it was said (`judge.placement`:
   its place on its line and in its turn, and the line's embedding).
5. **Verification** (`verify`): what is filed and what waits in `inbox/`, with the reason written
   into the review note:
   - *filed* (confidence kept, at or above PROGRAM.md's `confidence_threshold`): the model chose
     it, the judge rates it a memory at `review_judged` or more and types it as the model labelled
     it or as its wording says (with the judge off: the wording says the model's type), a person
     or project memory names who or what it is about, and the model's confidence reaches the
     threshold;
   - *review* (confidence lowered below the threshold, `review_unoffered`): the model chose it and
     the wording or the judge says it is a memory, but one of those checks failed, the reason
     recorded; and statements the model did not choose that the judge rates a memory (the
     wording when the judge is off); at most PROGRAM.md's `review_per_pass` items a pass wait for
     review, whoever proposed them, the judge's likeliest first;
   - *dropped* (logged, never written): what neither the wording nor the judge supports, and
     what is over PROGRAM.md's caps.
6. **Update logic** (update.py): NOOP, UPDATE, ADD, SUPERSEDE (a `replaces` choice names the note
   it replaces), ARCHIVE, INBOX; paths decided in code, names that never collide, one journaled
   run; `assert_no_secrets` is the last check on everything staged.

A statement that looked like a memory but that no item covers is logged as SKIP with why (at most
`MAX_UNFILED` a pass): what the weekly self-review needs to see facts the person had to explain
again. The agent's saves over MCP (mcp/ops.py) go through stage 6 and its checks the same way.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from palinode_vault.core.entities import slugify
from palinode_vault.core.prose import stems, words
from palinode_vault.kinds import BY_NAME, TYPE_KIND
from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.cues import named_subject, pronoun_at, replaced_clause, type_by_wording
from palinode_vault.memory.extraction.judge import EmbedMany, Rating, judge_embedder, load_judge, placement
from palinode_vault.memory.extraction.mentions import known_entities, mentioned, unknown_full_names
from palinode_vault.memory.extraction.numbered import Statement, number_statements
from palinode_vault.memory.extraction.pasted import LineReader, own_turns
from palinode_vault.memory.extraction.provenance import load_provenance, own_names
from palinode_vault.memory.extraction.selection import (
    MAX_DECISIONS,
    MAX_NAMES,
    Selection,
    compose,
    memory_types,
    selection_schema,
    selections,
    system_prompt,
    token_budget,
    user_prompt,
)
from palinode_vault.memory.extraction.transcript import USER, Turn, parse_transcript
from palinode_vault.memory.update.logic import Item, Outcome, Similar, Updater, similar_for
from palinode_vault.memory.update.workspace import Workspace
from palinode_vault.memory.weekly.corrections import pass_label
from palinode_vault.memory.weekly.oplog import Operation, unfiled_reason
from palinode_vault.program import Program, load_program
from palinode_vault.vault import Vault

__all__ = ["ExtractResult", "assert_no_secrets", "extract_text", "extract_turns", "load_generator", "memory_types"]

CONTEXT_TOKENS = 8192
MAX_UNFILED = 3  # SKIP lines for unfiled statements, per pass
UNOFFERED = "text: the person's own sentence; the model did not choose it"
FIRST_PERSON = ("i", "i'm", "i've", "i'd", "my", "me")


# --- what the selection may name: people, projects and decisions the vault knows ------------------


def offered_names(statements: list[Statement], known: list[tuple[str, str, list[str]]]) -> dict[str, str]:
    """{display name: ref} of the known people and projects the statements name (the `about` enum)."""
    out: dict[str, str] = {}
    display = {ref: shown for ref, shown, _ in known}
    for s in statements:
        for ref, _ in mentioned(s.text, known):
            out.setdefault(display[ref], ref)
    return dict(list(out.items())[:MAX_NAMES])


def offered_decisions(vault: Vault, similar: Similar, statements: list[Statement]) -> dict[str, str]:
    """{title: path} of the active decisions the vault's retrieval finds closest to the statements
    (the `replaces` enum): the two best for each statement, the best first, at most MAX_DECISIONS.
    A decision replaced already and left active is offered under its own title: the update logic
    reads a choice of it as the decision in force that replaced it (`Updater.successor`)."""
    folder = BY_NAME[TYPE_KIND["Decision"]].folder + "/"
    best: dict[str, float] = {}
    for s in statements:
        try:
            found = similar(s.text, "Decision")
        except Exception:  # noqa: BLE001 - no retrieval, no replacement offered: the update logic still looks
            return {}
        kept = 0
        for path, score in found:
            note = vault.state.notes.get(path)
            status = str((note.frontmatter or {}).get("status") or "") if note else "archived"
            if not path.startswith(folder) or path.count("/") != 1 or status in ("archived", "review"):
                continue
            best[path] = max(best.get(path, 0.0), score)
            kept += 1
            if kept == 2:
                break
    out: dict[str, str] = {}
    for path, _ in sorted(best.items(), key=lambda x: -x[1]):
        title = " ".join(vault.state.notes[path].title.split())[:80]
        if title and title not in out:
            out[title] = path
    return dict(list(out.items())[:MAX_DECISIONS])


# --- judging --------------------------------------------------------------------------------------


def judge_statements(
    statements: list[Statement], turns: list[Turn], program: Program, index: Any = None
) -> tuple[dict[int, Rating] | None, str]:
    """The statement judge's rating of each statement (numbered from `turns`), by number (None
    when it is off), and how."""
    if not program.settings.extraction.review_judged:
        return None, "off (PROGRAM.md review_judged is 0 or absent)"
    judge, embed_many, how = weights_with_embedder(load_judge, index)
    if judge is None or embed_many is None:
        return None, f"off ({how})"
    ratings = judge.rate([s.text for s in statements], embed_many, memory_types(program), placement(statements, turns))
    return {s.number: r for s, r in zip(statements, ratings)}, how


def weights_with_embedder(load: Callable[[], tuple[Any, str]], index: Any = None) -> tuple[Any, EmbedMany | None, str]:
    """Fitted weights (`load_judge`, `load_provenance`) with the embedding model they were trained
    on: (weights, embed_many, how), or (None, None, why not)."""
    weights, why = load()
    if weights is None:
        return None, None, why
    embed_many, source = judge_embedder(weights.model_id, index)
    if embed_many is None:
        return None, None, source
    return weights, embed_many, f"{why} on {source}"


# --- verification: what is filed, what waits for review, what is dropped ---------------------------


@dataclass(frozen=True)
class PassContext:
    """What every choice of a pass is verified against: the person's numbered statements,
    PROGRAM.md, the judge's ratings (None: the judge is off), the names and decisions the model
    was offered (by what it saw: ref or path), the vault's known people and projects, and the
    person's own profile (`role: self`)."""

    statements: list[Statement]
    program: Program
    ratings: dict[int, Rating] | None
    names: dict[str, str]
    decisions: dict[str, str]
    known: list[tuple[str, str, list[str]]]
    self_person: tuple[str, str] | None

    @property
    def likeliest(self) -> int | None:
        """The statement the judge gives the highest probability of one type: the only one of a
        pass its word alone may file, as its calibration measured it (`file_judged` is read off
        the likeliest statement of each held-out conversation, bench/train_judge.py); a second
        statement over the threshold was never measured, and waits for review."""
        if not self.ratings:
            return None
        return max(self.ratings.items(), key=lambda kv: (kv[1].typed, -kv[0]))[0]


@dataclass
class Verified:
    items: list[Item]
    dropped: list[str] = field(default_factory=list)  # why (no content, no secret values)
    chosen: set[int] = field(default_factory=set)  # statement numbers the model chose
    covered: set[int] = field(default_factory=set)  # statement numbers an item of the model's is made of
    for_review: set[int] = field(default_factory=set)  # statement numbers of unoffered items (inbox/)


def review_confidence(program: Program) -> float:
    """The confidence of an unoffered statement when PROGRAM.md sets no `review_unoffered`: below the threshold."""
    ex = program.settings.extraction
    return round(ex.confidence_threshold - 0.01, 2)


#: How many of the person's statements back a pronoun may reach for the person it stands for.
ANTECEDENT_STATEMENTS = 3


def _new_person(text: str, known: list[tuple[str, str, list[str]]]) -> str | None:
    """A person `text` introduces: a name followed by a person's wording ("Kofi Mensah joined"),
    or a full name the vault does not know ("our accountant from January is Vera Antunes")."""
    opening = named_subject(text)
    if opening and not mentioned(opening, known):  # "Elena wants ..." names a known Elena
        return opening
    return next(iter(unknown_full_names(text, known)), None)


def _people(text: str, known: list[tuple[str, str, list[str]]], introduced: list[str]) -> list[tuple[int, str, str]]:
    """(position, name, ref or "" for a new person) of the people `text` names. A known person
    named by a word that opens a full name the conversation introduced ("Elena Sousa, our new
    accountant ... Elena wants PDFs", while the vault knows Elena Vasquez) is that new person."""
    out = []
    for ref, shown in mentioned(text, known, "person"):
        again = next((n for n in introduced if n.split()[0].lower() == shown.lower()), None)
        out.append((text.find(shown), again or shown, "" if again else ref))
    new = _new_person(text, known)
    if new:
        whole = next((n for n in introduced if " " not in new and n.split()[0].lower() == new.lower()), new)
        out.append((text.find(new), whole, ""))  # "Ruth wants ..." after "Ruth Almeida": her
    return sorted(out)


def _named(
    type_name: str,
    statement: Statement,
    about: str | None,
    entities: list[tuple[str, str]],
    known: list[tuple[str, str, list[str]]],
    self_person: tuple[str, str] | None,
    cue: str | None,
    before: Sequence[Statement] = (),
) -> tuple[str | None, list[tuple[str, str]]]:
    """(title, entities) of a person or project memory: the name of who or what it is about (the
    model's `about` choice, a known name the statement says, a new person it introduces, the
    person a pronoun of it stands for (named in one of the person's statements just `before` it),
    or the person themself for a first-person preference); None when it names nobody and nothing."""
    kind = "person" if type_name == "PersonMemory" else "project"
    display = {ref: shown for ref, shown, _ in known}
    if about and about.startswith(kind + "/") and about in display:
        return display[about], entities
    if kind == "project":
        ref = next((r for r, _ in entities if r.startswith("project/") and r in display), None)
        return (display[ref], entities) if ref else (None, entities)
    introduced = [n for s in [*before, statement] for n in unknown_full_names(s.text, known)]
    people = _people(statement.text, known, introduced)
    at = pronoun_at(statement.text)
    if at >= 0 and (not people or at < people[0][0]):
        # "She spent four years at Cliniko", "Her firm is Contas Claras": a pronoun before any name
        # is who it is about, the person the statements just before it named last
        for earlier in reversed(before[-ANTECEDENT_STATEMENTS:]):
            found = _people(earlier.text, known, introduced)[-1:]
            if found:
                people = found
                break
    if not people:  # named in the statements composed with it
        people = [(0, name, ref) for ref, name in entities if ref.startswith("person/") and ref in display][:1]
    if people:
        _, name, ref = people[0]
        if not ref:  # a new person: not the known one whose first name they share
            return name, [e for e in entities if e[1].lower() != name.split()[0].lower()]
        if ref not in [r for r, _ in entities]:
            entities = entities + [(ref, name)]
        return display.get(ref, name), entities
    said = {w.lower().strip(".,;:!") for w in statement.text.split()}
    if self_person and cue == "PersonMemory" and said & set(FIRST_PERSON):
        return self_person[1], [self_person] + [e for e in entities if e[0] != self_person[0]]
    return None, entities


def checked_pointers(
    choice: Selection,
    statement: Statement,
    statements: list[Statement],
    decisions: dict[str, str],
    known: list[tuple[str, str, list[str]]],
) -> tuple[Selection, list[str]]:
    """`choice` with the parts its statement does not bear out left out, and what was left out:
    an `about` the statement does not name; `because`/`rejected` statements not said next to it
    (the same turn, at most two statements away); a `replaces` its words do not point at (the
    words after its replacement wording, "instead of ...", must name the note; without such
    wording, the statement must say at least half of the note's title)."""
    ignored = []
    about = choice.about
    said_refs = {r for r, _ in mentioned(statement.text, known)}
    if about and about not in {shown for ref, shown, _ in known if ref in said_refs}:
        ignored.append(f"about '{about[:40]}' (the statement does not name it)")
        about = ""
    near = {s.number for s in statements if s.turn == statement.turn and 0 < abs(s.number - statement.number) <= 2}
    because = tuple(n for n in choice.because if n in near)
    rejected = tuple(n for n in choice.rejected if n in near and n not in because)
    if len(because) < len(choice.because) or len(rejected) < len(choice.rejected):
        ignored.append("reasons or options not said next to it")
    replaces = choice.replaces
    if replaces:
        title = stems(replaces) | stems(decisions.get(replaces, "").rsplit("/", 1)[-1].removesuffix(".md").replace("-", " "))
        clause = replaced_clause(statement.text)
        said = stems(clause) if clause else stems(statement.text)
        if not (said & title and (clause or 2 * len(said & title) >= len(title))):
            ignored.append(f"replaces '{replaces[:40]}' (its words do not name that decision)")
            replaces = ""
    return Selection(choice.statement, choice.type, about, replaces, because, rejected, choice.confidence), ignored


def _item(choice: Selection, ctx: PassContext, chosen: set[int], offered: bool) -> tuple[Item | None, str, list[int]]:
    """The item for one choice (the model's, or the code's for an unoffered statement), or None
    and why it is dropped; and the statement numbers it is made of."""
    statements, program, ratings = ctx.statements, ctx.program, ctx.ratings
    names, decisions, known, self_person = ctx.names, ctx.decisions, ctx.known, ctx.self_person
    ex = program.settings.extraction
    types = memory_types(program)
    statement = next(s for s in statements if s.number == choice.statement)
    choice, ignored = checked_pointers(choice, statement, statements, decisions, known)
    composed = compose(choice, statements, chosen)
    cue = type_by_wording(composed.text, types)  # the person's words it is made of
    rating = ratings.get(statement.number) if ratings is not None else None
    judged = rating if rating is not None and rating.memory >= (ex.review_judged or 0) and rating.type else None
    # the judge's own word: a type it gives at `file_judged` or above is filed whoever proposed it
    # (its cross-validated precision there, PROGRAM.md); the checks below that are not about the
    # proposer (a named person or project, a known type) still hold
    sure = (
        judged
        if judged is not None and ex.file_judged and judged.typed >= ex.file_judged and statement.number == ctx.likeliest
        else None
    )
    where = f"statement {statement.number} ({statement.provenance()})"
    cap = ex.unmarked_confidence if ex.unmarked_confidence is not None else 1.0
    if ratings is not None and not cue and not judged and cap < ex.confidence_threshold:
        rated = f" ({rating.memory:.2f})" if rating else ""
        return None, f"{where}: neither its wording nor the judge{rated} says it is a memory", []
    reasons: list[str] = []
    notes = [f"ignored: {x}" for x in ignored]
    # the judge types it, with the model's label and the wording's type as its checks: filed when
    # one of them agrees with the judge (the judge off: when the wording agrees with the model)
    second = [t for t in (choice.type, cue) if t]
    agreed = judged.type if judged and (judged.type in second or sure) else None
    type_name = agreed or (choice.type if ratings is None and cue == choice.type else None)
    if type_name is None:
        stated = cue or (judged.type if judged else None)
        type_name = stated or choice.type
        if stated:
            reasons.append(f"the model said {choice.type}, the {'wording' if cue else 'judge'} says {stated}")
    if ratings is None and not cue:
        reasons.append("no wording says what it is and the judge is off")
    if ratings is not None and not judged:
        reasons.append(f"the judge rates it a memory at {rating.memory:.2f} only" if rating else "the judge did not rate it")
    if offered and choice.confidence < ex.confidence_threshold and not sure:
        reasons.append(f"the model's confidence {choice.confidence:.2f} is below {ex.confidence_threshold}")
    elif offered and ratings is not None and not sure and not reasons and cap < ex.confidence_threshold:
        # verified, but at a confidence nobody calibrated: with the judge on, a model whose own
        # number means little (`unmarked_confidence` below the threshold) files only on the
        # judge's word, whose precision at `file_judged` is measured
        reasons.append("verified, but the model's confidence is not calibrated and the judge's word does not file it")
    entities = [(names[choice.about], choice.about)] if choice.about in names else []
    entities += [(r, shown) for r, shown in mentioned(composed.text, known) if r not in [e[0] for e in entities]]
    title = composed.title
    about_unknown = False
    if type_name in ("PersonMemory", "ProjectSnapshot"):
        before = [s for s in statements if s.number < statement.number]
        name, entities = _named(type_name, statement, names.get(choice.about), entities, known, self_person, cue, before)
        if name:
            title = name
        else:
            what = "person" if type_name == "PersonMemory" else "project"
            reasons.append(f"it names no {what} the vault knows")
            about_unknown = True
    if type_name not in types or type_name not in TYPE_KIND and type_name != "ActionItem":
        reasons.append(f"type {type_name} unknown, filed as {ex.uncertain_type}")
        type_name = ex.uncertain_type
    replaces, replaces_path = "", ""
    if type_name in ("PersonMemory", "ProjectSnapshot"):
        # a fact of a person or project note it replaces, in the person's words ("..., replacing the
        # beta planned for mid-December"): the update logic moves that line to the history note
        replaces = replaced_clause(composed.text)
    elif choice.replaces in decisions:
        if type_name == "Decision":
            replaces, replaces_path = choice.replaces, decisions[choice.replaces]
        else:
            notes.append(f"ignored: replaces '{choice.replaces[:40]}' (only a decision replaces a decision)")
    if not slugify(title):
        return None, f"{where}: no words to name it", []
    # what the checks do not bear out gets at most `unmarked_confidence` (below the threshold: review;
    # 1 for a model whose confidence means something: its own number stands, the reasons still noted)
    confidence = choice.confidence if not reasons else min(choice.confidence, cap)
    if sure and not reasons and type_name == sure.type:
        confidence = max(confidence if offered else 0.0, sure.typed)
        notes.append(f"filed on the judge's word ({sure.type} at {sure.typed:.2f})")
    elif not offered:
        confidence = ex.review_unoffered or review_confidence(program)
        why = f"the judge rated it a {rating.type} ({rating.memory:.2f})" if judged and rating else f"{cue} wording"
        reasons.insert(0, f"{UNOFFERED} ({why})")
    why = "waits for review" if confidence < ex.confidence_threshold else "not verified"
    note = "; ".join([where, *notes] + ([f"{why}: " + "; ".join(reasons)] if reasons else []))
    if not offered and not (sure and not reasons):
        note = "; ".join(reasons + [where])
    item = Item(
        type_name,
        title,
        composed.text,
        confidence,
        entities,
        composed.rationale if type_name == "Decision" else "",
        composed.alternatives if type_name == "Decision" else "",
        replaces=replaces,
        note=note,
        replaces_path=replaces_path,
        judged=bool(sure and not reasons and type_name == sure.type),
        about_unknown=about_unknown,
        replaced_words=composed.replaced if type_name not in ("PersonMemory", "ProjectSnapshot") else "",
        said=" ".join(s.text for s in statements),
    )
    return item, "", composed.statements


def verify(choices: list[Selection], ctx: PassContext) -> Verified:
    """The items to hand to the update logic (see the module docstring, stage 5)."""
    statements, program, ratings = ctx.statements, ctx.program, ctx.ratings
    ex = program.settings.extraction
    out = Verified([], chosen={c.statement for c in choices})
    mine: list[tuple[Item, list[int]]] = []
    taken: set[int] = set()  # statements an item of the model's is made of
    for choice in sorted(choices, key=lambda c: -c.confidence):
        if choice.statement in taken:
            out.dropped.append(f"statement {choice.statement}: chosen again or part of another item")
            continue
        item, why, used = _item(choice, ctx, out.chosen, True)
        if item is None:
            out.dropped.append(why)
            continue
        mine.append((item, used))
        taken.update(used)
    unoffered: list[tuple[Item, list[int]]] = []
    if ex.review_unoffered:
        types = memory_types(program)
        for s in statements:
            if s.number in taken or s.number in out.chosen:
                continue
            rating = ratings.get(s.number) if ratings is not None else None
            # the judge, when on, is the one gate (the wording is one of its features); off, the wording
            if ratings is not None:
                stated = rating.type if rating and rating.memory >= (ex.review_judged or 0) else None
            else:
                stated = type_by_wording(s.text, types)
            if not stated:
                continue
            choice = Selection(s.number, stated, "", "", (), (), 0.0)
            # an unoffered statement is about no name and replaces no decision of the model's
            item, _, used = _item(choice, replace(ctx, names={}, decisions={}), out.chosen, False)
            if item is not None and not set(used) & taken:
                unoffered.append((item, used))
                taken.update(used)

    # The person's review is what a pass costs them: at most `review_per_pass` items wait for it,
    # whoever proposed them, the judge's likeliest first (the wording's order when it is off).
    def likelihood(entry: tuple[Item, list[int]]) -> float:
        rating = ratings.get(entry[1][0]) if ratings is not None and entry[1] else None
        return rating.memory if rating else 0.0

    waiting = [e for e in mine + unoffered if e[0].confidence < ex.confidence_threshold]
    over = {id(e[0]) for e in sorted(waiting, key=likelihood, reverse=True)[ex.review_per_pass :]}
    unoffered_ids = {id(i) for i, _ in unoffered}
    per_type: dict[str, int] = {}
    for item, used in mine + unoffered:
        if id(item) in over:
            out.dropped.append(f"'{item.title[:40]}': over {ex.review_per_pass} items waiting for review in one pass")
        elif len(out.items) >= ex.max_items_per_pass:
            out.dropped.append(f"'{item.title[:40]}': over {ex.max_items_per_pass} items in one pass")
        elif per_type.get(item.type, 0) >= ex.max_items_per_type:
            out.dropped.append(f"'{item.title[:40]}': over {ex.max_items_per_type} items of type {item.type}")
        else:
            per_type[item.type] = per_type.get(item.type, 0) + 1
            out.items.append(item)
            waits = id(item) in unoffered_ids and item.confidence < ex.confidence_threshold
            (out.for_review if waits else out.covered).update(used)  # filed on the judge's word: covered
    return out


def unfiled(
    statements: list[Statement],
    verified: Verified,
    program: Program,
    known: list[tuple[str, str, list[str]]],
    model_said: str,
    ratings: dict[int, Rating] | None,
) -> list[Operation]:
    """SKIP lines (without source) for the person's statements that looked like a memory and that
    no item of the model's is made of (one that only waits for review counts as not extracted):
    a type's wording or the judge first, then plain statements naming a known person or project,
    in the order said, at most MAX_UNFILED. A statement with a secret is never numbered, so never
    logged."""
    types = memory_types(program)
    threshold = program.settings.extraction.review_judged or 0
    cued, named = [], []
    for s in statements:
        if s.number in verified.covered:
            continue
        cue = type_by_wording(s.text, types)
        rating = ratings.get(s.number) if ratings is not None else None
        if cue:
            cued.append((s, cue, f"{cue} wording"))
        elif rating is not None and rating.memory >= threshold and rating.type:
            cued.append((s, rating.type, f"the judge rated it a {rating.type} ({rating.memory:.2f})"))
        else:
            refs = [r for r, _ in mentioned(s.text, known)]
            if refs and len(words(s.text)) >= 4:
                kind = BY_NAME.get(refs[0].split("/", 1)[0])
                type_name = kind.schema if kind and kind.name in ("person", "project") else ""
                named.append(
                    (
                        s,
                        type_name if type_name in types else program.settings.extraction.uncertain_type,
                        f"a statement naming {refs[0]}",
                    )
                )
    out = []
    for s, type_name, why in (cued + named)[:MAX_UNFILED]:
        how = "the code dropped the model's choice" if s.number in verified.chosen else model_said
        if s.number in verified.for_review:
            how += "; its words go to review"
        out.append(Operation("SKIP", type_name, None, None, "", unfiled_reason(f"{why}; {how}", s.text)))
    return out


# --- the pass -------------------------------------------------------------------------------


@dataclass
class ExtractResult:
    outcomes: list[Outcome]
    withheld_secrets: int
    written: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    finish_reason: str = "stop"
    schema_valid: bool = True
    seconds: float = 0.0
    similarity: str = ""
    run: str | None = None
    conflicts: list[str] = field(default_factory=list)
    attempts: int = 0  # model calls (0: no statement to choose from, the model was not asked)
    judge: str = ""  # how the person's statements were judged, or why they were not
    pasted: str = ""  # how the person's pasted text was read: by the provenance score, or by shape and why
    statements: list[Statement] = field(default_factory=list)  # the numbered statements (provenance)

    def to_json(self) -> dict[str, Any]:
        return {"items": [o.to_json() for o in self.outcomes], "withheld_secrets": self.withheld_secrets}


def load_generator(spec: Any = None, program: Program | None = None):
    """A generator object as is, else a registered name / GGUF path / server URL with a context for
    PROGRAM.md. With no spec, PROGRAM.md's `generation.model_server` (when set) answers."""
    from palinode_vault.models import get_generator

    if spec is not None and hasattr(spec, "generate_json"):
        return spec
    server = server_settings(program) if spec is None and program is not None else None
    if server:
        return get_generator(server["model_server"], model=server["model"], timeout=server["timeout_seconds"])
    try:
        return get_generator(spec, n_ctx=CONTEXT_TOKENS)
    except TypeError:  # a registered generator without a context option (the scripted one)
        return get_generator(spec)


def server_settings(program: Program) -> dict[str, Any] | None:
    """PROGRAM.md's `generation` block when it names a model server, else None."""
    block = (program.settings.model_extra or {}).get("generation")
    if not isinstance(block, dict) or not str(block.get("model_server") or "").strip():
        return None
    timeout = block.get("timeout_seconds")
    return {
        "model_server": str(block["model_server"]).strip(),
        "model": str(block.get("model") or "").strip() or None,
        "timeout_seconds": float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else 120.0,
    }


def run_model(
    generator, program: Program, statements: list[Statement], names: list[str], decisions: list[str], retry: bool = True
) -> tuple[dict | None, str, int, dict[str, Any]]:
    """(answer, finish_reason, attempts, schema). One retry, with a nudge in the prompt, when the
    answer is unusable ("length", "invalid_json", or an entry outside the schema)."""
    schema = selection_schema(program, len(statements), names, decisions)
    system, user = system_prompt(program), user_prompt(statements, names, decisions)
    answer, finish = generator.generate_json(system, user, schema, token_budget(schema))
    if finish == "stop" and answer is not None and not selections(answer, schema)[1] or not retry:
        return answer, finish, 1, schema
    answer, finish = generator.generate_json(system, user + " Keep the answer short.", schema, token_budget(schema))
    return answer, finish, 2, schema


def self_names(vault: Vault) -> frozenset[str]:
    """The words the person is called by (their profile's name and aliases, `provenance.own_names`);
    none without a profile."""
    return _names_of(_self_note(vault))


def _names_of(profile: tuple[str, str, list[str]] | None) -> frozenset[str]:
    return own_names(profile[1], profile[2]) if profile else frozenset()


def _self_note(vault: Vault) -> tuple[str, str, list[str]] | None:
    """(ref, name, aliases) of the people/ note with `role: self`, not archived."""
    from palinode_vault.core.entities import ref_of_path
    from palinode_vault.memory.weekly.core_memory import core_group

    for path, note in sorted(vault.state.notes.items()):
        data = note.frontmatter or {}
        if (
            path.startswith("people/")
            and path.count("/") == 1
            and core_group(path, data) == 0
            and data.get("status") != "archived"
        ):
            ref = ref_of_path(path)
            if ref:
                aliases = data.get("aliases")
                aliases = [str(a) for a in aliases] if isinstance(aliases, list) else [str(aliases)] if aliases else []
                return ref, str(data.get("name") or note.title), aliases
    return None


def cleaned_turns(
    turns: list[Turn], pasted_judged: float | None = None, index: Any = None, names: frozenset[str] = frozenset()
) -> tuple[list[Turn], list[list[str]], str]:
    """Stage 1 of a pass: each turn with its secrets withheld and, for the person's, pasted text
    marked (`pasted.own_turns`, the provenance score reading the lines the brought-in shapes
    judge when PROGRAM.md's `pasted_judged` is set and its model loads; `names`: the person's,
    `self_names`); the kinds of secret withheld from each; and how pasted text was read. The one
    place turns are cleaned: the pass, the judge's training and the bench read the same text."""
    redacted = secrets.redact_conversation([(t.role, t.content) for t in turns])
    read, how = pasted_reader(pasted_judged, index, names)
    own = own_turns([(t.role, text) for t, (text, _) in zip(turns, redacted)], read)
    return [Turn(t.role, text) for t, text in zip(turns, own)], [kinds for _, kinds in redacted], how


def pasted_reader(
    pasted_judged: float | None, index: Any = None, names: frozenset[str] = frozenset()
) -> tuple[LineReader | None, str]:
    """The provenance score's line reader at `pasted_judged` (None: the shapes decide), and how."""
    if not pasted_judged:
        return None, "by shape (PROGRAM.md pasted_judged is 0 or absent)"
    score, embed_many, how = weights_with_embedder(load_provenance, index)
    if score is None or embed_many is None:
        return None, f"by shape ({how})"
    return score.reader(embed_many, pasted_judged, names), f"{how}, at {pasted_judged}"


def extract_turns(
    vault: Vault,
    turns: list[Turn],
    *,
    generator=None,
    source: str = "transcript",
    dry_run: bool = False,
    now: dt.datetime | None = None,
    ws: Workspace | None = None,
    commit: bool = True,
    write: Any = None,
) -> ExtractResult:
    """One extraction pass over `turns`; writes (unless dry_run) as one journaled run.

    `write(ws, label)` writes the workspace (default `ws.commit`; memory/update/planned.py passes one
    that checks, under the lock, that nothing read has changed)."""
    started = time.monotonic()
    program = load_program(vault.root)  # afresh: edits to PROGRAM.md apply to this pass
    now = now or dt.datetime.now(dt.UTC)
    if not vault.loaded:
        vault.load()
    ws = ws or Workspace(vault)
    similar, similarity = similar_for(vault)
    # Stage 1: secrets out of the transcript, and a log line per kind withheld; pasted text marked.
    profile = _self_note(vault)  # the person's own profile (`role: self`), read once for the pass
    clean_turns, withheld, pasted_how = cleaned_turns(
        turns, program.settings.extraction.pasted_judged, getattr(similar, "index", None), _names_of(profile)
    )
    withheld_kinds: list[str] = []
    for turn, kinds in zip(turns, withheld):
        if turn.role == USER and secrets.asks_to_remember_secret(turn.content) and not kinds:
            kinds = ["credential the person asked to keep"]
        withheld_kinds.extend(kinds)
    for kind in withheld_kinds:
        secrets.warn_withheld(kind, source)
        ws.log(Operation("WITHHELD", None, None, None, source, f"secret withheld: {kind}"))
    # Stage 2: the person's statements, numbered.
    statements = number_statements(clean_turns)
    known = known_entities(vault.state)
    names = offered_names(statements, known)
    decisions = offered_decisions(vault, similar, statements) if statements else {}
    # Stage 3: the model chooses (not asked when there is nothing to choose from).
    raw: Any = {"items": []}
    finish, attempts = "stop", 0
    invalid: list[str] = []
    choices: list[Selection] = []
    if statements:
        gen = load_generator(generator, program)
        raw, finish, attempts, schema = run_model(gen, program, statements, list(names), list(decisions))
        if finish == "stop":
            choices, invalid = selections(raw, schema)
    schema_valid = finish == "stop" and raw is not None and not invalid
    # Stages 4 and 5: the judge's ratings, and what is filed, reviewed or dropped.
    ratings, judge_how = (
        judge_statements(statements, clean_turns, program, getattr(similar, "index", None)) if statements else (None, "")
    )
    verified = verify(
        choices, PassContext(statements, program, ratings, names, decisions, known, profile[:2] if profile else None)
    )
    verified.dropped[:0] = invalid
    model_said = (
        "the model did not choose it" if finish == "stop" and raw is not None else f"the model's answer was unusable: {finish}"
    )
    for op in unfiled(statements, verified, program, known, model_said, ratings):
        op.source = source
        ws.log(op)
    # Stage 6: the update logic.
    updater = Updater(vault, ws, program.settings, similar, source, now)
    for item in verified.items:
        updater.apply(item)
    result = ExtractResult(
        updater.outcomes,
        len(withheld_kinds),
        dropped=verified.dropped,
        finish_reason=finish,
        schema_valid=schema_valid,
        similarity=similarity,
        attempts=attempts,
        judge=judge_how,
        statements=statements,
        pasted=pasted_how,
    )
    result.diffs = ws.diffs()
    assert_no_secrets(ws)
    if dry_run:
        ws.restore()
    elif commit:
        result.written, result.conflicts, result.run = (write or Workspace.commit)(ws, pass_label("extract", source))
    result.seconds = time.monotonic() - started
    return result


def _secret_values(text: str) -> set[str]:
    return {text[h.start : h.end] for h in secrets.find_secrets(text)}


def assert_no_secrets(ws: Workspace) -> None:
    """Last line of defence: nothing staged for writing may add a secret value. What a note held
    before this pass (the person's own text, or an id that only looks like a key) is theirs."""
    for path in ws.changed():
        pending = ws.pending[path]
        if _secret_values(pending.text or "") - _secret_values(pending.old_text or ""):
            raise RuntimeError(f"refusing to write {path}: it would contain a secret (a bug; nothing was written)")
    for op in ws.ops:
        if secrets.find_secrets(op.reason or ""):
            raise RuntimeError("refusing to log an operation that contains a secret (a bug; nothing was written)")


def extract_text(vault: Vault, text: str, **kwargs: Any) -> ExtractResult:
    """Extraction over a transcript in any supported format."""
    return extract_turns(vault, parse_transcript(text), **kwargs)
