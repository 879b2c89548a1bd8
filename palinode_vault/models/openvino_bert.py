"""A BERT sentence-embedding GGUF (the default MiniLM among them) run on OpenVINO.

Why a second engine: on CPUs with AMX or AVX512_BF16 (Intel Xeon since Sapphire Rapids, recent
Core), OpenVINO runs the matrix products in bf16 on the tile units: 4.4 times as many texts per
second as llama.cpp's two lanes on the same two cores, whose AMX path is only for quantised
weights and crashes today (docs/BENCHMARKS.md "Session 14: the OpenVINO engine";
docs/ARCHITECTURE.md "Embedding engines"). Elsewhere it runs f32: 2.2 times llama.cpp's one
thread on AVX-512 cores (not measured on AVX2). The vectors are the same model's: cosine 0.99998
against the sentence-transformers reference, 0.99996 against llama.cpp, so an index may mix them.

The graph is built here from the GGUF's own tensors (no ONNX file, no torch, nothing fetched):
embeddings, then per layer attention (OpenVINO's fused scaled-dot-product attention, padding
masked) and the feed-forward block with exact (erf) GELU, as sentence-transformers computes it;
then mean pooling (a GGUF with another pooling stays on llama.cpp: only mean pooling is
checked against a reference here). Token ids come from the caller (the embedder
tokenises with llama.cpp, so truncation and chunk sizes are the same whichever engine runs).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from palinode_vault.models.errors import ModelUnavailable

#: llama.cpp's code for mean pooling in the GGUF (`bert.pooling_type`).
POOLING_MEAN = 1
#: Padded tokens per inference call. Sequences go longest first, so a batch pads little; larger
#: batches amortise the per-call cost, smaller ones keep a long text's batch from padding many
#: short ones.
BATCH_TOKENS = 4096
BATCH_SEQUENCES = 32


def import_openvino() -> Any:
    """The openvino module, or ModelUnavailable saying how to get it.

    `import openvino` also imports its model converter (openvino.tools.ovc), and that import
    starts OpenVINO's usage telemetry, which sends Google Analytics events from a background
    process unless the person has opted out (openvino_telemetry, seen with strace: a DNS query
    at the first import). palinode-vault is offline and never converts models, so the converter
    is blocked before openvino is imported: its package catches the ImportError and goes on.
    """
    if "openvino" not in sys.modules:
        sys.modules.setdefault("openvino.tools.ovc", None)  # type: ignore[arg-type]  # None blocks the import
    try:
        import openvino
    except ImportError as exc:
        raise ModelUnavailable(
            "OpenVINO is not installed",
            fix="pip install openvino (palinode-vault[models] installs it where wheels exist)",
        ) from exc
    return openvino


def cpu_precision(core: Any) -> str:
    """bf16 where the CPU has bf16 units (AMX, AVX512_BF16), else f32; never OpenVINO's f16
    default on ARM, which nothing here has measured against the reference."""
    return "bf16" if "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES") else "f32"


def bert_layout(gguf_path: Path) -> dict[str, Any] | None:
    """The GGUF's BERT hyper-parameters when this engine can run it, else None (another
    architecture, another pooling than mean, or quantised weights)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(gguf_path))

    def field(name: str) -> Any:
        f = reader.fields.get(name)
        if f is None or not f.data:
            return None
        value = f.parts[f.data[0]]
        return bytes(value).decode("utf-8", "replace") if f.types and f.types[0].name == "STRING" else value[0]

    if field("general.architecture") != "bert":
        return None
    if int(field("bert.pooling_type") or 0) != POOLING_MEAN:
        return None
    if any(t.tensor_type.name not in ("F32", "F16") for t in reader.tensors):
        return None  # quantised weights: llama.cpp's business
    return {
        "reader": reader,
        "heads": int(field("bert.attention.head_count")),
        "layers": int(field("bert.block_count")),
        "eps": float(field("bert.attention.layer_norm_epsilon") or 1e-12),
    }


