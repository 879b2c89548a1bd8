"""What in a person's message is not their own statement: pasted, quoted, fenced or injected text.

A person pastes a log, an email, a chat from someone else, a "SYSTEM NOTICE" a web page carried.
None of it is what they said: it must never become a memory in their name, nor the evidence for
one, and an instruction inside it must never reach the model as theirs. The checks are on the
text's shape, not on its words, so they hold for any content and any language:

- fenced code (``` or ~~~ to the closing fence, or to the message's end when none closes it);
- quoted lines (`>` at a line's start: a reply's quote or a pasted quote);
- a forwarded or pasted block: from a separator line (a rule of `-`, `=`, `_` or `*`, with or
  without a label in it) or a label of capital words ("SYSTEM NOTICE", "FORWARDED MESSAGE") to the
  end of its paragraph;
- a long quotation in quotation marks (`QUOTE_WORDS` words or more): someone else's words;
- a pasted chat: lines that open with a speaker's name and a colon ("Tariq: …", "[10:42] Dev: …"),
  with a nick in angle brackets ("<tariq> …"), or a line that is only a speaker's name and the
  time over their message, as Slack, Teams and Discord copy it ("Mira Okonkwo  10:42"), where the
  speakers take turns (a name comes back after another's) or a chat app's time stands beside a
  name (one sender's copied messages), with the lines between them.
  Notes the person keeps as "Decision: …", "Reason: …" name each label once and stay theirs;
- a forwarded email: its header (a paragraph of two or more of the lines mail clients print above
  a message, "From: …", "Subject: …", labels from `cue_words/mail_headers.toml`, at least half
  its lines, one with an address or a date) and its body: the paragraphs under the header to the
  sender's sign-off (a paragraph of at most two lines ending in a name), or without one the
  first paragraph (two when the first is a greeting alone). What the person writes after the
  sign-off is theirs again;
- a letter, forwarded without its header or pasted from a draft: from a greeting line ("Dear
  Noor,", "Hoi Jan,") to the sender's name under a sign-off line ("Kind regards,", "Groetjes,"),
  both lines of a few words ending in a comma;
- hidden text: an HTML comment (`<!-- … -->`) or an Obsidian comment (`%% … %%`), to its end or
  the message's. Nobody reads it where it was written, so it is nobody's statement, and it is
  where a pasted page hides instructions to AI assistants;
- a block of lines brought in under the message's opening: a paragraph of two or more lines
  (not one sentence wrapped) after the message's first paragraph. A person types a chat message
  as paragraphs; what comes as lines under "Mira's notes from today:" or "what do you make of
  this?" (minutes, a list someone sent, a table, a chat copied from Slack, an email's body) was
  brought in. On the 35 development sets this shape held 29 of the 37 labelled pasted passages
  the shapes above missed and no memory of the person's (docs/ARCHITECTURE.md); a person's own
  list opening the message stays theirs. So is the paragraph, even of one line, right under one
  that ends in a colon ("Mira's view, from her message last night:"): on 38 development sets,
  16 of 17 such paragraphs were pasted text or commands, and the other held no memory; likewise
  the one line right under a line ending in a colon or a question mark in the same paragraph
  ("pasting:" or "can you summarise it?" and the message), unless one of the two is an item of a
  list or the line under is labelled; and the one line right under a line left open (ending in
  a letter or a digit, no mark) when it opens as written text does, with a capital or a digit
  ("from the revised terms" over "7.1 Liability. ..."). The same
  goes for the paragraph under a request about a piece of writing the request does not hold ("can
  you tighten this paragraph?", "proofread the email below"; the words in `cue_words/en.toml`),
  and for a message sent right after one of the person's own that announced it, as chat apps
  send a paste (`own_turns`).

`own_words(text)` is the message with each such part replaced by `PASTED`, so the model, the
statement judge and every check after them see only what the person said, and where they pasted.
The brought-in shapes (the paragraphs and lines above under a message's opening, a colon, a
question, a line left open) judge by shape alone; a pass gives `own_turns` a reader that judges
the same lines by a fitted score instead (`provenance.py`), and the other marks stay as they are.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from palinode_vault.core.prose import list_item, sentences
from palinode_vault.memory.extraction.cues import points_at_writing
from palinode_vault.memory.extraction.transcript import USER

PASTED = "[pasted text]"
QUOTE_WORDS = 6  # a quotation this long is someone else's words, not a phrase the person borrowed
_FENCES = ("```", "~~~")
_QUOTES = {'"': '"', "“": "”", "«": "»", "„": "“"}


class Sent(NamedTuple):
    """Where one of the person's messages stands in the conversation."""

    #: right after one of their own that announced it (see `announces`), so its first paragraph
    #: is the material announced, as under a colon
    announced: bool = False
    first: bool = False  # the conversation's first message
    #: right after one of their own with no reply between, announced or not: where chat apps put
    #: a paste ("X just sent me this", then X's message), and where people go on typing
    after_own: bool = False
    before: str = ""  # then, the last line of that message (as `own_words` left it)


