"""Preprocessing and chunking (pure): what the index embeds and what it keyword-searches."""

from __future__ import annotations

import pytest

from palinode_vault.core.note import parse_note
from palinode_vault.core.text import normalise, sha256_text
from palinode_vault.index.chunks import MAX_CHARS, chunk_note, clean_draft
from palinode_vault.index.hybrid import Hit, blend, fts_query, fuse

NOTE = """---
id: person-ada
category: person
type: PersonMemory
name: Ada Lovelace
entities: [project/engine]
---
# Ada Lovelace

Works with [[babbage|Charles]] on [[engine]] and [[engine#Design]]. See ![[diagram.png]].
Read [the notes](notes/sketch.md) and `analytical --run`.

```python
secret_identifier = 42
```

<!-- palinode:see-also -->
## See also
- [[footer-only-target]]
<!-- /palinode:see-also -->
"""


def _chunks(text: str, path: str = "people/ada.md", **kw):
    norm, _ = normalise(text)
    return chunk_note(parse_note(path, norm, sha256_text(norm)), norm, **kw)


def test_preprocessing_removes_frontmatter_footer_and_link_decoration():
    (chunk,) = _chunks(NOTE)
    for text in (chunk.embed, chunk.text):
        assert "id: person-ada" not in text and "category:" not in text
        assert "footer-only-target" not in text and "See also" not in text
        assert "[[" not in text and "]]" not in text
        assert "Works with Charles on engine and engine Design." in text
        assert "diagram.png" not in text
        assert "Read the notes and analytical --run." in text
    # code blocks: kept for keywords (find an identifier), dropped from the embedding
    assert "secret_identifier" in chunk.text
    assert "secret_identifier" not in chunk.embed
    assert chunk.embed.startswith("people\nAda Lovelace")  # the folder, then the title
    assert not chunk.text.startswith("people")  # context is embedded, not shown


def test_short_note_is_one_chunk_and_long_note_splits_at_headings():
    assert len(_chunks(NOTE)) == 1
    sections = "\n".join(f"## Part {i}\n" + f"Sentence number {i} about topic {i}. " * 12 + "\n" for i in range(8))
    chunks = _chunks(f"# Long\n\n{sections}", "insights/long.md")
    assert len(chunks) > 1
    assert all(len(c.embed) <= MAX_CHARS + 60 for c in chunks)
    # every chunk starts at a heading and carries the note's folder and title
    assert all(c.heading.startswith("Part") or c.ord == 0 for c in chunks)
    assert chunks[0].embed.startswith("insights\nLong")
    assert all(c.embed.startswith("insights: Long\nPart") for c in chunks[1:])
    joined = " ".join(c.text for c in chunks)
    assert all(f"topic {i}." in joined for i in range(8))


def test_a_chunk_deep_in_a_note_is_embedded_with_its_heading_path():
    filler = "A sentence about installing the desktop app on a computer. " * 10
    text = (
        f"# Install\n\nIntro.\n\n## Desktop\n\n{filler}\n\n### Windows\n\n{filler}\n\n"
        f"### Linux\n\n{filler}\n\n## Mobile\n\n{filler}\n"
    )
    chunks = {c.heading: c for c in _chunks(text, "Getting started/install.md")}
    windows = chunks["Windows"].embed.split("\n")
    # folder, title and the containing section; the section's own heading opens its text
    assert windows[0] == "Getting started: Install: Desktop" and windows[1] == "Windows"
    assert chunks["Mobile"].embed.split("\n")[:2] == ["Getting started: Install", "Mobile"]
    assert "Desktop" not in chunks["Mobile"].embed  # a closed section is not in the path
    # a heading that merely starts with the title still gets the title in front
    (chunk,) = _chunks("## Install on Linux\n\nUse the AppImage.\n", "Getting started/Install.md")
    assert chunk.embed.startswith("Getting started: Install\nInstall on Linux")


def test_chunk_hash_depends_only_on_its_text():
    one = _chunks("# T\n\n## A\n" + "alpha " * 200 + "\n## B\n" + "beta " * 200 + "\n", "insights/t.md")
    two = _chunks("# T\n\n## A\n" + "alpha " * 200 + "\n## B\n" + "gamma " * 200 + "\n", "insights/t.md")
    assert one[0].hash == two[0].hash  # section A unchanged: its vector is reused
    assert one[-1].hash != two[-1].hash


