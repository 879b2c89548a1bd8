"""The labelled queries of bench/bench_search.py --phase quality: well formed, every answer a
real note, and the held-out set apart from the dev set."""

from __future__ import annotations

import json

import pytest
from conftest import HELP_CORPUS, REPO, SAMPLE_VAULT
from script_helpers import load_script

QUERIES = REPO / "bench" / "queries"
ROOTS = {"sample-vault": SAMPLE_VAULT, "obsidian-help-en": HELP_CORPUS}
SETS = ("dev", "heldout", "heldout2", "heldout3", "heldout4")


def _bench():
    return load_script("bench/bench_search.py")


def _items(query_set: str, corpus: str) -> list[dict]:
    return json.loads((QUERIES / query_set / f"{corpus}.json").read_text(encoding="utf-8"))["queries"]


@pytest.mark.parametrize("corpus", sorted(ROOTS))
def test_sets_are_well_formed_and_apart(corpus):
    sets = [_items(s, corpus) for s in SETS]
    assert all(len(items) >= 20 for items in sets)
    everything = [item for items in sets for item in items]
    for item in everything:
        assert set(item) <= {"query", "relevant", "include_daily"}
        assert item["query"].strip() and item["relevant"]
        assert all(p.endswith(".md") and not p.startswith("/") for p in item["relevant"])
    texts = [i["query"].strip().lower() for i in everything]
    assert len(texts) == len(set(texts))  # no query twice, and none in two sets


def test_the_held_out_sets_are_big_enough():
    for held_out in SETS[1:]:
        assert sum(len(_items(held_out, c)) for c in ROOTS) >= 40


@pytest.mark.parametrize("corpus", sorted(ROOTS))
def test_every_answer_is_a_note_of_its_corpus(corpus):
    root = ROOTS[corpus]
    if not root.is_dir():
        pytest.skip(f"{root} is absent (the shared corpora are not checked out next to the repository)")
    for query_set in SETS:
        missing = [p for i in _items(query_set, corpus) for p in i["relevant"] if not (root / p).is_file()]
        assert missing == [], f"{query_set}/{corpus}.json names notes that do not exist: {missing}"


def test_the_bench_selects_sets():
    bench = _bench()
    assert bench.SETS == SETS
    loaded = [bench.load_queries("sample-vault", s) for s in SETS]
    assert all({q["set"] for q in items} == {name} for name, items in zip(SETS, loaded))
    dev = loaded[0]
    assert bench.load_queries("sample-vault", "all") == [q for items in loaded for q in items]
    assert [q["query"] for q in dev] == [i["query"] for i in _items("dev", "sample-vault")]