ALONE = Sent()  # a message on its own: not announced, not the first, not after one of the person's

#: What reads a message's lines after the sure marks, beside the brought-in shapes: (lines, the
#: shapes' marks, where the message was sent) -> the marks to keep (`provenance.Provenance.reader`).
LineReader = Callable[[list[str], list[bool], Sent], list[bool]]


def own_words(text: str, sent: Sent = ALONE, read: LineReader | None = None) -> str:
    """`text` with its pasted, quoted, fenced and injected parts replaced by `PASTED` (see above).
    `sent`: where the message stands. `read`: what decides, line by line, what the brought-in
    shapes would (the provenance score)."""
    lines = surely_marked(text)
    marks = brought_in(lines, sent.announced)
    if read is not None:
        marks = read(lines, marks, sent)
    out: list[str] = []
    for line, marked in zip(lines, marks):
        if marked:
            _mark(out)
        else:
            out.append(line)
    return "\n".join(out)


def surely_marked(text: str) -> list[str]:
    """The lines of `text` with the parts that are never the person's whatever their words
    (fences, quotes, chats, forwarded mail, letters, hidden text, labelled blocks, long
    quotations) replaced by `PASTED`; the brought-in shapes come after."""
    out: list[str] = []
    fence: str | None = None
    block = False  # inside a forwarded or labelled block, until the paragraph ends
    lines = without_hidden(text).split("\n")
    chat = chat_lines(lines) | forwarded_lines(lines) | letter_lines(lines)
    for number, line in enumerate(lines):
        stripped = line.strip()
        if number in chat and fence is None:
            _mark(out)
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(_FENCES):
            fence = stripped[:3]
            _mark(out)
            continue
        if not stripped:
            block = False
            out.append(line)
            continue
        if block or stripped.startswith(">") or _is_separator(stripped):
            block = block or _is_separator(stripped)
            _mark(out)
            continue
        label = _capital_label(line)
        if label is not None:
            block = True
            kept = line[:label].rstrip()
            if kept:
                out.append(kept)
            _mark(out)
            continue
        out.append(_without_long_quotes(line))
    return out


def own_turns(turns: list[tuple[str, str]], read: LineReader | None = None) -> list[str]:
    """Each (role, text) turn's text as the code reads it: the person's through `own_words` (with
    `read` beside the brought-in shapes), a message sent right after one of their own that
    announced it read as announced; the others' unchanged."""
    out: list[str] = []
    for k, (role, text) in enumerate(turns):
        if role != USER:
            out.append(text)
            continue
        after_own = k > 0 and turns[k - 1][0] == USER
        before = _last_line(out[-1]) if after_own else ""
        out.append(own_words(text, Sent(after_own and announces(out[-1]), k == 0, after_own, before), read))
    return out


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return lines[-1] if lines else ""


