"""The numbered statements: what the person said, sentence by sentence, that a memory may be.

The first stage of the extraction pass. Its input is the conversation after the secrets were
redacted and pasted, quoted, fenced and injected text was replaced (`pasted.own_words`); its output
is the person's own sentences, numbered 1..n, each with where it was said (the turn and the
character offsets in that turn's cleaned text). The model chooses among these numbers and nothing
else, so a memory's words are always the person's:

- only the person's turns: never the agent's;
- never a sentence holding pasted text (`pasted.PASTED`) or a withheld secret, nor one that talks
  of credentials (secrets.py);
- never a question (one without its question mark too: "can you turn this into an agenda"), small
  talk ("Morning!", "brb") or tool output (a prompt, a stack trace);
- small talk that opens a sentence ("Hi! Quick one: ...") is cut from it;
- fewer than three content words is too little to remember.

The sentences come from the one splitter (`core.prose.sentences`); the English words that tell
small talk and tool output are data (cue_words/en.toml).
"""

from __future__ import annotations

from dataclasses import dataclass

from palinode_vault.core.prose import sentence_spans, words
from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.cues import load, starts_with, tokens
from palinode_vault.memory.extraction.pasted import PASTED
from palinode_vault.memory.extraction.transcript import USER, Turn

MAX_STATEMENTS = 40  # the newest ones, when a conversation says more (a small model reads ~100 tokens a second)
MIN_CONTENT_WORDS = 3


@dataclass(frozen=True)
class Statement:
    """One numbered statement of the person's: `text` is `turns[turn].content[start:end]`."""

    number: int
    text: str
    turn: int
    start: int
    end: int
    line: int  # the line of the turn it is on: a person types a thought as one line
    #: the first turn of the run of the person's messages it was said in: messages sent one after
    #: another with no reply between are one thought split by the send button (a decision, then
    #: its reason, then what lost, each dictated as a message of its own)
    run: int

    def provenance(self) -> str:
        return f"turn {self.turn + 1}, characters {self.start}-{self.end}"


def _cut_words(text: str, count: int) -> int:
    """The offset in `text` just past its first `count` words (as cues.tokens counts them) and
    the punctuation and spaces after them."""
    seen, i = 0, 0
    while i < len(text) and seen < count:
        while i < len(text) and not (text[i].isalnum() or text[i] in "'-’,"):
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
        else:
            while i < len(text) and (text[i].isalnum() or text[i] in "'-’"):
                i += 1
        seen += 1
    while i < len(text) and not text[i].isalnum() and text[i] not in "\"'“‘([":
        i += 1
    return i


def without_openers(text: str) -> int:
    """How many characters of small talk open `text` ("Hi! Quick one: ..."): several in a row."""
    openers = load().openers
    cut = 0
    while True:
        opener = starts_with(tokens(text[cut:]), openers)
        if opener is None:
            return cut
        step = _cut_words(text[cut:], len(opener))
        if step == 0:
            return cut
        cut += step


def passing(text: str) -> str | None:
    """Why `text` is no statement to remember (a question, small talk, tool output), or None."""
    cues = load()
    lower = text.lower().lstrip()
    said = tokens(text)
    if text.rstrip().endswith("?") or starts_with(said, cues.question_openers):
        return "a question"
    if lower.startswith(cues.tool_prefixes) or _stack_frame(lower) or any(f in lower for f in cues.tool_fragments):
        return "tool output"
    if len(said) <= cues.small_talk_words and starts_with(said, cues.small_talk):
        return "small talk"
    if len(words(text)) < MIN_CONTENT_WORDS:
        return "too short"
    return None


def _stack_frame(text: str) -> bool:
    """A stack trace's frame, by its shape: "at", then a place in code (a dot, slash or bracket in
    its first word: `at Object.<anonymous> (/app/x.js:10:5)`, `at com.x.Y.run(Y.java:42)`), then a
    closing bracket or a line number. "at 500 the tablet ran out of memory" is the person's."""
    said = text.split(None, 2)
    if len(said) < 2 or said[0] != "at":
        return False
    return any(c in said[1] for c in "./\\<(") and (text.rstrip().endswith(")") or ":" in said[1] or ":" in text[-8:])


def withheld(text: str) -> str | None:
    """Why `text` must never be a memory's words for what it holds (a secret, credential talk,
    pasted text), or None."""
    if PASTED in text:
        return "pasted text"
    if secrets.secret_kinds_in(text):
        return "a secret"
    if secrets.about_credentials(text):
        return "credential talk"
    return None


def number_statements(turns: list[Turn], limit: int = MAX_STATEMENTS) -> list[Statement]:
    """The person's statements in `turns` (already redacted and `own_words`), numbered from 1."""
    found: list[tuple[str, int, int, int, int, int]] = []
    run = 0
    for index, turn in enumerate(turns):
        if turn.role != USER:
            continue
        if index == 0 or turns[index - 1].role != USER:
            run = index
        for start, end in sentence_spans(turn.content):
            sentence = turn.content[start:end]
            start += without_openers(sentence)
            text = turn.content[start:end]
            if text and passing(text) is None and withheld(text) is None:
                found.append((text, index, start, end, turn.content.count("\n", 0, start), run))
    return [Statement(n, *said) for n, said in enumerate(found[-limit:], 1)]
