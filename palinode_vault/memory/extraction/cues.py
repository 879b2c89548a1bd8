"""Cue words: what a statement's wording plainly says, from data files (`cue_words/<lang>.toml`).

What kind of statement a sentence is shows in its wording, in the terms PROGRAM.md's "What to
remember" uses: a decision is decided, agreed, chosen or done instead of something; a commitment
has someone who will do something by a date; a lesson was learned or made things worse; a project
went live, slipped or is blocked; a person joined, leads, prefers. The words are data, one file
per language, loaded once; this module holds the matching, never the words. The statement judge
(judge.py) uses the type as a feature, the extraction pass as one opinion beside the model's.

Matching is on words, not patterns: a sentence is lower-cased into words (a comma is a word of its
own), and a phrase matches where its words stand in a row.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CUE_DIR = Path(__file__).with_name("cue_words")
LANGUAGE = "en"


@dataclass(frozen=True)
class TypeCue:
    type: str
    phrases: tuple[tuple[str, ...], ...]
    pairs: tuple[tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...], int], ...]
    name_then: tuple[tuple[str, ...], ...] = ()
    not_names: frozenset[str] = frozenset()
    pronouns: frozenset[str] = frozenset()  # a person's (he, she...): see pronoun_at
    calendar: frozenset[str] = frozenset()  # capitalised words that are no part of a name: see full_names


@dataclass(frozen=True)
class Cues:
    """One language's cue words (see cue_words/en.toml for what each list is)."""

    types: tuple[TypeCue, ...]
    replacement: tuple[str, ...]
    reason: tuple[str, ...]
    lost: tuple[str, ...]
    clause_ends: tuple[str, ...]
    openers: tuple[tuple[str, ...], ...]
    small_talk: tuple[tuple[str, ...], ...]
    small_talk_words: int
    question_openers: tuple[tuple[str, ...], ...]  # (verb, subject): a question without its mark
    pointers: tuple[tuple[str, ...], ...]  # "this", "the following": see points_at_writing
    writings: frozenset[str]
    edit_verbs: tuple[tuple[str, ...], ...]
    tool_prefixes: tuple[str, ...]
    tool_fragments: tuple[str, ...]
    continuations: tuple[tuple[str, ...], ...]
    lead_ins: tuple[str, ...]
    title_words: tuple[int, int]
    function_words: tuple[str, ...]  # the statement judge's grammar words
    preferences: tuple[tuple[str, ...], ...] = ()  # a person memory's section (see [sections])
    blockers: tuple[tuple[str, ...], ...] = ()  # a project sentence's section


def tokens(text: str) -> list[str]:
    """`text` as lower-case words: letters, digits, `'` and `-` make words; a comma is a word."""
    out: list[str] = []
    word: list[str] = []
    for ch in text.lower().replace("’", "'"):
        if ch.isalnum() or ch in "'-":
            word.append(ch)
            continue
        if word:
            out.append("".join(word))
            word = []
        if ch == ",":
            out.append(",")
    if word:
        out.append("".join(word))
    return out


def _phrases(values: Any) -> tuple[tuple[str, ...], ...]:
    # longest first, so "we decided to" is cut before "we decided"
    return tuple(sorted((tuple(tokens(str(v))) for v in values or () if tokens(str(v))), key=len, reverse=True))


def _with_other_languages(data: dict[str, Any], language: str) -> dict[str, Any]:
    """`language`'s cue words with every other language's types and clauses added to its own.

    A person writes in their own language, often in more than one: what kind of statement a
    sentence's wording says, and which words say it replaces an earlier decision, why and what
    lost, are read in any language with a file here. The rest (openers, names, titles, the
    judge's grammar words) stays the language's own."""
    types = {
        str(t["type"]): {**t, "phrases": list(t.get("phrases", ())), "pairs": list(t.get("pairs", ()))} for t in data["types"]
    }
    clauses = {k: list(v) for k, v in data["clauses"].items()}
    for path in sorted(CUE_DIR.glob("*.toml")):
        if path.stem == language:
            continue
        other = tomllib.loads(path.read_text(encoding="utf-8"))
        if "types" not in other:
            continue  # not a language (credentials.toml, mail_headers.toml)
        for t in other["types"]:
            mine = types.get(str(t["type"]))
            if mine is None:
                raise ValueError(f"{path}: type {t['type']!r} is none of {language}.toml's")
            mine["phrases"] += t.get("phrases", ())
            mine["pairs"] += t.get("pairs", ())
        for key in ("replacement", "reason", "lost"):
            clauses[key] += other.get("clauses", {}).get(key, ())
    return {**data, "types": list(types.values()), "clauses": clauses}


