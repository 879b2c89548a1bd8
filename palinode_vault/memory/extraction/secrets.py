"""Secrets: found by rules in code, before the model sees a transcript and after it answers.

PROGRAM.md "Never extract": passwords, API keys, tokens, private keys, connection strings with
credentials, recovery codes — never, even when the person says "remember this password". The
model is not trusted with this: the transcript is redacted before the prompt is built, and every
string the model returns is checked again. A warning names the *kind* of secret, never its value.

Layers. First the provider rules of detect-secrets (a maintained dependency, its plugins run in
memory on the text, never their network verification): keys and tokens by their vendor's form.
Then our value rules (`find_secrets`) for the forms people say secrets in: "password is …",
config lines, card numbers, keys whose prefix the provider rules do not know. Every new
evaluation set so far held a form they did not know, so the credential net lies under them
(credential_net.py): one fitted score per word around credential talk, read by
`redact_conversation` before the model and, at a stricter point, by `find_secrets` on everything
written. `about_credentials` keeps a sentence with a credential word from ever being a memory's
text or its evidence.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from palinode_vault.memory.extraction import credential_net

log = logging.getLogger(__name__)

#: What a redacted secret looks like in the text the model sees (and in daily logs).
MARK = "[withheld {kind}]"
_MARK_RE = re.compile(r"\[withheld [a-z ]+\]")
#: The kind the credential net gives the words it withholds (credential_net.py).
CODE_NEAR_CREDENTIAL = "code said with a credential"


@dataclass(frozen=True)
class SecretHit:
    kind: str  # e.g. "API key", never the value
    start: int
    end: int


# what a Wi-Fi network's password is called on a router's sticker or in its settings
_WIFI_KEY = (
    r"(?:wi-?fi (?:key|password)|wpa[23]?(?:-psk)? (?:key|password|passphrase)|psk|network key|wireless key|router password)"
)
# a password in the languages a pasted message may be in
_FOREIGN_PASSWORD = (
    r"(?:palavra-passe|senha|contrase[ñn]a|mot de passe|passwort|kennwort|wachtwoord|l[öo]senord|adgangskode"
    r"|salasana|has[łl]o|parola d'ordine)"
)
# Our own rules, for what the provider rule set (detect-secrets, `_provider_hits`) does not know:
# (kind, pattern, group that holds the secret: 0 = the whole match)
_RULES: list[tuple[str, re.Pattern[str], int]] = [
    ("API key", re.compile(r"\b[A-Za-z]{2,12}_(?:live|test|prod|sandbox)_[A-Za-z0-9]{12,}\b"), 0),
    ("API key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}\b"), 0),
    ("API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}\b"), 0),
    ("token", re.compile(r"\b[Bb]earer\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    # detect-secrets' basic-auth rule skips a password with !$&'()*+,;= in it (RFC 3986 lets them in)
    ("connection string with credentials", re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:([^\s@/]+)@[^\s]+"), 0),
    # key = value assignments with a credential-like name
    (
        "API key",
        re.compile(
            r"(?i)\b(?:api[_ -]?key|api[_ -]?secret|secret[_ -]?key|access[_ -]?key|client[_ -]?secret|auth[_ -]?token|access[_ -]?token|token)"
            r"\s*(?:is|was|=|:|->)\s*[\"']?([A-Za-z0-9_./+=~-]{12,})"
        ),
        1,
    ),
    (
        "password",
        re.compile(
            rf"(?i)\b(?:password|passwd|passphrase|pass ?code|pwd|pin(?: code)?|{_WIFI_KEY})\b"
            r"(?:\s+(?:for|to|of|on)\s+[\w .@-]{1,40}?\??)?"
            r"\s*,?\s*(?:\b(?:is|was|it's|it is|is now)\b|=|:|->)\s*[\"'`]?"
            # a passphrase of plain words runs to the sentence's end ("is lantern orchard velvet tugboat, can you")
            r"((?:[a-z0-9]{4}[ -]){3}[a-z0-9]{4}\b|[a-z]+(?: [a-z]+){2,7}(?=\s*(?:[,;.?!\n]|$))|[^\s\"'`,;]{4,})"
        ),
        1,
    ),
    # "password hunter2" with no "is": only a value that looks made up (a digit or a symbol in it);
    # "password protection", "password when prompted" are prose
    (
        "password",
        re.compile(
            rf"(?i)\b(?:password|passwd|passphrase|pass ?code|pwd|pin(?: code)?|{_WIFI_KEY})\s+[\"'`]?"
            r"((?=[^\s\"'`,;]*[\d!@#$%^&*_+=~|])[^\s\"'`,;()<>\[\]]{4,})"
        ),
        1,
    ),
    (
        "password",
        re.compile(
            rf"(?i)\b{_FOREIGN_PASSWORD}[^\n]{{0,20}}?(?:\b(?:é|e|es|est|ist|is|er|är|jest|è)\b|:|=)\s*[\"'`]?([^\s\"'`,;]{{4,}})"
        ),
        1,
    ),
    # configuration: KEY=VALUE lines, YAML and JSON whose name ends in a credential word (.env files,
    # client JSON; not "author:" or "auth_provider:")
    (
        "API key",
        re.compile(
            r"(?i)\b[a-z_-]*(?:secret|password|passwd|pwd|token|api_?key|access_?key|private_?key|signature)(?:_(?:base|id|value))?[\"']?\s*[=:]\s*[\"']?"
            r"([^\s\"',;]{8,})"
        ),
        1,
    ),
    # a login given as "name@example.org / value" (or in a table row's next cell)
    ("password", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\s*[/|]\s*((?=\S*[\d!#$%^&*+=~?])[^\s\"'`,;|]{6,})"), 1),
    # a Wi-Fi QR code's text: WIFI:T:WPA;S:name;P:password;;
    ("Wi-Fi key", re.compile(r"(?i)\bWIFI:[^\n]*?\bP:((?:\\;|[^;\n])+)"), 1),
    # a password on a database client's command line: mysql -u x -p'…', --password=…
    (
        "password",
        re.compile(
            r"(?i)\b(?:mysql\w*|mariadb\w*|psql|pg_dump|sshpass|redis-cli|mongo\w*)\b[^\n]*?"
            r"(?:\s-p|\s-a|--password[= ])['\"]?([^\s'\"]{4,})"
        ),
        1,
    ),
    ("card number", re.compile(r"\b\d(?:[ -]?\d){12,18}\b"), 0),
    ("card number", re.compile(r"(?i)\b(?:cvv2?|cvc2?|csc|card security code)\b\s*:?\s*(\d{3,4})\b"), 1),
    # a code for a door, an alarm, a safe: "building door is 7391", "the alarm for our room is 0-4-0-6"
    (
        "password",
        re.compile(
            r"(?i)\b(?:(?:door|gate|keypad|alarm)(?:\s+(?:code|pin))?|(?:lock|locker|safe|entry)\s+(?:code|pin|combination))"
            r"(?:\s+(?:for|to|of|on)\s+[\w ]{1,30}?)?\s*(?:\bis\b|:|=)\s*(\d(?:[ -]?\d){3,7})\b"
        ),
        1,
    ),
    (
        "recovery phrase",
        re.compile(
            r"(?i)\b(?:recovery|seed|mnemonic|backup|secret)\s+(?:phrase|words)\b[^\n]{0,60}?[:=]\s*((?:[a-z]+[ ,]+){11,23}[a-z]+)\b"
        ),
        1,
    ),
    (
        "recovery code",
        re.compile(
            r"(?i)\b(?:recovery|backup|2fa|mfa|seed)\s+(?:codes?|phrase|words?)\b[^\n]{0,20}?(?:\b(?:is|are)\b|(?<!\d):|=)\s*"
            r"(?!(?:in|on|at|the|my|our|your|stored|saved|kept|printed|written|now)\b)"  # where they are, not what
            r"((?=[A-Za-z -]*\d)[A-Za-z0-9][A-Za-z0-9 -]{5,}?)(?=[.,;\n]|$)"
        ),
        1,
    ),
]

# A long token with digits, capitals and small letters mixed, pasted bare (no "key is" before it):
# a secret when it looks random (the character kind changes at least every third character and no
# run of small letters is a word: "8f3KzP2wQ9xT7mLa" but not "ClinicReminderService2025v2"), or
# when the words near it speak of a key, token or secret. Never inside a URL or path (a document's
# id there is an address, not a credential).
_BARE_TOKEN = re.compile(r"(?<![\w/=?&#.:@-])(?=[\w-]*\d[\w-]*\d)(?=[\w-]*[A-Z])(?=[\w-]*[a-z])[A-Za-z0-9_-]{20,}(?![\w/])")
# A webhook's address is its secret (anyone holding it can post): in a URL with "hook" in it, a
# path segment of 16 characters or more with digits and letters ("hooks.slack.com/services/…").
_HOOK_URL = re.compile(r"(?i)\bhttps?://\S*hook\S*")
_HOOK_TOKEN = re.compile(r"(?<=/)(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{16,}(?=[/?#\s).,]|$)", re.I)


_CARD_WORDS = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|credit|debit|cvv|cvc|expiry|exp)\b")


def _luhn(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return 13 <= len(digits) <= 19 and total % 10 == 0


def _looks_random(token: str) -> bool:
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "o" for c in token]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:]))
    longest_lower = max((len(run) for run in re.findall(r"[a-z]+", token)), default=0)
    return changes * 3 >= len(token) and longest_lower <= 4


# A value after "password is" that is plainly not a secret ("password is required").
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:required|wrong|incorrect|correct|expired|reset|changed|stored|saved|set|in|on|at|the|a|an|my|your|our|their|his|her|"
    r"manager|policy|rotation|rules?|field|prompt|protected|strong|weak|long|short|missing|empty|different|same|now|still|"
    r"only|never|always|also|not|being|was|is|for|to|of|and|or|with|that|this|it|we|you|i|please|so|because|but|should|"
    r"must|will|can|could|would|rotated|shared|hashed|encrypted|changes?|managers?|resets?|vault|1password|bitwarden|keychain|"
    r"separate|unique|optional|case-sensitive|visible|hidden|forgotten|lost|known|needed|used|sent|generated|shown|displayed)\W*$"
)

# "remember this password", "save my API key": a request to keep a credential.
_REMEMBER = re.compile(
    r"(?i)\b(?:remember|store|save|keep|note|write down|memori[sz]e)\b[^.\n]{0,30}\b"
    r"(?:password|passphrase|passcode|pin|api[ -]?key|token|secret|private key|recovery codes?|credentials?)\b"
)


# detect-secrets' plugins that find a provider's keys and tokens by their form. Its entropy and
# keyword plugins are left out: they are tuned for source files (the layers below are for what
# people say), and a public IP address is no secret.
_NOT_PROVIDER_RULES = frozenset({"Base64 High Entropy String", "Hex High Entropy String", "Secret Keyword", "Public IP (ipv4)"})
_providers: list | None = None
# Where a value the provider rules report stops: they report part of a token at times (a GitHub
# token's prefix, a JSON web token without its signature); the whole token is the secret.
_TOKEN_STOPS = frozenset(" \t\r\n\"'`<>()[]{}|,;")


def _provider_plugins() -> list:
    """One instance of each provider plugin of detect-secrets, built on first use (0.5 s import)."""
    global _providers
    if _providers is None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

        mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
        _providers = [cls() for kind, cls in sorted(mapping.items()) if kind not in _NOT_PROVIDER_RULES]
    return _providers


def _provider_hits(text: str) -> list[SecretHit]:
    """Keys and tokens the maintained provider rules recognise (run in memory on `text`; their
    verification, which calls the provider, never runs). A private key runs to its END line."""
    hits = []
    for plugin in _provider_plugins():
        kind = "".join(c for c in str(plugin.secret_type) if c.isalpha() or c == " ").strip()  # "AWS Access Key"
        for value in set(plugin.analyze_string(text)):
            if not value:
                continue
            at = text.find(value)
            while at >= 0:
                start, end = at, at + len(value)
                if kind.lower() == "private key":  # from its -----BEGIN to its END line's closing dashes
                    begin = text.rfind("-----", 0, start)
                    start = begin if begin >= 0 else start
                    stop = text.find("-----END", end)
                    close = text.find("-----", stop + 8) if stop >= 0 else -1
                    end = close + 5 if close >= 0 else len(text)
                else:
                    while start > 0 and text[start - 1] not in _TOKEN_STOPS:
                        start -= 1
                    while end < len(text) and text[end] not in _TOKEN_STOPS:
                        end += 1
                    end = start + len(text[start:end].rstrip(".:!?"))
                hits.append(SecretHit(kind, start, end))
                at = text.find(value, at + len(value))
    return hits


_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def paragraphs(text: str) -> tuple[list[int], list[tuple[str, str]]]:
    """A text read as a conversation for the credential net: one message per paragraph, and where
    each starts in `text`."""
    starts = [0] + [m.end() for m in _PARAGRAPH.finditer(text)]
    return starts, [("user", text[a:b]) for a, b in zip(starts, [*starts[1:], len(text)])]


def find_secrets(text: str, net: bool = True) -> list[SecretHit]:
    """Every secret in `text` (kind and span of the secret value), left to right, no overlaps:
    the provider rules first, then ours, then (unless `net` is False) the credential net's words
    with `text`'s paragraphs as the conversation."""
    hits: list[SecretHit] = _provider_hits(text)
    for kind, pattern, group in _RULES:
        for m in pattern.finditer(text):
            start, end = m.span(group)
            if start < 0:
                continue
            value = text[start:end]
            if kind == "password" and (
                _NOT_A_VALUE.match(value.split()[0]) or _MARK_RE.match(value) or value.startswith("[withheld")
            ):
                continue
            if kind == "password" and m.group(0)[:3].lower() == "pin" and not re.search(r"\d", value):
                continue  # "pin down the scope", "pin it": a PIN is digits
            if kind in ("API key",) and group and not re.search(r"\d", value):
                continue  # "token is rotated weekly" names no value
            near_card = _CARD_WORDS.search(text, max(0, start - 100), end + 100)
            grouped = re.fullmatch(r"\d{4}(?:[ -]\d{4}){3}", value)
            if (
                kind == "card number" and not group and not ((_luhn(value) and (grouped or near_card)) or (grouped and near_card))
            ):  # a mistyped card is still one
                continue  # a long number that is no card's (an order, a tracking number, a forum post's id)
            hits.append(SecretHit(kind, start, end))
    for m in _BARE_TOKEN.finditer(text):
        if _looks_random(m.group(0)):
            hits.append(SecretHit("API key", m.start(), m.end()))
    for url in _HOOK_URL.finditer(text):
        for m in _HOOK_TOKEN.finditer(url.group(0)):
            hits.append(SecretHit("webhook URL", url.start() + m.start(), url.start() + m.end()))
    if net:
        starts, parts = paragraphs(text)
        for a, words in zip(starts, credential_net.withheld_words(parts, text=True)):
            hits += [SecretHit(CODE_NEAR_CREDENTIAL, a + w.start, a + w.end) for w in words]
    hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
    merged: list[SecretHit] = []
    for hit in hits:
        # the net's words side by side are one value ("six one nine three")
        joined = (
            merged and merged[-1].kind == hit.kind == CODE_NEAR_CREDENTIAL and not text[merged[-1].end : hit.start].strip(" -")
        )
        if merged and (hit.start < merged[-1].end or joined):
            if hit.end > merged[-1].end:
                merged[-1] = SecretHit(merged[-1].kind, merged[-1].start, hit.end)
            continue
        merged.append(hit)
    return merged


