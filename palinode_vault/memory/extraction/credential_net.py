"""The net under the secret rules: one fitted score per word, how likely it is part of a secret.

The provider rules (detect-secrets) and our value rules (secrets.py) know the forms secrets take;
every new evaluation set so far held one they did not know ("pw first half is Brisa, ill send the
rest" ... "second half: k7Vq!rua29"; a PIN said as words; a password typed by mistake and only
then called one). The net is what catches those: a logistic regression over each word's shape (how
much it looks made up rather than written: digits, mixed case, symbols inside, no vowels, its
length) and its context (credential words near it, before or after, in its message or the
messages around it, a value position such as "is" or ":" just before it, a request to keep it, a
run of digits said as words), with shape-times-context products so that a made-up word counts
most where credentials are talked about. `bench/train_credential_net.py` fits it on the labelled
secrets and look-alikes of the development sets and writes `credential_net.json` beside this
module with its cross-validation; the words are data (`cue_words/credentials.toml`); this module
holds the features, never a phrasing.

A word whose score reaches the weights' `threshold` is withheld. Without readable weights every
word that looks made up in or next to credential talk is withheld (the safe side).
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from palinode_vault.memory.extraction.cues import tokens

WEIGHTS = Path(__file__).with_name("credential_net.json")
VOCABULARY = Path(__file__).with_name("cue_words") / "credentials.toml"

# What separates words here: spaces, quotes, brackets and the characters configuration puts
# between a name and its value ("pw:Tejo$unset2026", "KEY=value").
_SEPARATORS = frozenset(" \t\r\n\"'`‘’“”,;()<>[]{}|=")
_EDGE = ".!?:*_~"  # a sentence's full stop or markdown emphasis around a word
_SYMBOLS = frozenset("!#$%^&*+=~?@")
_VOWELS = frozenset("aeiouyáéíóúàèìòùâêîôûäëïöüãõ")


#: The shortest credential word looked for inside a compound: "wachtwoord" in "wifiwachtwoord";
#: a shorter one ("pin", "pw", "otp") ends too many words that are none ("spin", "laptop").
COMPOUND_LETTERS = 6


@dataclass(frozen=True, eq=False)
class Vocabulary:
    credentials: tuple[tuple[str, ...], ...]  # phrases as words, longest first
    hints: frozenset[str]
    copulas: frozenset[str]
    keep: frozenset[str]
    spoken: frozenset[str]

    @functools.cached_property
    def compounds(self) -> tuple[frozenset[str], dict[int, frozenset[str]]]:
        """What a credential phrase becomes in one word, as Dutch, German and the Nordic languages
        write it: its words run together ("alarm code" -> "alarmcode", "pin code" -> "pincode"), and
        the single words of `COMPOUND_LETTERS` or more by their length, to find at a word's end,
        where such languages put a compound's head ("wifiwachtwoord", "Zugangspasswort"; at the
        start, "secret" would make "secretary" credential talk)."""
        joined = frozenset("".join(p) for p in self.credentials if len(p) > 1)
        by_length: dict[int, set[str]] = {}
        for phrase in self.credentials:
            if len(phrase) == 1 and len(phrase[0]) >= COMPOUND_LETTERS:
                by_length.setdefault(len(phrase[0]), set()).add(phrase[0])
        return joined, {n: frozenset(words) for n, words in by_length.items()}

    def compound(self, word: str) -> bool:
        """Whether one written word is a credential phrase compounded (see `compounds`)."""
        joined, by_length = self.compounds
        if word in joined:
            return True
        return any(len(word) > n and word[-n:] in words for n, words in by_length.items())

    @functools.cached_property
    def by_first(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """The credential phrases by their first word, longest first."""
        out: dict[str, list[tuple[str, ...]]] = {}
        for phrase in self.credentials:
            out.setdefault(phrase[0], []).append(phrase)
        return {k: tuple(v) for k, v in out.items()}


@functools.cache
def vocabulary() -> Vocabulary:
    """Every language's credential words (cue_words/credentials.toml), read once."""
    data = tomllib.loads(VOCABULARY.read_text(encoding="utf-8"))
    phrases, hints, copulas, keep, spoken = set(), set(), set(), set(), set()
    for section in data.values():
        phrases |= {tuple(_pieces(str(p))) for p in section.get("credentials", ()) if _pieces(str(p))}
        hints |= {w for p in section.get("hints", ()) for w in _pieces(str(p))}
        copulas |= {str(p).lower() for p in section.get("copulas", ())}
        keep |= {w for p in section.get("keep", ()) for w in tokens(str(p))[:1]}
        spoken |= {str(p).lower() for p in section.get("spoken", ())}
    return Vocabulary(
        tuple(sorted(phrases, key=lambda p: (-len(p), p))),
        frozenset(hints),
        frozenset(copulas),
        frozenset(keep),
        frozenset(spoken),
    )


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str  # text[start:end] of its message, edges stripped
    lower: str
    before: str  # the separators and edge characters between the previous word and this one


