"""Is a candidate memory a fact a note already states? Judged statement by statement.

The index's dedup compares a candidate with a note's best *chunk*: a whole section embedded
together. With MiniLM a one-sentence restatement scores about 0.6 against its own note, no
higher than a new fact about the same subject, so whole-chunk similarity cannot tell "already
remembered" from "new information" (bench/bench_update_thresholds.py measures it). Here each
note is split into its statements (sentences and list items, links reduced to their text), and
each sentence of the candidate is compared with the closest statement, embedded on the fly by
the index's own embedder. A candidate is a restatement when every one of its sentences has a
close statement in the note (`coverage`, the least of the per-sentence bests), hardly any of its
words and numbers are missing from the statements closest to it (`novelty`), and it names no
name or number the note never mentions (`new_names`). The numbers are PROGRAM.md's
`update.statement_*`, calibrated for MiniLM on bench/update-calibration/.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from palinode_vault.core.markers import FOOTER_END, FOOTER_HEADING, FOOTER_START, LEGACY_FOOTER_MARKER
from palinode_vault.core.prose import links_as_read, sentences, stems
from palinode_vault.memory.update.workspace import body_of

_FENCE = re.compile(r"^(```|~~~)")
_MDLINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_BLOCK_ID = re.compile(r"\s\^[\w-]+\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_COMMENT = re.compile(r"<!--.*?-->|%%.*?%%", re.DOTALL)
_NUMBER = re.compile(r"\d+")
_TOKEN = re.compile(r"\d+|[^\W\d_]+")
MIN_CHARS = 12  # shorter pieces ("None.", a date) state nothing to compare with


def plain(text: str) -> str:
    """Links reduced to the words a reader sees: `[[x|shown]]` -> shown, `[[x]]` -> x."""
    text = links_as_read(text)
    return _MDLINK.sub(r"\1", text)


def without_footer(body: str) -> str:
    """A note's body without the machine-owned See also footer (either form)."""
    start = body.find(FOOTER_START)
    if start != -1:
        end = body.find(FOOTER_END, start)
        body = body[:start] + (body[end + len(FOOTER_END) :] if end != -1 else "")
    legacy = body.find(LEGACY_FOOTER_MARKER)
    if legacy != -1:
        body = body[:legacy]
    return body


def statements(note_text: str) -> list[str]:
    """The statements of a note: its title, then every sentence and list item of the body,
    without frontmatter, headings, code, comments and the machine-owned See also footer."""
    body = _COMMENT.sub(" ", without_footer(body_of(note_text)))
    out: list[str] = []
    paragraph: list[str] = []
    in_code = False

    def flush() -> None:
        if paragraph:
            out.extend(sentences(plain(" ".join(paragraph))))
            paragraph.clear()

    for raw in body.splitlines():
        line = raw.rstrip()
        if _FENCE.match(line.lstrip()):
            flush()
            in_code = not in_code
            continue
        if in_code or raw.startswith(("    ", "\t")) and not _BULLET.match(raw):
            continue
        stripped = _BLOCK_ID.sub("", line).strip()
        if not stripped or stripped == FOOTER_HEADING.strip():
            flush()
        elif stripped.startswith("#"):
            flush()
            if stripped.startswith("# "):  # the title says what the note holds; sections do not
                out.append(plain(re.sub(r"^#\s+(?:\w+:\s+)?", "", stripped)))
        elif _BULLET.match(line):
            flush()
            paragraph.append(_BULLET.sub("", line))
        elif stripped.startswith(("![[", "|")):
            flush()
        else:
            paragraph.append(stripped)
    flush()
    return list(dict.fromkeys(s for s in out if len(s) >= MIN_CHARS))  # each once, in order


@dataclass
class Judgement:
    """How a candidate compares with one note, statement by statement."""

    coverage: float  # the least, over the candidate's sentences, of the closest statement's cosine
    novelty: float  # share of the candidate's content words that its closest statements lack
    least_covered: str  # the candidate's sentence the note comes closest to lacking
    near: list[str]  # the note's statements closest to the candidate, best first
    new_names: list[str]  # names and numbers of the candidate the note never mentions

    def same_fact(self, update: Any) -> bool:
        """Already remembered: no name or number the note lacks, and stated in other words
        (coverage at `update.statement_same`) or on the same subject (`statement_related`) with
        hardly a new word (`statement_novelty`)."""
        return not self.new_names and (
            self.coverage >= update.statement_same
            or (self.coverage >= update.statement_related and self.novelty < update.statement_novelty)
        )

    def same_subject(self, update: Any) -> bool:
        return self.coverage >= update.statement_related


