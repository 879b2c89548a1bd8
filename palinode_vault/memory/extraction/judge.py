"""The statement judge: how likely a sentence of the person's is a memory, and of which type.

The default extraction model (SmolLM2-135M) misses most of what a person says in passing, and the
type wording of cues.py catches only the statements that announce themselves ("we decided…"). On
conversations written apart from the rules, cues fired on 4 of 104 sentences of heldout5 while 31
held a memory. The judge reads the meaning instead: a softmax regression over the sentence's
embedding (the default MiniLM, through llama.cpp like every model here) and its cue, trained on the
labelled conversations of bench/extraction-eval/ by `bench/train_judge.py`, which writes
`judge.json` beside this module together with what it was trained on and its cross-validation.

The judge proposes: a statement it rates at PROGRAM.md's `review_judged` or above, that no item
covers, waits in inbox/ for the person (extract.py). It files on its own word only where its
cross-validation says that is right often enough: the pass's one statement whose likeliest type
it gives with the highest probability, at `file_judged` or above (PROGRAM.md, where its
cross-validated precision is written). Its weights belong to one embedding model; with another,
`load_judge` says why it is off and nothing is judged.
"""

from __future__ import annotations

import atexit
import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palinode_vault.memory.extraction.cues import tokens, type_by_wording

WEIGHTS = Path(__file__).with_name("judge.json")
NONE = "none"  # the class of sentences that are no memory

EmbedMany = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Rating:
    sentence: str
    memory: float  # probability that the sentence is a memory at all
    type: str  # the most likely memory type among those allowed
    typed: float = 0.0  # probability that the sentence is a memory of that type


def features(
    vector: Sequence[float],
    sentence: str,
    cue_types: Sequence[str],
    function_words: Sequence[str] = (),
    function_scale: float = 0.0,
) -> list[float]:
    """The embedding, the cue's type one-hot (cues.py, over `cue_types`), which of the grammar
    words (`function_words`, cue_words/<lang>.toml) the sentence has (scaled down: hundreds of
    them beside one embedding), and a bias."""
    cue = type_by_wording(sentence, list(cue_types))
    said = set(tokens(sentence))
    return (
        [float(v) for v in vector]
        + [1.0 if cue == t else 0.0 for t in cue_types]
        + [function_scale if w in said else 0.0 for w in function_words]
        + [1.0]
    )


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


class Judge:
    """Weights for one embedding model: `classes` (NONE first), `cue_types`, the grammar words it
    was trained with (`function_words`, `function_scale`; none in older weights), and one weight
    row per feature (embedding dimensions, cue types, grammar words, then the bias)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.model_id: str = data["embedding_model"]
        self.classes: list[str] = list(data["classes"])
        self.cue_types: list[str] = list(data["cue_types"])
        self.function_words: list[str] = [str(w) for w in data.get("function_words", [])]
        self.function_scale = float(data.get("function_scale", 0.0))
        self.weights: list[list[float]] = data["weights"]
        self.dimensions = len(self.weights) - len(self.cue_types) - len(self.function_words) - 1
        if self.classes[0] != NONE or any(len(row) != len(self.classes) for row in self.weights) or self.dimensions < 1:
            raise ValueError("judge weights are malformed (classes or row widths)")

    def rate(self, sentences: Sequence[str], embed_many: EmbedMany, types: Sequence[str]) -> list[Rating]:
        """One rating per sentence; the type is the likeliest of `types` (PROGRAM.md's)."""
        if not sentences:
            return []
        vectors = embed_many(list(sentences))
        out = []
        for sentence, vector in zip(sentences, vectors):
            if len(vector) != self.dimensions:
                raise ValueError(f"the judge needs {self.dimensions}-dimension embeddings, got {len(vector)}")
            x = features(vector, sentence, self.cue_types, self.function_words, self.function_scale)
            probs = softmax([sum(xi * row[k] for xi, row in zip(x, self.weights)) for k in range(len(self.classes))])
            allowed = [(p, c) for p, c in zip(probs[1:], self.classes[1:]) if c in types]
            typed, best = max(allowed) if allowed else (0.0, "")
            out.append(Rating(sentence, 1.0 - probs[0], best, typed))
        return out


def load_judge(path: Path = WEIGHTS) -> tuple[Judge | None, str]:
    """(judge, why): None with the reason when the weights are missing or unreadable."""
    try:
        return Judge(json.loads(path.read_text(encoding="utf-8"))), f"judge {path.name}"
    except FileNotFoundError:
        return None, f"no judge weights at {path} (python bench/train_judge.py writes them)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"judge weights {path} unreadable: {exc}"


_EMBEDDER: Any = None
_EMBEDDER_LOCK = threading.Lock()  # one llama.cpp context: the sidecar may run two passes at once


def _embed_locked(texts: Sequence[str]) -> Any:
    with _EMBEDDER_LOCK:
        return _EMBEDDER.embed_many(texts)


def judge_embedder(model_id: str, index: Any = None) -> tuple[EmbedMany | None, str]:
    """The embedding model the judge's weights were trained on: the search index's when it is that
    model (already loaded in the sidecar), else the default MiniLM loaded once per process; None
    with the reason when neither is it."""
    global _EMBEDDER
    model = getattr(index, "model", None) if index is not None else None
    if model is not None and getattr(index, "vectors_usable", False):
        identity = model.identity()
        if identity and identity[0] == model_id:
            return (lambda texts: model.get().embed_many(texts)), "the index's embedder"
    try:
        with _EMBEDDER_LOCK:
            if _EMBEDDER is None:
                from palinode_vault.models.embedder import Embedder

                _EMBEDDER = Embedder()
                # closed before the interpreter tears llama_cpp down (its __del__ fails after that)
                atexit.register(_EMBEDDER.close)
    except Exception as exc:  # noqa: BLE001 - no model, no judge: the pass goes on and says why
        return None, f"the default embedding model cannot be loaded ({exc})"
    if _EMBEDDER.model_id != model_id:
        return None, f"the judge was trained on {model_id.split(':')[0]}, the default model is {_EMBEDDER.model_id.split(':')[0]}"
    return _embed_locked, "the default embedder"