def words_of(text: str) -> list[Word]:
    """The words of one message with their spans (a word: what lies between separators, without
    a trailing full stop or emphasis; an address such as a URL or an email stays one word)."""
    out: list[Word] = []
    i, n, gap_start = 0, len(text), 0
    while i < n:
        if text[i] in _SEPARATORS:
            i += 1
            continue
        j = i
        while j < n and (text[j] not in _SEPARATORS or (text[j] == "=" and _is_address(text[i:j]))):
            j += 1
        start, end = i, j
        while start < end and text[start] in _EDGE:
            start += 1
        while end > start and text[end - 1] in _EDGE:
            end -= 1
        if end > start:
            word = text[start:end]
            out.append(Word(start, end, word, word.lower(), text[gap_start:start]))
            gap_start = end
        i = j
    return out


def _is_address(w: str) -> bool:
    """A URL or an email address (a link's query keeps its `=` inside it)."""
    lower = w.lower()
    return "://" in lower or lower.startswith(("www.", "mailto:")) or ("@" in w[1:-1] and "." in w.rsplit("@", 1)[-1])


def _plain_number(w: str) -> bool:
    """A year, a date, a time, a version, an amount, an ordinal, a colour: a number that is a
    word of prose, not a code."""
    core = w.lower().lstrip("v#€$£").rstrip("%")
    if not core:
        return False
    if core[:1].isdigit() and core.endswith("z") and "t" in core:
        core = core[:-1].replace("t", ".")  # 2026-10-21T15:00:00Z
    if w.startswith("#") and len(core) in (3, 6, 8) and all(c in "0123456789abcdef" for c in core):
        return True  # a hex colour
    if core.replace(".", "", 1).replace(",", "", 1).isdigit() and core != w.lower().lstrip("v#"):
        return True  # 50%, €45, $1,200, 12.5%: an amount or a share, its sign attached
    if core.isdigit():
        return len(core) == 4 and core[:2] in ("19", "20")  # a year
    for unit in ("st", "nd", "rd", "th", "am", "pm", "h", "min", "k", "m", "s", "x", "gb", "mb", "kb", "ms", "px"):
        if core.endswith(unit) and core[: -len(unit)].replace(".", "").replace(",", "").isdigit():
            return True
    version, _, suffix = core.partition("-")
    if version.count(".") >= 1 and all(p.isdigit() for p in version.split(".")) and suffix.replace(".", "").isalnum():
        return True  # 2.14.0-rc.2
    core = core.rsplit(".", 1)[0] if core.endswith((".xlsx", ".pdf", ".png", ".md", ".csv", ".docx")) else core
    pieces = core.replace(":", ".").replace("-", ".").replace("/", ".").replace(",", ".").split(".")
    if all(p.isdigit() and len(p) <= 4 for p in pieces) and len(pieces) > 1:
        return True  # 2026-12-04, 14:30, 3.2.1, 1,200
    head, _, tail = core.partition("-")
    return head.isdigit() and tail.replace("-", "").isalpha()  # "4-desk", "12-hour"


def _kind(c: str) -> str:
    return "d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "o"


