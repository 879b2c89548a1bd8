"""The index on real SQLite + sqlite-vec + llama.cpp with the default MiniLM.

One model per test session (loading is cheap, embedding is not): the sample vault is indexed
once into a template database and copied for each test that changes it.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from palinode_vault.index import (
    MODES,
    Index,
    ModelSlot,
    dedup,
    open_index,
    refresh,
    related,
    repair_candidates,
    search,
    text_reader,
    topic_coverage,
)
from palinode_vault.index.hybrid import Filters, keyword_hits, vector_hits
from palinode_vault.index.meaning import linked_paths
from palinode_vault.index.store import index_path
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample-vault"


class CountingEmbedder:
    """The real embedder, counting the texts it is given."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions
        self.texts: list[str] = []

    def embed(self, text):
        self.texts.append(text)
        return self.inner.embed(text)

    def embed_many(self, texts, batch_size=4):
        self.texts.extend(texts)
        return self.inner.embed_many(texts, batch_size=batch_size)


@pytest.fixture
def vault(tmp_path, indexed_sample) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(indexed_sample, root)
    return root


def load(root: Path) -> Vault:
    v = Vault(Settings(vault=root))
    v.load()
    return v


def test_index_update_and_remove(vault, embedder):
    counting = CountingEmbedder(embedder)
    index = open_index(vault, embedder=counting)
    assert index.counts()["notes"] == 44 and index.counts()["pending"] == 0
    (vault / "insights" / "new-idea.md").write_text(
        "---\nid: insight-new-idea\ncategory: insight\ntype: Insight\n---\n# Kites\n\n"
        "Kite surfing lessons on the Tagus estuary make the team happier.\n",
        encoding="utf-8",
    )
    (vault / "insights" / "demo-with-real-data.md").unlink()
    report = refresh(index, load(vault))
    assert (report.indexed, report.removed) == (1, 1)
    assert len(counting.texts) == 1 and "Kite surfing" in counting.texts[0]
    found = search(index, "kitesurfing on the river", limit=3)
    assert found["results"][0]["path"] == "insights/new-idea.md"
    paths = {r["path"] for r in search(index, "demo with real data", limit=50, mode="keyword")["results"]}
    assert "insights/demo-with-real-data.md" not in paths
    assert index.conn.fetchvalue("select count(*) from vectors") == index.conn.fetchvalue(
        "select count(distinct hash) from chunks"
    )  # the deleted note's vector was collected
    index.close()


def test_unchanged_text_is_never_embedded_again(vault, embedder):
    counting = CountingEmbedder(embedder)
    index = open_index(vault, embedder=counting)
    assert refresh(index, load(vault)).unchanged == 44
    assert counting.texts == []
    # an edit in one section re-embeds only that section's chunk
    note = vault / "projects" / "harbor-app.md"
    text = note.read_text(encoding="utf-8")
    assert "## Blockers" in text
    note.write_text(text.replace("## Blockers\n", "## Blockers\n- The lift in the Alfama clinic is broken.\n"), encoding="utf-8")
    report = refresh(index, load(vault))
    assert report.indexed == 1
    assert len(counting.texts) == 1 and "lift in the Alfama clinic" in counting.texts[0]
    # a renamed note with the same text: nothing embedded
    counting.texts.clear()
    note.rename(vault / "projects" / "harbor.md")
    report = refresh(index, load(vault))
    assert (report.indexed, report.removed, len(counting.texts)) == (1, 1, 0)
    # a full reindex from scratch reuses every vector by hash
    index.forget_notes()
    report = refresh(index, load(vault))
    assert report.indexed == 44 and counting.texts == []
    index.close()


# Schema 1 as it was released: keyword rows per chunk, `notes` keyed by path.
_SCHEMA_1_DOWNGRADE = """
create virtual table chunks_fts using fts5(title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2');
insert into chunks_fts(rowid, title, heading, body)
    select c.id, trim(n.title || ' ' || replace(n.aliases, char(10), ' ')), c.heading, c.text
    from chunks c join notes n on n.path = c.path;
drop table notes_fts;
alter table notes rename to notes_2;
create table notes(
    path text primary key, text_hash text not null, title text not null, category text,
    status text, folder text not null, date text, daily integer not null default 0,
    aliases text not null default '');
insert into notes select path, text_hash, title, category, status, folder, date, daily, aliases from notes_2;
drop table notes_2;
alter table chunks drop column text;
update meta set value = '1' where key = 'schema';
"""


