"""The statement judge: how likely a sentence of the person's is a memory, and of which type.

The default extraction model (SmolLM2-135M) misses most of what a person says in passing, and the
type wording of cues.py catches only the statements that announce themselves ("we decided…"). On
conversations written apart from the rules, cues fired on 4 of 104 sentences of heldout5 while 31
held a memory. The judge reads the meaning instead: a small network (one hidden layer of ReLU
units; older weights a softmax regression) over the sentence's embedding (the default MiniLM,
through llama.cpp like every model here), its cue, where it was said (`PLACEMENT`, and the line's
embedding) and how it stands to what was said around it (`NEIGHBOURS`), trained on the labelled
conversations of
bench/extraction-eval/ by `bench/train_judge.py`, which writes `judge.json` beside this module
together with what it was trained on and its cross-validation.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palinode_vault.memory.extraction.cues import tokens, type_by_wording
from palinode_vault.memory.extraction.numbered import Statement
from palinode_vault.memory.extraction.transcript import USER, Turn

WEIGHTS = Path(__file__).with_name("judge.json")
NONE = "none"  # the class of sentences that are no memory

EmbedMany = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Rating:
    sentence: str
    memory: float  # probability that the sentence is a memory at all
    type: str  # the most likely memory type among those allowed
    typed: float = 0.0  # probability that the sentence is a memory of that type


#: Where and how a sentence was said, read beside its words (weights trained with them name them
#: under "placement"): first or last of the sentences on its line and in its turn, how many share
#: its line, in the person's first turn, right after a question of the assistant's, with a digit,
#: and its length; and the line it is on, embedded (`line_scale`). A person types one thought a
#: line, its reason and details with it, and opens a message with its news; none of it depends on
#: the language. Cross-validated on 41 sets, it gives review more memories for fewer wrong items
#: and files more right at the same precision (docs/BENCHMARKS.md, session 20).
PLACEMENT = (
    "first_on_line",
    "last_on_line",
    "sentences_on_line",
    "first_in_turn",
    "last_in_turn",
    "first_turn",
    "after_question",
    "digit",
    "length",
)


#: What a sentence shares with the statements around it, read beside it (weights trained with them
#: name them under "neighbours"): how close its meaning is to the person's statement before it and
#: after it in the same message (0 where there is none), whether there is one, and how close it is to
#: its line and to its whole message. A memory's reason or detail reads like the statement it
#: follows; news stands apart from the chat around it. Cross-validated on 58 sets, they gave review
#: more memories at the same wrong items (docs/BENCHMARKS.md, session 25).
NEIGHBOURS = ("like_previous", "like_next", "has_previous", "has_next", "like_line", "like_turn")


@dataclass(frozen=True)
class Placed:
    """A sentence's `PLACEMENT` values, the line and the message it was said in, and the person's
    statements right before and after it in that message ('' where there is none)."""

    values: tuple[float, ...]
    line: str
    turn: str = ""
    previous: str = ""
    next: str = ""

    def texts(self) -> list[str]:
        """What besides the sentence is embedded for its features: its line, its message and its
        neighbours."""
        return [t for t in (self.line, self.turn or self.line, self.previous, self.next) if t]

    @classmethod
    def alone(cls, sentence: str) -> Placed:
        """A sentence said on its own: one line of one message."""
        return placement([Statement(1, sentence, 0, 0, len(sentence), 0, 0)], [Turn(USER, sentence)])[0]


def placement(statements: Sequence[Statement], turns: Sequence[Turn]) -> list[Placed]:
    """Where each statement of a conversation was said (`turns` as they were numbered)."""
    on_line: dict[tuple[int, int], list[int]] = {}
    in_turn: dict[int, list[int]] = {}
    for s in statements:
        on_line.setdefault((s.turn, s.line), []).append(s.number)
        in_turn.setdefault(s.turn, []).append(s.number)
    first_turn = min(in_turn, default=0)
    by_number = {s.number: s for s in statements}
    out = []
    for s in statements:
        line, turn = on_line[(s.turn, s.line)], in_turn[s.turn]
        asked = 0 < s.turn <= len(turns) and turns[s.turn - 1].content.rstrip().endswith("?")
        text = turns[s.turn].content if s.turn < len(turns) else s.text
        start, end = text.rfind("\n", 0, s.start) + 1, text.find("\n", s.end)
        values = (
            float(line[0] == s.number),
            float(line[-1] == s.number),
            min(len(line), 5) / 5,
            float(turn[0] == s.number),
            float(turn[-1] == s.number),
            float(s.turn == first_turn),
            float(asked),
            float(any(c.isdigit() for c in s.text)),
            min(len(s.text.split()), 40) / 40,
        )
        at = turn.index(s.number)
        previous = by_number[turn[at - 1]].text if at > 0 else ""
        following = by_number[turn[at + 1]].text if at + 1 < len(turn) else ""
        out.append(Placed(values, text[start : end if end >= 0 else len(text)], text, previous, following))
    return out


def _like(a: Sequence[float], b: Sequence[float] | None) -> float:
    """Cosine similarity of two embeddings (0 when either is missing or zero)."""
    if b is None:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


def neighbour_values(vector: Sequence[float], at: Placed, by_text: Mapping[str, Sequence[float]]) -> tuple[float, ...]:
    """`NEIGHBOURS` of a sentence (its embedding `vector`, said where `at` says) from the
    embeddings of `at.texts()` in `by_text`."""
    previous = by_text[at.previous] if at.previous else None
    following = by_text[at.next] if at.next else None
    return (
        _like(vector, previous),
        _like(vector, following),
        float(previous is not None),
        float(following is not None),
        _like(vector, by_text[at.line]),
        _like(vector, by_text[at.turn or at.line]),
    )


def features(
    vector: Sequence[float],
    sentence: str,
    cue_types: Sequence[str],
    function_words: Sequence[str] = (),
    function_scale: float = 0.0,
    placed: Sequence[float] = (),
    line_vector: Sequence[float] = (),
    line_scale: float = 0.0,
    neighbours: Sequence[float] = (),
) -> list[float]:
    """The embedding, the cue's type one-hot (cues.py, over `cue_types`), which of the grammar
    words (`function_words`, cue_words/<lang>.toml) the sentence has (scaled down: hundreds of
    them beside one embedding), its `placement` values, its line's embedding (times `line_scale`)
    and its `neighbour_values` when the weights read them, and a bias."""
    cue = type_by_wording(sentence, list(cue_types))
    said = set(tokens(sentence))
    return (
        [float(v) for v in vector]
        + [1.0 if cue == t else 0.0 for t in cue_types]
        + [function_scale if w in said else 0.0 for w in function_words]
        + [float(v) for v in placed]
        + [line_scale * float(v) for v in line_vector]
        + [float(v) for v in neighbours]
        + [1.0]
    )


def layer(x: Sequence[float], rows: Sequence[Sequence[float]]) -> list[float]:
    """`x` times a weight matrix stored a row per input (rows skipped where the input is 0: most
    grammar-word features are)."""
    out = [0.0] * len(rows[0])
    for xi, row in zip(x, rows):
        if xi:
            for j, w in enumerate(row):
                out[j] += xi * w
    return out


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


class Judge:
    """Weights for one embedding model: `classes` (NONE first), `cue_types`, the grammar words it
    was trained with (`function_words`, `function_scale`; none in older weights), whether it reads
    `placement` (`PLACEMENT`'s names), the line's embedding (`line_scale`) and the `neighbours`
    (`NEIGHBOURS`' names; none of the three in older weights). Features are the embedding
    dimensions, cue types, grammar words, placement, the line's embedding dimensions, the
    neighbours, then the bias. Without `hidden`, `weights` has a row per feature (a softmax
    regression); with it, `hidden` has a row per feature and a column per hidden unit (ReLU), and
    `weights` a row per hidden unit and one for the bias."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.model_id: str = data["embedding_model"]
        self.classes: list[str] = list(data["classes"])
        self.cue_types: list[str] = list(data["cue_types"])
        self.function_words: list[str] = [str(w) for w in data.get("function_words", [])]
        self.function_scale = float(data.get("function_scale", 0.0))
        self.weights: list[list[float]] = data["weights"]
        self.hidden: list[list[float]] = data.get("hidden") or []
        self.placement: list[str] = [str(n) for n in data.get("placement", [])]
        if self.placement and tuple(self.placement) != PLACEMENT:
            raise ValueError(f"judge weights read a placement this code does not compute: {self.placement}")
        self.neighbours: list[str] = [str(n) for n in data.get("neighbours", [])]
        if self.neighbours and tuple(self.neighbours) != NEIGHBOURS:
            raise ValueError(f"judge weights read neighbours this code does not compute: {self.neighbours}")
        self.line_scale = float(data.get("line_scale", 0.0))  # the line's embedding, scaled; 0: not read
        inputs = self.hidden or self.weights
        fixed = len(self.cue_types) + len(self.function_words) + len(self.placement) + len(self.neighbours) + 1
        rest = len(inputs) - fixed
        self.dimensions = rest // 2 if self.line_scale else rest
        units = len(self.hidden[0]) if self.hidden and self.hidden[0] else 0
        if (
            self.classes[0] != NONE
            or any(len(row) != len(self.classes) for row in self.weights)
            or self.dimensions < 1
            or self.line_scale
            and rest % 2
            or self.hidden
            and (units < 1 or any(len(row) != units for row in self.hidden) or len(self.weights) != units + 1)
        ):
            raise ValueError("judge weights are malformed (classes or row widths)")

    def scores(self, x: Sequence[float]) -> list[float]:
        """The class probabilities of one feature vector."""
        if self.hidden:
            x = [max(0.0, h) for h in layer(x, self.hidden)] + [1.0]
        return softmax(layer(x, self.weights))

    def rate(
        self,
        sentences: Sequence[str],
        embed_many: EmbedMany,
        types: Sequence[str],
        placed: Sequence[Placed] | None = None,
    ) -> list[Rating]:
        """One rating per sentence; the type is the likeliest of `types` (PROGRAM.md's). `placed`:
        where each was said (for statements, `placement(statements, turns)`); without it each is
        read as said on its own, one line of one message."""
        if not sentences:
            return []
        where = list(placed) if placed is not None else [Placed.alone(s) for s in sentences]
        wanted = list(sentences)
        if self.line_scale:
            wanted += [p.line for p in where]
        if self.neighbours:
            wanted += [t for p in where for t in p.texts()]
        unique = list(dict.fromkeys(wanted))
        vectors = embed_many(unique)
        by_text = dict(zip(unique, vectors))
        out = []
        for sentence, at in zip(sentences, where):
            vector = by_text[sentence]
            if len(vector) != self.dimensions:
                raise ValueError(f"the judge needs {self.dimensions}-dimension embeddings, got {len(vector)}")
            values = at.values if self.placement else ()
            line_vector = by_text[at.line] if self.line_scale else ()
            around = neighbour_values(vector, at, by_text) if self.neighbours else ()
            x = features(
                vector,
                sentence,
                self.cue_types,
                self.function_words,
                self.function_scale,
                values,
                line_vector,
                self.line_scale,
                around,
            )
            probs = self.scores(x)
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