def test_draft_cleaning_and_fts_query():
    assert "Ada Lovelace" in clean_draft(NOTE) and "person-ada" not in clean_draft(NOTE)
    assert fts_query("how do I embed a PDF?") == '"embed" OR "pdf"'
    assert fts_query('weird "quotes" AND') == '"weird" OR "quotes"'
    assert fts_query("the") == '"the"'


def test_reciprocal_rank_fusion():
    keyword = [Hit("a.md", 1, 1), Hit("b.md", 2, 2)]
    vector = [Hit("b.md", 3, 1), Hit("c.md", 4, 2)]
    scores = fuse([keyword, vector], 60)
    assert scores["b.md"] == 1 / 62 + 1 / 61
    assert scores["a.md"] == 1 / 61 and scores["c.md"] == 1 / 62
    assert max(scores, key=scores.get) == "b.md"  # in both lists beats first in one


def test_weighted_fusion_scales_each_list():
    keyword = [Hit("a.md", None, 1, bm25=9.0), Hit("b.md", None, 2, bm25=5.0), Hit("c.md", None, 3, bm25=1.0)]
    vector = [Hit("b.md", 1, 1, 0.8), Hit("d.md", 2, 2, 0.6), Hit("a.md", 3, 3, 0.4)]
    scores = blend(keyword, vector, 0.7)
    assert scores["a.md"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.0)
    assert scores["b.md"] == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    assert scores["c.md"] == pytest.approx(0.0) and scores["d.md"] == pytest.approx(0.7 * 0.5)
    # a list of one note gives it the whole weight; an empty list gives nothing
    assert blend([Hit("a.md", None, 1, bm25=3.0)], [], 0.7) == {"a.md": pytest.approx(0.3)}
    # far ahead in one list beats middling in both, which reciprocal ranks cannot tell
    far = blend(
        [Hit("x.md", None, 1, bm25=20.0), Hit("y.md", None, 2, bm25=2.0), Hit("z.md", None, 3, bm25=1.0)],
        [Hit("y.md", 1, 1, 0.50), Hit("z.md", 2, 2, 0.49), Hit("x.md", 3, 3, 0.48), Hit("w.md", 4, 4, 0.20)],
        0.5,
    )
    assert max(far, key=far.get) == "x.md"
    ranks = fuse([[Hit("x.md", None, 1), Hit("y.md", None, 2)], [Hit("y.md", 1, 1), Hit("z.md", 2, 2), Hit("x.md", 3, 3)]], 60)
    assert max(ranks, key=ranks.get) == "y.md"


def test_chunks_without_words_of_their_own_are_not_embedded():
    links = "\n".join(f"- [[Topic number {i}]]" for i in range(40))
    code = "```bash\n" + "\n".join(f"run --step {i}" for i in range(60)) + "\n```"
    prose = "Sync keeps every device up to date. " * 30
    text = f"# Guide\n\n## Overview\n{prose}\n\n## Related\n{links}\n\n## Commands\n{code}\n\n## Empty\n"
    chunks = _chunks(text, "help/guide.md")
    embedded = [c for c in chunks if c.hash]
    assert embedded and all("Sync keeps" in c.embed for c in embedded)
    # the note's title alone, and the links, code and empty section after the prose
    top, skipped = [c for c in chunks if not c.hash]
    assert top.text == "# Guide" and skipped.heading == "Related"
    # its keyword text is kept: the links and the code stay searchable
    assert "Topic number 7" in skipped.text and "run --step 3" in skipped.text


def test_a_link_list_with_words_is_embedded_and_a_note_of_links_keeps_its_title():
    (described,) = _chunks("# Index\n\n- [[Sync]]: how devices agree\n- [[Publish]]\n", "help/index.md")
    assert described.hash and "how devices agree" in described.embed
    (bare,) = _chunks("# Index\n\n- [[Sync]]\n- [[Publish]]\n", "help/index.md")
    assert bare.hash and bare.embed.startswith("help: Index")