def test_schema_1_is_migrated_in_place_without_embedding(vault, embedder):
    index = open_index(vault, embedder=embedder)
    queries = ["who answers clinic support tickets", "postgres latency", "offline conflicts"]
    before = {(q, m): search(index, q, mode=m, include_daily=True)["results"] for q in queries for m in MODES}
    rows = lambda: index.conn.fetchall(  # noqa: E731
        "select n.path, f.title, f.heading, f.body from notes_fts f join notes n on n.id = f.rowid order by n.path"
    )
    chunk_texts = lambda: index.conn.fetchall("select id, text from chunks order by id")  # noqa: E731
    keyword_rows, texts, vectors = rows(), chunk_texts(), index.counts()["vectors"]
    assert keyword_rows and all(body for *_, body in keyword_rows)
    index.conn.executescript(_SCHEMA_1_DOWNGRADE)
    assert index.conn.fetchone("select 1 from sqlite_master where name = 'notes_fts'") is None
    index.close()

    counting = CountingEmbedder(embedder)
    index = open_index(vault, embedder=counting)
    assert index.meta("schema") == "2"
    assert index.conn.fetchone("select 1 from sqlite_master where name = 'chunks_fts'") is None
    assert rows() == keyword_rows and chunk_texts() == texts and index.counts()["vectors"] == vectors
    report = refresh(index, load(vault))
    assert (report.indexed, report.embedded, counting.texts) == (0, 0, [])
    after = {(q, m): search(index, q, mode=m, include_daily=True)["results"] for q in queries for m in MODES}
    assert after == before
    index.close()


def test_two_processes_opening_schema_1_at_once_migrate_it_once(vault, embedder):
    # `holder` stays open (as the sidecar's reader would), so the openers below race on the
    # migration only, not on SQLite recreating the WAL index of a database nobody has open
    holder = open_index(vault, embedder=embedder)
    holder.conn.executescript(_SCHEMA_1_DOWNGRADE)
    start, opened, errors = threading.Barrier(3), [], []

    def open_it() -> None:
        start.wait()
        try:
            opened.append(open_index(vault, embedder=embedder))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(opened) == 3
    for index in opened:
        assert index.meta("schema") == "2"
        assert index.counts()["notes"] == 44
        assert index.conn.fetchvalue("select count(*) from notes_fts") == 44
        index.close()
    assert holder.conn.fetchvalue("select count(*) from notes_fts") == 44  # sees the new schema
    holder.close()


def test_model_change_reembeds_and_never_mixes(vault, embedder, tmp_path):
    other = tmp_path / "minilm-copy.gguf"  # the same weights under another name: another model id
    shutil.copyfile(embedder.path, other)
    index = open_index(vault, model_path=other)
    before = index.counts()["vectors"]
    assert not index.vectors_usable  # vectors of the old model are not used for queries
    report = refresh(index, load(vault))
    assert report.reset_vectors and report.embedded == before and report.pending == 0
    assert index.meta("model").startswith("minilm-copy.gguf:")
    assert index.describe()["model"] == index.meta("model")
    index.close()


def test_keyword_only_without_a_model(vault):
    index = open_index(vault, model_path=vault / "no-such-model.gguf")
    assert not index.vectors_usable
    assert "no-such-model.gguf" in index.reason
    info = index.describe()
    assert info["mode"] == "keyword" and "does not exist" in info["reason"]
    report = refresh(index, load(vault))
    assert report.mode == "keyword" and report.embedded == 0
    for mode in (None, "hybrid", "vector"):
        out = search(index, "sms provider", mode=mode)
        assert out["mode"] == "keyword" and out["results"]
        assert "keyword-only" in out["note"] and "no-such-model.gguf" in out["note"]
    index.close()


