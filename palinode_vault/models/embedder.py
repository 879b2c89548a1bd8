"""Text to vectors with a GGUF embedding model on llama.cpp (llama-cpp-python).

The default model is all-MiniLM-L6-v2, converted once from its PyPI package; any GGUF
embedding model path replaces it. Vectors are L2-normalised float32 numpy arrays, so a
dot product is the cosine similarity.

Long input is truncated here, not by llama-cpp-python: its own truncation cuts at the
batch size and drops the closing [SEP], which shifts every long text's vector. We keep
the tokens the tokenizer adds at both ends and cut the content between them.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from palinode_vault.models.backend import default_threads, import_llama_cpp, load_llama
from palinode_vault.models.convert import MINILM_GGUF_NAME, ensure_minilm_gguf
from palinode_vault.models.errors import ModelUnavailable
from palinode_vault.models.hashing import file_sha256

log = logging.getLogger(__name__)

#: sentence-transformers' max_seq_length for all-MiniLM-L6-v2: [CLS] + 254 + [SEP].
DEFAULT_MAX_TOKENS = 256
#: Context for other GGUF models, capped by what the model was trained on.
DEFAULT_CONTEXT = 512
#: Tokens decoded per llama.cpp call: several texts share one micro-batch (each its own
#: sequence, masked from the others), with flash attention. Attention still walks the whole
#: pack: without flash attention llama.cpp materialises n_tokens x n_tokens scores per head
#: (1024-token packs: 0.4x of one text per call); with it, each query still visits every key of
#: the pack and skips the masked ones, which cost 15.6 % of the time in 512-token packs against
#: 11.4 % in 256-token ones (perf, ~120-token texts). 256-token packs (two such texts, or one
#: long one) embedded 8-9 % more texts per CPU-second than 512 on the bench vault's chunks and
#: 1 % more on the help vault's longer ones (docs/BENCHMARKS.md, session 11).
PACK_TOKENS = 256
#: llama-cpp-python gives an embedding context at most min(n_batch, 256) sequences (llama.cpp's
#: LLAMA_MAX_SEQ), and llama.cpp aborts the whole process (GGML_ASSERT in build_pooling while
#: it reserves its graph) when n_batch is above that and not a multiple of it (320, 384 and
#: 640 did; 512, 768, 1280 did not): micro-batch sizes above it are rounded up to a multiple.
SEQ_LIMIT = 256
#: The most single-threaded contexts ("lanes") one embedder runs side by side. MiniLM's
#: operations are small, so threads splitting each one wait on each other: on 2 idle cores, in
#: one run, one thread embedded 12.0 texts/s, one context with two threads 22.9, two one-thread
#: contexts 27.6 (docs/BENCHMARKS.md, issue 20). The weights are memory-mapped and shared; a
#: lane adds its own compute buffers only (a few MB).
MAX_LANES = 8
#: Which engine runs a BERT GGUF's forward pass: "auto" (OpenVINO when it is installed and can
#: run the file, else llama.cpp), "openvino" (an error when it cannot) or "llama.cpp".
ENGINE_VARIABLE = "PALINODE_EMBEDDING_ENGINE"
ENGINES = ("auto", "openvino", "llama.cpp")
#: Calls with fewer texts stay on llama.cpp (a search query, a draft): OpenVINO's graph takes
#: about two seconds to build, which only bulk embedding pays back, and a query should not wait
#: behind a bulk batch of the index.
BULK_TEXTS = 16


def wanted_engine() -> str:
    """The engine PALINODE_EMBEDDING_ENGINE names ("auto" when unset); checked by the caller."""
    return os.environ.get(ENGINE_VARIABLE, "").strip().lower() or "auto"


class Embedder:
    """Embed text with a GGUF model on llama.cpp; thread-safe, one model per instance.

    Attributes:
        path: the GGUF file.
        dimensions: the vector length.
        max_tokens: the most tokens embedded per text (special tokens included).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        max_tokens: int | None = None,
        n_threads: int | None = None,
        pack_tokens: int = PACK_TOKENS,
        flash_attn: bool = True,
        repack: bool = False,
        engine: str | None = None,
    ) -> None:
        """Load `model_path`, or the default MiniLM (converted into the cache if needed).

        `engine` (default: the PALINODE_EMBEDDING_ENGINE variable, else "auto") chooses what
        runs bulk calls of a BERT model; llama.cpp always tokenises, so token counts and
        truncation do not depend on it.

        Raises ModelUnavailable when llama-cpp-python or the model file is missing, or
        when the file is not an embedding model.
        """
        engine = engine or wanted_engine()
        if engine not in ENGINES:
            raise ModelUnavailable(
                f"unknown embedding engine {engine!r}", fix=f"set {ENGINE_VARIABLE} to one of {', '.join(ENGINES)}"
            )
        self.path = Path(model_path).expanduser() if model_path else ensure_minilm_gguf()
        if not self.path.is_file():
            raise ModelUnavailable(
                f"embedding model file {self.path} does not exist",
                fix="correct the embedding model path in the settings, or leave it empty "
                "to use the default (palinode-vault models prepare)",
            )
        self._llama_cpp = import_llama_cpp()
        self._lock = threading.Lock()  # the first context (tokenizer, queries, one-lane work)
        self._lanes: list[tuple[Any, threading.Lock]] = []  # extra one-thread contexts
        self._lanes_wanted = 1
        self._lane_limit = MAX_LANES  # lowered when a lane cannot be loaded
        self._lanes_lock = threading.Lock()
        self._sha256: str | None = None
        if max_tokens is None:
            is_default = self.path.name == MINILM_GGUF_NAME
            max_tokens = DEFAULT_MAX_TOKENS if is_default else DEFAULT_CONTEXT
        threads = n_threads or default_threads()
        self._pack, self._flash_attn, self._repack = pack_tokens, flash_attn, repack
        self._llama = self._load(max(4, max_tokens), threads)
        trained = int(self._llama._model.n_ctx_train())
        if 0 < trained < self.max_tokens:
            # Positions past the trained context do not exist in the model: shrink.
            self._llama.close()
            self._llama = self._load(trained, threads)
        self.threads = threads
        if self._llama.pooling_type() == self._llama_cpp.LLAMA_POOLING_TYPE_NONE:
            raise ModelUnavailable(
                f"{self.path.name} has no pooling: it is not a sentence-embedding model",
                fix="choose a GGUF embedding model (for example nomic-embed, bge, MiniLM)",
            )
        self.dimensions = int(self._llama.n_embd())
        self._n_seq_max = int(self._llama.context_params.n_seq_max)
        self._n_batch = int(self._llama.context_params.n_batch)
        self._head, self._tail = self._framing()
        self._engine_wanted = engine
        self._openvino: Any = None  # OpenVinoBert once built; False when it cannot run this model
        if engine == "openvino":
            self._bulk_engine()  # fail now, with the reason, rather than at the first bulk call

    @property
    def engine(self) -> str:
        """What runs bulk calls: "openvino (bf16)", "openvino (f32)" or "llama.cpp" (the
        first from the start when OpenVINO is chosen by name, else once a bulk call built it)."""
        return f"openvino ({self._openvino.precision})" if self._openvino else "llama.cpp"

    def _bulk_engine(self) -> Any:
        """OpenVinoBert for this model, built on first need; None when llama.cpp does the work."""
        if self._openvino is None and self._engine_wanted != "llama.cpp":
            from palinode_vault.models.openvino_bert import OpenVinoBert, bert_layout, import_openvino

            with self._lock:
                if self._openvino is None:
                    try:
                        import_openvino()
                        layout = bert_layout(self.path)
                        if layout is None:
                            raise ModelUnavailable(f"{self.path.name} is not a BERT model with mean pooling and f32/f16 weights")
                        self._openvino = OpenVinoBert(layout)
                    except Exception as exc:
                        if self._engine_wanted == "openvino":
                            raise ModelUnavailable(
                                f"OpenVINO cannot embed with {self.path.name}: {exc}",
                                fix=f"unset {ENGINE_VARIABLE} to let llama.cpp do it",
                            ) from exc
                        log.info("embedding on llama.cpp: OpenVINO cannot run %s (%s)", self.path.name, exc)
                        self._openvino = False
        return self._openvino or None

    def set_threads(self, threads: int) -> None:
        """Use `threads` cores from the next call on (the bulk index drops to one while the
        person types, and takes every core when they are away).

        One core: the first context with one thread. More: as many one-thread contexts
        (lanes, at most MAX_LANES), each embedding its own packs; the first context's thread
        count stays at one while lanes run, so no llama.cpp thread spins waiting for another.
        """
        threads = max(1, int(threads))
        with self._lock:
            if threads > 1:
                self._lanes_wanted = min(threads, self._lane_limit)
                threads = 1
            else:
                self._lanes_wanted = 1
            if threads != self.threads:
                self._llama_cpp.llama_set_n_threads(self._llama._ctx.ctx, threads, threads)
                self.threads = threads

    @property
    def lanes(self) -> int:
        """How many contexts the next large call may use side by side."""
        return self._lanes_wanted

    @property
    def contexts(self) -> int:
        """How many llama.cpp contexts are loaded (the first and the lanes used so far)."""
        return 1 + len(self._lanes)

    # -- identity -----------------------------------------------------------------------

    @property
    def sha256(self) -> str:
        """The SHA-256 of the GGUF file (computed once, cached on disk by size and mtime)."""
        if self._sha256 is None:
            self._sha256 = file_sha256(self.path)
        return self._sha256

    @property
    def model_id(self) -> str:
        """`<file name>:<sha256>`: the index records it so vectors of two models never mix."""
        return f"{self.path.name}:{self.sha256}"

    # -- tokens -------------------------------------------------------------------------

    def tokens(self, text: str) -> list[int]:
        """The token ids that will be embedded for `text`, truncated to `max_tokens`.

        Truncation keeps the tokens the tokenizer adds at both ends ([CLS] ... [SEP]).
        """
        with self._lock:
            ids = self._llama.tokenize(text.encode("utf-8", "replace"), add_bos=True, special=False)
        if len(ids) <= self.max_tokens:
            return ids
        keep = self.max_tokens - self._head - self._tail
        return ids[: self._head + keep] + ids[len(ids) - self._tail :]

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` has before truncation (special tokens included)."""
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8", "replace"), add_bos=True, special=False))

    # -- vectors ------------------------------------------------------------------------

    def embed(self, text: str) -> Any:
        """Embed one text: a float32 numpy vector of length `dimensions`, L2 norm 1."""
        return self.embed_tokens([self.tokens(text)])[0]

    def embed_many(self, texts: Sequence[str], batch_size: int | None = None) -> Any:
        """Embed several texts: a float32 array of shape (len(texts), dimensions).

        Texts are packed into micro-batches of up to `pack_tokens` tokens (at most
        `batch_size` texts each, when given); pass many texts at once for the best rate.
        """
        return self.embed_tokens([self.tokens(t) for t in texts], batch_size=batch_size)

    def embed_tokens(self, sequences: Sequence[Sequence[int]], batch_size: int | None = None) -> Any:
        """Embed token sequences (each at most `max_tokens` long) as unit vectors."""
        import numpy as np

        for index, seq in enumerate(sequences):
            if not seq or len(seq) > self.max_tokens:
                raise ValueError(f"token sequence {index} has {len(seq)} tokens; expected 1..{self.max_tokens}")
        # small calls stay on llama.cpp even once OpenVINO is built: a query never waits behind a
        # bulk batch on the other engine (unless OpenVINO was asked for by name)
        bulk = self._bulk_engine() if len(sequences) >= BULK_TEXTS or self._engine_wanted == "openvino" else None
        if bulk is not None:
            try:
                return bulk.embed(sequences, max(self.threads, self._lanes_wanted))
            except Exception as exc:
                if self._engine_wanted == "openvino":
                    raise
                # a platform where OpenVINO imports but cannot compile or run: llama.cpp from now on
                log.warning("embedding on llama.cpp from now on: OpenVINO failed on %s (%s)", self.path.name, exc)
                self._openvino = False
        out = np.zeros((len(sequences), self.dimensions), dtype=np.float32)
        most = min(batch_size or self._n_seq_max, self._n_seq_max)
        # Longest first, each into the first pack with room: packs come out nearly full.
        packs: list[tuple[list[int], int]] = []  # (indices, tokens used)
        for index in sorted(range(len(sequences)), key=lambda i: -len(sequences[i])):
            size = len(sequences[index])
            for pos, (group, used) in enumerate(packs):
                if used + size <= self._n_batch and len(group) < most:
                    group.append(index)
                    packs[pos] = (group, used + size)
                    break
            else:
                packs.append(([index], size))
        groups = [group for group, _ in packs]
        lanes = self._lanes_for(len(groups))
        if len(lanes) == 1:
            for group in groups:
                self._decode(lanes[0], sequences, group, out)
        else:
            self._decode_in_lanes(lanes, sequences, groups, out)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def close(self) -> None:
        """Free the model (also happens when the object is garbage-collected)."""
        self._openvino = None
        for lane, lock in getattr(self, "_lanes", []):
            with lock:
                lane.close()
        self._lanes = []
        llama = getattr(self, "_llama", None)
        if llama is not None:
            llama.close()
            self._llama = None

    def __repr__(self) -> str:
        return f"<Embedder {self.path.name} dim={getattr(self, 'dimensions', '?')}>"

    # -- internals ----------------------------------------------------------------------

    def _lanes_for(self, packs: int) -> list[tuple[Any, threading.Lock]]:
        """The contexts this call uses: the first, plus extra lanes (loaded on first need)
        when more than one core is allowed and there is more than one pack."""
        first = (self._llama, self._lock)
        wanted = min(self._lanes_wanted, packs)
        if wanted <= 1:
            return [first]
        with self._lanes_lock:
            while len(self._lanes) < wanted - 1:
                try:
                    self._lanes.append((self._load(self.max_tokens, 1), threading.Lock()))
                except ModelUnavailable as exc:  # the file went away or memory ran out: fewer lanes
                    log.warning("embedding with %d context(s): another could not be loaded (%s)", 1 + len(self._lanes), exc)
                    self._lane_limit = self._lanes_wanted = 1 + len(self._lanes)
                    break
            return [first, *self._lanes[: max(0, min(wanted, self._lane_limit) - 1)]]

    def _decode_in_lanes(
        self, lanes: list[tuple[Any, threading.Lock]], sequences: Sequence[Sequence[int]], groups: list[list[int]], out: Any
    ) -> None:
        """Each lane takes the next pack until none is left (lane 0 in this thread). ctypes
        releases the GIL while llama.cpp decodes, so the lanes run in parallel."""
        queue = iter(groups)
        take = threading.Lock()
        errors: list[BaseException] = []

        def work(lane: tuple[Any, threading.Lock]) -> None:
            try:
                while not errors:
                    with take:
                        group = next(queue, None)
                    if group is None:
                        return
                    self._decode(lane, sequences, group, out)
            except BaseException as exc:  # re-raised in the caller below
                errors.append(exc)

        helpers = [threading.Thread(target=work, args=(lane,), name="palinode-embed-lane", daemon=True) for lane in lanes[1:]]
        for thread in helpers:
            thread.start()
        work(lanes[0])
        for thread in helpers:
            thread.join()
        if errors:
            raise errors[0]

    def _decode(self, lane: tuple[Any, threading.Lock], sequences: Sequence[Sequence[int]], group: list[int], out: Any) -> None:
        # The same calls as Llama.embed(), but on tokens we truncated ourselves and with
        # the vectors copied straight into numpy.
        import numpy as np

        llama_cpp = self._llama_cpp
        llama, lock = lane
        with lock:
            batch, ctx = llama._batch, llama._ctx
            batch.reset()
            for seq_id, index in enumerate(group):
                batch.add_sequence(list(sequences[index]), seq_id, True)
            ctx.kv_cache_clear()
            try:
                ctx.decode(batch)
            finally:
                batch.reset()
            for seq_id, index in enumerate(group):
                ptr = llama_cpp.llama_get_embeddings_seq(ctx.ctx, seq_id)
                if not ptr:
                    raise ModelUnavailable(f"{self.path.name} returned no sequence embedding")
                address = ctypes.addressof(ptr.contents)
                buffer = (ctypes.c_float * self.dimensions).from_address(address)
                out[index] = np.frombuffer(buffer, dtype=np.float32)  # type: ignore[call-overload]  # a ctypes array is a buffer
            ctx.kv_cache_clear()

    def _framing(self) -> tuple[int, int]:
        """How many tokens the tokenizer adds before and after the content."""
        empty = self._llama.tokenize(b"", add_bos=True, special=False)
        probe = self._llama.tokenize(b"memory", add_bos=True, special=False)
        head = 0
        while head < len(empty) and head < len(probe) and empty[head] == probe[head]:
            head += 1
        return head, len(empty) - head

    def _load(self, max_tokens: int, threads: int) -> Any:
        self.max_tokens = max_tokens
        # A non-causal model must see a whole sequence in one micro-batch, so
        # n_batch = n_ubatch = n_ctx; several texts share one micro-batch (PACK_TOKENS).
        size = max(max_tokens, self._pack)
        if size > SEQ_LIMIT:
            size = -(-size // SEQ_LIMIT) * SEQ_LIMIT
        return load_llama(
            str(self.path),
            role="embedding",
            embedding=True,
            n_ctx=size,
            n_batch=size,
            n_ubatch=size,
            n_threads=threads,
            n_threads_batch=threads,
            flash_attn=self._flash_attn,
            repack=self._repack,
        )
