"""A candidate's type from its wording, when the wording says it plainly.

The default extraction model (SmolLM2-135M) copies the person's words well but picks types nearly
at random: asked for items, it lists one of every type in the schema's order with the same text.
What kind of statement a sentence is shows in its wording, in the terms PROGRAM.md's "What to
remember" uses: a decision is decided, agreed, chosen or done instead of something; a commitment
has someone who will do something by a date, or something due; a lesson was learned, taught, or
made things worse; a project state change is live, shipped, slipped or blocked; a person joined,
leads, prefers. These are general English cues, not phrases of any test text.

`type_by_wording` returns the type of the first cue that matches (commitments before decisions:
"will send it by Friday" is both), or None when no cue does; the model's type stands then. Given
the person's own words (`spoken`), a cue counts only where its words are theirs: the model's text
can hold words nobody said ("she said it was a mistake" under a question about a missing text
message), and a cue it invented says nothing about what the person meant.
"""

from __future__ import annotations

import re

_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|end of (?:the )?(?:day|week|month)|\d{1,2}(?:st|nd|rd|th)?(?: [a-z]+)?)"

CUES: list[tuple[str, re.Pattern[str]]] = [
    (
        "ActionItem",
        re.compile(
            r"\b(?:will|'ll|is going to|are going to|promised to|has to|have to|needs to|need to|must)\s+(?:\w+\s+){0,2}?"
            r"(?:send|call|email|write|share|review|check|deliver|finish|book|prepare|draft|update|fix|ask|bring|submit)\b"
            rf".*\b(?:by|before|on|until|next)\s+{_DAY}\b"
            r"|\bdue (?:on|by|in)\b|\bremind (?:me|us) to\b|\bfollow(?:-| )up (?:with|on)\b|\bdeadline\b",
            re.I,
        ),
    ),
    (
        "Decision",
        re.compile(
            r"\b(?:decided|decision|we(?:'ll| will)|we(?:'re| are) (?:going (?:to|with)|cutting|dropping|moving|switching)"
            r"|going with|settled on|agreed (?:to|that|on)|chose|opted for|instead of|rather than|from now on"
            r"|(?:our|the) (?:\w+ )?rule\b|is the setting|will (?:own|lead|take over)|switch(?:ed|ing)? (?:to|from)"
            r"|no longer|not any ?more|now\b[^.;]{0,60}, not)\b",
            re.I,
        ),
    ),
    (
        "Insight",
        re.compile(
            r"\b(?:lesson|learn(?:ed|t)|taught|turns? out|realis(?:ed|e)|realiz(?:ed|e)|mistake|never again|should have"
            r"|next time|we should|made (?:\w+ ){0,3}(?:worse|better|less|more)\b)",
            re.I,
        ),
    ),
    (
        "ProjectSnapshot",
        re.compile(
            r"\b(?:is (?:now )?live|went live|goes live|launched|shipped|released|rolled out|rollout|slip(?:s|ped|ping)|delayed"
            r"|postponed|blocked|unblocked|milestone|as of today|now runs|mov(?:ed|es) (?:to|back to) (?:\d|january|february|march"
            r"|april|may|june|july|august|september|october|november|december|next|the (?:first|second|third|last|end))|pushed (?:back|out))\b",
            re.I,
        ),
    ),
    (
        "PersonMemory",
        re.compile(
            r"^(?!(?:This|That|These|Those|It|Its|There|Here|The|A|An|He|She|We|They|You|What|Which|Who|Our|My|Your|Their)\b)"
            r"(?:[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?) (?:joined|is (?:our|the|a|an)|leads|runs|manages|owns|prefers|likes"
            r"|wants|can't stand|hates|handles|covers|works)\b"
            r"|\bI (?i:(?:always |usually |never |really )?(?:prefer|like|want|hate|draft|write|keep))\b|(?i:\bplease don't\b)"
        ),
    ),
]


def type_by_wording(text: str, types: list[str], spoken: str | None = None) -> str | None:
    """The type the wording of `text` plainly says (see the module docstring), or None.

    With `spoken` (the person's words, lower case), only a cue whose matched words occur there counts.
    """
    for type_name, pattern in CUES:
        if type_name not in types:
            continue
        for m in pattern.finditer(text):
            if spoken is None or " ".join(m.group(0).lower().split()) in spoken:
                return type_name
    return None


# --- what a decision replaces, why, and what lost (English; plain phrases, not patterns) ---------

#: Wording that says a statement replaces an earlier one ("This replaces our SMS provider
#: decision", "we use X instead of Y", "we no longer ..."): the update logic looks for the note
#: the words after it name (update.Updater.replaced_note).
REPLACEMENT = (
    "replaces",
    "replace",
    "replaced",
    "replacing",
    "instead of",
    "in place of",
    "no longer",
    "not anymore",
    "not any more",
    "supersedes",
    "switched from",
    "switching from",
    "moving away from",
    "moved away from",
    "moving off",
    "dropping",
    "dropped",
)
#: Connectives that open the reason for a decision, and the options that lost.
REASON = ("because", "since", "so that", "given that", "due to", "the reason is", "as it", "as they", "as we")
LOST = ("instead of", "rather than", "in place of", ", not ")
_CLAUSE_ENDS = (". ", "; ", "! ", "? ", " but ", " and then ")


def clause_after(text: str, connectives: tuple[str, ...]) -> str:
    """The person's words after the first of `connectives` in `text`, to the clause's end ("" when
    none is there): "We chose Postgres because the team knows it, not MySQL" → "the team knows it"
    for REASON."""
    flat = " ".join(text.split())
    lower = flat.lower()
    found = [(i + len(c), c) for c in connectives for i in [lower.find(c) if c.startswith(",") else _word_at(lower, c)] if i >= 0]
    if not found:
        return ""
    at, _ = min(found)
    rest = flat[at:]
    # a clause that opens the sentence ("Since nobody reads it, we ...") ends at its comma
    opening = not flat[:at].strip(" ,").lower().split()[:-1] if flat[:at].strip() else True
    ends = [
        rest.lower().find(e)
        for e in _CLAUSE_ENDS + ((", ",) if opening else ()) + tuple(f" {c.strip(' ,')} " for c in REASON + LOST)
    ]
    ends = [e for e in ends if e > 0]
    return rest[: min(ends)].strip(" ,.;:!?") if ends else rest.strip(" ,.;:!?")


def _word_at(lower: str, phrase: str) -> int:
    """Where `phrase` starts in `lower` as whole words (-1: not there)."""
    pos = lower.find(phrase)
    while pos >= 0:
        before = lower[pos - 1] if pos else " "
        after = lower[pos + len(phrase)] if pos + len(phrase) < len(lower) else " "
        if not before.isalnum() and not after.isalnum():
            return pos
        pos = lower.find(phrase, pos + 1)
    return -1