def test_archived_excluded_unless_asked(vault, embedder):
    index = open_index(vault, embedder=embedder)
    query = "weekly release train every Wednesday"
    default = [r["path"] for r in search(index, query, limit=20)["results"]]
    assert "decisions/weekly-release-train.md" not in default  # status: archived
    assert "projects/harbor-app-history.md" not in default
    archived = [r["path"] for r in search(index, query, limit=20, include_archived=True)["results"]]
    assert "decisions/weekly-release-train.md" in archived
    only = search(index, query, status="archived")["results"]
    assert only and all(
        r["path"]
        in (
            "decisions/weekly-release-train.md",
            "projects/harbor-app-history.md",
            "decisions/stripe-for-billing.md",
            "archive/2026-q3-retro.md",
        )
        or "archive" in r["path"]
        for r in only
    )
    index.close()


def test_daily_penalty_and_include_daily(vault, embedder):
    index = open_index(vault, embedder=embedder)
    query = "intake form submitted twice offline tablet"
    plain = search(index, query, limit=44)["results"]
    daily = search(index, query, limit=44, include_daily=True)["results"]
    score = {r["path"]: r["score"] for r in plain}
    full = {r["path"]: r["score"] for r in daily}
    assert "daily/2026-11-24.md" in score
    assert score["daily/2026-11-24.md"] == pytest.approx(full["daily/2026-11-24.md"] * 0.5, abs=1e-6)
    for path in score:
        if not path.startswith(("daily/", "archive/daily/")):
            assert score[path] == full[path]
    rank = lambda rows, p: [r["path"] for r in rows].index(p)  # noqa: E731
    assert rank(daily, "daily/2026-11-24.md") < rank(plain, "daily/2026-11-24.md")
    index.close()


def test_hybrid_fuses_keyword_and_vector(vault, embedder):
    """Weighted fusion (PROGRAM.md's default): min-max scaled BM25 and cosine, 0.7 on meaning."""
    index = open_index(vault, embedder=embedder)
    query = "who answers clinic support tickets"
    kw = search(index, query, mode="keyword", limit=10, include_daily=True)
    vec = search(index, query, mode="vector", limit=10, include_daily=True)
    hyb = search(index, query, mode="hybrid", limit=10, include_daily=True)
    assert (kw["mode"], vec["mode"], hyb["mode"]) == ("keyword", "vector", "hybrid")
    top10 = [r["path"] for r in hyb["results"]]
    assert kw["results"][0]["path"] in top10 and vec["results"][0]["path"] in top10
    # the expected scores, from the two raw rankings computed here
    filters = Filters(include_daily=True)
    keyword = {h.path: h.bm25 for h in keyword_hits(index, query, filters, ["archived"], 50)}
    meaning = {h.path: h.similarity for h in vector_hits(index, embedder.embed(query), filters, ["archived"], 50)}

    def scaled(values: dict, path: str) -> float:
        if path not in values:
            return 0.0
        top, low = max(values.values()), min(values.values())
        return (values[path] - low) / (top - low)

    expected = {p: 0.7 * scaled(meaning, p) + 0.3 * scaled(keyword, p) for p in set(keyword) | set(meaning)}
    assert [r["path"] for r in hyb["results"]] == sorted(expected, key=lambda p: (-expected[p], p))[:10]
    for r in hyb["results"]:
        assert r["score"] == pytest.approx(expected[r["path"]], abs=1e-6)
        assert set(r) == {"path", "score", "title", "snippet"} and r["snippet"]
    index.close()


