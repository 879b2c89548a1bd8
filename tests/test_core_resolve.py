"""Link resolution the Obsidian way, on small fixtures, and heading/block anchors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palinode_vault.core.resolve import Resolver, anchor_exists, heading_key

FILES = [
    "Note.md",
    "folder/Note.md",
    "a/b/Note.md",
    "a/Other.md",
    "img/x.png",
    "Notes/Deep.md",
    "a/b/c/Deep.md",
    "people/alice-smith.md",
    "x/Same.md",
    "y/Same.md",
    "Doc.pdf",
    "My Note.md",
    "data.json.md",
]


@pytest.mark.parametrize(
    "link, source, expected",
    [
        ("Note", "z.md", "Note.md"),
        ("note", "z.md", "Note.md"),  # case-insensitive
        ("NOTE.MD", "z.md", "Note.md"),  # with the extension
        ("Note", "folder/q.md", "Note.md"),  # an exact vault path wins over the same folder
        ("folder/note", "a/q.md", "folder/Note.md"),
        ("b/Note", "z.md", "a/b/Note.md"),  # a partial path matches the end of a path
        ("/Note", "folder/q.md", "Note.md"),  # leading slash: from the vault root
        ("/a/b/Note", "z.md", "a/b/Note.md"),
        ("Same", "y/q.md", "y/Same.md"),  # the linking note's folder wins
        ("Same", "x/q.md", "x/Same.md"),
        ("Deep", "a/b/c/q.md", "a/b/c/Deep.md"),
        ("Other", "a/b/q.md", "a/Other.md"),
        ("x.png", "z.md", "img/x.png"),  # attachments need their extension
        ("x", "z.md", None),
        ("Doc", "z.md", None),
        ("Doc.pdf", "z.md", "Doc.pdf"),
        ("data.json", "z.md", "data.json.md"),  # a dotted name is still a note name
        ("Alice Smith", "z.md", None),  # titles and aliases are not targets
        ("alice-smith", "z.md", "people/alice-smith.md"),
        ("Missing", "z.md", None),
        ("", "a/Other.md", "a/Other.md"),  # [[#Heading]]: the note itself
        # markdown links: relative to the linking note, or like a wikilink path
        ("../people/alice-smith.md", "projects/p.md", "people/alice-smith.md"),
        ("./Other.md", "a/q.md", "a/Other.md"),
        ("alice-smith.md", "projects/p.md", "people/alice-smith.md"),
        ("My Note.md", "z.md", "My Note.md"),
        ("../../x.md", "a.md", None),  # escapes the vault
    ],
)
def test_resolve(link, source, expected):
    assert Resolver(FILES).resolve(link, source) == expected


# Obsidian's getFirstLinkpathDest, rule by rule (docs/ARCHITECTURE.md "Links the Obsidian way").
# Each case resolved differently before (noted after it).
@pytest.mark.parametrize(
    "files, link, source, expected",
    [
        # ./ and ../ for every link kind (wikilinks and embeds were not relative)
        (["people/x.md", "projects/p.md"], "../people/x", "projects/p.md", "people/x.md"),
        (["img.png", "notes/a.md"], "../img.png", "notes/a.md", "img.png"),
        (["a/Other.md", "Other.md"], "./Other", "a/q.md", "a/Other.md"),  # was Other.md
        # a relative link needs its exact file: no suffix search (was 'x/Note.md')
        (["x/Note.md"], "./Note", "a/q.md", None),
        # a rooted link without an exact match is unresolved (was a/b/Note.md)
        (["a/b/Note.md"], "/b/Note", "z.md", None),
        # suffix candidates: a plain string suffix, no '/' boundary (was unresolved)
        (["ab/Note.md"], "b/Note", "z.md", "ab/Note.md"),
        # the linking note's folder as a string prefix: its subfolders count (was people/...)
        (
            ["people/alice-smith.md", "projects/apollo/alice-smith.md", "projects/apollo.md"],
            "alice-smith",
            "projects/apollo.md",
            "projects/apollo/alice-smith.md",
        ),
        # within a group the shortest path in characters, not the fewest '/' (was longfolder/)
        (["longfolder/Deep.md", "a/b/Deep.md"], "Deep", "z.md", "a/b/Deep.md"),
        (["zz/q/Deep.md", "zz/longer-name/Deep.md", "a/Deep.md"], "Deep", "zz/n.md", "zz/q/Deep.md"),
        # paths compare after NFC normalisation (macOS stores names decomposed; was unresolved)
        (["notes/cafe\u0301.md"], "caf\u00e9", "z.md", "notes/cafe\u0301.md"),
        (["notes/caf\u00e9.md"], "cafe\u0301", "z.md", "notes/caf\u00e9.md"),
        (["notes/cafe\u0301.md"], "notes/caf\u00e9.md", "z.md", "notes/cafe\u0301.md"),
    ],
)
def test_resolve_obsidian_rules(files, link, source, expected):
    assert Resolver(files).resolve(link, source) == expected


@pytest.mark.parametrize(
    "files, target, source, written",
    [
        (["people/alice-smith.md"], "people/alice-smith.md", "projects/apollo.md", "alice-smith"),
        (
            ["people/alice-smith.md", "projects/apollo/alice-smith.md"],
            "people/alice-smith.md",
            "projects/apollo.md",
            "people/alice-smith",
        ),
        (["x/a/n.md", "y/a/n.md", "y/b/n.md"], "x/a/n.md", "y/q.md", "x/a/n"),
        (["img/x.png", "x.png"], "img/x.png", "z.md", "img/x.png"),
        (["n.md", "sub/n.md"], "n.md", "sub/q.md", "n"),  # the exact vault path wins
    ],
)
def test_link_path_is_the_shortest_that_lands_on_the_file(files, target, source, written):
    r = Resolver(files)
    assert r.link_path(target, source) == written
    assert r.resolve(written, source) == target


def test_a_resolver_that_remembers_answers_as_a_fresh_one():
    """The memos (per link path where no folder changes the answer, per path and folder where
    one does) give every (link, note) pair the answer a fresh resolver gives, asked in any order
    and after files come and go."""
    files = ["x/Same.md", "y/Same.md", "y/sub/Only.md", "Top.md", "img/p.png", "a/b/Deep.md", "zz/Deep.md"]
    links = ["Same", "Only", "Top", "p.png", "Deep", "./Same", "../Top", "/Top", "/Same", "missing", "b/Deep"]
    sources = ["x/n.md", "y/n.md", "y/sub/n.md", "zz/n.md", "n.md", "a/b/c/n.md"]
    warm = Resolver(files)
    for order in (links, links[::-1]):
        for source in sources + sources[::-1]:
            for link in order:
                assert warm.resolve(link, source) == Resolver(files).resolve(link, source), (link, source)
    warm.add("zz/Only.md")  # a second candidate: the answer now depends on the folder
    assert warm.resolve("Only", "zz/n.md") == "zz/Only.md" and warm.resolve("Only", "y/n.md") == "y/sub/Only.md"
    warm.remove("zz/Only.md")
    assert warm.resolve("Only", "zz/n.md") == "y/sub/Only.md"


def test_resolution_follows_files_coming_and_going():
    r = Resolver(FILES)
    assert r.resolve("Same", "z.md") in ("x/Same.md", "y/Same.md")
    r.remove("x/Same.md")
    assert r.resolve("Same", "x/q.md") == "y/Same.md"
    r.remove("Note.md")
    assert r.resolve("Note", "folder/q.md") == "folder/Note.md"
    assert r.resolve("Note", "z.md") == "a/b/Note.md"  # 11 characters against folder/Note.md's 14
    r.add("New.md")
    assert r.resolve("new", "a/q.md") == "New.md"
    assert "NEW.md" in r and r.exact("new.MD") == "New.md"


def test_ties_are_deterministic():
    a = Resolver(["x/Same.md", "y/Same.md"]).resolve("Same", "z.md")
    b = Resolver(["y/Same.md", "x/Same.md"]).resolve("Same", "z.md")
    assert a == b


@pytest.mark.parametrize(
    "heading, link",
    [
        ("Status", "status"),
        ("Foo: Bar? (baz)", "Foo Bar baz"),
        ("A  B", "a b"),
        ("Links [[x]]", "Links x"),
        ("C#", "C"),
    ],
)
def test_heading_key_matches_obsidian_anchor_forms(heading, link):
    assert heading_key(heading) == heading_key(link)


def test_anchor_exists():
    headings = [(1, "Title", 1), (2, "Status", 3), (3, "Next steps", 5)]
    blocks = frozenset({"blk-1"})
    assert anchor_exists("Status", headings, blocks)
    assert anchor_exists("status", headings, blocks)
    assert anchor_exists("Title#Next steps", headings, blocks)  # a heading chain
    assert not anchor_exists("Roadmap", headings, blocks)
    assert anchor_exists("^blk-1", headings, blocks)
    assert anchor_exists("^BLK-1", headings, blocks)
    assert not anchor_exists("^nope", headings, blocks)


@pytest.mark.parametrize(
    "chain, expected",
    [
        ("A#B", True),
        ("a#b", True),
        ("A#C", True),  # deeper, not necessarily a direct child
        ("B#A", False),  # each heading must come after the one before it (was True)
        ("A#D", False),  # D comes after A but is not deeper (was True)
        ("D#B", False),  # the only B is before D (was True)
        ("D#E", True),
        ("A#B#C", True),
        ("A#C#B", False),  # was True
    ],
)
def test_nested_heading_chain_is_ordered_and_deeper(chain, expected):
    headings = [(1, "A", 1), (2, "B", 2), (3, "C", 3), (1, "D", 4), (2, "E", 5)]
    assert anchor_exists(chain, headings, frozenset()) is expected


_HEADING_WORDS = st.sampled_from(["A", "b", "Next steps", "C#", "a.b", "", " ", "Ärger", "x|y", "^z"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), _HEADING_WORDS), max_size=6),
    st.lists(_HEADING_WORDS, min_size=1, max_size=3).map("#".join),
    st.text(alphabet="0123456789abcdef", min_size=1, max_size=8),
)
def test_a_heading_looked_up_by_the_notes_text_hash_answers_as_the_walk_does(raw, subpath, text_hash):
    """The keys kept per note text (`text_hash`) give what walking the headings gives, for one
    heading and for chains (which walk). The hash is made unique per draw, as a note's is."""
    headings = [(level, text, n) for n, (level, text) in enumerate(raw)]
    unique = f"{text_hash}:{headings!r}"
    assert anchor_exists(subpath, headings, frozenset(), unique) is anchor_exists(subpath, headings, frozenset())


