"""core/prose.py: the words and wikilinks the memory manager and the search compare."""

from palinode_vault.core.prose import QUERY_STOP, STOP, links_as_read, stems, wikilinks, words


def test_wikilinks_give_target_and_label_and_skip_heading_only_links():
    text = "Met [[people/ana-lima|Ana]] about ![[plan.png]] and [[atlas-app#Risks]]; see [[#Notes]]."
    assert wikilinks(text) == [("people/ana-lima", "Ana"), ("plan.png", None), ("atlas-app", None)]


def test_links_read_as_their_words():
    assert (
        links_as_read("Ask [[people/ana-lima]] or [[bruno|Bruno C.]] about ![[atlas-app]].")
        == "Ask ana lima or Bruno C. about atlas app."
    )


def test_content_words_and_stems():
    assert words("The offline beta ships in March") == {"offline", "beta", "ships", "march"}
    assert stems("suggestions") == stems("suggest") == {"suggest"}
    assert "how" in QUERY_STOP and "how" not in STOP  # a query's question word carries no topic
