"""`palinode-vault models prepare` and `models list` through click, on real files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

try:
    from palinode_vault.cli import main
except ImportError as exc:  # another command group not committed yet
    pytest.skip(f"palinode_vault.cli does not import yet: {exc}", allow_module_level=True)

from palinode_vault.models import ModelUnavailable
from palinode_vault.models.packaged import MINILM_ZIP

pytest.importorskip("gguf", reason="needs palinode-vault[models] (gguf)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("PALINODE_MODEL_CACHE", str(folder))
    monkeypatch.delenv("PALINODE_EMBEDDING_MODEL", raising=False)
    monkeypatch.delenv("PALINODE_GENERATION_MODEL", raising=False)
    return folder


@pytest.fixture
def has_minilm():
    try:
        MINILM_ZIP.locate()
    except ModelUnavailable as exc:
        pytest.skip(str(exc))


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_list_before_prepare_says_what_to_run(cache, has_minilm):
    result = _run("models", "list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["cache"] == str(cache)
    embedding = next(m for m in data["models"] if m["role"] == "embedding")
    assert embedding["present"] is False
    assert "palinode-vault models prepare" in embedding["problem"]
    assert {m["role"] for m in data["models"]} == {"embedding", "generation"}
    for model in data["models"]:
        assert set(model) >= {"name", "role", "path", "present", "size", "dimensions"}


def test_prepare_converts_once_and_prints_where(cache, has_minilm):
    first = _run("models", "prepare")
    gguf = next(cache.glob("*.gguf"))
    stamp = gguf.stat().st_mtime_ns
    second = _run("models", "prepare")
    assert str(cache) in first.output and str(gguf) in second.output
    assert gguf.stat().st_mtime_ns == stamp  # the second prepare did nothing
    listed = json.loads(_run("models", "list", "--json").output)
    embedding = next(m for m in listed["models"] if m["role"] == "embedding")
    assert embedding == {**embedding, "present": True, "dimensions": 384, "path": str(gguf), "problem": None}
    assert 40 * 2**20 < embedding["size"] < 50 * 2**20


def test_missing_custom_model_fails_with_the_fix(cache, tmp_path):
    missing = tmp_path / "nomic-embed.gguf"
    result = CliRunner().invoke(main, ["models", "prepare", "--embedding-model", str(missing)])
    assert result.exit_code == 1
    assert "nomic-embed.gguf" in result.output and "Fix:" in result.output
    assert "Traceback" not in result.output


def test_text_list_has_one_line_per_model(cache, has_minilm):
    result = _run("models", "list")
    assert result.exit_code == 0
    assert result.output.startswith("embedding")
    assert "generation" in result.output


def test_list_says_which_engine_embeds_in_bulk(cache, has_minilm, monkeypatch):
    import importlib.util

    _run("models", "prepare")
    monkeypatch.setenv("PALINODE_EMBEDDING_ENGINE", "llama.cpp")
    chosen = next(m for m in json.loads(_run("models", "list", "--json").output)["models"] if m["role"] == "embedding")
    assert chosen["engine"] == "llama.cpp (PALINODE_EMBEDDING_ENGINE)"
    monkeypatch.setenv("PALINODE_EMBEDDING_ENGINE", "auto")
    auto = next(m for m in json.loads(_run("models", "list", "--json").output)["models"] if m["role"] == "embedding")
    if importlib.util.find_spec("openvino") is None:
        assert auto["engine"].startswith("llama.cpp (OpenVINO is not installed")
    else:
        assert auto["engine"] in (
            "openvino (bf16) for bulk embedding, llama.cpp for queries",
            "openvino (f32) for bulk embedding, llama.cpp for queries",
        )
    text = _run("models", "list").output
    assert "engine: " + auto["engine"] in text
    generation = next(m for m in json.loads(_run("models", "list", "--json").output)["models"] if m["role"] == "generation")
    assert generation["engine"] is None
