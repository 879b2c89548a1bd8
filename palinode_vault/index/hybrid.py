"""Hybrid search: BM25 (FTS5) and vector (sqlite-vec) rankings fused into one.

Both rankings are over notes: BM25 over one keyword row per whole note, vectors by a note's
best chunk. PROGRAM.md's `search.fusion` says how they are fused:

- `weighted` (default): each list's scores scaled to 0..1 within the list (min-max: its best
  note 1, its 50th 0), then `vector_weight * meaning + (1 - vector_weight) * keywords`; a note
  missing from a list gets 0 from it. Scores keep what ranks throw away: how far ahead the best
  hits are. On our 202 labelled queries it beat reciprocal rank fusion and each list alone in
  every query set (docs/BENCHMARKS.md, search round 3); Bruch et al. (2023) report the same.
- `rrf`: reciprocal rank fusion, the sum of 1 / (k + rank) over the top 10 of each list,
  k = `search.rrf_k`.

Daily logs are multiplied by `search.daily_penalty` unless `include_daily`; notes whose status
is in `search.exclude_status` are left out unless `include_archived`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from palinode_vault.core.prose import QUERY_STOP
from palinode_vault.index.store import Index
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.program import load_program
from palinode_vault.store import serialize_vector

MODES = ("hybrid", "keyword", "vector")
DEPTH = 50  # notes a ranking returns (search, repair, dedup, related); weighted fusion scales over them
# Notes each ranking contributes to reciprocal rank fusion (or `limit`, if more are asked for).
# Deeper windows let notes that are mediocre in both lists outrank a note only one list finds
# near the top: with rows per note, 5 / 10 / 20 / 50 gave dev MRR 0.786 / 0.777 / 0.766 / 0.764
# and recall 1.0 / 1.0 / 0.95 / 0.95 (docs/BENCHMARKS.md).
FUSION_DEPTH = 10
SNIPPET_CHARS = 200

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Filters:
    """Which notes a search or suggestion may return."""

    category: str | None = None
    status: str | None = None
    folder: str | None = None  # a vault folder: the note's path starts with it
    since: str | None = None  # YYYY-MM-DD, inclusive, on the note's date
    until: str | None = None
    include_daily: bool = False  # daily logs at full score (else multiplied by daily_penalty)
    include_archived: bool = False  # notes whose status is excluded by PROGRAM.md
    exclude_paths: set[str] = field(default_factory=set)

    def sql(self, exclude_status: list[str]) -> tuple[str, list[Any]]:
        """A where-clause over `notes n`."""
        where, args = ["1"], []
        if not self.include_archived and exclude_status and self.status is None:
            where.append(f"coalesce(n.status, '') not in ({','.join('?' * len(exclude_status))})")
            args += [s.lower() for s in exclude_status]
        if self.status is not None:
            where.append("n.status = ?")
            args.append(self.status.lower())
        if self.category:
            where.append("n.category = ?")
            args.append(self.category.lower())
        if self.folder:
            folder = self.folder.strip("/")
            where.append("(n.path like ? escape '\\')")
            args.append(folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%")
        if self.since:
            where.append("n.date >= ?")
            args.append(self.since)
        if self.until:
            where.append("n.date <= ?")
            args.append(self.until)
        return " and ".join(where), args

    def allows(self, row: dict[str, Any], exclude_status: list[str]) -> bool:
        """The same test in Python, for rows found by vector search."""
        if row["path"] in self.exclude_paths:
            return False
        status = row.get("status") or ""
        if self.status is not None:
            if status != self.status.lower():
                return False
        elif not self.include_archived and status in {s.lower() for s in exclude_status}:
            return False
        if self.category and row.get("category") != self.category.lower():
            return False
        if self.folder and not row["path"].startswith(self.folder.strip("/") + "/"):
            return False
        date = row.get("date")
        if self.since and (date is None or date < self.since):
            return False
        if self.until and (date is None or date > self.until):
            return False
        return True


@dataclass
class Hit:
    path: str
    chunk: int | None  # vector hits: chunks.id of the note's nearest chunk (keyword hits: None)
    rank: int
    similarity: float | None = None  # vector hits: cosine similarity
    bm25: float | None = None  # keyword hits: BM25 score, higher is better


def fts_query(text: str) -> str | None:
    """An FTS5 query for free text: its words OR-ed (stop words dropped), each quoted."""
    words = [w for w in _WORD.findall(text.lower()) if w not in QUERY_STOP]
    if not words:
        words = _WORD.findall(text.lower())
    words = list(dict.fromkeys(words))[:32]
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def keyword_hits(index: Index, query: str, filters: Filters, exclude_status: list[str], depth: int = DEPTH) -> list[Hit]:
    """Notes by BM25 over their whole text (title and alias words weigh most, then headings,
    then text).

    One row per note rather than per chunk: document frequency is then counted in notes, so a
    word found in more than half of them ("note", "file" in a help vault) gets no weight
    (FTS5 floors such a word's IDF near zero), and a short chunk that repeats a common word can
    no longer outrank the note the query is about.
    """
    match = fts_query(query)
    if match is None:
        return []
    where, args = filters.sql(exclude_status)
    rows = index.conn.fetchall(
        "select n.path, bm25(notes_fts, 5.0, 2.0, 1.0) as score from notes_fts "
        f"join notes n on n.id = notes_fts.rowid where notes_fts match ? and {where} "
        "order by score limit ?",
        [match, *args, depth + len(filters.exclude_paths)],
    )
    kept = [(path, -score) for path, score in rows if path not in filters.exclude_paths][:depth]
    return [Hit(path, None, rank, bm25=score) for rank, (path, score) in enumerate(kept, 1)]


#: Above this many vectors, nearest neighbours come from an in-memory copy of the vectors
#: (one numpy product, about 1 ms for 30,000) instead of sqlite-vec's scan (15 ms for 30,000
#: on 2 cores). Both are exact; sqlite-vec stays the store and answers for smaller indexes.
MATRIX_MIN = 4096


def _nearest_vector_ids(index: Index, vector: Any, k: int, total: int) -> list[tuple[int, float]]:
    """(vectors.id, cosine distance) of the k nearest vectors, nearest first."""
    import numpy as np

    if total < MATRIX_MIN:
        return index.conn.fetchall(
            "select rowid, distance from vec_chunks where embedding match ? and k = ?", (serialize_vector(vector), min(k, total))
        )
    ids, matrix = index.vector_matrix()
    sims = matrix @ np.asarray(vector, dtype=np.float32)
    k = min(k, len(ids))
    top = np.argpartition(-sims, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(ids[i]), 1.0 - float(sims[i])) for i in top]


def nearest_chunks(index: Index, vector: Any, k: int) -> list[tuple[str, int, float]]:
    """(path, chunk id, cosine similarity) of the chunks nearest to `vector`, best first."""
    if not index.vectors_usable:
        return []
    total = int(index.conn.fetchvalue("select count(*) from vectors", default=0))
    if total == 0:
        return []
    rows = _nearest_vector_ids(index, vector, k, total)
    if not rows:
        return []
    distance = {rowid: dist for rowid, dist in rows}
    marks = ",".join("?" * len(distance))
    chunks = index.conn.fetchall(
        f"select v.id, c.path, c.id from vectors v join chunks c on c.hash = v.hash where v.id in ({marks})",
        list(distance),
    )
    out = [(path, cid, 1.0 - float(distance[vid])) for vid, path, cid in chunks]
    out.sort(key=lambda t: (-t[2], t[0]))
    return out


def vector_hits(index: Index, vector: Any, filters: Filters, exclude_status: list[str], depth: int = DEPTH) -> list[Hit]:
    """Notes by the cosine similarity of their best chunk to `vector`."""
    k = depth * 3
    while True:
        near = nearest_chunks(index, vector, k)
        rows = index.note_rows(p for p, _, _ in near)
        hits: list[Hit] = []
        seen: set[str] = set()
        for path, chunk, sim in near:
            row = rows.get(path)
            if path in seen or row is None or not filters.allows(row, exclude_status):
                continue
            seen.add(path)
            hits.append(Hit(path, chunk, len(hits) + 1, sim))
            if len(hits) >= depth:
                return hits
        if len(near) < k or k >= 4096:
            return hits
        k *= 4  # filters left too few: look further


def fuse(rankings: list[list[Hit]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over the rankings a note appears in."""
    scores: dict[str, float] = {}
    for hits in rankings:
        for hit in hits:
            scores[hit.path] = scores.get(hit.path, 0.0) + 1.0 / (k + hit.rank)
    return scores


def blend(
    keyword: list[Hit], vector: list[Hit], vector_weight: float, unembedded: set[str] | frozenset[str] = frozenset()
) -> dict[str, float]:
    """Weighted fusion: min-max scaled BM25 and cosine, `vector_weight` on meaning.

    A note in `unembedded` (its vectors not computed yet) is scored by its keywords at full
    weight: while the index fills, a note is not ranked down for lacking what it will have."""
    scores: dict[str, float] = {}
    for hits, weight, value in (
        (keyword, 1.0 - vector_weight, lambda h: h.bm25),
        (vector, vector_weight, lambda h: h.similarity),
    ):
        if not hits:
            continue
        values = [float(value(h) or 0.0) for h in hits]
        top, low = max(values), min(values)
        for hit, v in zip(hits, values):
            scaled = (v - low) / (top - low) if top > low else 1.0
            full = hits is keyword and hit.path in unembedded
            scores[hit.path] = scores.get(hit.path, 0.0) + (1.0 if full else weight) * scaled
    return scores


def keyword_snippets(index: Index, query: str, paths: list[str]) -> dict[str, str]:
    """The words around the query's matches in each of `paths`, in one full-text query (one
    per result cost a full-text search each: a third of a keyword search's time)."""
    match = fts_query(query)
    if not paths or match is None:
        return {}
    marks = ",".join("?" * len(paths))
    rows = index.conn.fetchall(
        "select n.path, snippet(notes_fts, 2, '', '', '…', 24) from notes_fts join notes n on n.id = notes_fts.rowid "
        f"where notes_fts match ? and n.path in ({marks})",
        [match, *paths],
    )
    return {path: snippet or "" for path, snippet in rows}


def unembedded_paths(index: Index, paths: Iterable[str]) -> set[str]:
    """Those of `paths` with a chunk still waiting for its vector."""
    paths = list(dict.fromkeys(paths))
    if not paths:
        return set()
    marks = ",".join("?" * len(paths))
    return {
        p
        for (p,) in index.conn.fetchall(
            f"select distinct path from chunks where path in ({marks}) and hash != '' and hash not in (select hash from vectors)",
            paths,
        )
    }


def search(
    index: Index,
    query: str,
    *,
    limit: int = 10,
    mode: str | None = None,
    category: str | None = None,
    status: str | None = None,
    folder: str | None = None,
    since: str | None = None,
    until: str | None = None,
    include_daily: bool = False,
    include_archived: bool = False,
) -> dict[str, Any]:
    """`{"mode", "results": [{"path", "score", "title", "snippet"}], "vectors", "note"?}`.

    `vectors` says how much of the vault vector search sees (`Index.coverage()`): search never
    waits for embedding; notes without vectors yet are found by their keywords.

    `mode` None means hybrid when vectors work, else keyword. Asking for vector or hybrid
    without a usable model gives keyword results and a `note` saying why.
    """
    if mode is not None and mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    settings = load_program(index.root).settings.search
    filters = Filters(category, status, folder, since, until, include_daily, include_archived)
    note = None
    with index.lock:
        wanted = mode or "hybrid"
        vector = None
        if wanted in ("hybrid", "vector"):
            if index.vectors_usable:
                try:
                    vector = index.model.get().embed(query)
                except ModelUnavailable as exc:
                    note = f"keyword-only: {exc}"
            else:
                note = f"keyword-only: {index.reason or 'the index has no vectors yet (palinode-vault reindex)'}"
            if vector is None:
                wanted = "keyword"
        coverage = index.coverage()
        if vector is not None and coverage["with_vectors"] < coverage["notes"]:
            note = (
                f"vectors cover {coverage['with_vectors']} of {coverage['notes']} notes "
                f"({coverage['fraction']:.0%}); the rest is found by keywords until the index fills"
            )
        rankings = []
        keyword: list[Hit] = []
        vec: list[Hit] = []
        weighted = wanted == "hybrid" and settings.fusion == "weighted"
        depth = max(FUSION_DEPTH, limit) if wanted == "hybrid" and not weighted else max(DEPTH, limit)
        if wanted in ("hybrid", "keyword"):
            keyword = keyword_hits(index, query, filters, settings.exclude_status, depth)
            rankings.append(keyword)
        if wanted in ("hybrid", "vector"):
            vec = vector_hits(index, vector, filters, settings.exclude_status, depth)
            rankings.append(vec)
        partial = vector is not None and coverage["with_vectors"] < coverage["notes"]
        unembedded = unembedded_paths(index, (h.path for h in keyword)) if partial else set()
        # Search's validator requires vector_weight when fusion is weighted
        scores = (
            blend(keyword, vec, cast(float, settings.vector_weight), unembedded)
            if weighted
            else fuse(rankings + ([[h for h in keyword if h.path in unembedded]] if unembedded else []), settings.rrf_k)
        )
        rows = index.note_rows(scores)
        for path in scores:
            if not include_daily and rows.get(path, {}).get("daily"):
                scores[path] *= settings.daily_penalty
        ranked = sorted(scores, key=lambda p: (-scores[p], p))[: max(0, limit)]
        found_kw = {h.path for h in keyword}
        best_vec = {h.path: h.chunk for h in vec}
        results = []
        snippets = keyword_snippets(index, query, [p for p in ranked if p in found_kw])
        for path in ranked:
            snippet = snippets.get(path, "")
            if not snippet:  # the nearest chunk's text (or the note's first)
                if path in best_vec:
                    body = index.conn.fetchvalue("select text from chunks where id = ?", (best_vec[path],))
                else:
                    body = index.conn.fetchvalue("select text from chunks where path = ? order by ord limit 1", (path,))
                snippet = _shorten(body or "")
            results.append(
                {
                    "path": path,
                    "score": round(scores[path], 6),
                    "title": rows.get(path, {}).get("title", path),
                    "snippet": snippet,
                }
            )
    out: dict[str, Any] = {"mode": wanted, "results": results, "vectors": coverage}
    if note:
        out["note"] = note
    return out


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