def announces(text: str) -> bool:
    """Whether a message (as `own_words` left it) ends announcing what comes under it: its last
    paragraph ends in a colon, or asks about a piece of writing it does not hold. Chat apps send a
    paste as a message of its own ("summarise this newsletter:", then the newsletter): the
    person's next message, with no reply between, is what was announced."""
    paragraph = text.strip().rsplit("\n\n", 1)[-1].split("\n")
    return bool(paragraph[-1].strip()) and (paragraph[-1].rstrip().endswith(":") or _points_below(paragraph))


def brought_in(lines: list[str], announced: bool = False) -> list[bool]:
    """For each of a message's lines (its other marks made already), whether it was brought in
    (see the module's docstring): after the first paragraph, a paragraph of two or more lines
    that is not one sentence wrapped over lines, and the one right under a paragraph that ends in
    a colon ("from her message last night:"); in a paragraph, the line under one left open or one
    that announces it."""
    marks: list[bool] = []
    paragraph: list[str] = []
    first = not announced  # a message announced by the one before it has its opening brought in
    for line in lines + [""]:
        if line.strip():
            paragraph.append(line)
            continue
        if paragraph:
            if not first and (announced or len(paragraph) > 1 and not _wrapped(paragraph)):
                marks += [True] * len(paragraph)
            else:
                marks += _under_announcing_lines(paragraph, _under_lines_left_open(paragraph))
            first = False
            announced = paragraph[-1].rstrip().endswith(":") or _points_below(paragraph)
            paragraph = []
        marks.append(False)
    return marks[:-1]


def _under_announcing_lines(paragraph: list[str], marks: list[bool]) -> list[bool]:
    """`marks` with the line right under each line that announces it marked: a line ending in a
    colon ("pasting:" and the message on the next line) or in a question mark ("can you summarise
    it for Mira?" and the email), not itself an item of a list nor marked. The line under it stays
    when it is an item of a list or a labelled line (the person's own list or notes under "rules
    we agreed:", "Decision: ..."). Only that line: a person goes on in the same paragraph after
    what they pasted (on the development sets, marking every line to the paragraph's end lost 6
    expected keywords; the one line, none)."""
    out = marks[:1]
    for i in range(1, len(paragraph)):
        above, line = paragraph[i - 1].rstrip(), paragraph[i]
        announcing = not out[i - 1] and above.endswith((":", "?")) and PASTED not in above and not _item(above)
        out.append(marks[i] or announcing and not _item(line))
    return out


def _under_lines_left_open(paragraph: list[str]) -> list[bool]:
    """Which lines of `paragraph` sit right under a line left open and open as written text does:
    the line above ends in a letter or a digit, with no mark to end it ("the report's first
    page", "is that a problem for us"), and the line under starts with a capital or a digit (a
    clause's "7.1 Liability ...", a report's title, a letter's "Hello team,"); neither of them an
    item of a list or a labelled line. A person who leaves a line open goes on typing in small
    letters; what they paste under it starts as written text does. A paragraph wrapped by hand
    (every other break inside a sentence) is prose, a break before a name too. On the 70 sets'
    labels it marked 21 more labelled pasted passages, and each of the 26 lines it newly marked
    was pasted; no expected keyword was lost (docs/BENCHMARKS.md, session 29)."""
    breaks = list(zip(paragraph, paragraph[1:]))
    if len(breaks) >= 2 and sum(_wrapped([above, below]) for above, below in breaks) >= len(breaks) - 1:
        return [False] * len(paragraph)
    return [False] + [_left_open(above) and _opens_as_writing(line) for above, line in breaks]


def _left_open(line: str) -> bool:
    """A line that ends in a letter or a digit, no mark ending it, and is no item or label."""
    return line.rstrip()[-1:].isalnum() and not _item(line)


def _opens_as_writing(line: str) -> bool:
    """A line that starts with a capital or a digit, and is no item or label."""
    start = line.lstrip()[:1]
    return (start.isupper() or start.isdigit()) and not _item(line)