class OpenVinoBert:
    """One compiled BERT per thread count; `embed(sequences, threads)` returns unit vectors."""

    def __init__(self, layout: dict[str, Any]) -> None:
        self._core = import_openvino().Core()
        self._model = _build(layout)
        self.dimensions = int(self._model.output(0).get_partial_shape()[1].get_length())
        self.precision = cpu_precision(self._core)
        self._compiled: dict[int, tuple[Any, threading.Lock]] = {}
        self._lock = threading.Lock()

    def _request(self, threads: int) -> tuple[Any, threading.Lock]:
        with self._lock:
            if threads not in self._compiled:
                compiled = self._core.compile_model(
                    self._model,
                    "CPU",
                    {
                        "INFERENCE_NUM_THREADS": threads,
                        "INFERENCE_PRECISION_HINT": self.precision,
                        "NUM_STREAMS": 1,
                        "PERFORMANCE_HINT": "LATENCY",
                    },
                )
                self._compiled[threads] = (compiled.create_infer_request(), threading.Lock())
            return self._compiled[threads]

    def embed(self, sequences: Sequence[Sequence[int]], threads: int) -> Any:
        """Unit vectors, shape (len(sequences), dimensions), for token-id sequences."""
        import numpy as np

        out = np.zeros((len(sequences), self.dimensions), dtype=np.float32)
        request, lock = self._request(max(1, threads))
        order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))
        start = 0
        while start < len(order):
            width = len(sequences[order[start]])
            size = max(1, min(BATCH_SEQUENCES, BATCH_TOKENS // max(1, width)))
            group = order[start : start + size]
            start += size
            ids = np.zeros((len(group), width), dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for row, index in enumerate(group):
                seq = sequences[index]
                ids[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1
            with lock:
                pooled = request.infer({"input_ids": ids, "attention_mask": mask})[0]
            out[group] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _build(layout: dict[str, Any]) -> Any:
    """The OpenVINO model: input_ids, attention_mask (int64, batch x tokens) -> pooled states."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    t = {tensor.name: np.asarray(tensor.data, dtype=np.float32) for tensor in layout["reader"].tensors}
    eps, heads = layout["eps"], layout["heads"]
    width = t["token_embd.weight"].shape[1]
    head = width // heads

    def const(array: Any) -> Any:
        return ops.constant(np.ascontiguousarray(array, dtype=np.float32))

    def norm(x: Any, prefix: str) -> Any:
        x = ops.mvn(x, ops.constant(np.array([-1], dtype=np.int64)), True, eps, "inside_sqrt")
        return ops.add(ops.multiply(x, const(t[prefix + ".weight"])), const(t[prefix + ".bias"]))

    def linear(x: Any, prefix: str) -> Any:  # GGUF weights are (out, in)
        return ops.add(ops.matmul(x, const(t[prefix + ".weight"]), False, True), const(t[prefix + ".bias"]))

    ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    mask = ops.parameter([-1, -1], ov.Type.i64, name="attention_mask")
    tokens = ops.gather(const(t["token_embd.weight"]), ids, ops.constant(np.int64(0)))
    count = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    positions = ops.range(ops.constant(np.int64(0)), count, ops.constant(np.int64(1)), "i64")
    x = ops.add(tokens, ops.gather(const(t["position_embd.weight"]), positions, ops.constant(np.int64(0))))
    x = ops.add(x, const(t["token_types.weight"][0]))
    x = norm(x, "token_embd_norm")
    maskf = ops.convert(mask, "f32")
    # padding keys get -inf-like scores: (1 - mask) * -1e4, shaped (batch, 1, 1, tokens)
    bias = ops.multiply(ops.subtract(const(np.float32(1.0)), maskf), const(np.float32(-1e4)))
    bias = ops.unsqueeze(bias, ops.constant(np.array([1, 2], dtype=np.int64)))
    split = ops.constant(np.array([0, 0, heads, head], dtype=np.int64))
    joined = ops.constant(np.array([0, 0, width], dtype=np.int64))
    to_heads = ops.constant(np.array([0, 2, 1, 3], dtype=np.int64))

    def per_head(y: Any) -> Any:
        return ops.transpose(ops.reshape(y, split, True), to_heads)

    scale = const(np.float32(head**-0.5))
    for layer in range(layout["layers"]):
        p = f"blk.{layer}."
        q, k, v = (per_head(linear(x, p + name)) for name in ("attn_q", "attn_k", "attn_v"))
        context = ops.scaled_dot_product_attention(q, k, v, bias, scale, causal=False)
        context = ops.reshape(ops.transpose(context, to_heads), joined, True)
        x = norm(ops.add(linear(context, p + "attn_output"), x), p + "attn_output_norm")
        up = ops.gelu(linear(x, p + "ffn_up"), "erf")
        x = norm(ops.add(linear(up, p + "ffn_down"), x), p + "layer_output_norm")
    weights = ops.unsqueeze(maskf, ops.constant(np.int64(-1)))
    total = ops.reduce_sum(ops.multiply(x, weights), ops.constant(np.int64(1)), False)
    pooled = ops.divide(total, ops.reduce_sum(weights, ops.constant(np.int64(1)), False))
    return ov.Model([pooled], [ids, mask], "bert-sentence-embedding")
