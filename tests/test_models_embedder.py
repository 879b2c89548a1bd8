"""The Embedder on real llama.cpp with the real converted MiniLM GGUF: no mocks."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest

from palinode_vault.models import Embedder, ModelUnavailable, ensure_minilm_gguf
from palinode_vault.models.packaged import SMOLLM2_GGUF

np = pytest.importorskip("numpy", reason="needs palinode-vault[models]")
pytest.importorskip("llama_cpp", reason="needs llama-cpp-python (palinode-vault[models])")

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference" / "minilm-reference-embeddings.json"


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """One model cache for the whole session, so MiniLM converts once."""
    folder = tmp_path_factory.getbasetemp() / "palinode-model-cache"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PALINODE_MODEL_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="session")
def embedder(model_cache):
    try:
        ensure_minilm_gguf()
    except ModelUnavailable as exc:
        pytest.skip(f"default embedding model unavailable: {exc}")
    model = Embedder(engine="llama.cpp")  # this file tests the llama.cpp engine; OpenVINO: test_models_openvino.py
    yield model
    model.close()


def test_matches_sentence_transformers_reference(embedder):
    if not REFERENCE.is_file():
        pytest.skip(f"reference embeddings not found at {REFERENCE} (../shared is absent)")
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    expected = np.asarray(data["embeddings"], dtype=np.float32)
    got = embedder.embed_many(data["sentences"])
    cosines = np.sum(got * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert len(cosines) == 12
    for sentence, cosine in zip(data["sentences"], cosines):
        assert cosine >= 0.999, f"cosine {cosine:.6f} for {sentence!r}"


def test_vectors_are_unit_float32(embedder):
    vector = embedder.embed("Alice leads the checkout redesign.")
    assert vector.dtype == np.float32 and vector.shape == (384,)
    assert embedder.dimensions == 384
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_one_at_a_time_equals_batched(embedder):
    texts = ["short", "a somewhat longer sentence about vector search in SQLite", "", "Café crème 🚀", "third"]
    batched = embedder.embed_many(texts, batch_size=3)
    single = np.stack([embedder.embed(t) for t in texts])
    assert batched.shape == (5, 384)
    assert np.abs(batched - single).max() < 1e-4
    assert embedder.embed_many([]).shape == (0, 384)


def test_meaning_orders_similarity(embedder):
    a, b, c = embedder.embed_many(
        [
            "We chose SQLite-vec instead of Qdrant because it needs no server.",
            "The team picked an embedded vector store so nothing extra has to run.",
            "How do I restart nginx?",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_long_input_is_truncated_keeping_the_final_sep(embedder):
    words = [f"memory{i % 50} note" if i % 2 else "vault" for i in range(2000)]
    text = " ".join(words)
    assert len(text.split()) >= 2000
    assert embedder.count_tokens(text) > 2000
    tokens = embedder.tokens(text)
    assert len(tokens) == 256
    assert tokens[0] == 101 and tokens[-1] == 102  # [CLS] ... [SEP]
    assert 102 not in tokens[:-1]
    vector = embedder.embed(text)
    assert np.isfinite(vector).all()
    # The same as embedding [CLS] + the first 254 content tokens + [SEP] directly:
    full = embedder._llama.tokenize(text.encode(), add_bos=True, special=False)
    manual = embedder.embed_tokens([full[:255] + [102]])[0]
    assert float(vector @ manual) > 0.99999
    # ...and not the same as dropping the [SEP], which is what naive truncation does.
    dropped = embedder.embed_tokens([full[:256]])[0]
    assert float(vector @ dropped) < 0.99999


def test_short_input_is_not_truncated(embedder):
    assert embedder.tokens("hello world") == [101, 7592, 2088, 102]


def test_embed_tokens_rejects_overlong_sequences(embedder):
    with pytest.raises(ValueError, match="257 tokens"):
        embedder.embed_tokens([[101] + [7592] * 255 + [102]])


def test_model_id_names_the_file_and_its_sha256(embedder):
    digest = hashlib.sha256(embedder.path.read_bytes()).hexdigest()
    assert embedder.sha256 == digest
    assert embedder.model_id == f"{embedder.path.name}:{digest}"
    # The digest is cached on disk, keyed by path, size and mtime:
    cache = json.loads((embedder.path.parent / "sha256.json").read_text())
    assert cache[str(embedder.path.resolve())]["sha256"] == digest


def test_missing_model_file_is_model_unavailable(tmp_path):
    with pytest.raises(ModelUnavailable) as info:
        Embedder(tmp_path / "nope.gguf")
    assert "nope.gguf" in str(info.value) and info.value.fix


def test_not_a_gguf_file_is_model_unavailable(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model at all")
    with pytest.raises(ModelUnavailable, match="junk.gguf"):
        Embedder(junk)


def test_a_chat_model_is_not_an_embedding_model():
    try:
        path = SMOLLM2_GGUF.locate()
    except ModelUnavailable as exc:
        pytest.skip(str(exc))
    with pytest.raises(ModelUnavailable, match="not a sentence-embedding model"):
        Embedder(path)


def test_loading_a_model_does_not_swallow_other_threads_output(embedder, tmp_path):
    """llama-cpp-python silences loads by pointing fds 1 and 2 at /dev/null, process-wide;
    we turn that off, so a thread loading a model cannot eat the sidecar's banner."""
    import subprocess
    import sys

    script = (
        "import threading, time\n"
        "from palinode_vault.models import Embedder\n"
        f"path = {str(embedder.path)!r}\n"
        "def load():\n"
        "    for _ in range(4):\n"
        "        Embedder(path).close()\n"
        "t = threading.Thread(target=load); t.start()\n"
        "for i in range(400):\n"
        "    print(f'line {i}', flush=True); time.sleep(0.002)\n"
        "t.join()\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"line {i}" for i in range(400)]


def test_packed_micro_batches_equal_one_text_per_call(embedder):
    """Texts packed into one micro-batch (each its own masked sequence) get the vectors they
    get alone; long and short texts mixed, more texts than fit one pack."""
    words = "vault note link search index sync publish canvas graph plugin".split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(5 + (i * 37) % 180)) for i in range(24)]
    packed = embedder.embed_many(texts)
    single = np.stack([embedder.embed(t) for t in texts])
    assert (packed * single).sum(axis=1).min() > 0.9999


