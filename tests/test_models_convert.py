"""Converting all-MiniLM-L6-v2 from its PyPI package to GGUF: real files, no mocks."""

from __future__ import annotations

import os
import zipfile

import pytest

from palinode_vault.models import ModelUnavailable, ensure_minilm_gguf, minilm_gguf_path
from palinode_vault.models.convert import convert_minilm_zip
from palinode_vault.models.header import read_metadata
from palinode_vault.models.packaged import MINILM_ZIP, PackagedFile

pytest.importorskip("gguf", reason="needs palinode-vault[models] (gguf)")
pytest.importorskip("safetensors", reason="needs palinode-vault[models] (safetensors)")


@pytest.fixture(scope="module")
def model_zip():
    try:
        return MINILM_ZIP.locate()
    except ModelUnavailable as exc:
        pytest.skip(f"default embedding model package missing: {exc}")


@pytest.fixture(scope="module")
def converted(tmp_path_factory, model_zip):
    folder = tmp_path_factory.mktemp("convert")
    return ensure_minilm_gguf(folder)


def test_locates_the_zip_without_importing_the_package(model_zip):
    import sys

    assert model_zip.name == "model.zip" and model_zip.is_file()
    assert "all_minilm_l6_v2" not in sys.modules  # importing it prints a line


def test_gguf_metadata_is_bert_with_mean_pooling(converted):
    meta = read_metadata(converted)
    assert meta["general.architecture"] == "bert"
    assert meta["bert.attention.causal"] is False
    assert meta["bert.pooling_type"] == 1  # mean, from 1_Pooling/config.json
    assert meta["bert.embedding_length"] == 384
    assert meta["bert.block_count"] == 6
    assert meta["tokenizer.ggml.model"] == "bert"
    assert (
        meta["tokenizer.ggml.bos_token_id"],
        meta["tokenizer.ggml.eos_token_id"],
        meta["tokenizer.ggml.unknown_token_id"],
        meta["tokenizer.ggml.padding_token_id"],
        meta["tokenizer.ggml.mask_token_id"],
    ) == (101, 102, 100, 0, 103)
    # f16 matrices: about 44 MiB (f32 would be about 87 MiB)
    assert 40 * 2**20 < converted.stat().st_size < 50 * 2**20


def test_vocabulary_is_rewritten_for_llama_cpp_wordpiece(converted):
    from gguf import GGUFReader

    reader = GGUFReader(str(converted))
    field = reader.get_field("tokenizer.ggml.tokens")
    tokens = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
    assert len(tokens) == 30522
    assert tokens[7592] == "\u2581hello"  # word start: phantom space
    assert tokens[2278] == "c"  # "##c" continuation: marker stripped
    assert tokens[101] == "[CLS]" and tokens[102] == "[SEP]" and tokens[100] == "[UNK]"
    assert not any(t.startswith("##") for t in tokens)
    names = {t.name for t in reader.tensors}
    assert "token_embd.weight" in names and "blk.5.layer_output_norm.bias" in names
    assert not any(n.startswith("pooler") for n in names)


def test_prepare_is_idempotent(converted):
    before = converted.stat()
    again = ensure_minilm_gguf(converted.parent)
    assert again == converted
    after = converted.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)
    leftovers = [p.name for p in converted.parent.iterdir() if p != converted]
    assert leftovers == []


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PALINODE_MODEL_CACHE", str(tmp_path / "cache"))
    assert minilm_gguf_path() == tmp_path / "cache" / minilm_gguf_path().name


def test_missing_package_says_how_to_install():
    ghost = PackagedFile("no-such-model-pkg", "no_such_model_pkg", "model.zip", install_hint="pip install no-such-model-pkg")
    with pytest.raises(ModelUnavailable) as info:
        ghost.locate()
    assert "no-such-model-pkg" in str(info.value)
    assert info.value.fix == "pip install no-such-model-pkg"


def test_broken_archive_is_reported_and_leaves_nothing(tmp_path):
    bad = tmp_path / "model.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("config.json", "{}")
    target = tmp_path / "out" / "m.gguf"
    with pytest.raises(ModelUnavailable, match="model.zip"):
        convert_minilm_zip(bad, target)
    assert not target.exists()
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


@pytest.mark.requires_models
def test_bf16_matrices_embed_like_the_reference(tmp_path, model_zip):
    """`matrices="bf16"` (bench/bench_embed.py's bf16 row) writes BF16 blocks that llama.cpp
    loads, with vectors within 0.999 of the sentence-transformers reference."""
    import json
    from pathlib import Path

    import numpy as np

    from palinode_vault.models.embedder import Embedder

    reference = Path(__file__).resolve().parents[2] / "shared" / "reference" / "minilm-reference-embeddings.json"
    if not reference.is_file():
        pytest.skip(f"{reference} is absent (../shared is not beside this checkout)")
    target = convert_minilm_zip(model_zip, tmp_path / "minilm.bf16.gguf", matrices="bf16")
    assert read_metadata(target)["general.file_type"] == 32  # LlamaFileType.MOSTLY_BF16
    data = json.loads(reference.read_text())
    embedder = Embedder(target, max_tokens=256, n_threads=1)
    try:
        got = embedder.embed_many(data["sentences"])
    finally:
        embedder.close()
    assert float((got * np.asarray(data["embeddings"], dtype=np.float32)).sum(axis=1).min()) > 0.999
