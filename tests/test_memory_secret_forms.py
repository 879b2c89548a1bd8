"""Secrets in layers, tested by form: hypothesis writes the keys, tokens and passwords (and the
look-alikes that are none) instead of one string per miss. The provider rules come from
detect-secrets (run in memory on the text); ours sit behind them."""

from __future__ import annotations

import base64
import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.secrets import find_secrets, redact

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
_WORDS = (
    "the",
    "team",
    "moved",
    "release",
    "notes",
    "to",
    "friday",
    "clinic",
    "reminders",
    "went",
    "out",
    "late",
    "we",
    "shipped",
    "beta",
    "after",
    "review",
    "Mira",
    "said",
    "it",
    "was",
    "fine",
    "deploy",
    "today",
)
prose = st.lists(st.sampled_from(_WORDS), min_size=0, max_size=8).map(" ".join)


def _text(n: int, alphabet: str = ALNUM) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=n, max_size=n)


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


aws_key = st.sampled_from(["AKIA", "ASIA"]).flatmap(lambda p: _text(16, UPPER_DIGITS).map(lambda s: p + s))
github_token = st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]).flatmap(lambda p: _text(36).map(lambda s: p + s))
slack_token = st.tuples(
    st.sampled_from("bpa"), _text(12, string.digits), _text(13, string.digits), _text(24, string.ascii_lowercase + string.digits)
).map(lambda t: f"xox{t[0]}-{t[1]}-{t[2]}-{t[3]}")
stripe_key = st.sampled_from(["sk_live_", "rk_live_"]).flatmap(lambda p: _text(24).map(lambda s: p + s))
jwt = st.tuples(st.sampled_from(["HS256", "RS256"]), _text(10, string.digits), _text(43, ALNUM + "-_")).map(
    lambda t: f"{_b64({'alg': t[0], 'typ': 'JWT'})}.{_b64({'sub': t[1]})}.{t[2]}"
)
password = st.tuples(_text(6, string.ascii_letters), _text(3, string.digits), st.sampled_from("!#%&*+-")).map(
    lambda t: t[0] + t[2] + t[1]
)
connection = st.tuples(
    st.sampled_from(["postgres", "mysql", "redis", "mongodb", "amqp"]), _text(6, string.ascii_lowercase), password
).map(lambda t: (f"{t[0]}://{t[1]}:{t[2]}@db.internal:5432/app", t[2]))
private_key = st.lists(_text(64, ALNUM + "+/"), min_size=1, max_size=4).map(
    lambda lines: "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----"
)


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(aws_key, github_token, slack_token, stripe_key, jwt, private_key), before=prose, after=prose)
def test_provider_keys_and_tokens_are_withheld(value, before, after):
    text = f"{before} {value} {after}".strip()
    clean, kinds = redact(text)
    assert kinds and value not in clean
    for line in value.splitlines():  # no line of a private key survives either
        assert len(line) < 8 or line not in clean


@settings(max_examples=60, deadline=None)
@given(pair=connection, before=prose)
def test_credentials_in_a_connection_string_are_withheld(pair, before):
    url, secret = pair
    clean, kinds = redact(f"{before} use {url} for the worker")
    assert kinds and secret not in clean


@settings(max_examples=60, deadline=None)
@given(
    value=password,
    before=prose,
    lead=st.sampled_from(["the password is", "password:", "the wifi password is", "my passphrase =", "pin code is"]),
)
def test_a_password_said_is_withheld(value, before, lead):
    clean, kinds = redact(f"{before} {lead} {value}")
    assert kinds and value not in clean


uuid = st.uuids().map(str)
git_sha = _text(40, "0123456789abcdef")
version = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 99)).map(lambda t: f"v{t[0]}.{t[1]}.{t[2]}")
date = st.dates().map(lambda d: d.isoformat())
link = st.tuples(_text(8, string.ascii_lowercase), _text(6, string.ascii_lowercase)).map(
    lambda t: f"https://{t[0]}.example.org/docs/{t[1]}"
)
short_number = st.integers(1, 9_999_999).map(str)
word = st.sampled_from(["AKIA", "github", "slack", "xoxb", "token-bucket", "sk-learn", "eyJ", "key-value"])


