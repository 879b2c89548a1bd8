"""Prose as the memory manager and the search read it: words, stop words and wikilinks, in one
place for both.

Two stop lists, because the two jobs differ: `STOP` leaves the content words of a statement
(dedup, novelty, supersession compare those); `QUERY_STOP` leaves the topic words of a search
query (question words such as "how" and "which" go too, so they do not rank every note).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    """a an the and or but if of to in on at for with by from as is are was were be been being it its
this that these those we i you he she they them our my your his her their me us not no so than then there here
will would should could can may might must do does did done have has had just also into over about after before
up out very more most some any all each other such only own same too s t don now new one""".split()
)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


_SUFFIX = re.compile(r"(?:ions|ion|ings|ing|ed|es|s)$")


def stems(text: str) -> set[str]:
    """Content words with their common English endings cut ("suggestions" and "suggest" agree)."""
    return {w if len(w) <= 4 else (_SUFFIX.sub("", w) if len(_SUFFIX.sub("", w)) >= 4 else w) for w in words(text)}


# Words that carry no topic; dropped from keyword queries so that "how do I ..." does not
# rank every note that says "how".
QUERY_STOP = frozenset(
    """
a about above after again all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just me more most my no nor not now of
off on once only or other our ours out over own same she should so some such than that the their
theirs them then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself
""".split()
)


#: A wikilink or embed in plain text: group 1 the target (no heading), group 2 the label.
WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def wikilinks(text: str) -> list[tuple[str, str | None]]:
    """(target, label) of every wikilink with a target, left to right ([[#heading]] has none)."""
    return [(m.group(1), m.group(2)) for m in WIKILINK.finditer(text) if m.group(1).strip()]


def links_as_read(text: str) -> str:
    """Wikilinks reduced to the words a reader sees: `[[x|shown]]` -> shown, `[[people/a-b]]` -> a b."""
    return WIKILINK.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1].replace("-", " "), text)


# --- sentences: the one splitter (issue 21) -------------------------------------------------------

#: Where one sentence may end: a line break, or `.`, `!` or `?` (closing quotes and brackets after
#: it belong to the sentence) followed by white space. Chat is often lower case ("done. also we
#: ..."), so the next word's case does not matter; an abbreviation's full stop ends nothing (below).
_SENTENCE_BREAK = re.compile(r"\n+|(?<=[.!?])([\"'”’)\]]*)\s+")
#: A list item's marker at a line's start ("- ", "* ", "1. ", "2) ", "- [ ] ").
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")


def list_item(line: str) -> bool:
    """Whether `line` starts a list item ("- x", "1. x", "- [ ] x")."""
    return _LIST_MARK.match(line) is not None


def _abbreviation(text: str, end: int) -> bool:
    """Whether the word ending at `end` with a full stop is an abbreviation or an initial, whose
    full stop ends no sentence: one or two characters ("J.", "e.") or stops inside it ("e.g.",
    "p.m.", "U.S.")."""
    if text[end - 1 : end] != ".":
        return False
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:end].lstrip("\"'“‘([")
    return len(word) <= 2 or word.count(".") >= 2


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets in `text` of each sentence, white space and list markers outside them."""
    spans = []
    start = 0
    for brk in [*_SENTENCE_BREAK.finditer(text), None]:
        if brk is not None and _abbreviation(text, brk.start()):
            continue
        # closing quotes and brackets after the full stop stay with their sentence
        end = brk.start() + len(brk.group(1) or "") if brk is not None else len(text)
        piece = text[start:end]
        mark = _LIST_MARK.match(piece)
        lead = mark.end() if mark else 0
        stripped = piece[lead:].strip()
        if stripped:
            s = start + lead + (len(piece[lead:]) - len(piece[lead:].lstrip()))
            spans.append((s, s + len(stripped)))
        start = brk.end() if brk is not None else len(text)
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of `text`, in order: split at line breaks and at sentence ends (see
    `_SENTENCE_BREAK`), list markers dropped. The one splitter `memory/` uses."""
    return [text[s:e] for s, e in sentence_spans(text)]
