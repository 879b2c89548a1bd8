"""The OpenVINO engine for BERT GGUFs (models/openvino_bert.py), on the real converted MiniLM and
the real OpenVINO runtime: the same vectors as the reference and as llama.cpp, padding that
changes nothing, the fallback to llama.cpp, and no network."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from palinode_vault.models import Embedder, ModelUnavailable, ensure_minilm_gguf
from palinode_vault.models.embedder import BULK_TEXTS, ENGINE_VARIABLE

np = pytest.importorskip("numpy", reason="needs palinode-vault[models]")
pytest.importorskip("llama_cpp", reason="needs llama-cpp-python (palinode-vault[models])")
pytest.importorskip("openvino", reason="needs OpenVINO (palinode-vault[models] installs it where PyPI has a wheel)")

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference" / "minilm-reference-embeddings.json"


@pytest.fixture(scope="module")
def minilm():
    try:
        return ensure_minilm_gguf()
    except ModelUnavailable as exc:
        pytest.skip(f"default embedding model unavailable: {exc}")


@pytest.fixture(scope="module")
def both(minilm):
    """The same model on each engine, one thread each."""
    ov = Embedder(minilm, n_threads=1, engine="openvino")
    cpp = Embedder(minilm, n_threads=1, engine="llama.cpp")
    yield ov, cpp
    ov.close()
    cpp.close()


def note_texts(count: int) -> list[str]:
    """Real paragraphs of the sample vault, long and short."""
    texts = []
    for path in sorted((REPO / "sample-vault").rglob("*.md")):
        texts += [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) > 20]
    return texts[:count]


def test_openvino_matches_the_sentence_transformers_reference(both):
    ov, _ = both
    if not REFERENCE.is_file():
        pytest.skip(f"reference embeddings not found at {REFERENCE} (../shared is absent)")
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    want = np.asarray(data["embeddings"], dtype=np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    got = ov.embed_many(data["sentences"])
    assert ov.engine in ("openvino (bf16)", "openvino (f32)")
    assert float((got * want).sum(axis=1).min()) > 0.999


def test_openvino_agrees_with_llama_cpp_on_real_notes(both):
    ov, cpp = both
    texts = note_texts(60)
    assert len(texts) == 60
    a, b = ov.embed_many(texts), cpp.embed_many(texts)
    assert a.shape == b.shape == (60, 384)
    assert float((a * b).sum(axis=1).min()) > 0.999
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def test_padding_beside_a_long_text_changes_nothing(both):
    """A short text batched with a long one is padded to its length; the mask must hide it."""
    ov, _ = both
    short = "Alice leads the Apollo project."
    long = " ".join(note_texts(40))
    alone = ov.embed(short)
    batched = ov.embed_many([long, short, long[:300]])[1]
    assert float(alone @ batched) > 0.99999


def test_thread_counts_give_the_same_vectors(both):
    ov, _ = both
    texts = note_texts(30)
    one = ov.embed_many(texts)
    ov.set_threads(2)
    try:
        two = ov.embed_many(texts)
    finally:
        ov.set_threads(1)
    assert float((one * two).sum(axis=1).min()) > 0.99999


def test_auto_uses_llama_cpp_for_small_calls_and_openvino_for_bulk(minilm):
    e = Embedder(minilm, n_threads=1, engine="auto")
    try:
        e.embed_many(note_texts(BULK_TEXTS - 1))
        assert e.engine == "llama.cpp"  # a query or a draft does not wait for the graph to build
        small = e.embed_many(note_texts(3))
        bulk = e.embed_many(note_texts(BULK_TEXTS))
        assert e.engine.startswith("openvino")
        again = e.embed_many(note_texts(3))  # still llama.cpp: a query never waits behind a bulk batch
        assert np.array_equal(small, again)
        assert float((bulk[:3] * small).sum(axis=1).min()) > 0.999
    finally:
        e.close()


def test_a_quantised_model_stays_on_llama_cpp(tmp_path):
    """OpenVINO runs f32/f16 BERT weights only: auto falls back, an explicit choice says why."""
    from palinode_vault.models.convert import convert_minilm_zip
    from palinode_vault.models.packaged import MINILM_ZIP

    try:
        target = convert_minilm_zip(MINILM_ZIP.locate(), tmp_path / "minilm.q8_0.gguf", matrices="q8_0")
    except ModelUnavailable as exc:
        pytest.skip(f"default embedding model package missing: {exc}")
    e = Embedder(target, n_threads=1)
    try:
        assert e.embed_many(note_texts(BULK_TEXTS)).shape == (BULK_TEXTS, 384)
        assert e.engine == "llama.cpp"
    finally:
        e.close()
    with pytest.raises(ModelUnavailable, match="OpenVINO cannot embed with minilm.q8_0.gguf"):
        Embedder(target, n_threads=1, engine="openvino")


def test_the_engine_variable_is_read_and_checked(minilm, monkeypatch):
    monkeypatch.setenv(ENGINE_VARIABLE, "llama.cpp")
    e = Embedder(minilm, n_threads=1)
    try:
        e.embed_many(note_texts(BULK_TEXTS))
        assert e.engine == "llama.cpp"
    finally:
        e.close()
    monkeypatch.setenv(ENGINE_VARIABLE, "tensorrt")
    with pytest.raises(ModelUnavailable, match="unknown embedding engine 'tensorrt'"):
        Embedder(minilm, n_threads=1)


def test_openvino_opens_no_connection(minilm, tmp_path):
    """OpenVINO's converter starts Google Analytics telemetry when imported (sent from a forked
    process); we block it. In a fresh process, every socket connect of it or its children is
    written to a file while the engine loads and embeds."""
    log = tmp_path / "connects.txt"
    script = f"""
import socket, sys, time
real = socket.socket.connect
def record(self, address):
    with open({str(log)!r}, "a") as f:
        f.write(repr(address) + "\\n")
    return real(self, address)
socket.socket.connect = record
from palinode_vault.models import Embedder
e = Embedder({str(minilm)!r}, n_threads=1, engine="openvino")
e.embed_many(["one text"] * 20)
time.sleep(2)  # telemetry would send from a background thread's child process
print(e.engine, "openvino_telemetry" in sys.modules, sep="|")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    engine_name, telemetry_loaded = out.stdout.strip().splitlines()[-1].split("|")
    assert engine_name.startswith("openvino")
    assert telemetry_loaded == "False"
    assert not log.exists(), log.read_text()


def test_auto_falls_back_to_llama_cpp_when_openvino_fails_at_run_time(minilm):
    """A platform where OpenVINO imports but cannot compile: the index goes on, on llama.cpp.
    The failure is real: the engine is asked to compile for a precision OpenVINO does not know."""
    e = Embedder(minilm, n_threads=1, engine="auto")
    try:
        texts = note_texts(BULK_TEXTS)
        before = e.embed_many(texts)
        assert e.engine.startswith("openvino")
        e._openvino.precision = "no-such-precision"
        e.set_threads(2)  # a thread count not compiled yet: OpenVINO compiles, and fails
        after = e.embed_many(texts)
        assert e.engine == "llama.cpp"
        assert float((before * after).sum(axis=1).min()) > 0.999
    finally:
        e.close()
