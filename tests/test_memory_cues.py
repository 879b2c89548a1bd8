"""The wording cues that decide a plain type (cues.py): what each kind of statement sounds like,
and sentences that say no kind plainly (the model's type stands then)."""

from __future__ import annotations

import pytest

from palinode_vault.memory.cues import type_by_wording

TYPES = ["PersonMemory", "ProjectSnapshot", "Decision", "Insight", "ResearchRef", "ActionItem"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We settled on Hetzner for staging instead of running it on a laptop.", "Decision"),
        ("From now on releases go out on Tuesdays.", "Decision"),
        ("Amira will review the grant application before Thursday.", "ActionItem"),
        ("The tax return is due on 31 January.", "ActionItem"),
        ("Turns out the cache made the dashboard slower, not faster.", "Insight"),
        ("The garden app went live on the Play Store this morning.", "ProjectSnapshot"),
        ("The kiosk rollout slipped to March because the screens are late.", "ProjectSnapshot"),
        ("Kofi Mensah joined as our bookkeeper.", "PersonMemory"),
        ("I prefer voice notes to long emails.", "PersonMemory"),
        ("I need to send Mira the conflict log format by Friday.", "ActionItem"),
        ("Reminder SMS are now sent from a serverless function, not the queue worker.", "Decision"),
        ("We no longer print invoices.", "Decision"),
        ("The offline mode beta moved to January with five clinics.", "ProjectSnapshot"),
        ("The launch got pushed back a week.", "ProjectSnapshot"),
        ("The weather in Lisbon was lovely.", None),
        ("Mira moved to Berlin last year.", None),
        ("We looked at three libraries.", None),
    ],
)
def test_wording_says_the_type(text, expected):
    assert type_by_wording(text, TYPES) == expected


def test_a_type_program_md_does_not_list_is_never_given():
    assert type_by_wording("Amira will review the grant application before Thursday.", ["Decision", "Insight"]) is None


def test_case_of_the_first_word_does_not_matter_for_phrases():
    assert type_by_wording("Please don't call me before nine.", TYPES) == "PersonMemory"
    assert type_by_wording("I Prefer tea.", TYPES) == "PersonMemory"


@pytest.mark.parametrize("text", ["This is a rule for the conversation.", "It is a good tool.", "The app is the best."])
def test_a_pronoun_or_article_is_not_a_name(text):
    assert type_by_wording(text, TYPES) != "PersonMemory"


def test_a_cue_counts_only_in_the_persons_own_words():
    """The model's text can hold words nobody said; given what the person said, only their cues count."""
    text = "One patient never got her reminder. She said it was a mistake."
    assert type_by_wording(text, TYPES) == "Insight"
    assert type_by_wording(text, TYPES, spoken="one patient never got her reminder for tomorrow.") is None
    assert type_by_wording(text, TYPES, spoken="it was a mistake in the number.") == "Insight"