def test_hybrid_with_reciprocal_rank_fusion(vault, embedder):
    """`fusion: rrf` in the vault's PROGRAM.md: the sum of 1 / (k + rank) over both top-10 lists."""
    text = (REPO / "PROGRAM.md").read_text(encoding="utf-8")
    assert "  fusion: weighted " in text
    (vault / "PROGRAM.md").write_text(text.replace("  fusion: weighted ", "  fusion: rrf ", 1), encoding="utf-8")
    index = open_index(vault, embedder=embedder)
    query = "who answers clinic support tickets"
    k = 60
    kr = {r["path"]: i + 1 for i, r in enumerate(search(index, query, mode="keyword", limit=10, include_daily=True)["results"])}
    vr = {r["path"]: i + 1 for i, r in enumerate(search(index, query, mode="vector", limit=10, include_daily=True)["results"])}
    hyb = search(index, query, mode="hybrid", limit=10, include_daily=True)
    for r in hyb["results"]:
        assert r["score"] == pytest.approx(sum(1 / (k + ranks[r["path"]]) for ranks in (kr, vr) if r["path"] in ranks), abs=1e-6)
    index.close()


def test_filters(vault, embedder):
    index = open_index(vault, embedder=embedder)
    people = search(index, "sync engine offline", category="person")["results"]
    assert people and all(r["path"].startswith("people/") for r in people)
    folder = search(index, "sync", folder="research")["results"]
    assert folder and all(r["path"].startswith("research/") for r in folder)
    dated = search(index, "booking", since="2026-11-25", until="2026-11-26", include_daily=True, mode="keyword")["results"]
    assert dated and all(
        r["path"] in {"daily/2026-11-25.md", "daily/2026-11-26.md"} or not r["path"].startswith("daily/") for r in dated
    )
    index.close()


def test_dedup_strong_flag(vault, embedder):
    index = open_index(vault, embedder=embedder)
    text = (vault / "insights" / "estimate-in-ranges.md").read_text(encoding="utf-8")
    found = dedup(index, text)
    assert found[0].path == "insights/estimate-in-ranges.md" and found[0].strong
    assert found[0].similarity >= 0.9
    assert all(not s.strong for s in found[1:])
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
    fresh = dedup(index, "We bought a coffee machine for the Lisbon office.")
    assert fresh and not any(s.strong for s in fresh)
    excluded = dedup(index, text, exclude_path="insights/estimate-in-ranges.md")
    assert "insights/estimate-in-ranges.md" not in [s.path for s in excluded]
    people = dedup(index, text, category="person")
    assert people and all(s.path.startswith("people/") for s in people)
    index.close()


def test_repair_candidate_for_the_typo(vault, embedder):
    index = open_index(vault, embedder=embedder)
    v = load(vault)
    found, note = repair_candidates(index, v.state, "mira-okonkow", read=text_reader(v))
    assert note is None
    assert found[0].path == "people/mira-okonkwo.md"
    assert "92% similar" in found[0].why and "meaning" in found[0].why
    with_path, _ = repair_candidates(index, v.state, "mira-okonkow", path="people/tariq-benali.md", read=text_reader(v))
    assert with_path[0].path == "people/mira-okonkwo.md"
    names_only, why = repair_candidates(None, v.state, "mira-okonkow")
    assert names_only[0].path == "people/mira-okonkwo.md" and "by name only" in why
    index.close()


def test_related_excludes_linked_notes(vault, embedder):
    index = open_index(vault, embedder=embedder)
    v = load(vault)
    path = "people/tariq-benali.md"
    linked = linked_paths(v.state, path)
    assert {"people/mira-okonkwo.md", "projects/offline-mode.md"} <= linked
    found = related(index, v.state, path)
    assert found
    assert not {s.path for s in found} & linked
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
    index.close()


def test_topic_coverage(vault, embedder):
    index = open_index(vault, embedder=embedder)
    covered = topic_coverage(index, "Dev Raman tests every release of Harbor and answers clinic support tickets")
    assert covered["results"][0]["path"] == "people/dev-raman.md"
    assert covered["threshold"] == 0.75
    assert covered["covered"] is (covered["results"][0]["similarity"] >= 0.75)
    assert not topic_coverage(index, "quantum chromodynamics lattice simulations")["covered"]
    index.close()


def test_interrupted_embedding_resumes(tmp_path, embedder):
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    index = open_index(root, embedder=embedder)
    calls = []

    def stop_after_first_batch(phase, done, total):
        if phase == "embed" and done > 0:
            calls.append(done)
            index.stop.set()

    first = refresh(index, load(root), stop_after_first_batch)
    assert first.pending > 0 and first.embedded < first.pending + first.embedded
    index.close()
    again = Index(root, model=ModelSlot(embedder=embedder))
    second = refresh(again, load(root))
    assert second.pending == 0 and second.unchanged == 44
    assert first.embedded + second.embedded == again.counts()["vectors"]
    assert index_path(root).is_file()
    again.close()