def about_credentials(text: str) -> bool:
    """True when `text` speaks of passwords, keys, tokens, codes and the like (a word of
    cue_words/credentials.toml): such a sentence is never copied word for word into a memory (a
    review item, a snapped text, a log line), whether or not any layer found a value in it."""
    return credential_net.talks_of_credentials(text)


def asks_to_remember_secret(text: str) -> bool:
    """True for "remember this password" and the like (withheld even without a value)."""
    return bool(_REMEMBER.search(text))


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with every secret replaced by a `[withheld KIND]` mark, and the kinds found."""
    return _withhold(text, [(h.start, h.end, h.kind) for h in find_secrets(text)])


def redact_conversation(turns: list[tuple[str, str]], net: credential_net.Net | None = None) -> list[tuple[str, list[str]]]:
    """Each (role, text) turn's text with its secrets withheld, and the kinds found: the provider
    and value rules, the credential net's words (`net`, else the shipped weights) with the whole
    conversation as their context, and a value withheld in one message withheld in every other
    ("it's four eight two one right??" ... "it is four eight two one")."""
    words = credential_net.withheld_words(turns, net)
    found = [find_secrets(text, net=False) for _, text in turns]
    values = {text[h.start : h.end] for (_, text), hits in zip(turns, found) for h in hits}
    values |= {w.text for ws in words for w in ws if len(w.text) >= 4}
    known = sorted(values, key=len, reverse=True)
    out: list[tuple[str, list[str]]] = []
    for (_role, text), hits, ws in zip(turns, found, words):
        spans = [(h.start, h.end, h.kind) for h in hits] + [(w.start, w.end, CODE_NEAR_CREDENTIAL) for w in ws]
        for value in known:
            at = text.find(value)
            while at >= 0:
                spans.append((at, at + len(value), "secret said elsewhere in the conversation"))
                at = text.find(value, at + len(value))
        out.append(_withhold(text, spans))
    return out


def _withhold(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[str]]:
    """`text` with each (start, end, kind) span replaced by its mark; overlapping spans become one."""
    merged: list[list] = []
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            continue
        merged.append([start, end, kind])
    out, pos = [], 0
    for start, end, kind in merged:
        out += [text[pos:start], MARK.format(kind=kind.lower())]
        pos = end
    return "".join(out) + text[pos:], [kind for _, _, kind in merged]


def secret_kinds_in(text: str) -> list[str]:
    """Kinds of secret an output string carries: a value, a redaction mark, or a request to keep one."""
    kinds = [h.kind for h in find_secrets(text)]
    if _MARK_RE.search(text):
        kinds.append("redacted secret")
    if asks_to_remember_secret(text):
        kinds.append("credential the person asked to keep")
    return kinds


def warn_withheld(kind: str, source: str) -> None:
    """Log that a secret was withheld: the kind and the source, never the value."""
    log.warning("secret withheld from memory: %s (source %s)", kind, source)