def speaker_label(line: str) -> bool:
    """A line labelled as a chat's or a note's ("Tariq: ...", "Decision: ...")."""
    return _speaker(line) is not None


def _item(line: str) -> bool:
    """An item of a list (`prose.list_item`) or a labelled line ("Decision: ...")."""
    return list_item(line) or _speaker(line) is not None


def _points_below(paragraph: list[str]) -> bool:
    """A paragraph that asks for work on a piece of writing it does not hold ("can you tighten this
    paragraph?"): the writing is the paragraph under it (cues.points_at_writing). One that holds
    text taken out already (a long quotation) holds the writing it asks about."""
    text = " ".join(paragraph)
    return PASTED not in text and any(points_at_writing(sentence) for sentence in sentences(text))


def _wrapped(paragraph: list[str]) -> bool:
    """Every line break inside a sentence: a line ending in a letter, digit or comma and the next
    starting with a letter that is not a capital (a small letter, or one of a script without
    capitals): prose wrapped by hand, not lines of a list, table or chat."""
    for above, below in zip(paragraph, paragraph[1:]):
        end, start = above.rstrip()[-1:], below.lstrip()[:1]
        if not ((end.isalnum() or end == ",") and start.isalpha() and not start.isupper()):
            return False
    return True


_HIDDEN = (("<!--", "-->"), ("%%", "%%"))


def without_hidden(text: str) -> str:
    """`text` with each HTML or Obsidian comment, unclosed ones to the end, replaced by `PASTED`
    (on one line: what was written around it keeps its lines)."""
    out, at = [], 0
    while True:
        found = [(text.find(opening, at), opening, closing) for opening, closing in _HIDDEN if opening in text[at:]]
        if not found:
            out.append(text[at:])
            return "".join(out)
        start, opening, closing = min(found)
        end = text.find(closing, start + len(opening))
        out.append(text[at:start] + PASTED)
        if end < 0:
            return "".join(out)
        at = end + len(closing)


SPEAKER_WORDS = 3  # a speaker's label: a name, a name and surname, a handle ("@mira")
LABEL_CHARS = 40


def chat_lines(lines: list[str]) -> set[int]:
    """The numbers of `lines` that belong to a pasted chat (see above): from the first speaker line
    of a run in which some speaker speaks again after another has, or in which a chat app's time
    stands beside a speaker's name (copied messages, even one sender's: nobody types the time of
    their own notes), to the end of its last message (a message goes on over the lines right
    under it; a blank line and then a line that names no speaker end the run). Where the last
    message stands on its speaker's line ("[09:13] Jonas: ..."), the run ends with that line: the
    lines right under it are the person going on ("anyway, I decided ..."; on the development
    sets and test35, 5 such lines in 3 conversations, all the person's, none pasted), where a
    name and time over a message ("Jonas Lindqvist  10:42") have the message under them."""
    out: set[int] = set()
    speakers: list[str] = []
    timed = False  # a speaker line of the run carries a chat app's time
    first = last = said = -1  # the run's first line, the last line of its last message, its speaker's line
    for number, line in enumerate([*lines, ""]):
        speaker = _speaker(line) if number < len(lines) else None
        if speaker is not None:
            first = number if not speakers else first
            speakers.append(speaker)
            timed = timed or _copied_time(line)
            last = said = number
        elif speakers and line.strip() and last == number - 1:
            last = number  # the message goes on
        elif speakers and (line.strip() or number == len(lines)):
            if timed or _takes_turns(speakers):
                out.update(range(first, (said if _message_on_line(lines[said]) else last) + 1))
            speakers, timed = [], False
    return out


def _message_on_line(line: str) -> bool:
    """A chat line that holds its speaker's message, not only their name and the time."""
    return _header_speaker(*_without_stamp(line)) is None