def test_in_memory_scan_matches_sqlite_vec(vault, embedder, monkeypatch):
    import sys

    hybrid = sys.modules["palinode_vault.index.hybrid"]
    index = open_index(vault, embedder=embedder)
    vector = embedder.embed("duplicate bookings after a reconnect")
    exact = hybrid.nearest_chunks(index, vector, 20)
    monkeypatch.setattr(hybrid, "MATRIX_MIN", 0)
    in_memory = hybrid.nearest_chunks(index, vector, 20)
    assert [(p, c) for p, c, _ in in_memory] == [(p, c) for p, c, _ in exact]
    assert all(abs(a[2] - b[2]) < 1e-4 for a, b in zip(in_memory, exact))
    # a new vector shows up in the in-memory copy after the commit
    (vault / "insights" / "kites.md").write_text("# Kites\n\nKite surfing on the Tagus.\n", encoding="utf-8")
    refresh(index, load(vault))
    assert hybrid.nearest_chunks(index, embedder.embed("kite surfing"), 1)[0][0] == "insights/kites.md"
    index.close()


def test_blas_runs_on_one_thread_unless_the_person_chose(tmp_path):
    """OpenBLAS's spinning threads took llama.cpp's core (hybrid search 31 ms -> 14 ms with one):
    importing the package sets one BLAS thread before numpy loads, and keeps a person's choice."""
    import os
    import subprocess
    import sys

    probe = "import palinode_vault, numpy, os; print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['OMP_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    default = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert default.stdout.split() == ["1", "1"]
    chosen = subprocess.run(
        [sys.executable, "-c", probe], env={**env, "OPENBLAS_NUM_THREADS": "2"}, capture_output=True, text=True, check=True
    )
    assert chosen.stdout.split() == ["2", "1"]


def test_dedup_knows_a_note_passed_back_as_a_draft(vault, embedder):
    """The note's own text, with or without its frontmatter and machine footer, is the note."""
    import re

    index = open_index(vault, embedder=embedder)
    for path in ("insights/estimate-in-ranges.md", "people/dev-raman.md", "decisions/postgres-over-firebase.md"):
        text = (vault / path).read_text(encoding="utf-8")
        body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
        body = re.sub(r"<!-- palinode:see-also -->.*?<!-- /palinode:see-also -->\n?", "", body, flags=re.DOTALL)
        assert body != text
        for draft in (text, body, body.replace("\n\n", "\n\n\n")):
            found = dedup(index, draft)
            assert found[0].path == path and found[0].similarity >= 0.99 and found[0].strong, (path, found[:2])
    # one paragraph more is no longer the same text: similarity from the vectors, still strong
    text = (vault / "insights" / "estimate-in-ranges.md").read_text(encoding="utf-8")
    grown = dedup(index, text + "\nWe also keep a log of how far off each estimate was.\n")
    assert grown[0].path == "insights/estimate-in-ranges.md" and 0.9 <= grown[0].similarity < 1.0
    index.close()


def test_coverage_counts_notes_whose_chunks_all_have_vectors(vault, embedder):
    index = open_index(vault, embedder=embedder)
    assert index.coverage() == {"notes": 44, "with_vectors": 44, "fraction": 1.0}
    (vault / "insights" / "kites.md").write_text("# Kites\n\nKite surfing on the Tagus estuary.\n", encoding="utf-8")
    refresh(index, load(vault), embed=False)
    assert index.coverage() == {"notes": 45, "with_vectors": 44, "fraction": round(44 / 45, 4)}
    found = search(index, "kite surfing estuary", limit=3)
    assert found["results"][0]["path"] == "insights/kites.md" and "44 of 45 notes" in found["note"]
    refresh(index, load(vault))
    assert index.coverage()["with_vectors"] == 45
    index.close()
