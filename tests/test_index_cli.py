"""The index commands' JSON shapes, on a copy of sample-vault with the real model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from palinode_vault.cli import main

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample-vault"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed (pip install 'palinode-vault[models]')")
    from palinode_vault.models import ModelUnavailable, minilm_gguf_path

    if not minilm_gguf_path().is_file():
        try:
            from palinode_vault.models import ensure_minilm_gguf

            ensure_minilm_gguf()
        except ModelUnavailable as exc:
            pytest.skip(f"the default embedding model is not available: {exc}")
    root = tmp_path_factory.mktemp("cli-index") / "vault"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    result = CliRunner().invoke(main, ["reindex", "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "hybrid" and data["indexed"] == 44 and data["pending"] == 0
    return root


@pytest.fixture
def vault(tmp_path, template) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(template, root)
    return root


def run(*args: str) -> dict:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_search_json(vault):
    data = run("search", "--vault", str(vault), "why not firebase", "--json", "--limit", "3")
    assert data["mode"] == "hybrid" and len(data["results"]) == 3
    assert set(data["results"][0]) == {"path", "score", "title", "snippet"}
    assert data["results"][0]["path"] == "decisions/postgres-over-firebase.md"
    people = run("search", "--vault", str(vault), "offline sync", "--json", "--category", "person")
    assert all(r["path"].startswith("people/") for r in people["results"])
    keyword = run("search", "--vault", str(vault), "Cochrane", "--json", "--mode", "keyword")
    assert keyword["mode"] == "keyword"
    archived = run("search", "--vault", str(vault), "release every Friday", "--json", "--include-archived")
    assert "decisions/weekly-release-train.md" in [r["path"] for r in archived["results"]]
    daily = run("search", "--vault", str(vault), "intake form submitted twice", "--json", "--include-daily")
    assert daily["results"][0]["path"].startswith("daily/")


def test_keyword_only_is_said(vault):
    data = run("search", "--vault", str(vault), "sms provider", "--json", "--embedding-model", str(vault / "nope.gguf"))
    assert data["mode"] == "keyword" and data["results"]
    assert "keyword-only" in data["note"] and "nope.gguf" in data["note"]
    result = CliRunner().invoke(
        main, ["dedup", "--vault", str(vault), "--text", "x", "--json", "--embedding-model", str(vault / "nope.gguf")]
    )
    assert result.exit_code == 1 and "nope.gguf" in result.output


def test_dedup_json(vault):
    data = run("dedup", "--vault", str(vault), "--file", str(vault / "insights" / "estimate-in-ranges.md"), "--json")
    assert data["results"] and set(data["results"][0]) == {"path", "similarity", "strong"}
    assert "insights/estimate-in-ranges.md" not in [r["path"] for r in data["results"]]  # not itself
    outside = vault.parent / "draft.md"
    shutil.copyfile(vault / "insights" / "estimate-in-ranges.md", outside)
    strong = run("dedup", "--vault", str(vault), "--file", str(outside), "--json")["results"][0]
    assert strong["path"] == "insights/estimate-in-ranges.md" and strong["strong"] is True
    text = run("dedup", "--vault", str(vault), "--text", "A coffee machine for the office", "--json")
    assert not any(r["strong"] for r in text["results"])
    usage = CliRunner().invoke(main, ["dedup", "--vault", str(vault), "--json"])
    assert usage.exit_code == 2


def test_repair_json_and_apply(vault):
    data = run("repair", "--vault", str(vault), "mira-okonkow", "--json")
    assert data["target"] == "mira-okonkow"
    assert data["candidates"][0]["path"] == "people/mira-okonkwo.md"
    assert set(data["candidates"][0]) == {"path", "score", "why"}
    before = (vault / "people" / "tariq-benali.md").read_text(encoding="utf-8")
    applied = run("repair", "--vault", str(vault), "mira-okonkow", "--apply", "people/mira-okonkwo.md", "--json")
    assert applied["written"] == ["people/tariq-benali.md"]
    after = (vault / "people" / "tariq-benali.md").read_text(encoding="utf-8")
    assert "[[mira-okonkow]]" not in after and "[[mira-okonkwo]]" in after
    assert after.replace("[[mira-okonkwo]] on the conflict", "[[mira-okonkow]] on the conflict") == before
    run("undo", "--vault", str(vault), "--json")
    assert (vault / "people" / "tariq-benali.md").read_text(encoding="utf-8") == before


def test_related_json(vault):
    data = run("related", "--vault", str(vault), "people/tariq-benali.md", "--json")
    paths = [r["path"] for r in data["results"]]
    assert paths and set(data["results"][0]) == {"path", "similarity"}
    assert "people/mira-okonkwo.md" not in paths and "people/tariq-benali.md" not in paths
    missing = CliRunner().invoke(main, ["related", "--vault", str(vault), "people/nobody.md"])
    assert missing.exit_code == 1 and "no note at people/nobody.md" in missing.output


def test_reindex_reuses_vectors(vault):
    data = run("reindex", "--vault", str(vault), "--json")
    assert data["indexed"] == 44 and data["embedded"] == 0 and data["mode"] == "hybrid"
    assert data["driver"] in ("sqlite3", "apsw") and data["model"].startswith("all-MiniLM-L6-v2")


def test_lint_json_has_candidates_with_the_index(vault, tmp_path):
    data = json.loads(CliRunner().invoke(main, ["lint", "--vault", str(vault), "--json"]).output)
    broken = [f for f in data["findings"] if f["check"] == "broken_link" and f["target"] == "mira-okonkow"]
    assert broken and broken[0]["candidates"][0]["path"] == "people/mira-okonkwo.md"
    bare = tmp_path / "bare"
    shutil.copytree(SAMPLE, bare, ignore=shutil.ignore_patterns(".palinode"))  # a used sample-vault has one
    data = json.loads(CliRunner().invoke(main, ["lint", "--vault", str(bare), "--json"]).output)
    broken = [f for f in data["findings"] if f["check"] == "broken_link"]
    assert broken and all("candidates" not in f for f in broken)  # no index: lint as before


def test_cli_search_is_recorded_in_the_session_core_started(vault, monkeypatch):
    """CLI reads go to `.palinode/access.jsonl` for the weekly core-drift check: a search joins
    the session the CLI's `core` started, PALINODE_SESSION names one, and the query is never kept."""
    from palinode_vault.memory.weekly import access

    monkeypatch.delenv(access.SESSION_ENV, raising=False)
    lone = run("search", "--vault", str(vault), "why not firebase", "--json", "--limit", "3")
    run("core", "--vault", str(vault), "--json")
    first = run("search", "--vault", str(vault), "offline sync", "--json", "--limit", "2")
    run("search", "--vault", str(vault), "sms provider", "--json", "--limit", "2")
    monkeypatch.setenv(access.SESSION_ENV, "agent-42")
    run("search", "--vault", str(vault), "Cochrane", "--json", "--mode", "keyword")

    entries = access.read(vault)
    assert [e["event"] for e in entries] == ["search", "core", "search", "search", "search"]
    assert entries[0]["paths"] == sorted(r["path"] for r in lone["results"])
    assert entries[2]["paths"] == sorted(r["path"] for r in first["results"])
    started = entries[1]["session"]
    assert "-cli-" in started and entries[0]["session"] != started
    assert entries[2]["session"] == entries[3]["session"] == started
    assert entries[4]["session"] == "agent-42"
    raw = (vault / access.ACCESS_PATH).read_text(encoding="utf-8")
    assert "why not firebase" not in raw and "offline sync" not in raw and "Cochrane" not in raw


