"""The secret rules on their own: what is a secret value and what only looks like one."""

from __future__ import annotations

import pytest

from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.secrets import asks_to_remember_secret, find_secrets, redact, redact_conversation


@pytest.mark.parametrize(
    "text,value",
    [
        ("The staging password is hunter2hunter2.", "hunter2hunter2"),
        ("password: Gaivota!Harbor-2026#", "Gaivota!Harbor-2026#"),
        ("The door PIN is 4821.", "4821"),
        ("pin 4821 for the alarm", "4821"),
        ("the wifi password h4rb0r-guest, don't share it", "h4rb0r-guest"),
        ("My GitHub recovery codes are 4f2a-9c1b 77de-03aa.", "4f2a-9c1b 77de-03aa"),
        ("use postgres://harbor:Tr1ton-Quay-88@db.internal/app", "postgres://harbor:Tr1ton-Quay-88@db.internal/app"),
        ("key sk_live_abcdefghij1234567890 for payments", "sk_live_abcdefghij1234567890"),
        # found by heldout4: another provider's live key, pasted bare at the end of a message
        (
            "Tariq sent me the new SMS key. can you check it? qsms_live_7fK2pX9vLmQ4tR8wZ1nB6cY3dH5j",
            "qsms_live_7fK2pX9vLmQ4tR8wZ1nB6cY3dH5j",
        ),
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
        # found by secrets1's first run (one leaked; the others the nets held)
        ("the vault passphrase is copper meadow violin lantern, keep it safe", "copper meadow violin lantern"),
        ("the safe pin? it's seven three zero five", "seven three zero five"),
        ("DB_PASSWORD=Rk4!vQ8mZp2w", "Rk4!vQ8mZp2w"),
        ('{"client_secret": "xY7pQ2vL9mK4tR8w"}', "xY7pQ2vL9mK4tR8w"),
        ("shared admin login: ops@harbor.example / Tide-Lamp-72", "Tide-Lamp-72"),
        ("topping up with 4111 1111 1111 1111 exp 01/29", "4111 1111 1111 1111"),
        ("card ok? cvv 318", "318"),
        ("the back gate is 2580 after 8pm", "2580"),
        (
            "my recovery phrase: amber wolf tiny salad orbit lemon gravel fabric noble quartz ripple spoon",
            "amber wolf tiny salad orbit lemon gravel fabric noble quartz ripple spoon",
        ),
        ("auth token 3b7e9c2a1f04d68e5a9b0c7d2e4f6a81 for the test script", "3b7e9c2a1f04d68e5a9b0c7d2e4f6a81"),
        ("the login code from the bank is: 552 809, forward it", "552 809"),
        ("the old laptop's password hint reads 'Osprey#Dock41', sigh", "Osprey#Dock41"),
        ("a senha do wifi é maresia.forte.77", "maresia.forte.77"),
        # found by secrets2's first run (none written; these reached the model)
        ("smtp:\n  app_password = qwrt zxcv plmk bnhg", "qwrt zxcv plmk bnhg"),
        ("the rest is 1234 5678 9012 3456 exp 02/30", "1234 5678 9012 3456"),  # mistyped: no Luhn, still a card
        ("scanned it: WIFI:T:WPA;S:Clinic-Guest;P:mare.alta.2031;;", "mare.alta.2031"),
        ("post alerts to https://hooks.example.com/services/T01AB2CD3/9fk2LmQ7pRt4WvZ8", "9fk2LmQ7pRt4WvZ8"),
        ("  212  mysql -u ops -p'Ribeira!42' -h 10.0.0.5 legacy", "Ribeira!42"),
        (
            "the signed link ends X-Amz-Signature=7c2e9a41b0d38f56e1a7c4b9d02f6e83a5b1c7d9e0f24a6b8c3d5e7f9a1b2c4d",
            "7c2e9a41b0d38f56e1a7c4b9d02f6e83a5b1c7d9e0f24a6b8c3d5e7f9a1b2c4d",
        ),
        ("the coworking alarm, its six one nine three then enter", "six one nine three"),
    ],
)
def test_a_secret_value_is_found_and_redacted(text, value):
    hits = find_secrets(text)
    # the whole value, and at most a sentence's full stop after it (a value may end in one: safer withheld)
    assert [text[h.start : h.end].removesuffix(".") for h in hits] == [value]
    assert value not in redact(text)[0]


@pytest.mark.parametrize(
    "text",
    [
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
        "We need backup codes for 2 admins.",
        # the digit is in the link's query, not in what follows "mailto:" (Obsidian help, 2FA page)
        "If you've lost your recovery codes, please email [support@obsidian.md](mailto:support@obsidian.md?subject=I%20lost%20my%202FA).",
        # numbers and codes that are not credentials (secrets1's look-alikes, in other words)
        "fixed in commit 9e1f2a7c4b3d8e6f0a1b2c3d4e5f6a7b8c9d0e1f on main",
        "order 700214583 shipped, tracking JD014600003829471",
        "the accent colour is #2BB3A8 from build 2.14.0-rc.2",
        "Channel: https://discord.com/channels/686053708261228577/714234422379151400",
        "The wifi password is on the fridge in the kitchen.",
        "author: https://example.org/people/42",
        "auth_provider: google-oauth2",
        "The entry is 1500 words long.",
        "the inbound endpoint is https://stg.harbor.example/hooks/sms-inbound",
        "see https://hookproductivity.com/ for the app",
        "run mkdir -p src/app first, then docker run -p 8080:80 harbor",  # four four-letter words near a credential word are words, not an app password
        "The password rule says keep your code safe from them.",
        "The network key rotation is done.",
    ],
)
def test_words_that_only_look_like_secrets_are_left_alone(text):
    assert find_secrets(text) == [] and redact(text) == (text, [])


