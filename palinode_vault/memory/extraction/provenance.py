"""The provenance score: how likely a line of the person's message was brought in, not written.

The sure marks of `pasted.py` (fences, quotes, chats, mail, letters, hidden text, capital labels)
hold whatever the words. The brought-in shapes after them (a paragraph of lines after the first,
the line under a colon, a question or a line left open) decide by shape alone, and a person's own
list and a pasted one can share a shape: only the words and the situation tell them apart. So
the lines those shapes judge are read by a fitted score instead, the same way the statement judge
reads statements: a logistic regression over the line's shape and those of the lines around it
(`SHAPE`, whether it names the person among them), where it stands in its message and where the
message was sent (`PLACE`, the shapes' own mark among them), and three embeddings of the default
MiniLM (the line, its paragraph's mean, the line read before it, which for a message's first line
is the last of the person's message right before it, when no reply came between). It
is trained on the development sets (never a frozen set before its run) by
`bench/train_provenance.py`, which writes `provenance.json` beside this module with the sets and
its cross-validation; a line at PROGRAM.md's `pasted_judged` or above is marked, one below is
the person's. Test63, its first run on a new frozen set, proposed none of 15 pasted passages.

Measured before it was taken (docs/BENCHMARKS.md, session 30): trained on the 71 sets before
test61 and test62 and judged on those two, it marked 28 of their 46 pasted lines where the shapes
marked 13, for the same 5 of 56 lines holding a memory.

Without the weights, without the embedding model they were trained on, or for a message of more
than `MAX_LINES` such lines (embedding each would cost more than the pass), the shapes decide, as
they did before; the pass says which.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from palinode_vault.core.prose import list_item
from palinode_vault.memory.extraction.judge import EmbedMany
from palinode_vault.memory.extraction.pasted import PASTED, LineReader, Sent, speaker_label

WEIGHTS = Path(__file__).with_name("provenance.json")
MAX_LINES = 400  # lines of one message the score reads; past that the shapes decide

#: A line's shape, for the line and for each of the two around it (zeros where there is none):
#: its length in characters and words, the share of digits and capitals, how it ends and starts,
#: and whether it is an item of a list, a labelled line, a table row, holds an address, a web
#: link or a mark of text taken out, is a heading or is indented, and whether it names the
#: person (their own profile's name or alias: a line that does was most likely written to them,
#: "Hi Noor, ..."). No word of any language.
SHAPE = (
    "chars",
    "words",
    "digit_share",
    "capital_share",
    "ends_colon",
    "ends_question",
    "ends_full_stop",
    "ends_open",
    "ends_comma",
    "ends_closing",
    "starts_capital",
    "starts_digit",
    "starts_small",
    "starts_mark",
    "item",
    "labelled",
    "table_row",
    "address",
    "web_link",
    "heading",
    "indented",
    "holds_pasted",
    "names_person",
)

#: Where the line stands: in its message's first paragraph, how far down (paragraphs; lines in its
#: paragraph), where its message was sent (`pasted.Sent`: announced by the person's message
#: before it, the conversation's first, right after one of their own), whether a line is right
#: above or below it, and the shapes' own mark.
PLACE = (
    "first_paragraph",
    "paragraph",
    "first_line",
    "line",
    "announced",
    "first_turn",
    "after_own",
    "above",
    "below",
    "shapes_mark",
)


def shape(line: str, names: frozenset[str] = frozenset()) -> list[float]:
    """`SHAPE`'s values for one line; `names`: the person's own, lower-cased (`own_names`)."""
    s = line.strip()
    n = len(s) or 1
    end, start = s[-1:], s[:1]
    flags = (
        end == ":",
        end == "?",
        end == ".",
        end.isalnum(),
        end in ",;",
        end in ")]\"'”",
        start.isupper(),
        start.isdigit(),
        start.islower(),
        not start.isalnum(),
        list_item(line),
        speaker_label(line),
        s.count("|") >= 2,
        "@" in s,
        "http" in s,
        s.startswith("#"),
        line[:1] in " \t",
        PASTED in s,
        names_any(s.lower(), names),
    )
    counts = (
        min(len(s), 300) / 100,
        min(len(s.split()), 60) / 20,
        sum(c.isdigit() for c in s) / n,
        sum(c.isupper() for c in s) / n,
    )
    return [*counts, *map(float, flags)]


_NONE = [0.0] * len(SHAPE)


def names_any(text: str, names: frozenset[str]) -> bool:
    """Whether lower-cased `text` holds one of `names` as a whole word."""
    for name in names:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
                return True
            at = text.find(name, at + 1)
    return False


def own_names(name: str, aliases: Sequence[str] = ()) -> frozenset[str]:
    """The words the person is called by, lower-cased: each word of their profile's name and
    each alias whole ("Noor Haddad", ["Noor", "NH"] -> noor, haddad, nh)."""
    words = {w for w in name.lower().split() if len(w) > 1}
    return frozenset(words | {a.strip().lower() for a in aliases if len(a.strip()) > 1})


def judged_lines(
    lines: Sequence[str], marks: Sequence[bool], sent: Sent, names: frozenset[str] = frozenset()
) -> list[tuple[int, list[float]]]:
    """(line number, shape and place values) of each line of a message the score reads: every
    line with words that the sure marks left (`lines` as `pasted.surely_marked` gives them;
    `marks` the brought-in shapes' for each; `names` the person's, `own_names`)."""
    out = []
    paragraph = at = 0
    shapes: dict[int, list[float]] = {}  # each line's shape once, though three judged lines read it

    def shape_of(i: int) -> list[float]:
        if i not in shapes:
            shapes[i] = shape(lines[i], names)
        return shapes[i]

    for i, line in enumerate(lines):
        if not line.strip():
            paragraph, at = paragraph + (at > 0), 0
            continue
        at += 1
        if line.strip() == PASTED:
            continue
        above = lines[i - 1] if i and lines[i - 1].strip() else ""
        below = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].strip() else ""
        where = (
            paragraph == 0,
            min(paragraph, 5) / 5,
            at == 1,
            min(at, 10) / 10,
            sent.announced,
            sent.first,
            sent.after_own,
            bool(above),
            bool(below),
            marks[i],
        )
        values = shape_of(i) + (shape_of(i - 1) if above else _NONE) + (shape_of(i + 1) if below else _NONE)
        out.append((i, values + [float(x) for x in where]))
    return out


def with_embeddings(
    judged: Sequence[tuple[int, list[float]]], vectors: Sequence[Sequence[float]], before: Sequence[float] = ()
) -> list[list[float]]:
    """Each judged line's values followed by its embedding (`vectors`, one per judged line), its
    paragraph's mean (the judged lines next to each other) and the one of the line read before
    it: the judged line before it in the message; for the first, `before` (the embedding of the
    last line of the person's message right before this one, `Sent.before`) or zeros. Then 1 for
    the bias."""
    rows = []
    size = len(vectors[0]) if len(vectors) else 0
    n = 0
    while n < len(judged):
        end = n + 1
        while end < len(judged) and judged[end][0] == judged[end - 1][0] + 1:
            end += 1
        mean = [sum(v[d] for v in vectors[n:end]) / (end - n) for d in range(size)]
        for m in range(n, end):
            above = list(vectors[m - 1]) if m else list(before) or [0.0] * size
            rows.append(judged[m][1] + list(vectors[m]) + mean + above + [1.0])
        n = end
    return rows


class Provenance:
    """Weights for one embedding model (`embedding_model`): a weight per feature (`SHAPE` for the
    line, the line above and the line below, `PLACE`, three embeddings, the bias)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.model_id: str = data["embedding_model"]
        if tuple(data.get("shape", ())) != SHAPE or tuple(data.get("place", ())) != PLACE:
            raise ValueError("provenance weights read features this code does not compute")
        self.weights: list[float] = [float(w) for w in data["weights"]]
        fixed = 3 * len(SHAPE) + len(PLACE) + 1
        if (len(self.weights) - fixed) % 3 or len(self.weights) <= fixed:
            raise ValueError("provenance weights are malformed (their length)")
        self.dimensions = (len(self.weights) - fixed) // 3

    def pasted(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """The probability that each line was brought in."""
        out = []
        for row in rows:
            z = sum(x * w for x, w in zip(row, self.weights))
            out.append(1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))))
        return out

    def reader(self, embed_many: EmbedMany, threshold: float, names: frozenset[str] = frozenset()) -> LineReader:
        """What `pasted.own_turns` calls for each of the person's messages: the brought-in marks,
        the score's where it reads the message (every judged line at `threshold` or above is
        marked, every other one is not), the shapes' where it does not. `names`: the person's
        (`own_names`; none when the vault has no profile of theirs)."""

        def read(lines: list[str], marks: list[bool], sent: Sent) -> list[bool]:
            if sum(1 for line in lines if line.strip() and line.strip() != PASTED) > MAX_LINES:
                return marks  # counted before any feature is computed: a 50,000-line paste costs a scan
            judged = judged_lines(lines, marks, sent, names)
            if not judged:
                return marks
            vectors = embed_many([lines[i].strip() for i, _ in judged] + ([sent.before] if sent.before else []))
            if any(len(v) != self.dimensions for v in vectors):
                raise ValueError(f"the provenance score needs {self.dimensions}-dimension embeddings")
            before = vectors[len(judged)] if sent.before else ()
            out = list(marks)
            for (i, _), p in zip(judged, self.pasted(with_embeddings(judged, vectors[: len(judged)], before))):
                out[i] = p >= threshold
            return out

        return read


def load_provenance(path: Path = WEIGHTS) -> tuple[Provenance | None, str]:
    """(score, why): None with the reason when the weights are missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Provenance(data), f"provenance score ({path.name}, {len(data.get('sets', []))} sets)"
    except FileNotFoundError:
        return None, f"no {path.name}: the shapes decide"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"{path.name} unreadable ({exc}): the shapes decide"
