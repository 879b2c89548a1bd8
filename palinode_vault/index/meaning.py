"""What the vectors are for besides search: duplicates, related notes, topic coverage, repair.

Similarities are cosine similarities of MiniLM (or the configured model) vectors, per note the
best of its chunks. Thresholds come from PROGRAM.md (`update.strong_duplicate`,
`update.related`); suggestions are always ranked lists, never a cut-off alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from palinode_vault.core.repair import Candidate, name_candidates
from palinode_vault.core.vault_state import VaultState
from palinode_vault.index.chunks import line_at
from palinode_vault.index.hybrid import Filters, nearest_chunks, vector_hits
from palinode_vault.index.store import Index
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.program import load_program

#: Weight of name similarity against meaning in repair candidates. Names decide typos and
#: renames; meaning breaks ties and finds a note under a different name.
NAME_WEIGHT = 0.65


class NoVectors(Exception):
    """Meaning needs vectors; the message says why there are none and how to get them."""


def _require_vectors(index: Index) -> None:
    if not index.vectors_usable:
        raise NoVectors(index.reason or "the index has no vectors yet; run palinode-vault reindex")


def _embed(index: Index, text: str) -> Any:
    _require_vectors(index)
    try:
        return index.model.get().embed(text)
    except ModelUnavailable as exc:
        raise NoVectors(str(exc)) from exc


@dataclass(frozen=True)
class Suggestion:
    path: str
    similarity: float
    strong: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "similarity": self.similarity, "strong": self.strong}


def dedup(
    index: Index,
    text: str,
    *,
    category: str | None = None,
    limit: int = 5,
    exclude_path: str | None = None,
    include_archived: bool = False,
) -> list[Suggestion]:
    """Existing notes near a draft memory, best first, with a similarity in [-1, 1].

    The draft is chunked as a note is, and compared with each candidate note as a whole: the
    similarity is the mean, weighted by length, of each draft chunk's best cosine against the
    note's chunks (a one-paragraph draft is its paragraph's best match). A draft whose text is
    the note's text (frontmatter and the machine footer aside, spacing aside) is the note:
    similarity 1.0. `strong` marks similarity at or above PROGRAM.md's
    `update.strong_duplicate`: almost always an UPDATE (or a NOOP), not an ADD.
    Raises NoVectors without a model.
    """
    import numpy as np

    from palinode_vault.index.chunks import draft_chunks, same_words

    program = load_program(index.root).settings
    pieces = draft_chunks(text)
    meaningful = [c for c in pieces if c.hash] or pieces
    _require_vectors(index)
    try:
        vectors = np.asarray(index.model.get().embed_many([c.embed for c in meaningful]))
    except ModelUnavailable as exc:
        raise NoVectors(str(exc)) from exc
    weights = np.array([max(1, len(c.embed)) for c in meaningful], dtype=np.float32)
    filters = Filters(
        category=category, include_archived=include_archived, exclude_paths={exclude_path} if exclude_path else set()
    )
    body = "\n\n".join(c.text for c in pieces if c.text)
    scores: dict[str, float] = {}
    with index.lock:
        candidates: dict[str, None] = {}
        for vector in vectors:
            for hit in vector_hits(index, vector, filters, program.search.exclude_status, depth=max(2 * limit, 10)):
                candidates[hit.path] = None
        for path in candidates:
            theirs = note_vectors(index, path)
            if not theirs:
                continue
            best = (vectors @ np.stack(theirs).T).max(axis=1)
            scores[path] = float((best * weights).sum() / weights.sum())
            if body and same_words(body, _keyword_body(index, path)):
                scores[path] = 1.0
    strong = program.update.strong_duplicate
    ranked = sorted(scores, key=lambda p: (-scores[p], p))[:limit]
    return [Suggestion(p, round(scores[p], 4), scores[p] >= strong) for p in ranked]


def _keyword_body(index: Index, path: str) -> str:
    """The note's keyword text as indexed: its chunks' text, without frontmatter and footer."""
    rows = index.conn.fetchall("select text from chunks where path = ? order by ord", (path,))
    return "\n\n".join(t for (t,) in rows if t)


def note_vectors(index: Index, path: str) -> list[Any]:
    """The stored vectors of a note's chunks (no model needed)."""
    import numpy as np

    with index.lock:
        if not index.vectors_usable:
            return []
        rows = index.conn.fetchall(
            "select e.embedding from chunks c join vectors v on v.hash = c.hash "
            "join vec_chunks e on e.rowid = v.id where c.path = ? order by c.ord",
            (path,),
        )
    return [np.frombuffer(blob, dtype=np.float32) for (blob,) in rows]