def shape(w: str) -> list[float]:
    """How much `w` looks made up rather than written."""
    n = len(w)
    letters = [c for c in w if c.isalpha()]
    digits = sum(c.isdigit() for c in w)
    kinds = [_kind(c) for c in w]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:])) / max(1, n - 1) if not _plain_number(w) else 0.0
    upper_inside = sum(c.isupper() for c in w[1:])
    plain = _plain_number(w)
    address = _is_address(w)
    alpha = bool(letters) and len(letters) == n
    return [
        1.0 if digits and not plain else 0.0,
        digits / n if not plain else 0.0,
        1.0 if digits == n and not plain else 0.0,
        1.0 if letters and digits and not plain else 0.0,  # letters and digits mixed
        1.0 if upper_inside and any(c.islower() for c in w) else 0.0,  # "ZqvHmLtx", "GitHub"
        min(upper_inside, 4) / 4,
        changes,
        1.0 if letters and any(c in _SYMBOLS for c in w[1:-1]) else 0.0,  # "Fietsbel+Gracht9"
        1.0 if alpha and w.isascii() and n >= 4 and not any(c.lower() in _VOWELS for c in w) else 0.0,  # "qzvp"
        1.0 if any(unicodedata.category(c).startswith("So") for c in w) else 0.0,  # an emoji in it
        min(n, 40) / 40,
        1.0 if n >= 12 else 0.0,
        1.0 if alpha and w.islower() else 0.0,
        1.0 if alpha and w[0].isupper() and w[1:].islower() else 0.0,  # a name or a sentence's start
        1.0 if plain else 0.0,
        1.0 if address else 0.0,
        sum(c.isalpha() and not c.isascii() for c in w) / max(1, len(letters)),
        _longest_letter_run(w) / n,
        _word_piece_share(w),
        1.0 if _path_like(w) and not address else 0.0,
    ]


def _word_piece_share(w: str) -> float:
    """The share of `w` in pieces that read as words: runs of letters cut where a capital follows
    a small letter ("UserDefaults": User, Defaults), each of three letters or more with a vowel.
    Code names are words put together; a generated key or token is not."""
    pieces: list[str] = []
    piece = ""
    for c in w:
        if c.isalpha() and not (piece and c.isupper() and piece[-1].islower()):
            piece += c
            continue
        pieces.append(piece)
        piece = c if c.isalpha() else ""
    pieces.append(piece)
    worded = sum(len(p) for p in pieces if len(p) >= 3 and any(c.lower() in _VOWELS for c in p))
    return worded / len(w)


def _path_like(w: str) -> bool:
    """A file path, a file name or a place in code: a `/` or `\\` between two letters or
    digits, a name ending in a short extension ("pt.json"), or a line number after a colon
    ("client.js:132")."""
    for sep in "/\\":
        at = w.find(sep, 1)
        if 0 < at < len(w) - 1 and w[at - 1].isalnum() and w[at + 1].isalnum():
            return True
    head, dot, ext = w.rpartition(".")
    if dot and head and head[-1].isalnum() and 1 <= len(ext) <= 4 and ext.isalpha() and ext.islower():
        return True
    place, colon, line = w.partition(":")
    return bool(colon) and "." in place and line.split(":", 1)[0].isdigit()


def _longest_letter_run(w: str) -> int:
    longest = run = 0
    for c in w:
        run = run + 1 if c.isalpha() else 0
        longest = max(longest, run)
    return longest


SHAPE_NAMES = (
    "digits",
    "digit_share",
    "only_digits",
    "letters_and_digits",
    "inner_capital",
    "inner_capitals",
    "kind_changes",
    "symbol_inside",
    "no_vowel",
    "emoji",
    "length",
    "long",
    "lower_word",
    "title_word",
    "plain_number",
    "address",
    "non_latin",  # the share of its letters outside ASCII
    "letter_run_share",  # the longest run of letters over the length: short in a random string
    "word_piece_share",  # the share in pieces that read as words ("NSPrivacyAccessedAPITypes")
    "path_like",  # a file path, file name or place in code ("apps/clinic/src/i18n", "client.js:132")
)
CONTEXT_NAMES = (
    "credential_before_near",  # a credential word a few words before
    "credential_before_far",
    "credential_after",  # "Tejo$unset2026 ... oops, that was my password"
    "credential_in_message",
    "hint_near",  # "the key", "the code"
    "credential_next_door",  # the message before or after
    "credential_same_speaker",  # the same speaker's message before or after
    "value_position",  # "is", ":", "=" just before
    "keep_request",  # "remember this", "save it"
    "spoken_run",  # a run of four or more digits or letters said as words
    "grouped_run",  # a run of three or more groups of one length, some made up ("qzvp hmlt ragc")
    "quoted",
    "credential_word",  # the word is itself part of a credential phrase: context, never a value
)
NAMES = (
    SHAPE_NAMES
    + CONTEXT_NAMES
    + tuple(f"{s}*credential_near" for s in SHAPE_NAMES)
    + tuple(f"{s}*value_position" for s in SHAPE_NAMES)
    + ("bias",)
)