def test_cli_search_starts_a_new_session_when_core_is_old(vault, monkeypatch):
    import datetime as dt

    from palinode_vault.memory.weekly import access

    monkeypatch.delenv(access.SESSION_ENV, raising=False)
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=access.CLI_SESSION_HOURS + 1)
    old = access.new_session("cli", long_ago)
    access.record(vault, "core", old, ["people/noor-haddad.md"], now=long_ago)
    run("search", "--vault", str(vault), "offline sync", "--json", "--limit", "2")
    entries = access.read(vault)
    assert entries[-1]["event"] == "search" and entries[-1]["session"] != old


def test_first_search_answers_by_keyword_without_embedding_the_vault(tmp_path):
    """A vault never indexed: keyword search answers without loading or running the model,
    hybrid answers after at most --embed-seconds, and both say how much has vectors."""
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".palinode"))
    data = run("search", "--vault", str(root), "Cochrane", "--json", "--mode", "keyword")
    assert data["mode"] == "keyword" and data["results"][0]["path"].startswith("research/")
    assert data["vectors"]["notes"] == 44 and data["vectors"]["with_vectors"] == 0
    from palinode_vault.index import open_index

    with open_index(root) as index:
        assert index.counts()["vectors"] == 0 and index.counts()["chunks"] > 44
    hybrid = run("search", "--vault", str(root), "why not firebase", "--json", "--embed-seconds", "0")
    assert hybrid["results"] and hybrid["vectors"]["with_vectors"] == 0
    assert hybrid["results"][0]["path"] == "decisions/postgres-over-firebase.md"


def test_search_says_how_much_of_the_vault_has_vectors(vault):
    data = run("search", "--vault", str(vault), "why not firebase", "--json")
    assert data["vectors"] == {"notes": 44, "with_vectors": 44, "fraction": 1.0} and "note" not in data
    (vault / "insights" / "kites.md").write_text("# Kites\n\nKite surfing on the Tagus estuary on Fridays.\n", encoding="utf-8")
    data = run("search", "--vault", str(vault), "kite surfing", "--json", "--embed-seconds", "0")
    assert data["vectors"]["notes"] == 45 and data["vectors"]["with_vectors"] == 44
    assert "44 of 45 notes" in data["note"] and data["results"][0]["path"] == "insights/kites.md"