def new_names(candidate: str, note_text: str) -> list[str]:
    """Names and numbers of the candidate that the note never mentions: a capitalised word
    inside a sentence (a place, a person, a product, a month) or any number. An embedding
    hardly moves for "in Spain too" added to a restated sentence, and one word is a small share
    of the words, but it is a new fact."""
    known = {w.lower() for w in _TOKEN.findall(plain(body_of(note_text)))}
    out = []
    for sentence in sentences(plain(candidate)):
        tokens = _TOKEN.findall(sentence)
        for i, token in enumerate(tokens):
            if (token.isdigit() or (i > 0 and token[0].isupper() and token != "I")) and token.lower() not in known:
                out.append(token)
    return list(dict.fromkeys(out))


def fact_novelty(candidate: str, existing: str) -> float:
    """Share of the candidate's content words and numbers that `existing` lacks. Numbers count
    here (a date, a count, a price is often the one new fact in a restated sentence), where the
    lexical `novelty` leaves one-digit tokens out."""

    cand = stems(candidate) | set(_NUMBER.findall(candidate))
    if not cand:
        return 0.0
    return len(cand - stems(existing) - set(_NUMBER.findall(existing))) / len(cand)


class StatementMatcher:
    """Compares candidate memories with the statements of notes, using one embedder.

    `embed_many(texts) -> vectors` is the index's embedder (L2-normalised vectors, so a dot
    product is the cosine). Statement vectors are cached by text for the life of the matcher:
    one pass, or as long as the index it embeds with (`matcher_for`), up to `max_cached` texts
    (the oldest go first).
    """

    def __init__(self, embed_many: Callable[[list[str]], Any], max_cached: int = 20_000) -> None:
        self._embed_many = embed_many
        self._cache: dict[str, Any] = {}
        self.max_cached = max_cached

    def vectors(self, texts: list[str]) -> list[Any]:
        found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            for text, vector in zip(missing, self._embed_many(missing)):
                found[text] = self._cache[text] = vector
            for old in list(self._cache)[: max(0, len(self._cache) - self.max_cached)]:
                del self._cache[old]
        return [found[t] for t in texts]

    def coverage(self, candidate: str, note_text: str) -> tuple[float, str]:
        """(coverage, least covered sentence): for each sentence of the candidate the cosine of
        the closest statement of the note, and the least of those. High only when every
        sentence of the candidate is already stated; a restatement with one new fact added
        scores as the new fact does."""
        cand = [s for s in sentences(plain(candidate)) if len(s) >= MIN_CHARS] or [candidate.strip()]
        stmts = statements(note_text)
        if not stmts or not any(c.strip() for c in cand):
            return 0.0, cand[0] if cand else ""
        cvec = self.vectors(cand)
        svec = self.vectors(stmts)
        worst, worst_sentence = 1.0, cand[0]
        for sentence, c in zip(cand, cvec):
            best = max(float(c @ s) for s in svec)
            if best < worst:
                worst, worst_sentence = best, sentence
        return worst, worst_sentence

    def judge(self, candidate: str, note_text: str, window: int) -> Judgement:
        """Coverage of the candidate by the note's statements, and the share of the candidate's
        content words that the `window` statements closest to it in meaning lack (novelty)."""
        coverage, least = self.coverage(candidate, note_text)
        stmts = statements(note_text)
        names = new_names(candidate, note_text)
        if not stmts:
            return Judgement(coverage, 1.0, least, [], names)
        c = self.vectors([plain(candidate).strip()])[0]
        ranked = sorted(zip((float(c @ s) for s in self.vectors(stmts)), stmts), key=lambda x: -x[0])
        near = [s for _, s in ranked[:window]]
        return Judgement(coverage, fact_novelty(candidate, " ".join(near)), least, near, names)

    def closest(self, candidate: str, note_text: str) -> tuple[float, str]:
        """(cosine, statement): the note's statement closest to the whole candidate text."""
        stmts = statements(note_text)
        if not stmts:
            return 0.0, ""
        c = self.vectors([plain(candidate).strip()])[0]
        sims = [float(c @ s) for s in self.vectors(stmts)]
        i = max(range(len(sims)), key=sims.__getitem__)
        return sims[i], stmts[i]


def matcher_for(index: Any) -> StatementMatcher | None:
    """A matcher on the index's embedder, or None when the index has no usable vectors.

    One matcher is kept per index and model, so a long-lived process (the MCP server, the
    sidecar) does not embed the same statements of the same notes again on every save."""
    if index is None or not getattr(index, "vectors_usable", False):
        return None
    identity = index.model.identity()
    kept = getattr(index, "statement_matcher", None)
    if kept is not None and kept[0] == identity:
        return kept[1]

    def embed_many(texts: list[str]) -> Any:
        return index.model.get().embed_many(texts)

    matcher = StatementMatcher(embed_many)
    try:
        index.statement_matcher = (identity, matcher)
    except AttributeError:  # an index object that takes no attributes: a matcher per pass
        pass
    return matcher