def _credential_spans(words: Sequence[Word], vocab: Vocabulary) -> list[tuple[int, int]]:
    """Where credential phrases stand in `words`, as word index ranges."""
    lowered = [_pieces(w.lower) for w in words]
    flat: list[tuple[str, int]] = [(t, i) for i, ts in enumerate(lowered) for t in ts]
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(flat):
        # a compound is letters only: "1Password" or "Tejo2026password" may be a value, not talk
        if len(flat[k][0]) > COMPOUND_LETTERS and flat[k][0].isalpha() and vocab.compound(flat[k][0]):
            spans.append((flat[k][1], flat[k][1]))
            k += 1
            continue
        for phrase in vocab.by_first.get(flat[k][0], ()):
            if tuple(t for t, _ in flat[k : k + len(phrase)]) == phrase:
                spans.append((flat[k][1], flat[k + len(phrase) - 1][1]))
                k += len(phrase) - 1
                break
        k += 1
    return spans


def _pieces(text: str) -> list[str]:
    """Lower-case words with hyphens and underscores as spaces ("X-Amz-Signature", "app_password")."""
    return tokens(text.replace("-", " ").replace("_", " "))


def _has_credential(words: Sequence[Word], vocab: Vocabulary) -> bool:
    return bool(_credential_spans(words, vocab))


def features(messages: Sequence[tuple[str, str]]) -> list[list[tuple[Word, list[float]]]]:
    """Each message's words with their feature rows (NAMES), the conversation as context. A
    message with no credential talk in it, next to it or hinted at has no rows: the net never
    judges its words (see `eligible`), and most of a note or a conversation is such."""
    vocab = vocabulary()
    split = [words_of(text) for _, text in messages]
    spans = [_credential_spans(ws, vocab) for ws in split]
    talks = [bool(s) for s in spans]
    speakers = [role for role, _ in messages]
    out: list[list[tuple[Word, list[float]]]] = []
    for m, words in enumerate(split):
        nearby = [talks[j] for j in (m - 1, m + 1) if 0 <= j < len(messages)]
        same = [talks[j] for j in _same_speaker_neighbours(speakers, m)]
        next_door = 1.0 if any(nearby) else 0.0
        same_speaker = 1.0 if any(same) else 0.0
        in_message = 1.0 if talks[m] else 0.0
        hints = [i for i, w in enumerate(words) if any(p in vocab.hints for p in _pieces(w.lower))]
        if not (in_message or next_door or same_speaker or hints):
            out.append([])
            continue
        keep = 1.0 if talks[m] and any(w.lower in vocab.keep for w in words) else 0.0
        spoken = _spoken_runs(words, vocab)
        grouped = _grouped_runs(words)
        rows = []
        # the nearest credential phrase and hint of each word, found by bisection: a message full
        # of credential words must not cost words x phrases (a 2 MB transcript took over a minute)
        starts = [s for s, _ in spans[m]]  # the phrases come in order and never overlap
        ends = [e for _, e in spans[m]]
        for i, w in enumerate(words):
            at = bisect.bisect_left(ends, i) - 1  # the last phrase ending before the word
            d_before = i - ends[at] if at >= 0 else None
            at = bisect.bisect_right(starts, i)  # the first phrase starting after it
            d_after = starts[at] - i if at < len(starts) else None
            inside = at > 0 and ends[at - 1] >= i  # the phrase starting at or before it holds it
            d_hint = _nearest_other(hints, i)
            prev = words[i - 1].lower if i else ""
            value = 1.0 if prev in vocab.copulas or any(c in ":=" for c in w.before) or prev.endswith(":") else 0.0
            context = [
                math.exp(-(d_before - 1) / 3) if d_before is not None else 0.0,
                math.exp(-(d_before - 1) / 15) if d_before is not None else 0.0,
                math.exp(-(d_after - 1) / 6) if d_after is not None else 0.0,
                in_message,
                math.exp(-(d_hint - 1) / 3) if d_hint is not None else 0.0,
                next_door,
                same_speaker,
                value,
                keep,
                1.0 if i in spoken else 0.0,
                1.0 if i in grouped else 0.0,
                1.0 if w.before[-1:] in "\"'`‘“" and w.before else 0.0,
                1.0 if inside or w.lower in vocab.hints else 0.0,
            ]
            near = max(context[0], context[2], 0.5 * context[1], 0.5 * in_message, 0.5 * next_door, 0.5 * same_speaker)
            s = shape(w.text)
            rows.append((w, s + context + [x * near for x in s] + [x * value for x in s] + [1.0]))
        out.append(rows)
    return out