def linked_paths(state: VaultState, path: str) -> set[str]:
    """Notes linked from `path` or linking to it (body links, footer, entities), and itself."""
    out = {path}
    out |= {t for t in state.resolved.get(path) or [] if t}
    out |= set(state.entity_resolved.get(path, []))
    out |= set(state.incoming.get(path, {}))
    return out


def related(index: Index, state: VaultState, path: str, *, limit: int = 10, include_archived: bool = False) -> list[Suggestion]:
    """Notes close in meaning to `path` that are not linked with it in either direction.

    For link proposals. Uses the stored vectors (no model call). Raises NoVectors when the
    note has none (not indexed yet, or no model).
    """
    vectors = note_vectors(index, path)
    if not vectors:
        _require_vectors(index)
        raise NoVectors(f"{path} has no vectors in the index yet; run palinode-vault reindex")
    exclude = load_program(index.root).settings.search.exclude_status
    skip = linked_paths(state, path)
    best: dict[str, float] = {}
    with index.lock:
        for vector in vectors:
            for other, _, sim in nearest_chunks(index, vector, 60):
                if other in skip:
                    continue
                best[other] = max(best.get(other, -1.0), sim)
        rows = index.note_rows(best)
    filters = Filters(include_archived=include_archived)
    ranked = [p for p in sorted(best, key=lambda p: (-best[p], p)) if p in rows and filters.allows(rows[p], exclude)]
    return [Suggestion(p, round(best[p], 4)) for p in ranked[:limit]]


def topic_coverage(index: Index, query: str, *, limit: int = 5) -> dict[str, Any]:
    """Does an existing note already cover this topic?

    `{"query", "covered", "threshold", "results": [{"path", "similarity", "title"}]}`;
    `covered` when the best note's similarity reaches PROGRAM.md's `update.related` (0.75).
    """
    program = load_program(index.root).settings
    vector = _embed(index, query)
    with index.lock:
        hits = vector_hits(index, vector, Filters(), program.search.exclude_status, depth=limit)
        rows = index.note_rows(h.path for h in hits)
    threshold = program.update.related
    results = [
        {"path": h.path, "similarity": round(h.similarity or 0.0, 4), "title": rows.get(h.path, {}).get("title", h.path)}
        for h in hits
    ]
    return {
        "query": query,
        "covered": bool(results) and results[0]["similarity"] >= threshold,
        "threshold": threshold,
        "results": results,
    }


# -- repair --------------------------------------------------------------------------------


def _words(target: str) -> str:
    name = target.split("|", 1)[0].replace("#", " ").rsplit("/", 1)[-1]
    name = name[:-3] if name.lower().endswith(".md") else name
    return re.sub(r"[-_]+", " ", name).strip()


def link_contexts(state: VaultState, read, target: str, path: str | None = None, most: int = 3) -> list[tuple[str, str]]:
    """(source path, the line around the link) for broken links written as `target`."""
    out = []
    sources = [path] if path else sorted(state.notes)
    for source in sources:
        note = state.notes.get(source)
        if note is None:
            continue
        targets = state.resolved.get(source) or []
        for link, resolved_to in zip(note.links, targets):
            written = link.target + (f"#{link.subpath}" if link.subpath else "")
            if resolved_to is None and target in (written, link.target):
                text = read(source)
                if text is not None:
                    out.append((source, line_at(text, link.start).strip()))
                break
        if len(out) >= most:
            break
    return out


