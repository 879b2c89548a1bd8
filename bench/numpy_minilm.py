"""all-MiniLM-L6-v2's forward pass in numpy (OpenBLAS sgemm), from the same GGUF: a bench yardstick.

Not used by palinode-vault. bench/bench_embed.py runs it beside llama.cpp to answer one
question with a measurement: how fast does this machine run the whole model (not only its
matrix products, bench/bench_ceiling.py) when the products go through a well-tuned fp32 BLAS?
Same weights (the f16 GGUF, widened to fp32), same token ids (the embedder's tokenizer), GELU
in the tanh form llama.cpp uses; the vectors agree with llama.cpp's and with the
sentence-transformers reference to cosine 0.99999 (bench_embed prints it).

The linear maps run on a pack of sequences at once (rows concatenated, as llama.cpp's
micro-batches); attention runs per sequence, so nothing is spent on masked pairs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

HEADS = 12


class NumpyMiniLM:
    """MiniLM (BERT, mean pooling) in numpy. `embed_tokens` matches `Embedder.embed_tokens`."""

    def __init__(self, gguf_path: str) -> None:
        import numpy as np
        from gguf import GGUFReader

        reader = GGUFReader(gguf_path)
        t = {tensor.name: np.array(tensor.data, dtype=np.float32) for tensor in reader.tensors}
        self.token = t["token_embd.weight"]
        self.position = t["position_embd.weight"]
        self.token_type = t["token_types.weight"][0]
        self.norm = (t["token_embd_norm.weight"], t["token_embd_norm.bias"])
        self.dimensions = self.token.shape[1]
        self.layers = []
        layer = 0
        while f"blk.{layer}.attn_q.weight" in t:

            def w(name: str, layer: int = layer) -> Any:
                return t[f"blk.{layer}.{name}"]

            qkv = np.concatenate([w("attn_q.weight"), w("attn_k.weight"), w("attn_v.weight")])
            self.layers.append(
                {
                    "qkv": np.ascontiguousarray(qkv.T),  # (in, out): x @ W
                    "qkv_b": np.concatenate([w("attn_q.bias"), w("attn_k.bias"), w("attn_v.bias")]),
                    "out": np.ascontiguousarray(w("attn_output.weight").T),
                    "out_b": w("attn_output.bias"),
                    "norm1": (w("attn_output_norm.weight"), w("attn_output_norm.bias")),
                    "up": np.ascontiguousarray(w("ffn_up.weight").T),
                    "up_b": w("ffn_up.bias"),
                    "down": np.ascontiguousarray(w("ffn_down.weight").T),
                    "down_b": w("ffn_down.bias"),
                    "norm2": (w("layer_output_norm.weight"), w("layer_output_norm.bias")),
                }
            )
            layer += 1

    @staticmethod
    def _layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-12) -> Any:
        import numpy as np

        x -= x.mean(axis=1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[1]
        x *= 1.0 / np.sqrt(var + eps)
        x *= weight
        x += bias
        return x

    def embed_pack(self, sequences: Sequence[Sequence[int]]) -> Any:
        """Unit vectors for a few sequences decoded together."""
        import numpy as np

        lengths = [len(s) for s in sequences]
        ids = np.concatenate([np.asarray(s, dtype=np.int64) for s in sequences])
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self.token[ids] + self.position[positions] + self.token_type
        x = self._layer_norm(x, *self.norm)
        bounds = np.cumsum([0, *lengths])
        d = self.dimensions
        head = d // HEADS
        scale = np.float32(head**-0.5)
        gelu_c = np.float32((2 / np.pi) ** 0.5)
        context = np.empty_like(x)
        for p in self.layers:
            qkv = x @ p["qkv"]
            qkv += p["qkv_b"]
            for a, b in zip(bounds[:-1], bounds[1:]):
                n = b - a
                q, k, v = qkv[a:b].reshape(n, 3, HEADS, head).transpose(1, 2, 0, 3)  # (heads, n, head) each
                s = np.matmul(q, k.transpose(0, 2, 1))
                s *= scale
                s -= s.max(axis=-1, keepdims=True)
                np.exp(s, out=s)
                s /= s.sum(axis=-1, keepdims=True)
                context[a:b] = np.matmul(s, v).transpose(1, 0, 2).reshape(n, d)
            h = context @ p["out"]
            h += p["out_b"]
            h += x
            x = self._layer_norm(h, *p["norm1"])
            u = x @ p["up"]
            u += p["up_b"]
            g = u * u  # GELU, tanh form: 0.5 u (1 + tanh(c (u + 0.044715 u^3)))
            g *= np.float32(0.044715)
            g += 1
            g *= u
            g *= gelu_c
            np.tanh(g, out=g)
            g += 1
            g *= 0.5
            u *= g
            h = u @ p["down"]
            h += p["down_b"]
            h += x
            x = self._layer_norm(h, *p["norm2"])
        out = np.stack([x[a:b].mean(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_tokens(self, sequences: Sequence[Sequence[int]], pack_tokens: int = 1024, lanes: int = 1) -> Any:
        """Unit vectors, shape (len(sequences), dimensions): longest first into packs of up to
        `pack_tokens`, the packs shared among `lanes` threads (numpy releases the GIL in its
        loops and in BLAS; set OPENBLAS_NUM_THREADS=1 so that each lane is one core)."""
        import numpy as np

        out = np.zeros((len(sequences), self.dimensions), dtype=np.float32)
        packs: list[list[int]] = []
        used = 0
        for index in sorted(range(len(sequences)), key=lambda i: -len(sequences[i])):
            if not packs or used + len(sequences[index]) > pack_tokens:
                packs.append([])
                used = 0
            packs[-1].append(index)
            used += len(sequences[index])
        queue = iter(packs)
        take = threading.Lock()

        def work() -> None:
            while True:
                with take:
                    group = next(queue, None)
                if group is None:
                    return
                out[group] = self.embed_pack([sequences[i] for i in group])

        helpers = [threading.Thread(target=work, daemon=True) for _ in range(lanes - 1)]
        for thread in helpers:
            thread.start()
        work()
        for thread in helpers:
            thread.join()
        return out
