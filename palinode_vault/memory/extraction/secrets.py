"""Secrets: found by rules in code, before the model sees a transcript and after it answers.

PROGRAM.md "Never extract": passwords, API keys, tokens, private keys, connection strings with
credentials, recovery codes — never, even when the person says "remember this password". The
model is not trusted with this: the transcript is redacted before the prompt is built, and every
string the model returns is checked again. A warning names the *kind* of secret, never its value.

Layers. First the provider rules of detect-secrets (a maintained dependency, its plugins run in
memory on the text, never their network verification): keys and tokens by their vendor's form.
Then our value rules (`find_secrets`) for the forms people say secrets in: "password is …",
config lines, codes spelled out, card numbers, keys whose prefix the provider rules do not know. Every new evaluation set
so far held a form they did not know, so nets lie under them: `redact_conversation` withholds
every code-like word in and right after a message that talks of credentials, and
`about_credentials` keeps such a sentence from ever being a memory's text or its evidence.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: What a redacted secret looks like in the text the model sees (and in daily logs).
MARK = "[withheld {kind}]"
_MARK_RE = re.compile(r"\[withheld [a-z ]+\]")


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
# codes that open something: said as "the door code", "confirmation code", "the OTP"
_CODE_NAMES = (
    r"(?:(?:confirmation|security|access|door|alarm|entry|gate|login|sms|auth|authentication|unlock|safe|lock"
    r"|backup|recovery|2fa|mfa|one-time|verification) codes?|otp|cvv2?|cvc2?)"
)
# a lock's combination ("combo padlock"), not a UI's "combo box"
_COMBO = r"(?:padlock|combo(?! ?box)|combination lock|lock combination)"
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_NATO = (
    r"(?:alpha|alfa|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa"
    r"|quebec|romeo|sierra|tango|uniform|victor|whiske?y|x-?ray|yankee|zulu)"
)
_SPELLED = rf"(?:{_DIGIT_WORD}|{_NATO})"

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
            r"(?:\s+(?:for|to|of|on)\s+[\w .@-]{1,40}?)?"
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
            r"(?i)\b[a-z_]*(?:secret|password|passwd|pwd|token|api_?key|access_?key|private_?key)(?:_(?:base|id|value))?[\"']?\s*[=:]\s*[\"']?"
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
            r"(?i)\b(?:recovery|backup|2fa|mfa|seed)\s+(?:codes?|phrase|words?)\b[^\n]{0,20}?(?:\b(?:is|are)\b|:|=)\s*"
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
_TOKEN_WORDS = re.compile(r"(?i)\b(?:api ?keys?|keys?|tokens?|secrets?|passwords?|credentials?|bearer|authorization|signature)\b")
# A short code said after a request to keep it ("remember the passcode for the iPads? it's 480913"):
# a value with a digit right after "it's" / "is" / ":", within a sentence or two of a credential word.
_SAID_CODE = re.compile(
    r"(?i)(?:\bit'?s|\bit is|\bis|:|=)\s*[\"'`]?(\d{2,4}(?:[ -]\d{2,4}){1,3}\b|(?=[^\s\"'`,;.?!]*\d)[^\s\"'`,;.?!]{4,})"
)
# A value spelled out ("four eight two one", "hotel-oscar-romeo-two-seven"), or quoted with a digit in
# it ("the hint literally reads 'Kestrel!Harbor88'"), near a credential word.
_SPELLED_CODE = re.compile(rf"(?i)\b{_SPELLED}(?:[ -]{_SPELLED}){{3,}}\b")
_QUOTED_CODE = re.compile(r"[\"'‘“`]((?=[^\s\"'’”`]*\d)(?=[^\s\"'’”`]*[A-Za-z])[^\s\"'’”`]{6,})[\"'’”`]")
_HEX_TOKEN = re.compile(r"\b[0-9a-f]{32,64}\b")
# A webhook's address is its secret (anyone holding it can post): in a URL with "hook" in it, a
# path segment of 16 characters or more with digits and letters ("hooks.slack.com/services/…").
_HOOK_URL = re.compile(r"(?i)\bhttps?://\S*hook\S*")
_HOOK_TOKEN = re.compile(r"(?<=/)(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{16,}(?=[/?#\s).,]|$)", re.I)
_IN_ADDRESS = re.compile(r"://|mailto:|www\.")
_CREDENTIAL_WORDS = re.compile(
    r"(?i)(?<![a-z0-9])(?:password|passwd|passphrase|pass ?code|passcodes?|pw|pwd|pin|pins|pin code"
    rf"|combination|alarm|keypad|padlock|{_COMBO}|{_CODE_NAMES}|{_FOREIGN_PASSWORD})\b"
)


# An app password as some services print it: four groups of four letters ("qzvp hmlt ragc wxne"),
# said near a credential word; at least two groups have no vowel, so no run of English words is one.
_GROUPED_CODE = re.compile(r"(?i)\b[a-z]{4}(?:[ -][a-z]{4}){3}\b")


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


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret in `text` (kind and span of the secret value), left to right, no overlaps:
    the provider rules first, then ours."""
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
        if _looks_random(m.group(0)) or (
            len(m.group(0)) >= 24 and _TOKEN_WORDS.search(text, max(0, m.start() - 200), m.end() + 200)
        ):
            hits.append(SecretHit("API key", m.start(), m.end()))
    for m in _SAID_CODE.finditer(text):
        word_start = max(text.rfind(" ", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
        if _IN_ADDRESS.search(text, word_start, m.start() + 1):
            continue  # "?subject=I%20lost": a link's query, not a code said
        if _CREDENTIAL_WORDS.search(text, max(0, m.start() - 150), m.start()):
            hits.append(SecretHit("password", m.start(1), m.end(1)))
    for pattern, group in ((_SPELLED_CODE, 0), (_QUOTED_CODE, 1)):
        for m in pattern.finditer(text):
            if _CREDENTIAL_WORDS.search(text, max(0, m.start() - 150), m.start()):
                hits.append(SecretHit("password", m.start(group), m.end(group)))
    for url in _HOOK_URL.finditer(text):
        for m in _HOOK_TOKEN.finditer(url.group(0)):
            hits.append(SecretHit("webhook URL", url.start() + m.start(), url.start() + m.end()))
    for m in _HEX_TOKEN.finditer(text):
        if _TOKEN_WORDS.search(text, max(0, m.start() - 100), m.start()):
            hits.append(SecretHit("token", m.start(), m.end()))
    for m in _GROUPED_CODE.finditer(text):
        vowelless = sum(not re.search(r"(?i)[aeiouy]", g) for g in re.split(r"[ -]", m.group(0)))
        if vowelless >= 2 and _CREDENTIAL_WORDS.search(text, max(0, m.start() - 100), m.start()):
            hits.append(SecretHit("password", m.start(), m.end()))
    hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
    merged: list[SecretHit] = []
    for hit in hits:
        if merged and hit.start < merged[-1].end:
            if hit.end > merged[-1].end:
                merged[-1] = SecretHit(merged[-1].kind, merged[-1].start, hit.end)
            continue
        merged.append(hit)
    return merged


# Talk about credentials at all: a sentence like this is never copied word for word into a memory
# (a review item, a snapped text, a log line), whether or not a rule above recognised a value in
# it. Each new evaluation set so far held a secret in a form no rule knew yet; this is the net
# under them. The model's own items about credentials are still checked value by value.
_CREDENTIAL_TALK = re.compile(
    r"(?i)(?<![a-z0-9])(?:password|passwd|passphrase|pass ?codes?|pin code|unlock code|api[ -]?keys?|access keys?|tokens?|secrets?"
    r"|credentials?|private keys?|seed phrase|recovery phrase|mnemonic|2fa|mfa|pw|pwd"
    rf"|{_CODE_NAMES}|{_FOREIGN_PASSWORD}|{_WIFI_KEY}|{_COMBO})\b"
)


def about_credentials(text: str) -> bool:
    """True when `text` speaks of passwords, keys, tokens, codes and the like."""
    return bool(_CREDENTIAL_TALK.search(text))


# A word that looks like a code rather than a word: digits in it (not a year, date, time, version
# or colour), a symbol inside letters ("Fietsbel+Gracht9"), small and capital letters alternating
# often ("ZqvHmLtx", not "GitHub"), or (four letters or more) no vowel ("qzvp").
_WORD_TOKEN = re.compile(r"(?<![\w@./:-])[^\s\"'`,;:()<>\[\]|/?&=]{4,}")
_PLAIN_NUMBER = re.compile(
    r"(?:19|20)\d\d|\d{4}-\d{2}-\d{2}|\d{1,2}[:.h]\d{2}|v?\d+(?:\.\d+)+(?:-[\w.]+)?|#[0-9a-fA-F]{3,8}"
    r"|\d+(?:st|nd|rd|th|am|pm|h|min|k|m|s|x|%)|\d+-[a-z]+(?:-[a-z]+)*"
)  # "4-desk", "12-hour"
_NOT_CODES = frozenset(
    {
        "http",
        "https",
        "html",
        "xlsx",
        "pptx",
        "rhythm",
        "rhythms",
        "lynx",
        "nymph",
        "crypt",
        "tryst",
        "psst",
        "pfft",
        "hmmm",
        "shhh",
        "brrr",
        "grrr",
        "zzzz",
    }
)


def _code_like(word: str) -> bool:
    core = word.strip(".!?:-")
    if len(core) < 4 or core.lower() in _NOT_CODES or _PLAIN_NUMBER.fullmatch(core) or _MARK_RE.search(core):
        return False
    if re.search(r"\d", core):
        return True
    if re.search(r"[A-Za-z]", core) and re.search(r"[!#$%^&*+=~?]", core[1:-1]):
        return True
    if len(re.findall(r"[a-z](?=[A-Z])|[A-Z](?=[a-z])", core)) >= 4:
        return True
    return core.isalpha() and not re.search(r"(?i)[aeiouy]", core)


def asks_to_remember_secret(text: str) -> bool:
    """True for "remember this password" and the like (withheld even without a value)."""
    return bool(_REMEMBER.search(text))


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with every secret replaced by a `[withheld KIND]` mark, and the kinds found."""
    hits = find_secrets(text)
    if not hits:
        return text, []
    out, pos = [], 0
    for hit in hits:
        out.append(text[pos : hit.start])
        out.append(MARK.format(kind=hit.kind.lower()))
        pos = hit.end
    out.append(text[pos:])
    return "".join(out), [h.kind for h in hits]


# The net under the value rules, before the model: in a message that talks of credentials, in the
# messages just before and after it, and in the same speaker's messages before and after it ("pw
# first half is Brisa, ill send the rest" ... "second half: k7Vq!rua29"; "Tejo$unset2026" ...
# "oops, that was my password"), every word that looks like a code rather than a word is withheld.
# A date, a time, a year or a version number is a word here.
CODE_NEAR_CREDENTIAL = "code said with a credential"


def redact_conversation(turns: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Each (role, text) turn's text with its secrets withheld, and the kinds found: the value rules
    (a value recognised in one message is withheld in every other: "it's four eight two one
    right??" ... "it is four eight two one"), then the net above."""
    known = sorted({text[h.start : h.end] for _, text in turns for h in find_secrets(text)}, key=len, reverse=True)
    talk = [about_credentials(text) for _, text in turns]
    by_speaker: dict[str, list[int]] = {}
    for i, (role, _) in enumerate(turns):
        by_speaker.setdefault(role, []).append(i)
    # about credentials, next to such a message, or the same speaker's message before or after one
    near = [any(talk[max(0, i - 1) : i + 2]) for i in range(len(turns))]
    for same in by_speaker.values():
        for k, i in enumerate(same):
            near[i] = near[i] or any(talk[j] for j in same[max(0, k - 1) : k + 2])
    out: list[tuple[str, list[str]]] = []
    for (_role, text), wary in zip(turns, near):
        clean, kinds = redact(text)
        for value in known:
            if value in clean:
                kinds.append("secret said elsewhere in the conversation")
                clean = clean.replace(value, MARK.format(kind="secret"))
        if wary:
            pieces, pos = [], 0
            for m in _WORD_TOKEN.finditer(clean):
                if _code_like(m.group(0)):
                    word = m.group(0)  # a sentence's full stop after it stays
                    start, end = (
                        m.start() + len(word) - len(word.lstrip(".!?:-")),
                        m.end() - len(word) + len(word.rstrip(".!?:-")),
                    )
                    pieces += [clean[pos:start], MARK.format(kind=CODE_NEAR_CREDENTIAL)]
                    pos = end
                    kinds.append(CODE_NEAR_CREDENTIAL)
            clean = "".join(pieces) + clean[pos:]
        out.append((clean, kinds))
    return out


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