def repair_candidates(
    index: Index | None, state: VaultState, target: str, *, path: str | None = None, read=None, limit: int = 5
) -> tuple[list[Candidate], str | None]:
    """Candidates for a broken link, by a blend of name similarity and meaning.

    Meaning is the similarity of each note to the link text read with the sentence it stands
    in (from `path`, or from the notes that hold the broken link). Returns (candidates, note):
    without vectors the ranking is by name alone and `note` says why.
    """
    names = {c.path: c for c in name_candidates(state, target, limit=limit * 2)}
    meaning: dict[str, float] = {}
    note = None
    sources: set[str] = set()
    if index is None:
        note = "by name only: no search index (palinode-vault reindex adds meaning)"
    else:
        contexts = link_contexts(state, read, target, path) if read is not None else []
        sources = {src for src, _ in contexts}
        query = ". ".join([_words(target)] + [line for _, line in contexts])
        try:
            vector = _embed(index, query)
        except NoVectors as exc:
            note = f"by name only: {exc}"
        else:
            with index.lock:
                for other, _, sim in nearest_chunks(index, vector, 40):
                    if other not in sources and other in state.notes:
                        meaning[other] = max(meaning.get(other, 0.0), sim)
    out = []
    for cand_path in set(names) | set(sorted(meaning, key=lambda p: -meaning[p])[:limit]):
        name = names.get(cand_path)
        name_score = name.score if name else 0.0
        sim = max(0.0, meaning.get(cand_path, 0.0))
        score = name_score if not meaning else NAME_WEIGHT * name_score + (1 - NAME_WEIGHT) * sim
        why = [name.why] if name else []
        if meaning:
            why.append(f"meaning {sim:.2f} close to the link and its sentence")
        out.append(Candidate(cand_path, round(score, 3), "; ".join(why)))
    out.sort(key=lambda c: (-c.score, c.path))
    return out[:limit], note


class NameTable:
    """File names, titles and aliases of every indexed note, built once for many look-ups
    (the same choices and scores as `core.repair.name_candidates`, without a loaded vault)."""

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        from palinode_vault.core.entities import slugify

        self._slugify = slugify
        self.choices: list[tuple[str, str, str]] = []  # (slug, path, what)
        for path, title, aliases in rows:
            stem = path.rsplit("/", 1)[-1][:-3]
            self.choices.append((slugify(stem), path, f"file name '{stem}'"))
            if title and title != stem:
                self.choices.append((slugify(title), path, f"title '{title}'"))
            for alias in (aliases or "").split("\n"):
                if alias.strip():
                    self.choices.append((slugify(alias), path, f"alias '{alias.strip()}'"))
        self.texts = [c[0] for c in self.choices]

    @classmethod
    def of(cls, index: Index) -> NameTable:
        with index.lock:
            return cls(index.conn.fetchall("select path, title, aliases from notes"))

    def candidates(self, target: str, limit: int = 5) -> list[Candidate]:
        from rapidfuzz import fuzz, process

        name = target.split("#", 1)[0].split("|", 1)[0].rsplit("/", 1)[-1]
        name = name[:-3] if name.lower().endswith(".md") else name
        wanted = self._slugify(name)
        if not wanted:
            return []
        best: dict[str, Candidate] = {}
        for _, score, i in process.extract(wanted, self.texts, scorer=fuzz.ratio, limit=limit * 4):
            _, path, what = self.choices[i]
            cand = Candidate(path, round(score / 100.0, 3), f"{what} is {score:.0f}% similar to '{name}'")
            if path not in best or best[path].score < cand.score:
                best[path] = cand
        ranked = sorted(best.values(), key=lambda c: (-c.score, c.path))
        return [c for c in ranked if c.score >= 0.5][:limit]


def lint_candidates(index: Index, findings: list[dict[str, Any]], limit: int = 3, most: int = 100) -> None:
    """Add `candidates` to the broken-link findings of a `lint --json` report, in place.

    Fast, and needs no loaded vault or model: names from the index's notes table, meaning from
    the vectors already stored for the note that holds the link. At most `most` findings get
    candidates (lint stays quick on vaults with hundreds of broken links).
    """
    names_table = NameTable.of(index)
    done = 0
    cache: dict[str, list[Any]] = {}
    for finding in findings:
        if finding.get("check") != "broken_link" or not finding.get("target") or done >= most:
            continue
        done += 1
        target = finding["target"]
        source = finding.get("path")
        names = {c.path: c for c in names_table.candidates(target, limit=limit * 2)}
        meaning: dict[str, float] = {}
        if source:
            if source not in cache:
                cache[source] = note_vectors(index, source)
            for name in names:
                if name not in cache:
                    cache[name] = note_vectors(index, name)
                if cache[source] and cache[name]:
                    meaning[name] = max(float(a @ b) for a in cache[source] for b in cache[name])
        ranked: list[dict[str, Any]] = []
        for cand in names.values():
            sim = meaning.get(cand.path)
            score = cand.score if sim is None else NAME_WEIGHT * cand.score + (1 - NAME_WEIGHT) * max(0.0, sim)
            why = cand.why + (f"; meaning {sim:.2f} close to {source}" if sim is not None else "")
            ranked.append({"path": cand.path, "score": round(score, 3), "why": why})
        ranked.sort(key=lambda c: (-c["score"], c["path"]))
        finding["candidates"] = ranked[:limit]