@functools.cache
def load(language: str = LANGUAGE) -> Cues:
    """The cue words of `language` with the other languages' types and clauses, read once per
    process."""
    data = tomllib.loads((CUE_DIR / f"{language}.toml").read_text(encoding="utf-8"))
    data = _with_other_languages(data, language)
    types = tuple(
        TypeCue(
            str(t["type"]),
            _phrases(t.get("phrases")),
            tuple((_phrases(p["first"]), _phrases(p["then"]), int(p.get("within", 8))) for p in t.get("pairs", ())),
            _phrases(t.get("name_then")),
            frozenset(str(n).lower() for n in t.get("not_names", ())),
            frozenset(str(n).lower() for n in t.get("pronouns", ())),
            frozenset(str(n).lower() for n in t.get("calendar", ())),
        )
        for t in data["types"]
    )
    c, s, ti = data["clauses"], data["statements"], data["titles"]
    low = lambda xs: tuple(str(x).lower() for x in xs)  # noqa: E731
    return Cues(
        types,
        low(c["replacement"]),
        low(c["reason"]),
        low(c["lost"]),
        low(c["ends"]),
        _phrases(s["openers"]),
        _phrases(s["small_talk"]),
        int(s["small_talk_words"]),
        tuple((str(v).lower(), str(w).lower()) for v in s["question_verbs"] for w in s["question_subjects"]),
        _phrases(s["pointers"]),
        frozenset(str(w).lower() for w in s["writings"]),
        _phrases(s["edit_verbs"]),
        low(s["tool_prefixes"]),
        low(s["tool_fragments"]),
        _phrases(s["continuations"]),
        tuple(sorted(low(ti["lead_ins"]), key=len, reverse=True)),
        (int(ti["words"][0]), int(ti["words"][1])),
        low(data.get("judge", {}).get("function_words", ())),
        _phrases(data.get("sections", {}).get("preferences")),
        _phrases(data.get("sections", {}).get("blockers")),
    )


def _at(words: list[str], phrase: tuple[str, ...], start: int = 0) -> int:
    """Where `phrase` first stands in `words` from `start` (-1: nowhere)."""
    n = len(phrase)
    for i in range(start, len(words) - n + 1):
        if tuple(words[i : i + n]) == phrase:
            return i
    return -1


def has_phrase(words: list[str], phrases: tuple[tuple[str, ...], ...]) -> bool:
    return any(_at(words, p) >= 0 for p in phrases)


def says(text: str, phrases: tuple[tuple[str, ...], ...]) -> bool:
    """Whether `text` holds one of `phrases` as whole words (`tokens`)."""
    return has_phrase(tokens(text), phrases)