def _nearest_other(positions: Sequence[int], i: int) -> int | None:
    """The distance from `i` to the nearest of the sorted `positions` other than `i` itself."""
    at = bisect.bisect_left(positions, i)
    near = [abs(positions[k] - i) for k in (at - 1, at, at + 1) if 0 <= k < len(positions) and positions[k] != i]
    return min(near, default=None)


def _same_speaker_neighbours(speakers: Sequence[str], m: int) -> list[int]:
    before = [j for j in range(m - 1, -1, -1) if speakers[j] == speakers[m]][:1]
    after = [j for j in range(m + 1, len(speakers)) if speakers[j] == speakers[m]][:1]
    return before + after


def _spoken_runs(words: Sequence[Word], vocab: Vocabulary) -> set[int]:
    """Indexes of words in a run that says four or more digits or letters as words ("four eight
    two one", "hotel-oscar-romeo-two")."""
    out: set[int] = set()
    run: list[int] = []
    said = 0
    for i, w in enumerate([*words, None]):
        parts = w.lower.split("-") if w is not None else []
        if parts and all(p in vocab.spoken for p in parts):
            run.append(i)
            said += len(parts)
            continue
        if said >= 4:
            out.update(run)
        run, said = [], 0
    return out


def _grouped_runs(words: Sequence[Word]) -> set[int]:
    """Indexes of words in runs of three or more groups of 3 to 6 letters or digits, all of one
    length, at least two of them made up (digits in them or no vowel), or of two groups of digits
    ("552 809"): how app passwords, card numbers and one-time codes are printed."""
    out: set[int] = set()
    i = 0
    while i < len(words):
        j = i
        size = len(words[i].text)
        while j < len(words) and len(words[j].text) == size and 3 <= size <= 6 and words[j].text.isalnum():
            j += 1
        made_up = sum(
            any(c.isdigit() for c in w.text) or (w.text.isascii() and not any(c.lower() in _VOWELS for c in w.text))
            for w in words[i:j]
        )
        digits_only = all(w.text.isdigit() for w in words[i:j])
        if (j - i >= 3 and made_up >= 2) or (j - i == 2 and digits_only):
            out.update(range(i, j))
        i = max(j, i + 1)
    return out


_ROW = {name: k for k, name in enumerate(NAMES)}


_TALK = tuple(
    _ROW[n]
    for n in (
        "credential_before_far",
        "credential_after",
        "credential_in_message",
        "hint_near",
        "credential_next_door",
        "credential_same_speaker",
    )
)


def eligible(row: Sequence[float]) -> bool:
    """Whether the net judges a word at all. Only around credential talk (in the message, next to
    it, or a hint word near): a made-up word elsewhere is a build name or a commit, and the
    provider and value rules know keys by their form. And not a plain word of letters with a
    vowel in it, which is prose, nor a credential word itself, an address (a URL or an email: the
    value rules read those), a count, an acronym, or a word mostly in another script (passphrases of plain words are the value rules' to find: "the
    password is lantern orchard …"), unless it stands in a run of digits or letters said as
    words or of printed groups."""
    if not any(row[k] for k in _TALK) or row[_ROW["credential_word"]] or row[_ROW["address"]]:
        return False
    if row[_ROW["non_latin"]] > 0.5:
        return False  # codes are typed in Latin letters and digits; a run of CJK text is prose
    runs = row[_ROW["spoken_run"]] or row[_ROW["grouped_run"]]
    length = row[_ROW["length"]] * 40
    if row[_ROW["only_digits"]] and length < 3:
        return False  # "2 admins": a count; a code has three digits at least
    if row[_ROW["no_vowel"]] and length < 6 and not runs:
        return bool(runs)  # "smtp", "html": an acronym, unless printed in groups ("qzvp hmlt ragc")
    plain_word = row[_ROW["lower_word"]] or row[_ROW["title_word"]]
    return not plain_word or bool(row[_ROW["no_vowel"]] or runs)