def _without_stamp(line: str) -> tuple[str, bool]:
    """The line stripped, without a leading `[time]` or `[date, time]`, and whether it had one."""
    text = line.strip()
    stamped = text.startswith("[") and "]" in text[:LABEL_CHARS]
    return (text[text.index("]") + 1 :].strip(), True) if stamped else (text, False)


MAIL_HEADERS = Path(__file__).with_name("cue_words") / "mail_headers.toml"
BODY_PARAGRAPHS = 6  # how far under a forwarded header its sender's sign-off is looked for


@functools.cache
def _mail_labels() -> frozenset[str]:
    return frozenset(str(x).lower() for x in tomllib.loads(MAIL_HEADERS.read_text(encoding="utf-8"))["labels"])


def forwarded_lines(lines: list[str]) -> set[int]:
    """The numbers of `lines` that hold a forwarded email (see above): each header paragraph and
    the body under it."""
    paragraphs: list[list[int]] = [[]]
    for number, line in enumerate(lines):
        if line.strip():
            paragraphs[-1].append(number)
        elif paragraphs[-1]:
            paragraphs.append([])
    paragraphs = [p for p in paragraphs if p]
    out: set[int] = set()
    at = 0
    while at < len(paragraphs):
        if not _mail_header([lines[n] for n in paragraphs[at]]):
            at += 1
            continue
        under = [[lines[n] for n in p] for p in paragraphs[at + 1 : at + 1 + BODY_PARAGRAPHS]]
        fenced = next((i for i, p in enumerate(under) if _fenced(p)), None)
        under = under[:fenced]  # a fence is marked as fenced code, to its own end
        signed = next((i for i, p in enumerate(under) if i > 0 and _sign_off(p)), None)
        greeting = bool(under) and len(under[0]) == 1 and under[0][0].rstrip().endswith(",")
        body = signed + 1 if signed is not None else min(len(under), 2 if greeting else 1)
        for p in paragraphs[at : at + 1 + body]:
            out.update(p)
        at += 1 + body
    return out


LETTER_LINES = 60  # how far under a greeting its sign-off is looked for
SALUTATION_WORDS = 4  # "Dear Noor,", "Hi all,", "Met vriendelijke groet,", "Kind regards,"
SIGNATURE_LINES = 2  # the sender's name, and their firm or role
SIGNATURE_WORDS = 8  # "Lotte de Vries, Partnerships, ClinicPulse"


def letter_lines(lines: list[str]) -> set[int]:
    """The numbers of `lines` that hold a letter (see above): from a greeting to the sender's
    name under their sign-off. Both are a salutation line (`_salutation`); the sign-off comes
    after at least one line of body, within `LETTER_LINES`, with the signature under it
    (`_signed_to`). A letter is written to someone: pasted here, or a draft the person asks
    about, it is not their statement to the assistant. One pass each way: a message of many
    salutation-like lines costs no more than any other."""
    greets = [_salutation(line) for line in lines]
    signed = [_signed_to(lines, n) if greets[n] else None for n in range(len(lines))]
    next_signed: list[int | None] = [None] * (len(lines) + 2)  # the first sign-off at or after each line
    for n in range(len(lines) - 1, -1, -1):
        next_signed[n] = n if signed[n] is not None else next_signed[n + 1]
    out: set[int] = set()
    at = 0
    while at < len(lines):
        sign_off = next_signed[at + 2] if greets[at] else None
        end = signed[sign_off] if sign_off is not None and sign_off < at + LETTER_LINES else None
        if end is None:
            at += 1
            continue
        out.update(range(at, end + 1))
        at = end + 1
    return out


