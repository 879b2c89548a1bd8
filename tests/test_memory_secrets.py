"""The secret rules on their own: what is a secret value and what only looks like one."""

from __future__ import annotations

import pytest

from palinode_vault.memory.secrets import asks_to_remember_secret, codes_near_credentials, find_secrets, redact


@pytest.mark.parametrize("text,value", [
    ("The staging password is hunter2hunter2.", "hunter2hunter2"),
    ("password: Gaivota!Harbor-2026#", "Gaivota!Harbor-2026#"),
    ("The door PIN is 4821.", "4821"),
    ("pin 4821 for the alarm", "4821"),
    ("the wifi password h4rb0r-guest, don't share it", "h4rb0r-guest"),
    ("My GitHub recovery codes are 4f2a-9c1b 77de-03aa.", "4f2a-9c1b 77de-03aa"),
    ("use postgres://harbor:Tr1ton-Quay-88@db.internal/app", "postgres://harbor:Tr1ton-Quay-88@db.internal/app"),
    ("key sk_live_abcdefghij1234567890 for payments", "sk_live_abcdefghij1234567890"),
    # found by heldout4: another provider's live key, pasted bare at the end of a message
    ("Tariq sent me the new SMS key. can you check it? qsms_live_7fK2pX9vLmQ4tR8wZ1nB6cY3dH5j",
     "qsms_live_7fK2pX9vLmQ4tR8wZ1nB6cY3dH5j"),
    ("here is the new token, paste it in staging: 9fKx2LmQ7pRt4WvZ8nBc1YdH6j", "9fKx2LmQ7pRt4WvZ8nBc1YdH6j"),
    # found by heldout5: a random token with no word for it before, and a passcode said after a question
    ("why the 401? i'm sending 8f3KzP2wQ9xT7mLa4VbN1cRdY6hJ0sUe in the header", "8f3KzP2wQ9xT7mLa4VbN1cRdY6hJ0sUe"),
    ("can you remember the passcode for the lab ipads for me? it's 480913. dev changes it monthly", "480913"),
    # found by heldout6 (once the statement judge proposed the sentence): a backup code said mid-sentence
    ("they gave me backup codes, the first one is 7QX4-LM92-KD8P, ugh where do i even put these", "7QX4-LM92-KD8P"),
    ("the verification code is 551203, can you check", "551203"),
    # found by heldout7's first run (the credential net kept both out of every note)
    ("made her an app password for her calendar client, it's qzvp hmlt ragc wxne, i'll text it", "qzvp hmlt ragc wxne"),
    ("the sticker on the router says network ALFAMA-RECEP, WPA2 key 7GhK2pL9xRt4mQ, and it fails", "7GhK2pL9xRt4mQ"),
    ("Wi-Fi password: Harbor-guest-77", "Harbor-guest-77"),
    ("the app password is QZVP-HMLT-RAGC-WXNE", "QZVP-HMLT-RAGC-WXNE"),
])
def test_a_secret_value_is_found_and_redacted(text, value):
    hits = find_secrets(text)
    # the whole value, and at most a sentence's full stop after it (a value may end in one: safer withheld)
    assert [text[h.start:h.end].removesuffix(".") for h in hits] == [value]
    assert value not in redact(text)[0]


@pytest.mark.parametrize("text", [
    "Do you want to pin down the scope now?",  # a verb, not a PIN (found in heldout4's first run)
    "Let's pin this thread for later.",
    "The password is required on every login.",
    "The token is rotated weekly.",
    # a document's id in a URL is an address; a long name with no secret words near it is a name
    "The key numbers are in https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "The build HarborClinicReminderService2025v2 passed.",
    # prose about passwords (the Obsidian help corpus says all of these)
    "Publish offers password protection for your site.",
    "Enter your password when prompted.",
    "Keep the encryption password separate from your account password anyway.",
    "Choose a password for your vault. This creates an encrypted vault. The vault password is separate.",
    "Please download your recovery codes. Copy the codes to paste elsewhere.",
    "- **Copy recovery codes**: Copy the codes to paste elsewhere.",
    "The backup codes are in 1Password.",  # where they are, not what they are
    "We need backup codes for 2 admins.",
    # the digit is in the link's query, not in what follows "mailto:" (Obsidian help, 2FA page)
    "If you've lost your recovery codes, please email [support@obsidian.md](mailto:support@obsidian.md?subject=I%20lost%20my%202FA).",    # four four-letter words near a credential word are words, not an app password
    "The password rule says keep your code safe from them.",
    "The network key rotation is done.",
])
def test_words_that_only_look_like_secrets_are_left_alone(text):
    assert find_secrets(text) == [] and redact(text) == (text, [])


def test_a_request_to_keep_a_credential_is_noticed_without_a_value():
    assert asks_to_remember_secret("Can you remember this password for me?")
    assert not asks_to_remember_secret("Remember that Ruth pays a year up front.")


def test_code_like_words_of_a_sentence_about_credentials_are_known():
    """The net under the value rules for the model's items (extract.py withholds an item repeating one)."""
    said = ("hana starts tuesday. her calendar login is hana.k and the secret phrase thing is Zq8vHmLt. "
            "the https link expired")
    assert codes_near_credentials(said) == {"Zq8vHmLt"}
    assert codes_near_credentials("The GitHub token for CI is ZqvHmLtxWp, PostgreSQL's too.") == {"ZqvHmLtxWp"}
    assert codes_near_credentials("We ship the 2026 release on Friday.") == set()  # no credential talk
