"""The labelled queries of bench/bench_search.py --phase quality: well formed, every answer a
real note, and the held-out set apart from the dev set."""

from __future__ import annotations

import importlib.util
import json

import pytest

from conftest import HELP_CORPUS, REPO, SAMPLE_VAULT

QUERIES = REPO / "bench" / "queries"
ROOTS = {"sample-vault": SAMPLE_VAULT, "obsidian-help-en": HELP_CORPUS}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_search", REPO / "bench" / "bench_search.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _items(query_set: str, corpus: str) -> list[dict]:
    return json.loads((QUERIES / query_set / f"{corpus}.json").read_text(encoding="utf-8"))["queries"]


@pytest.mark.parametrize("corpus", sorted(ROOTS))
def test_sets_are_well_formed_and_apart(corpus):
    dev, held = _items("dev", corpus), _items("heldout", corpus)
    assert len(dev) >= 20 and len(held) >= 20
    for item in dev + held:
        assert set(item) <= {"query", "relevant", "include_daily"}
        assert item["query"].strip() and item["relevant"]
        assert all(p.endswith(".md") and not p.startswith("/") for p in item["relevant"])
    texts = [i["query"].strip().lower() for i in dev + held]
    assert len(texts) == len(set(texts))  # no query twice, and none in both sets


def test_the_held_out_set_is_big_enough():
    assert sum(len(_items("heldout", c)) for c in ROOTS) >= 40


@pytest.mark.parametrize("corpus", sorted(ROOTS))
def test_every_answer_is_a_note_of_its_corpus(corpus):
    root = ROOTS[corpus]
    if not root.is_dir():
        pytest.skip(f"{root} is absent (the shared corpora are not checked out next to the repository)")
    for query_set in ("dev", "heldout"):
        missing = [p for i in _items(query_set, corpus) for p in i["relevant"] if not (root / p).is_file()]
        assert missing == [], f"{query_set}/{corpus}.json names notes that do not exist: {missing}"


def test_the_bench_selects_sets():
    bench = _bench()
    dev = bench.load_queries("sample-vault", "dev")
    held = bench.load_queries("sample-vault", "heldout")
    both = bench.load_queries("sample-vault", "all")
    assert {q["set"] for q in dev} == {"dev"} and {q["set"] for q in held} == {"heldout"}
    assert both == dev + held
    assert [q["query"] for q in dev] == [i["query"] for i in _items("dev", "sample-vault")]