def _signed_to(lines: list[str], n: int) -> int | None:
    """The last line of a letter whose sign-off is the salutation line `n`, or None: a signature
    under it, one to `SIGNATURE_LINES` lines that end their paragraph, the first a name, firm or
    role (at most `SIGNATURE_WORDS` words, not ending a sentence). "Anyway," and "Also," on lines
    of their own are not a letter."""
    name = lines[n + 1].strip() if n + 1 < len(lines) else ""
    if not name or len(name.split()) > SIGNATURE_WORDS or name[-1] in ".?!:;":
        return None
    end = n + 1
    while end + 1 < len(lines) and end - n < SIGNATURE_LINES and lines[end + 1].strip():
        end += 1
    return end if end + 1 == len(lines) or not lines[end + 1].strip() else None


def _salutation(line: str) -> bool:
    """A line that greets or signs off, in any language: one to `SALUTATION_WORDS` words ending
    in a comma, with no other punctuation but an apostrophe or hyphen."""
    text = line.strip()
    words = text[:-1].split()
    return text.endswith(",") and 0 < len(words) <= SALUTATION_WORDS and all(c.isalpha() or c in "'’-" for w in words for c in w)


def _fenced(paragraph: list[str]) -> bool:
    return any(line.strip().startswith(_FENCES) for line in paragraph)


def _mail_header(paragraph: list[str]) -> bool:
    """Two or more "Label: value" lines with a mail client's labels, at least half the paragraph
    (outside fenced code: a fence is marked to its own end)."""
    if _fenced(paragraph):
        return False
    labels = _mail_labels()
    fields = [
        line for line in paragraph if (head := line.partition(":"))[1] and head[0].strip().lower() in labels and head[2].strip()
    ]
    # a mail client prints the sender's address or the date: notes headed "To: Mira" are the person's
    dated = any("@" in line or any(ch.isdigit() for ch in line) for line in fields)
    return len(fields) >= 2 and 2 * len(fields) >= len(paragraph) and dated


def _sign_off(paragraph: list[str]) -> bool:
    """A sender's sign-off: at most two lines, the last a name ("Best,", "Lena"): at most three
    words, each capitalised, and no punctuation after it."""
    last = paragraph[-1].strip()
    words = last.split()
    return len(paragraph) <= 2 and 0 < len(words) <= SPEAKER_WORDS and last[-1].isalpha() and all(w[0].isupper() for w in words)


def _copied_time(line: str) -> bool:
    """A time a chat app writes beside a speaker's name: `[10:42] Name: …`, `[03/12/2026, 08:51]
    Name: …`, or a line that is only `Name Surname  10:42`. A time inside the message itself
    ("Decision: standup moves to 10:30") is not one."""
    text = line.strip()
    if text.startswith("[") and "]" in text[:LABEL_CHARS]:
        return any(_is_time(word.strip(",")) for word in text[1 : text.index("]")].split())
    return _header_speaker(text, False) is not None


def _takes_turns(speakers: list[str]) -> bool:
    """Two speakers or more, one of them speaking again after another: a conversation."""
    return any(s in speakers[:i] and speakers[i - 1] != s for i, s in enumerate(speakers) if i > 0)


def _speaker(line: str) -> str | None:
    """The speaker a chat line opens with, lower-cased: `Name: text`, `Name Surname: text`,
    `@handle: text`, after an optional `[time]` or `[date, time]`; `<nick> text` (IRC); or a line
    that is only a speaker's name over their message, as chat apps copy it: `Name Surname  10:42`,
    `Name — Today at 10:42 AM`, `[10:42] Name Surname`. None for any other line."""
    text, stamped = _without_stamp(line)
    if text.startswith("<") and ">" in text[:LABEL_CHARS]:
        nick = text[1 : text.index(">")]
        said = text[text.index(">") + 1 :].strip()
        if nick and said and all(c.isalnum() or c in "@.-_" for c in nick):
            return nick.lower()
        return None
    header = _header_speaker(text, stamped)
    if header is not None:
        return header
    colon = text.find(":", 0, LABEL_CHARS)
    if colon <= 0 or not text[colon + 1 : colon + 2].isspace() or not text[colon + 1 :].strip():
        return None
    words = text[:colon].replace("**", "").split()
    if not 1 <= len(words) <= SPEAKER_WORDS:
        return None
    if not all(w[:1].isupper() or (w[:1] == "@" and len(w) > 1) for w in words):
        return None
    if not all(c.isalpha() or c in "@.-_'" for w in words for c in w):
        return None
    return " ".join(words).lower()