def test_a_pack_size_llama_cpp_would_abort_on_is_rounded_up(model_cache, embedder):
    """llama.cpp aborts the process when an embedding context's batch is above 256 tokens and not
    a multiple of 256 (its sequence limit); such a pack size is rounded up instead."""
    words = "vault note link search index sync publish canvas graph plugin".split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(5 + (i * 37) % 180)) for i in range(12)]
    odd = Embedder(n_threads=1, pack_tokens=384, engine="llama.cpp")
    try:
        assert odd._n_batch == 512
        assert (odd.embed_many(texts) * embedder.embed_many(texts)).sum(axis=1).min() > 0.9999
    finally:
        odd.close()


def test_threads_can_change_between_calls(embedder):
    before = embedder.embed("Threads change how fast, not what.")
    embedder.set_threads(1)
    assert embedder.threads == 1
    one = embedder.embed("Threads change how fast, not what.")
    embedder.set_threads(2)
    two = embedder.embed("Threads change how fast, not what.")
    assert float(before @ one) > 0.9999 and float(one @ two) > 0.9999


def test_lanes_embed_side_by_side_with_the_same_vectors(embedder):
    """With more than one core allowed, packs go to one-thread contexts side by side; the
    vectors are those of one context, in the caller's order, and a query embedded from another
    thread meanwhile is unaffected."""
    words = "vault note link search index sync publish canvas graph plugin".split()
    texts = [" ".join(words[(i * 7 + j) % len(words)] for j in range(20 + (i * 53) % 200)) for i in range(30)]
    embedder.set_threads(1)
    alone = embedder.embed_many(texts)
    query = "Which plugin syncs the vault?"
    expected_query = embedder.embed(query)
    embedder.set_threads(3)
    try:
        assert embedder.lanes == 3 and embedder.threads == 1
        seen: list = []
        side = threading.Thread(target=lambda: seen.append(embedder.embed(query)))
        side.start()
        laned = embedder.embed_many(texts)
        side.join()
        assert embedder.contexts == 3  # two one-thread contexts beside the first
        assert (laned * alone).sum(axis=1).min() > 0.9999
        assert float(seen[0] @ expected_query) > 0.9999
    finally:
        embedder.set_threads(1)
    assert embedder.lanes == 1


def test_a_lane_that_cannot_load_leaves_the_contexts_there_are(tmp_path):
    """The model file removed while the sidecar runs: the loaded context keeps embedding (its
    weights are mapped), no further lane is tried, and the vectors are unchanged."""
    copy = tmp_path / "minilm.gguf"
    copy.write_bytes(ensure_minilm_gguf().read_bytes())
    e = Embedder(copy, n_threads=1, engine="llama.cpp")
    try:
        texts = [f"note {i} about the vault, its links and its search index " * (10 + i % 5) for i in range(12)]
        alone = e.embed_many(texts)
        copy.unlink()
        e.set_threads(2)
        laned = e.embed_many(texts)
        assert e.contexts == 1 and e.lanes == 1
        assert (laned * alone).sum(axis=1).min() > 0.9999
        e.set_threads(4)
        assert e.lanes == 1  # not tried again on every batch
    finally:
        e.close()
