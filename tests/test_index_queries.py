"""The labelled queries of bench/bench_search.py --phase quality: well formed, every answer a
real note, and the held-out set apart from the dev set."""

from __future__ import annotations

import importlib.util
import json

import pytest

from conftest import HELP_CORPUS, REPO, SAMPLE_VAULT

QUERIES = REPO / "bench" / "queries"
ROOTS = {"sample-vault": SAMPLE_VAULT, "obsidian-help-en": HELP_CORPUS}
SETS = ("dev", "heldout", "heldout2")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_search", REPO / "bench" / "bench_search.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _items(query_set: str, corpus: str) -> list[dict]:
    return json.loads((QUERIES / query_set / f"{corpus}.json").read_text(encoding="utf-8"))["queries"]


@pytest.mark.parametrize("corpus", sorted(ROOTS))
def test_sets_are_well_formed_and_apart(corpus):
    dev, held, held2 = (_items(s, corpus) for s in SETS)
    assert len(dev) >= 20 and len(held) >= 20 and len(held2) >= 20
    for item in dev + held + held2:
        assert set(item) <= {"query", "relevant", "include_daily"}
        assert item["query"].strip() and item["relevant"]
        assert all(p.endswith(".md") and not p.startswith("/") for p in item["relevant"])
    texts = [i["query"].strip().lower() for i in dev + held + held2]
    assert len(texts) == len(set(texts))  # no query twice, and none in two sets


def test_the_held_out_sets_are_big_enough():
    assert sum(len(_items("heldout", c)) for c in ROOTS) >= 40
    assert sum(len(_items("heldout2", c)) for c in ROOTS) >= 40


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
    dev, held, held2 = (bench.load_queries("sample-vault", s) for s in SETS)
    assert {q["set"] for q in dev} == {"dev"} and {q["set"] for q in held2} == {"heldout2"}
    assert bench.load_queries("sample-vault", "all") == dev + held + held2
    assert [q["query"] for q in dev] == [i["query"] for i in _items("dev", "sample-vault")]
