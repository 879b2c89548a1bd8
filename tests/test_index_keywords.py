"""Keyword search: one FTS5 row per whole note, on real SQLite (no model needed)."""

from __future__ import annotations

from pathlib import Path

from palinode_vault.index import Filters, open_index, refresh, search
from palinode_vault.index.hybrid import keyword_hits
from palinode_vault.settings import Settings
from palinode_vault.vault import Vault

FILLER = (
    "The path climbs through cork oaks and then follows the ridge for an hour or two, "
    "with a view over the valley where the river bends twice before the dam. "
)


def _long_note(title: str, first: str, last: str) -> str:
    """Four sections (several chunks): `first` opens the first one, `last` the last one."""
    sections = [
        f"## Morning\n\n{first} " + FILLER * 6,
        "## Trees\n\n" + FILLER * 7,
        "## Weather\n\n" + FILLER * 7,
        f"## Evening\n\n{last} " + FILLER * 6,
    ]
    return f"# {title}\n\n" + "\n\n".join(sections) + "\n"


def _vault(make_vault) -> Path:
    # three notes of the same length: one has both words (in different chunks), two have one
    files = {
        "field-guide.md": _long_note("Field guide", "A kestrel hovered at dawn.", "We cooked quinoa."),
        "hawks.md": _long_note("Hawks", "A kestrel nests in the tower.", "We walked home."),
        "grains.md": _long_note("Grains", "We walked to the shop.", "Quinoa is cheaper in bulk."),
    }
    # "ledger" is in 4 of 7 notes but in fewer than half of the chunks (the long notes have 12)
    for name in ("rent", "tax", "fuel", "phone"):
        files[f"costs/{name}.md"] = f"# {name.title()}\n\nWrite the {name} payment in the ledger.\n"
    return make_vault(files)


def _indexed(make_vault):
    root = _vault(make_vault)
    index = open_index(root)
    refresh(index, Vault(Settings(vault=root)), embed=False)
    return root, index


def test_a_note_is_ranked_on_all_its_text_not_its_best_chunk(make_vault):
    root, index = _indexed(make_vault)
    chunks = index.conn.fetchvalue("select count(*) from chunks where path = 'field-guide.md'")
    assert chunks >= 2  # the two words are in different chunks
    texts = [t for (t,) in index.conn.fetchall("select text from chunks where path = 'field-guide.md'")]
    assert any("kestrel" in t for t in texts) and any("quinoa" in t for t in texts)
    assert not any("kestrel" in t and "quinoa" in t for t in texts)
    assert index.conn.fetchvalue("select count(*) from notes_fts") == index.conn.fetchvalue("select count(*) from notes") == 7
    found = search(index, "kestrel quinoa", mode="keyword")["results"]
    assert [r["path"] for r in found] == ["field-guide.md", "grains.md", "hawks.md"] or [r["path"] for r in found] == [
        "field-guide.md",
        "hawks.md",
        "grains.md",
    ]
    hits = {h.path: h.bm25 for h in keyword_hits(index, "kestrel quinoa", Filters(), [])}
    # ranked by its best chunk, the field guide would score like the notes with one word
    assert hits["field-guide.md"] > 1.5 * max(hits["hawks.md"], hits["grains.md"])
    assert "kestrel" in found[0]["snippet"].lower() or "quinoa" in found[0]["snippet"].lower()
    index.close()


def test_a_word_in_most_notes_carries_no_weight(make_vault):
    root, index = _indexed(make_vault)
    hits = keyword_hits(index, "ledger", Filters(), [])
    assert index.conn.fetchvalue("select count(*) from chunks") > 8  # so per chunk it would not be
    assert {h.path for h in hits} == {f"costs/{n}.md" for n in ("rent", "tax", "fuel", "phone")}
    assert all(h.bm25 is not None and abs(h.bm25) < 1e-3 for h in hits)  # document frequency > 1/2 of notes
    rare = keyword_hits(index, "ledger kestrel", Filters(), [])
    assert rare[0].path == "hawks.md" and rare[0].bm25 > 0.1
    assert [h.rank for h in rare] == list(range(1, len(rare) + 1))
    assert [h.bm25 for h in rare] == sorted((h.bm25 for h in rare), reverse=True)
    index.close()


def test_keyword_rows_follow_edits_and_removals(make_vault):
    root, index = _indexed(make_vault)
    (root / "hawks.md").write_text("# Hawks\n\nA peregrine nests in the church tower.\n", encoding="utf-8")
    (root / "grains.md").unlink()
    report = refresh(index, Vault(Settings(vault=root)), embed=False)
    assert (report.indexed, report.removed) == (1, 1)
    assert index.conn.fetchvalue("select count(*) from notes_fts") == index.conn.fetchvalue("select count(*) from notes") == 6
    assert [r["path"] for r in search(index, "peregrine", mode="keyword")["results"]] == ["hawks.md"]
    assert [r["path"] for r in search(index, "kestrel", mode="keyword")["results"]] == ["field-guide.md"]
    assert [r["path"] for r in search(index, "bulk", mode="keyword")["results"]] == []
    assert search(index, "quinoa", mode="keyword")["results"][0]["path"] == "field-guide.md"
    index.close()


def test_exclude_paths_leave_the_ranking_full(make_vault):
    root, index = _indexed(make_vault)
    every = [h.path for h in keyword_hits(index, "ledger kestrel quinoa", Filters(), [], depth=5)]
    some = keyword_hits(index, "ledger kestrel quinoa", Filters(exclude_paths={every[0]}), [], depth=5)
    assert every[0] not in [h.path for h in some] and len(some) == 5
    index.close()


def test_an_unknown_schema_version_is_rebuilt_from_the_files(make_vault):
    root, index = _indexed(make_vault)
    index.conn.execute("update meta set value = '99' where key = 'schema'")
    index.close()
    index = open_index(root)
    assert index.meta("schema") == "2" and index.counts()["notes"] == 0
    report = refresh(index, Vault(Settings(vault=root)), embed=False)
    assert report.indexed == 7
    assert search(index, "kestrel", mode="keyword")["results"]
    index.close()


def test_palinode_summary_and_canonical_question_are_searched_and_shown(make_vault):
    """Issue 22: a note Palinode wrote says what it is about in `summary` and `canonical_question`."""
    root = make_vault(
        {
            "people/alice.md": "---\nid: person-alice\ncategory: person\n"
            'summary: "Alice Chen, product lead at Acme; prefers async updates."\n'
            'canonical_question: "Who leads checkout at Acme?"\n---\n'
            "# Alice\n\nMet at the offsite.\n",
            "people/bob.md": "---\nid: person-bob\ncategory: person\nsummary: [not, a, string]\n---\n# Bob\n\nLikes trains.\n",
        }
    )
    index = open_index(root)
    refresh(index, Vault(Settings(vault=root)), embed=False)
    found = search(index, "product lead", mode="keyword")["results"]
    assert [r["path"] for r in found] == ["people/alice.md"] and "product lead" in found[0]["snippet"]
    assert [r["path"] for r in search(index, "checkout", mode="keyword")["results"]] == ["people/alice.md"]
    assert search(index, "string", mode="keyword")["results"] == []  # only plain strings are read
