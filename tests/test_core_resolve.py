"""Link resolution the Obsidian way, on small fixtures, and heading/block anchors."""

from __future__ import annotations

import pytest

from palinode_vault.core.resolve import Resolver, anchor_exists, heading_key

FILES = [
    "Note.md", "folder/Note.md", "a/b/Note.md", "a/Other.md", "img/x.png", "Notes/Deep.md",
    "a/b/c/Deep.md", "people/alice-smith.md", "x/Same.md", "y/Same.md", "Doc.pdf", "My Note.md",
    "data.json.md",
]


@pytest.mark.parametrize(
    "link, source, md, expected",
    [
        ("Note", "z.md", False, "Note.md"),
        ("note", "z.md", False, "Note.md"),  # case-insensitive
        ("NOTE.MD", "z.md", False, "Note.md"),  # with the extension
        ("Note", "folder/q.md", False, "Note.md"),  # an exact vault path wins over the same folder
        ("folder/note", "a/q.md", False, "folder/Note.md"),
        ("b/Note", "z.md", False, "a/b/Note.md"),  # a partial path matches the end of a path
        ("/Note", "folder/q.md", False, "Note.md"),  # leading slash: from the vault root
        ("Same", "y/q.md", False, "y/Same.md"),  # the linking note's folder wins
        ("Same", "x/q.md", False, "x/Same.md"),
        ("Deep", "z.md", False, "Notes/Deep.md"),  # then the shortest path
        ("Deep", "a/b/c/q.md", False, "a/b/c/Deep.md"),
        ("Other", "a/b/q.md", False, "a/Other.md"),
        ("x.png", "z.md", False, "img/x.png"),  # attachments need their extension
        ("x", "z.md", False, None),
        ("Doc", "z.md", False, None),
        ("Doc.pdf", "z.md", False, "Doc.pdf"),
        ("data.json", "z.md", False, "data.json.md"),  # a dotted name is still a note name
        ("Alice Smith", "z.md", False, None),  # titles and aliases are not targets
        ("alice-smith", "z.md", False, "people/alice-smith.md"),
        ("Missing", "z.md", False, None),
        ("", "a/Other.md", False, "a/Other.md"),  # [[#Heading]]: the note itself
        # markdown links: relative to the linking note, or like a wikilink path
        ("../people/alice-smith.md", "projects/p.md", True, "people/alice-smith.md"),
        ("./Other.md", "a/q.md", True, "a/Other.md"),
        ("alice-smith.md", "projects/p.md", True, "people/alice-smith.md"),
        ("My Note.md", "z.md", True, "My Note.md"),
        ("../../x.md", "a.md", True, None),  # escapes the vault
    ],
)
def test_resolve(link, source, md, expected):
    assert Resolver(FILES).resolve(link, source, markdown_link=md) == expected


def test_resolution_follows_files_coming_and_going():
    r = Resolver(FILES)
    assert r.resolve("Same", "z.md") in ("x/Same.md", "y/Same.md")
    r.remove("x/Same.md")
    assert r.resolve("Same", "x/q.md") == "y/Same.md"
    r.remove("Note.md")
    assert r.resolve("Note", "folder/q.md") == "folder/Note.md"
    assert r.resolve("Note", "z.md") == "folder/Note.md"  # folder/Note.md is shorter than a/b/Note.md
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
    assert anchor_exists("Title#Next steps", headings, blocks)  # a heading chain: the last one
    assert not anchor_exists("Roadmap", headings, blocks)
    assert anchor_exists("^blk-1", headings, blocks)
    assert anchor_exists("^BLK-1", headings, blocks)
    assert not anchor_exists("^nope", headings, blocks)


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
        "people/alice-smith.md", None, None, "people/alice-smith.md", "people/alice-smith.md",
    ]
    assert state.resolved["projects/q.md"] == ["img/pic.png", None, "projects/p.md"]
    assert dict(state.incoming["people/alice-smith.md"]) == {"projects/p.md": 3}