@settings(max_examples=150, deadline=None)
@given(value=st.one_of(uuid, git_sha, version, date, link, short_number, word), before=prose, after=prose)
def test_look_alikes_are_not_secrets(value, before, after):
    text = f"{before} {value} {after}".strip()
    assert find_secrets(text) == [], text


def test_the_provider_rules_come_from_detect_secrets():
    """The dependency does the provider work: its plugins are what run, and ours for the same
    providers are gone (so a rule kept up to date upstream is the one that counts)."""
    names = {type(p).__module__.split(".")[0] for p in secrets._provider_plugins()}
    assert names == {"detect_secrets"} and len(secrets._provider_plugins()) >= 15
    own = " ".join(pattern.pattern for _, pattern, _ in secrets._RULES)
    for provider_form in ("AKIA", "xox", "gh[pousr]", "eyJ", "SG\\."):
        assert provider_form not in own


# The credential net (credential_net.py): codes of the forms people make up, said around credential
# talk, in the same message or the speaker's next one; and the words of prose around them.
made_up = st.one_of(
    password,
    _text(12, ALNUM).filter(lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s)),
    # a code shaped like a year (1900-2099) is the known gap: read as a year when it stands alone
    st.integers(1000, 99_999_999).filter(lambda n: not 1900 <= n <= 2099).map(str),
    st.lists(
        st.sampled_from(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "zero"]), min_size=4, max_size=6
    ).map(" ".join),
    st.lists(_text(4, "bcdfghjklmnpqrstvwxz"), min_size=4, max_size=4).map(" ".join),
)
CREDENTIAL_TALK = [
    "the door code",
    "my pin",
    "the wifi password",
    "the passcode",
    "a backup code",
    "the api key",
    "a senha",
    "das Passwort",
]
credential_talk = st.sampled_from(CREDENTIAL_TALK)
said_as = st.sampled_from(["{talk} is {value}", "{talk}: {value}", "{talk}? it's {value}", "here's {talk} -> {value}"])


@settings(max_examples=120, deadline=None)
@given(value=made_up, talk=credential_talk, form=said_as, before=prose, after=prose, next_message=st.booleans())
def test_the_net_withholds_made_up_codes_around_credential_talk(value, talk, form, before, after, next_message):
    if next_message:  # "pw coming in a sec" ... "k7Vq!rua29"
        turns = [("user", f"{before} {talk} coming in a sec"), ("assistant", "ok"), ("user", f"{value} {after}")]
    else:
        turns = [("user", f"{before} " + form.format(talk=talk, value=value) + f" {after}")]
    assert all(value not in text for text, _ in secrets.redact_conversation(turns)), turns


PLAIN_VALUES = ["9:40", "14:30", "3rd", "12-hour", "2026", "50%", "#2BB3A8"]
plain_in_talk = st.one_of(date, version, st.sampled_from(PLAIN_VALUES))


@settings(max_examples=80, deadline=None)
@given(value=plain_in_talk, talk=credential_talk, before=prose)
def test_dates_times_and_versions_stay_in_credential_talk(value, talk, before):
    text = f"{before} we reset {talk} on {value} after the audit"
    assert redact_conversation_text(text) == text


@pytest.mark.parametrize("talk", CREDENTIAL_TALK)
@pytest.mark.parametrize("value", PLAIN_VALUES)
def test_every_fixed_plain_value_stays_in_every_credential_talk(value, talk):
    # The draw above meets each pair only by chance; a refit of the net must keep all of them
    # (session 24: a 55-set refit withheld "#2BB3A8" after "my pin" and was put back).
    text = f" we reset {talk} on {value} after the audit"
    assert redact_conversation_text(text) == text