def test_a_request_to_keep_a_credential_is_noticed_without_a_value():
    assert asks_to_remember_secret("Can you remember this password for me?")
    assert not asks_to_remember_secret("Remember that Ruth pays a year up front.")


def test_the_net_withholds_code_like_words_near_credential_talk():
    """Under the value rules: in a message about credentials, in the messages next to it and in the
    same speaker's messages before and after it, every code-like word goes; dates, times, versions
    and number compounds stay; messages further away are untouched."""
    turns = [
        ("user", "pw first half is Brisa, rest in a sec. the 4-desk room, release 2.14.0-rc.2 on 2026-12-04 at 9:40"),
        ("assistant", "Keep it in the manager. The ref is QX7RZP9."),
        ("user", "second half: k7Vq!rua29"),
        ("assistant", "Done. Build 7f3a9c21 is green."),
        ("user", "order 58213947 shipped"),
    ]
    out = redact_conversation(turns)
    assert out[0][0] == turns[0][1]
    assert out[1][0] == "Keep it in the manager. The ref is [withheld code said with a credential]."
    assert out[2] == ("second half: [withheld code said with a credential]", ["code said with a credential"])
    assert out[3][0] == turns[3][1] and out[4][0] == turns[4][1]  # two messages on: no longer near
    # a value a rule recognised once is withheld wherever it is said again
    said = [("user", "she needs the pin. it's four eight two one right??"), ("user", "found it, it is four eight two one")]
    assert all("four eight two one" not in text for text, _ in redact_conversation(said))


def test_the_net_reads_code_names_and_paths_as_words_put_together():
    """A coding session names files, places in code and API names next to "token" and "auth":
    pieces that read as words, and paths, are features of their own (a generated key is neither)."""
    from palinode_vault.memory.extraction.credential_net import _path_like, _word_piece_share

    for name in ("NSPrivacyAccessedAPICategoryUserDefaults", "sqlite3_deserialize", "UserDefaults"):
        assert _word_piece_share(name) >= 0.85, name
    for key in ("Qx7vR2mLp9sT", "AC5e21b7c09d4f3a8e6b1c2d7f90a4e3b8", "k7Vq!rua29"):
        assert _word_piece_share(key) <= 0.3, key
    for path in ("apps/clinic/src/i18n/pt.json", "client.js:132:17", "0043_app_role_timeouts.sql", "Europe/Lisbon"):
        assert _path_like(path), path
    for word in ("Qx7vR2mLp9sT", "Ribeira!42", "hunter2", "k7Vq!rua29"):
        assert not _path_like(word), word
    # said next to a credential word, places in code stay (both were withheld before the features)
    for said in (
        "TypeError at loadConfig (src/config/load-settings.js:27:14), the api token was fine",
        "the deploy token broke lib/deploy/upload_assets.py:88 again",
    ):
        assert redact_conversation([("user", said)])[0][0] == said


def test_the_net_errs_on_the_safe_side_in_credential_talk():
    """A product name with a digit in it, said where credentials are talked of, looks like a code
    to the credential net and is withheld: a lost word there costs less than a leaked code."""
    assert [h.kind for h in find_secrets("The backup codes are in 1Password.")] == [secrets.CODE_NEAR_CREDENTIAL]


def test_a_code_spelled_in_letters_is_withheld_from_the_conversation():
    """The credential net withholds a code said in the NATO alphabet before the model sees it; the
    last check on a text to be written reads the same score at a stricter point (a false alarm
    there refuses a note) and leaves this one to the conversation."""
    said = [("user", "router admin pw, spelled: delta-echo-kilo-two-nine-zulu")]
    assert "delta-echo-kilo-two-nine-zulu" not in redact_conversation(said)[0][0]


def test_without_its_weights_the_net_withholds_every_made_up_word_near_credential_talk(tmp_path):
    from palinode_vault.memory.extraction import credential_net

    broken = tmp_path / "net.json"
    broken.write_text('{"features": ["not", "these"], "weights": [1, 2], "threshold": 0.5}')
    assert credential_net.load_net(broken) is None
    turns = [("user", "the wifi password is on a sticker"), ("user", "it says Ribeira!42 and 2026-12-04")]
    assert [[w.text for w in ws] for ws in credential_net.without_weights(turns)] == [[], ["Ribeira!42"]]


@pytest.mark.parametrize(
    ("text", "talk"),
    [
        # a bare "token" has other senses (design tokens, a model's tokens): a hint, not credential talk
        ("We keep the colour tokens in the repo and the build reads the token export.", False),
        ("The prompt is 900 tokens long after the trim.", False),
        # its compounds are credentials, as "api key" is where a bare "key" is not
        ("The access token for the staging API expired this morning.", True),
        ("Rotate the bot token after the demo.", True),
        ("The API token lives in the CI settings.", True),
    ],
)
def test_a_bare_token_hints_at_a_credential_its_compounds_are_one(text, talk):
    assert secrets.about_credentials(text) is talk