def starts_with(words: list[str], phrases: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """The first (longest) of `phrases` that `words` open with, else None."""
    return next((p for p in phrases if tuple(words[: len(p)]) == p), None)


def points_at_writing(sentence: str, language: str = LANGUAGE) -> bool:
    """Whether `sentence` asks for work on a piece of writing it does not hold ("can you tighten
    this paragraph?", "proofread the email below"): a pointer and, at most one word on, one of the
    writings (or a writing and then "below"), in a sentence that asks (a question mark, or an
    editing verb) and quotes nothing (no colon or quotation mark: "tighten this sentence: '...'")."""
    if ":" in sentence or any(mark in sentence for mark in '"“”«»„'):
        return False
    cues = load(language)
    words = tokens(sentence)
    if not (sentence.rstrip().endswith("?") or has_phrase(words, cues.edit_verbs)):
        return False
    for i, word in enumerate(words):
        if word in cues.writings and words[i + 1 : i + 2] == ["below"]:
            return True
        for pointer in cues.pointers:
            if tuple(words[i : i + len(pointer)]) == pointer:
                after = words[i + len(pointer) : i + len(pointer) + 2]
                if any(w in cues.writings for w in after):
                    return True
    return False


def _pair(words: list[str], first: tuple[tuple[str, ...], ...], then: tuple[tuple[str, ...], ...], within: int) -> bool:
    """A phrase of `first`, then a phrase of `then` starting fewer than `within` words after it."""
    for f in first:
        i = _at(words, f)
        while i >= 0:
            after = i + len(f)
            if any(0 <= _at(words, t, after) - after < within for t in then if _at(words, t, after) >= 0):
                return True
            i = _at(words, f, i + 1)
    return False


def named_subject(text: str, language: str = LANGUAGE) -> str | None:
    """The name a sentence opens with when a person's wording follows it ("Kofi Mensah joined as
    our bookkeeper" → "Kofi Mensah"): one or two capitalised words, none of `not_names`."""
    cue = next((c for c in load(language).types if c.name_then), None)
    raw = text.split()
    words = tokens(text)
    if cue is None or not words or words[0] in cue.not_names:
        return None
    for n in (2, 1):
        head = raw[:n]
        if len(head) == n and all(w[:1].isupper() for w in head) and starts_with(tokens(" ".join(raw[n:])), cue.name_then):
            return " ".join(w.strip(",.;:") for w in head)
    return None


def pronoun_at(text: str, language: str = LANGUAGE) -> int:
    """Where `text` first refers to a person by a pronoun (he, she...; the PersonMemory cue's
    `pronouns`), or -1."""
    pronouns = frozenset().union(*(c.pronouns for c in load(language).types))
    start = None
    for i, ch in enumerate(text + " "):
        if ch.isalnum() or ch in "'’-_":
            start = i if start is None else start
        elif start is not None:
            if text[start:i].lower().replace("’", "'") in pronouns:
                return start
            start = None
    return -1


def full_names(text: str, language: str = LANGUAGE) -> list[str]:
    """Names written as a person's full name: two or three capitalised words in a row, of letters
    (and a hyphen or apostrophe) only ("Vera Antunes", "Jean-Luc Picard"). Not from the text's
    first word (a sentence's capital says nothing: "Different Elena", "Calling Jonas"), nor through
    the calendar's words ("January Harbor"), nor opened by one of the `not_names` (the, this...).
    Any script with capitals; a product or a place can look the same, so callers hold it to a
    sentence the judge or the wording says is about a person."""
    cues = load(language).types
    not_names = frozenset().union(*(c.not_names for c in cues))
    calendar = frozenset().union(*(c.calendar for c in cues))
    words = [w.strip(".,;:!?()\"'") for w in text.split()]
    capital = [
        i > 0 and len(w) > 1 and w[0].isupper() and w.replace("-", "").replace("'", "").isalpha() and w.lower() not in calendar
        for i, w in enumerate(words)
    ]
    out, i = [], 0
    while i < len(words):
        end = i
        while end < len(words) and capital[end]:
            end += 1
        if end - i >= 2 and words[i].lower() not in not_names:
            out.append(" ".join(words[i : min(end, i + 3)]))
        i = max(end, i + 1)
    return out


def type_by_wording(text: str, types: list[str], language: str = LANGUAGE) -> str | None:
    """The type the wording of `text` plainly says, among `types` (PROGRAM.md's), or None."""
    words = tokens(text)
    for cue in load(language).types:
        if cue.type not in types:
            continue
        if (
            has_phrase(words, cue.phrases)
            or any(_pair(words, f, t, w) for f, t, w in cue.pairs)
            or (cue.name_then and named_subject(text, language) is not None)
        ):
            return cue.type
    return None


# --- what a decision replaces, why, and what lost -------------------------------------------------


def _word_at(lower: str, phrase: str) -> int:
    """Where `phrase` starts in `lower` as whole words (-1: not there)."""
    pos = lower.find(phrase)
    while pos >= 0:
        before = lower[pos - 1] if pos else " "
        after = lower[pos + len(phrase)] if pos + len(phrase) < len(lower) else " "
        if (not before.isalnum() or not phrase[:1].isalnum()) and (not after.isalnum() or not phrase[-1:].isalnum()):
            return pos
        pos = lower.find(phrase, pos + 1)
    return -1


def clause_after(text: str, connectives: tuple[str, ...]) -> str:
    """The person's words after the first of `connectives` in `text`, to the clause's end ("" when
    none is there): "We chose Postgres because the team knows it, not MySQL" → "the team knows it"
    for the reason connectives."""
    cues = load()
    flat = " ".join(text.split())
    lower = flat.lower()
    found = [(i + len(c), c) for c in connectives for i in [_word_at(lower, c)] if i >= 0]
    if not found:
        return ""
    at, _ = min(found)
    rest = flat[at:]
    # a clause that opens the sentence ("Since nobody reads it, we ...") ends at its comma
    opening = not flat[:at].strip(" ,").lower().split()[:-1] if flat[:at].strip() else True
    stops = (". ", "; ", "! ", "? ") + tuple(f" {e} " for e in cues.clause_ends) + ((", ",) if opening else ())
    stops += tuple(f" {c.strip(' ,')} " for c in cues.reason + cues.lost)
    ends = [e for e in (rest.lower().find(s) for s in stops) if e > 0]
    return rest[: min(ends)].strip(" ,.;:!?") if ends else rest.strip(" ,.;:!?")


def reason_clause(text: str) -> str:
    """Why, in the person's words after a reason connective ("because ...")."""
    return clause_after(text, load().reason)


def lost_clause(text: str) -> str:
    """What lost, in the person's words after "instead of", "rather than", ", not" ..."""
    return clause_after(text, load().lost)


def says_replaces(text: str) -> bool:
    """Whether `text` has wording that says something replaces something else: the replacement
    and lost-option connectives ("no longer", "instead of", "rather than")."""
    cues, lower = load(), " ".join(text.split()).lower()
    return any(_word_at(lower, p) >= 0 for p in cues.replacement + cues.lost)


def replaced_clause(text: str) -> str:
    """What a statement replaces, in the words after "replaces", "instead of", "no longer" ..."""
    return clause_after(text, load().replacement)