@settings(max_examples=80, deadline=None)
@given(value=st.one_of(uuid, git_sha, version, date, short_number, password, made_up), before=prose, after=prose)
def test_the_net_leaves_made_up_words_alone_away_from_credential_talk(value, before, after):
    turns = [("user", f"{before} {value} {after}"), ("assistant", "noted"), ("user", "thanks, ship it friday")]
    words = secrets.credential_net.withheld_words(turns)
    assert words == [[], [], []], turns


def redact_conversation_text(text: str) -> str:
    return secrets.redact_conversation([("user", text)])[0][0]


# Codes of physical locks (a key box or key safe by the door, a lockbox, a padlock, a gate), said as
# what the lock "opens with" as well as what its code "is": every form withheld, and the sentence
# is never a memory's words.
lock = st.sampled_from(
    ["the key box", "the keybox", "our lockbox", "the lock box", "the key safe", "the padlock", "the gate code", "the door code"]
)
opens_as = st.sampled_from(["{lock} by the side door opens with {value}", "{lock} is {value}", "{lock} unlocks with {value}"])


@settings(max_examples=80, deadline=None)
# (a four-digit code shaped like a year, 1900-2099: the known gap, see `made_up`)
@given(
    value=st.integers(100, 99_999_999).filter(lambda n: not 1900 <= n <= 2099).map(str),
    lock=lock,
    form=opens_as,
    before=prose,
    after=prose,
)
def test_lock_codes_are_withheld_however_the_lock_is_said_to_open(value, lock, form, before, after):
    text = f"{before} " + form.format(lock=lock, value=value) + f", {after}"
    assert value not in redact_conversation_text(text), text
    assert secrets.about_credentials(text)


# Credential phrases written as one word, as Dutch, German and the Nordic languages compound them
# ("gatecode", "Zugangspasswort", "wifiwachtwoord"): credential talk like the phrase itself.
COMPOUNDS = [
    "gatecode",
    "pincode",
    "safecode",
    "accesscode",
    "Wifipassword",
    "Zugangspasswort",
    "wifiwachtwoord",
    "adminpasscode",
]
DIGIT_WORDS = {
    "nl": ["nul", "een", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht", "negen"],
    "de": ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"],
    "en": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"],
}


@settings(max_examples=80, deadline=None)
@given(
    value=st.one_of(
        *(st.lists(st.sampled_from(words), min_size=4, max_size=6).map(" ".join) for words in DIGIT_WORDS.values()),
        _text(10, ALNUM).filter(lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s)),
    ),
    compound=st.sampled_from(COMPOUNDS),
    before=prose,
    after=prose,
)
def test_a_credential_phrase_written_as_one_word_is_credential_talk(value, compound, before, after):
    text = f"{before} the {compound} of the storage room: {value}. {after}"
    assert value not in redact_conversation_text(text), text
    assert secrets.about_credentials(text)


@settings(max_examples=80, deadline=None)
@given(
    head=st.sampled_from(["Tejo", "Ribeira", "Maré", "X"]),
    digits=st.integers(0, 9999),
    tail=st.sampled_from(["password", "Passwort", "wachtwoord"]),
)
def test_a_made_up_value_ending_in_a_credential_word_is_still_a_value(head, digits, tail):
    value = f"{head}{digits}{tail}"  # digits in it: a value someone made up, not a compound
    assert value not in redact_conversation_text(f"the wifi password is {value} since monday"), value


@pytest.mark.parametrize("word", ["spinning", "laptops", "topping", "passage", "keyboard", "secretary", "pinboard"])
def test_a_word_that_only_holds_a_credential_word_is_no_credential_talk(word):
    # "pin", "pw", "otp", "pass" and "key" end or start too many words; a compound's head is its
    # last word, so "secret" at a word's start ("secretary") is no credential
    assert not secrets.about_credentials(f"we moved the {word} to the other room")