def test_resolution_in_a_vault(make_vault, load_vault):
    root = make_vault(
        {
            "people/alice-smith.md": "---\naliases: [Alice Smith, Al]\n---\n# Alice\n",
            "projects/p.md": "[[alice-smith]] [[Alice Smith]] [[Al]] [a](../people/alice-smith.md) [b](people/alice-smith.md)\n",
            "projects/q.md": "![[pic.PNG]] [[pic]] [[P]]\n",
            "img/pic.png": b"\x89PNG",
        }
    )
    state = load_vault(root).state
    assert state.resolved["projects/p.md"] == [
        "people/alice-smith.md",
        None,
        None,
        "people/alice-smith.md",
        "people/alice-smith.md",
    ]
    assert state.resolved["projects/q.md"] == ["img/pic.png", None, "projects/p.md"]
    assert dict(state.incoming["people/alice-smith.md"]) == {"projects/p.md": 3}


def test_a_decomposed_file_arriving_later_rebinds_a_composed_link():
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.vault_state import VaultState

    note = parse_note("a.md", "See [[caf\u00e9]].\n")
    state = VaultState.build(["a.md"], {"a.md": note})
    assert state.resolved["a.md"] == [None]
    assert state.add_file("notes/cafe\u0301.md") == {"a.md"}  # macOS spells the name decomposed
    assert state.resolved["a.md"] == ["notes/cafe\u0301.md"]
