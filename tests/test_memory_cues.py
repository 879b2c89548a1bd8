"""The wording cues that decide a plain type (cues.py): what each kind of statement sounds like,
and sentences that say no kind plainly (the model's type stands then)."""

from __future__ import annotations

import pytest

from palinode_vault.memory.extraction import cues
from palinode_vault.memory.extraction.cues import type_by_wording

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


def test_the_words_are_data_one_file_per_language(tmp_path):
    """The cue words live in cue_words/en.toml, not in code: every type PROGRAM.md knows has words there."""
    from palinode_vault.memory.extraction.cues import CUE_DIR, load

    assert (CUE_DIR / "en.toml").is_file()
    assert {c.type for c in load().types} == {"ActionItem", "Decision", "Insight", "ProjectSnapshot", "PersonMemory"}
    assert load() is load()  # read once


def test_the_reason_and_the_option_that_lost_come_from_the_persons_words():
    from palinode_vault.memory.extraction.cues import lost_clause, reason_clause, replaced_clause

    text = "We chose Postgres because the team knows it, not MySQL."
    assert reason_clause(text) == "the team knows it"
    assert lost_clause(text) == "MySQL"
    assert replaced_clause("This replaces our current SMS provider decision.") == "our current SMS provider decision"


@pytest.mark.parametrize(
    "text, names",
    [
        ("We met Kofi Mensah at the fair.", ["Kofi Mensah"]),
        ("the new designer is Anna-Lena Kraus, from Leipzig", ["Anna-Lena Kraus"]),
        ("Ask Siobhán O'Neill Byrne about it", ["Siobhán O'Neill Byrne"]),
        ("Kofi Mensah joined.", []),  # a sentence's first word: `named_subject` reads that one
        ("since March Tariq has been on call", []),  # the calendar's words are no part of a name
        ("we fly on Friday Morning", []),
        ("we ship The Big Release", []),  # opened by one of the not_names
        ("Q1 goes to Amsterdam", []),
        ("it runs on Google Cloud now", ["Google Cloud"]),  # looks like one: callers hold it to a person's sentence
    ],
)
def test_full_names_are_runs_of_capitalised_words_inside_a_sentence(text, names):
    assert cues.full_names(text) == names


@pytest.mark.parametrize(
    "text, expected",
    [
        ("She keeps the books.", 0),
        ("so he'll cover Fridays", 3),
        ("They keep the data in Paris.", -1),
        ("I like her.", 7),
    ],
)
def test_where_a_persons_pronoun_is(text, expected):
    assert cues.pronoun_at(text) == expected


@pytest.mark.parametrize(
    ("text", "preference", "blocker"),
    [
        ("She prefers voice messages over long threads.", True, False),
        ("Communication goes through the shared channel only.", True, False),
        ("It is likely to rain at the offsite.", False, False),  # "likes" as a whole word only
        ("The release is blocked on the signing certificate.", False, True),
        ("We are waiting on the lawyer.", False, True),
        ("The blockchain talk was fun.", False, False),
    ],
)
def test_the_section_an_update_goes_to_is_said_by_whole_words_of_the_data(text, preference, blocker):
    c = cues.load()
    assert (cues.says(text, c.preferences), cues.says(text, c.blockers)) == (preference, blocker)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We now send reminders from the queue instead of the cron job.", True),
        ("This reverses the earlier hosting choice.", True),
        ("Postgres, not Firebase.", True),
        ("We added a second reminder for group bookings.", False),
        ("Nobody replied to the survey.", False),  # "replied" is not "replaced"
    ],
)
def test_replacement_wording_is_one_list_for_extraction_and_consolidation(text, expected):
    assert cues.says_replaces(text) is expected


def test_the_extraction_reads_the_replacement_words_consolidation_had():
    """The words "reverses" and "switch from" came from consolidation's own list; "reverse" alone did not
    ("reverse charge" is a VAT mechanism, not a replacement)."""
    assert cues.replaced_clause("This reverses the earlier hosting choice.") == "the earlier hosting choice"
    assert cues.replaced_clause("We switch from the old landline to a sender name.") == "the old landline to a sender name"
    assert cues.replaced_clause("German suppliers invoice us with reverse charge, so no VAT line.") == ""
    assert not cues.says_replaces("German suppliers invoice us with reverse charge, so no VAT line.")


LANGUAGE_FILES = sorted(p for p in cues.CUE_DIR.glob("*.toml") if p.stem not in ("en", "credentials", "mail_headers"))


@pytest.mark.parametrize("path", LANGUAGE_FILES, ids=lambda p: p.stem)
def test_every_other_language_gives_types_and_clauses_only_in_englishs_order(path):
    """Another language's file holds the five types, in en.toml's order (commitments before
    decisions), and the reason, replacement and lost-option words; the rest stays English's.
    Every phrase is lower case and reads as the words the matcher compares."""
    import tomllib

    english = tomllib.loads((cues.CUE_DIR / "en.toml").read_text(encoding="utf-8"))
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"types", "clauses"}
    assert [t["type"] for t in data["types"]] == [t["type"] for t in english["types"]]
    assert set(data["clauses"]) == {"replacement", "reason", "lost"}
    phrases = [p for t in data["types"] for p in t.get("phrases", ())]
    phrases += [p for t in data["types"] for pair in t.get("pairs", ()) for p in pair["first"] + pair["then"]]
    phrases += [p for words in data["clauses"].values() for p in words]
    for phrase in phrases:
        assert phrase == phrase.lower() and cues.tokens(phrase), (path.name, phrase)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Nous avons décidé de garder le calendrier papier à l'accueil.", "Decision"),
        ("Wir haben beschlossen, die Rechnungen monatlich zu verschicken.", "Decision"),
        ("Decidimos cerrar la oficina los viernes por la tarde.", "Decision"),
        ("Beslutade att vi håller kvar det gamla kassasystemet.", "Decision"),
        ("The weather in Lisbon was lovely.", None),
        ("We looked at three libraries.", None),
    ],
)
def test_other_languages_wording_says_the_type_and_english_reads_as_before(text, expected):
    """The type a sentence's wording says, in any language with a file (the other languages'
    types are read beside English's); English sentences that say no type still say none."""
    assert type_by_wording(text, TYPES) == expected