@dataclass(frozen=True)
class Net:
    """The fitted weights (one per NAMES) and two operating points of the one score: `threshold`
    for a conversation before the model sees it (a word withheld there costs little), and
    `text_threshold` for the last check on a text about to be written (a false alarm there refuses
    a person's or an agent's note), set on real notes that hold no secret."""

    weights: tuple[float, ...]
    threshold: float
    text_threshold: float = 0.9

    def scores(self, messages: Sequence[tuple[str, str]]) -> list[list[tuple[Word, float]]]:
        """Each message's eligible words with the probability that they are part of a secret."""
        return [[(w, self.probability(x)) for w, x in rows if eligible(x)] for rows in features(messages)]

    def withheld(self, messages: Sequence[tuple[str, str]], text: bool = False) -> list[list[Word]]:
        """Each message's words the net withholds (at `text_threshold` when `text`)."""
        threshold = self.text_threshold if text else self.threshold
        out = []
        for rows in features(messages):
            judged = [(w, x, self.probability(x)) for w, x in rows if eligible(x)]
            kept = {id(w) for w, _, p in judged if p >= threshold}
            # a run said as words or printed in groups is one value: one of its words withheld, all are
            for flag in (_ROW["spoken_run"], _ROW["grouped_run"]):
                run: list[tuple[Word, bool]] = []
                for w, x, _ in [*judged, (None, None, 0.0)]:
                    if w is not None and x is not None and x[flag]:
                        run.append((w, id(w) in kept))
                        continue
                    if any(k for _, k in run):
                        kept |= {id(v) for v, _ in run}
                    run = []
            out.append([w for w, _, _ in judged if id(w) in kept])
        return out

    def probability(self, row: Sequence[float]) -> float:
        z = sum(a * b for a, b in zip(row, self.weights))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@functools.cache
def load_net(path: Path = WEIGHTS) -> Net | None:
    """The fitted net, or None when its weights are missing or do not fit NAMES."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = tuple(float(x) for x in data["weights"])
        if tuple(data["features"]) != NAMES or len(weights) != len(NAMES):
            return None
        return Net(weights, float(data["threshold"]), float(data.get("text_threshold", 0.9)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def talks_of_credentials(text: str) -> bool:
    """True when `text` holds a credential word (cue_words/credentials.toml)."""
    return _has_credential(words_of(text), vocabulary())


def withheld_words(messages: Sequence[tuple[str, str]], net: Net | None = None, text: bool = False) -> list[list[Word]]:
    """Each message's words to withhold: the fitted net's (`net`, else the shipped weights; `text`:
    the paragraphs of a text about to be written), or without weights every word that looks made
    up in a message that talks of credentials or next to one."""
    net = net or load_net()
    return net.withheld(messages, text) if net is not None else without_weights(messages)


def without_weights(messages: Sequence[tuple[str, str]]) -> list[list[Word]]:
    """The safe side when the weights are missing or unreadable: every eligible word that looks
    made up, in a message that talks of credentials or next to one."""
    out = []
    for rows in features(messages):
        keep_out = []
        for w, x in rows:
            s = dict(zip(NAMES, x))
            if not eligible(x):
                continue
            made_up = s["digits"] or s["inner_capitals"] >= 0.5 or s["symbol_inside"] or s["no_vowel"] or s["spoken_run"]
            near = s["credential_in_message"] or s["credential_next_door"] or s["credential_same_speaker"]
            if made_up and near:
                keep_out.append(w)
        out.append(keep_out)
    return out