_SEPARATORS = {"—", "–", "-", "|", "·", ","}
_HALF_DAY = {"am", "pm", "a.m.", "p.m."}


def _header_speaker(text: str, stamped: bool) -> str | None:
    """The name of a line that is only a chat speaker's name and the time (see `_speaker`): one to
    `SPEAKER_WORDS` capitalised words, then the time, directly or after a separator and at most
    two words ("— Today at"); or, after a `[time]` already taken off, the name alone."""
    words = text.split()
    if words and words[-1].lower() in _HALF_DAY:
        words = words[:-1]
    name = []
    for word in words:
        if not (word[:1].isupper() or (word[:1] == "@" and len(word) > 1)) or not all(c.isalpha() or c in "@.-_'" for c in word):
            break
        name.append(word)
        if len(name) == SPEAKER_WORDS:
            break
    if not name or len(text) > LABEL_CHARS + 10:
        return None
    rest = words[len(name) :]
    if not rest:
        return " ".join(name).lower() if stamped else None
    if not _is_time(rest[-1]):
        return None
    between = rest[:-1]
    if between and (between[0] not in _SEPARATORS or len(between) > 3):
        return None
    return " ".join(name).lower()


def _is_time(word: str) -> bool:
    """`10:42`, `9:05`, `10:42:07`, `10:42pm`: hours and minutes."""
    word = word.lower()
    for half in _HALF_DAY:
        word = word.removesuffix(half)
    parts = word.split(":")
    return 2 <= len(parts) <= 3 and all(p.isdigit() and len(p) <= 2 for p in parts) and len(parts[1]) == 2


def _mark(out: list[str]) -> None:
    if not out or out[-1] != PASTED:
        out.append(PASTED)


def _is_separator(line: str) -> bool:
    """A rule of one repeated punctuation mark (at least five), with or without a label in it:
    `-----Original Message-----`, `---------- Forwarded message ----------`, `=====`."""
    for mark in "-=_*":
        if line.startswith(mark * 5) or line.endswith(mark * 5):
            return True
    return False


def _capital_label(line: str) -> int | None:
    """Where a label of capital words starts in `line` ("SYSTEM NOTICE", "IMPORTANT UPDATE FROM
    IT"): two or more words in capitals in a row, ten letters or more, one word of five or more.
    Acronyms in a sentence ("the SMS API") are shorter."""
    words = line.split()
    pos = 0
    starts = []
    for word in words:
        pos = line.index(word, pos)
        starts.append(pos)
        pos += len(word)
    run: list[int] = []
    for i, word in enumerate(words + [""]):
        letters = "".join(c for c in word if c.isalpha())
        if len(letters) >= 2 and letters.isupper():
            run.append(i)
            continue
        if len(run) >= 2:
            caps = ["".join(c for c in words[j] if c.isalpha()) for j in run]
            if sum(map(len, caps)) >= 10 and max(map(len, caps)) >= 5:
                return starts[run[0]]
        run = []
    return None


def _without_long_quotes(line: str) -> str:
    """`line` with each quotation of `QUOTE_WORDS` words or more replaced by `PASTED`."""
    out, pos = [], 0
    while True:
        opens = [(line.find(q, pos), q) for q in _QUOTES if line.find(q, pos) >= 0]
        if not opens:
            break
        start, quote = min(opens)
        end = line.find(_QUOTES[quote], start + 1)
        if end < 0:
            break
        if len(line[start + 1 : end].split()) >= QUOTE_WORDS:
            out.append(line[pos:start] + PASTED)
        else:
            out.append(line[pos : end + 1])
        pos = end + 1
    out.append(line[pos:])
    return "".join(out)
