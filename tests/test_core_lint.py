"""Each lint check on a small fixture vault, tiers, the JSON shape and the exit status."""

from __future__ import annotations

import json

import pytest

from palinode_vault.core.findings import CHECKS

SCHEMA = {
    "person": ("people", "PersonMemory"),
    "project": ("projects", "ProjectSnapshot"),
    "decision": ("decisions", "Decision"),
    "insight": ("insights", "Insight"),
    "research": ("research", "ResearchRef"),
}


def mem(
    kind: str, slug: str, body: str = "", *, entities=None, extra: str = "", updated: str = "2026-11-25", cross_refs=None
) -> tuple[str, str]:
    """(path, text) of a valid memory note of a kind."""
    folder, schema = SCHEMA[kind]
    lines = ["---", f"id: {kind}-{slug}", f"category: {kind}", f"type: {schema}"]
    if kind in ("person", "project"):
        lines.append(f"name: {slug.replace('-', ' ').title()}")
    if entities is not None:
        lines.append(f"entities: [{', '.join(entities)}]")
    if cross_refs is not None:
        lines.append(f"cross_refs: [{', '.join(cross_refs)}]")
    lines.append(f"last_updated: {updated}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    name = f"2026-11-01-{slug}.md" if kind == "research" else f"{slug}.md"
    return f"{folder}/{name}", "\n".join(lines) + "\n" + body


def vault_files(*notes: tuple[str, str], **others: str) -> dict[str, str]:
    files = dict(notes)
    files.update({k.replace("__", "/"): v for k, v in others.items()})
    return files


def lint_pairs(vault, checks=None):
    from palinode_vault.maintenance import lint

    report = lint(vault, checks=checks)
    return report, {(f.check, f.path) for f in report.findings}


# A clean pair of notes that link each other both ways on both surfaces.
CLEAN = [
    mem(
        "person",
        "alice-smith",
        "# Alice Smith\n\nWorks on [[checkout]].\n",
        entities=["project/checkout"],
        cross_refs=["project/checkout"],
    ),
    mem(
        "project",
        "checkout",
        "# Checkout\n\nLed by [[alice-smith|Alice]].\n",
        entities=["person/alice-smith"],
        cross_refs=["person/alice-smith"],
    ),
]


def test_a_clean_vault_has_no_findings(make_vault, load_vault):
    vault = load_vault(make_vault(vault_files(*CLEAN)))
    report, pairs = lint_pairs(vault)
    assert pairs == set(), [f.to_json() for f in report.findings]
    assert report.total_files == 2


def _one(make_vault, load_vault, *notes, check, **others):
    vault = load_vault(make_vault(vault_files(*CLEAN, *notes, **others)))
    report, pairs = lint_pairs(vault)
    return [f for f in report.findings if f.check == check], pairs


def test_unreadable(make_vault, load_vault):
    files = vault_files(*CLEAN)
    files["people/binary.md"] = b"abc\n\x00\x01"
    files["people/latin1.md"] = "caf\xe9\n".encode("latin-1")
    vault = load_vault(make_vault(files))
    report, pairs = lint_pairs(vault)
    assert pairs == {("unreadable", "people/binary.md"), ("unreadable", "people/latin1.md")}
    by_path = {f.path: f for f in report.findings}
    assert by_path["people/binary.md"].severity == "error"
    assert "NUL" in by_path["people/binary.md"].message
    assert "UTF-8" in by_path["people/latin1.md"].message


def test_invalid_frontmatter_has_line_and_column(make_vault, load_vault):
    found, pairs = _one(
        make_vault,
        load_vault,
        ("people/bad.md", '---\nid: person-bad\nname: "Bad\n---\n[[checkout]]\n'),
        check="invalid_frontmatter",
    )
    assert [(f.path, f.line, f.column, f.severity) for f in found] == [("people/bad.md", 3, 7, "error")]
    # nothing else is claimed about a file whose frontmatter cannot be read
    assert {c for c, p in pairs if p == "people/bad.md"} == {"invalid_frontmatter"}


def test_missing_frontmatter_only_in_the_memory_tier(make_vault, load_vault):
    plain = "# Just text\n\nSee [[alice-smith]] and [[checkout]].\n"
    vault = load_vault(
        make_vault(
            vault_files(
                *CLEAN,
                **{
                    "people/bare.md": plain,
                    "inbox/bare.md": plain,
                    "daily/2026-11-30.md": plain,
                    "archive/old.md": plain,
                    "archive/daily/2026-01-01.md": plain,
                    "specs/spec.md": plain,
                    "logs/log.md": plain,
                    "prompts/p.md": plain,
                    "Home.md": plain,
                    "notes/other.md": plain,
                },
            )
        )
    )
    report, pairs = lint_pairs(vault)
    assert pairs == {("missing_frontmatter", "people/bare.md"), ("missing_frontmatter", "inbox/bare.md")}
    assert report.total_files == 4


def test_structural_files_never_get_wiki_drift_or_schema(make_vault, load_vault):
    # frontmatter with entities that disagree with the body: a memory file would drift
    structural = "---\nentities: [person/alice-smith]\ntags: [x]\n---\nSee [[checkout]].\n"
    paths = ["daily/2026-11-30.md", "archive/old.md", "specs/s.md", "Home.md", "logs/l.md", "prompts/p.md"]
    vault = load_vault(make_vault(vault_files(*CLEAN, **{p: structural for p in paths})))
    report, pairs = lint_pairs(vault)
    assert pairs == set(), [f.to_json() for f in report.findings]


@pytest.mark.parametrize(
    "note, message",
    [
        # category decides the schema; `type:` is optional (tests/test_core_palinode.py)
        (("people/x.md", "---\nid: person-x\nname: X\n---\n[[checkout]]\n"), "missing required key(s) category"),
        (
            ("people/x.md", "---\nid: person-x\ncategory: decision\ntype: Decision\nname: X\n---\n[[checkout]]\n"),
            "files in people/ are person",
        ),
        (("people/x.md", "---\nid: person-x\ncategory: person\n---\n[[checkout]]\n"), "missing required key 'name'"),
        (
            ("people/x.md", "---\nid: person-x\ncategory: person\ntype: PersonMemory\n---\n[[checkout]]\n"),
            "missing required key 'name'",
        ),
        (mem("decision", "d", "[[checkout]]\n", entities=["project/checkout"], extra="confidence: 2.0"), "confidence"),
        (mem("project", "p", "[[checkout]]\n", entities=["project/checkout"], extra="status: done"), "status"),
        (mem("insight", "i", "[[checkout]]\n", entities=["project/checkout"], updated="yesterday"), "not a date"),
        (("inbox/x.md", "---\nid: x\ncategory: idea\ntype: Idea\n---\n[[checkout]]\n"), "category 'idea' is not one of"),
    ],
)
def test_schema(make_vault, load_vault, note, message):
    found, _ = _one(make_vault, load_vault, note, check="schema")
    assert [f.path for f in found] == [note[0]]
    assert message in found[0].message
    assert found[0].severity == "error"


def test_schema_id_must_follow_kind_and_slug(make_vault, load_vault):
    path, text = mem("insight", "i", "[[checkout]]\n", entities=["project/checkout"])
    found, _ = _one(make_vault, load_vault, (path, text.replace("id: insight-i", "id: insight-other")), check="schema")
    assert [(f.path, f.line, f.severity) for f in found] == [(path, 2, "warning")]
    assert "insight-i" in found[0].message


def test_duplicate_id(make_vault, load_vault):
    a = mem("decision", "first", "[[checkout]]\n", entities=["project/checkout"])
    b = mem("decision", "second", "[[checkout]]\n", entities=["project/checkout"])
    b = (b[0], b[1].replace("id: decision-second", "id: decision-first"))
    found, _ = _one(make_vault, load_vault, a, b, check="duplicate_id")
    assert sorted(f.path for f in found) == ["decisions/first.md", "decisions/second.md"]
    assert all(f.severity == "error" and f.line == 2 for f in found)


def test_superseded_not_archived(make_vault, load_vault):
    old = mem(
        "decision", "old", "[[checkout]]\n", entities=["project/checkout"], extra="status: active\nsuperseded_by: decision-new"
    )
    done = mem(
        "decision", "done", "[[checkout]]\n", entities=["project/checkout"], extra="status: archived\nsuperseded_by: decision-new"
    )
    found, _ = _one(make_vault, load_vault, old, done, check="superseded_not_archived")
    assert [(f.path, f.severity) for f in found] == [("decisions/old.md", "error")]
    assert "status: archived" in found[0].message


def test_wiki_drift_entity_without_body_link(make_vault, load_vault):
    note = mem("insight", "i", "Mentions nobody.\n", entities=["project/checkout"])
    found, pairs = _one(make_vault, load_vault, note, check="wiki_drift")
    assert [(f.path, f.target, f.line) for f in found] == [(note[0], "project/checkout", 5)]
    assert ("footer_stale", note[0]) not in pairs


def test_wiki_drift_body_link_without_entity(make_vault, load_vault):
    note = mem("insight", "i", "Line one\nAsk [[alice-smith]] about [[checkout]].\n", entities=["project/checkout"])
    found, _ = _one(make_vault, load_vault, note, check="wiki_drift")
    assert [(f.path, f.line, f.column, f.target) for f in found] == [(note[0], 9, 5, "alice-smith")]
    assert "person/alice-smith" in found[0].message and found[0].fixable


def test_wiki_drift_non_canonical_entity(make_vault, load_vault):
    note = mem("insight", "i", "[[alice-smith]] and [[checkout]]\n", entities=["People/Alice Smith", "project/checkout"])
    found, _ = _one(make_vault, load_vault, note, check="wiki_drift")
    assert [(f.target, "person/alice-smith" in f.message) for f in found] == [("People/Alice Smith", True)]


def test_wiki_drift_unknown_kind(make_vault, load_vault):
    note = mem("insight", "i", "[[checkout]]\n", entities=["project/checkout", "tool/figma"])
    found, _ = _one(make_vault, load_vault, note, check="wiki_drift")
    assert [f.target for f in found] == ["tool/figma"]
    assert not found[0].fixable


def test_wiki_drift_mismatched_slug(make_vault, load_vault):
    # entities says person/tomas (no such file); the body links tomas-reyes: the body wins
    note = mem("insight", "i", "[[tomas-reyes]] and [[checkout]]\n", entities=["person/tomas", "project/checkout"])
    found, _ = _one(
        make_vault, load_vault, note, ("people/tomas-reyes.md", mem("person", "tomas-reyes", "[[i]]\n")[1]), check="wiki_drift"
    )
    assert [(f.path, f.target) for f in found if f.path == note[0]] == [(note[0], "person/tomas")]
    assert "person/tomas-reyes" in found[0].message


def test_entity_for_a_file_not_written_yet_is_covered_by_a_same_slug_link(make_vault, load_vault):
    note = mem("insight", "i", "[[new-person]] and [[checkout]]\n", entities=["person/new-person", "project/checkout"])
    found, pairs = _one(make_vault, load_vault, note, check="wiki_drift")
    assert found == []
    assert ("broken_link", note[0]) in pairs


def test_unresolvable_label(make_vault, load_vault):
    note = mem("insight", "i", "Ask [[Alice Smith]] about [[checkout]].\n", entities=["person/alice-smith", "project/checkout"])
    found, pairs = _one(make_vault, load_vault, note, check="unresolvable_label")
    assert [(f.path, f.line, f.column, f.target, f.severity) for f in found] == [(note[0], 8, 5, "Alice Smith", "warning")]
    assert "[[alice-smith|Alice Smith]]" in found[0].message
    assert ("broken_link", note[0]) not in pairs
    assert ("wiki_drift", note[0]) not in pairs  # the label covers its entity


def test_alias_label_is_unresolvable_not_broken(make_vault, load_vault):
    alice = mem("person", "alice-smith", "[[checkout]]\n", entities=["project/checkout"], extra="aliases: [Ally]")
    note = mem("insight", "i", "Ask [[Ally]] about [[checkout]].\n", entities=["person/alice-smith", "project/checkout"])
    vault = load_vault(make_vault(vault_files(CLEAN[1], alice, note)))
    report, pairs = lint_pairs(vault)
    found = [f for f in report.findings if f.check == "unresolvable_label"]
    assert [(f.path, f.target) for f in found] == [(note[0], "Ally")]


def test_broken_link_carries_the_target_as_written(make_vault, load_vault, run_cli):
    note = mem(
        "insight",
        "i",
        "See [[checkout]] and [[Nowhere#Part|x]] and ![[gone.png]] and [m](missing.md).\n",
        entities=["project/checkout"],
    )
    root = make_vault(vault_files(*CLEAN, note))
    data = json.loads(run_cli("lint", "--vault", root, "--json", "--check", "broken_link").stdout)
    got = [(f["path"], f["line"], f["column"], f["target"]) for f in data["findings"]]
    assert got == [(note[0], 8, 22, "Nowhere#Part"), (note[0], 8, 45, "gone.png"), (note[0], 8, 63, "missing.md")]


def test_broken_anchor_heading_and_block(make_vault, load_vault):
    target = mem(
        "project", "checkout", "# Checkout\n\n## Status\nLed by [[alice-smith]] ^lead\n", entities=["person/alice-smith"]
    )
    note = mem(
        "insight",
        "i",
        "[[checkout#Status]] [[checkout#Roadmap]] [[checkout#^lead]] [[checkout#^gone]] [[#Own]] [[#Nope]]\n\n## Own\n",
        entities=["project/checkout"],
    )
    vault = load_vault(make_vault(vault_files(CLEAN[0], target, note)))
    report, _ = lint_pairs(vault)
    found = [(f.path, f.target, f.severity) for f in report.findings if f.check == "broken_anchor"]
    assert found == [
        (note[0], "checkout#Roadmap", "warning"),
        (note[0], "checkout#^gone", "warning"),
        (note[0], "#Nope", "warning"),
    ]


def test_footer_stale_list(make_vault, load_vault):
    footer = "\n<!-- palinode:see-also -->\n## See also\n- [[wrong]]\n<!-- /palinode:see-also -->\n"
    note = mem("insight", "i", "Body.\n" + footer, entities=["project/checkout"])
    found, pairs = _one(make_vault, load_vault, note, check="footer_stale")
    assert [(f.path, f.line) for f in found] == [(note[0], 10)]
    assert "checkout" in found[0].message
    assert ("wiki_drift", note[0]) not in pairs  # the footer is the fix's business


def test_footer_current_is_clean(make_vault, load_vault):
    footer = "\n<!-- palinode:see-also -->\n## See also\n- [[checkout]]\n<!-- /palinode:see-also -->\n"
    note = mem("insight", "i", "Body.\n" + footer, entities=["project/checkout"])  # footer links are not mentions
    _, pairs = _one(make_vault, load_vault, note, check="footer_stale")
    assert {p for p in pairs if p[1] == note[0]} == set()


def test_footer_that_should_be_removed_is_stale(make_vault, load_vault):
    footer = "\n<!-- palinode:see-also -->\n## See also\n- [[checkout]]\n<!-- /palinode:see-also -->\n"
    note = mem("insight", "i", "Body [[checkout]].\n" + footer, entities=["project/checkout"])
    found, _ = _one(make_vault, load_vault, note, check="footer_stale")
    assert [f.path for f in found] == [note[0]]


def test_footer_legacy_marker(make_vault, load_vault):
    footer = "\n<!-- palinode-auto-footer -->\n## See also\n- [[checkout]]\n"
    note = mem("insight", "i", "Body.\n" + footer, entities=["project/checkout"])
    found, _ = _one(make_vault, load_vault, note, check="footer_stale")
    assert [(f.path, f.line) for f in found] == [(note[0], 10)]
    assert "old marker" in found[0].message


def test_person_written_see_also_is_a_body_not_a_footer(make_vault, load_vault):
    note = mem(
        "insight", "i", "Body.\n\n## See also\n- [[checkout]]\n", entities=["project/checkout"], cross_refs=["project/checkout"]
    )
    _, pairs = _one(make_vault, load_vault, note, check="footer_stale")
    assert {c for c, p in pairs if p == note[0]} == set()


def test_cross_refs_stale(make_vault, load_vault):
    note = mem(
        "insight",
        "i",
        "The checkout work with alice-smith went well; see [[checkout]].\n",
        entities=["project/checkout"],
        cross_refs=["project/checkout"],
    )
    found, _ = _one(make_vault, load_vault, note, check="cross_refs_stale")
    assert [(f.path, f.line, f.severity) for f in found] == [(note[0], 6, "info")]
    assert "person/alice-smith" in found[0].message
    assert "['person/alice-smith', 'project/checkout']" in found[0].message


def test_cross_refs_ignore_code_footer_self_and_inbox(make_vault, load_vault):
    body = (
        "Work on [[checkout]].\n\n`alice-smith` in code\n\n```\nalice-smith\n```\n\nI am person/i-self and insight/i.\n"
        "An inbox idea: inbox-thing.\n"
    )
    note = mem("insight", "i", body, entities=["project/checkout"], cross_refs=["project/checkout"])
    inbox = (
        "inbox/inbox-thing.md",
        "---\nid: inbox-thing\ncategory: insight\ntype: Insight\nstatus: review\nlast_updated: 2026-11-30\n---\n[[checkout]]\n",
    )
    found, _ = _one(make_vault, load_vault, note, inbox, check="cross_refs_stale")
    assert [f.path for f in found if f.path == note[0]] == []


def test_stale(make_vault, load_vault):
    old = mem("insight", "old", "[[checkout]]\n", entities=["project/checkout"], updated="2026-08-01")
    archived = mem(
        "insight", "gone", "[[checkout]]\n", entities=["project/checkout"], updated="2026-01-01", extra="status: archived"
    )
    recent = mem("insight", "recent", "[[checkout]]\n", entities=["project/checkout"], updated="2026-09-02")
    found, _ = _one(make_vault, load_vault, old, archived, recent, check="stale")
    assert [(f.path, f.severity, f.line) for f in found] == [("insights/old.md", "info", 6)]
    assert "122 days" in found[0].message


def test_inbox_stale(make_vault, load_vault):
    def item(name, date, status="review"):
        return (
            f"inbox/{name}.md",
            f"---\nid: inbox-{name}\ncategory: insight\ntype: Insight\nstatus: {status}\nlast_updated: {date}\n---\n[[checkout]]\n",
        )

    found, _ = _one(
        make_vault,
        load_vault,
        item("old", "2026-11-10"),
        item("new", "2026-11-20"),
        item("approved", "2026-01-01", "active"),
        check="inbox_stale",
    )
    assert [(f.path, f.severity) for f in found] == [("inbox/old.md", "warning")]


def test_core_review(make_vault, load_vault):
    quiet = mem("person", "quiet", "[[checkout]]\n", entities=["project/checkout"], extra="core: true\nlast_contact: 2026-10-01")
    recent = mem(
        "person", "recent", "[[checkout]]\n", entities=["project/checkout"], extra="core: true\nlast_contact: 2026-11-20"
    )
    done = mem("project", "done", "[[alice-smith]]\n", entities=["person/alice-smith"], extra="status: completed\ncore: true")
    active = mem("project", "live", "[[alice-smith]]\n", entities=["person/alice-smith"], extra="status: active\ncore: true")
    found, _ = _one(make_vault, load_vault, quiet, recent, done, active, check="core_review")
    assert sorted((f.path, f.severity) for f in found) == [("people/quiet.md", "info"), ("projects/done.md", "info")]


def test_orphan(make_vault, load_vault):
    lonely = mem("insight", "lonely", "No links at all.\n")
    linked_to = mem("insight", "target", "No links out.\n")
    linker = ("daily/2026-11-30.md", "Wrote [[target]].\n")
    only_entities = mem("insight", "ents", "No body links.\n", entities=["project/checkout"])
    found, _ = _one(
        make_vault, load_vault, lonely, linked_to, linker, only_entities, **{"Top.md": "Nothing here.\n"}, check="orphan"
    )
    assert sorted(f.path for f in found) == ["Top.md", "insights/lonely.md"]


def test_stale_skips_notes_referenced_by_recent_notes(make_vault, load_vault):
    # PROGRAM.md: "not referenced or updated in 90 days"; a link from a recent note counts.
    old = mem("insight", "old-but-cited", "[[checkout]]\n", entities=["project/checkout"], updated="2026-06-01")
    forgotten = mem("insight", "forgotten", "[[checkout]]\n", entities=["project/checkout"], updated="2026-06-01")
    citing = ("daily/2026-11-28.md", "Revisited [[old-but-cited]] today.\n")
    found, _ = _one(make_vault, load_vault, old, forgotten, citing, check="stale")
    assert [f.path for f in found] == ["insights/forgotten.md"]


def test_every_check_is_exercised_here():
    # A new check in the table must get a test in this file.
    assert set(CHECKS) == {
        "unreadable",
        "invalid_frontmatter",
        "missing_frontmatter",
        "schema",
        "duplicate_id",
        "superseded_not_archived",
        "wiki_drift",
        "unresolvable_label",
        "broken_link",
        "broken_anchor",
        "footer_stale",
        "cross_refs_stale",
        "inbox_stale",
        "stale",
        "core_review",
        "orphan",
    }


def test_cross_refs_ignore_comments(make_vault, load_vault):
    # PROGRAM.md: mentions are "never inside code, comments or the auto-footer"
    note = mem(
        "insight",
        "i",
        "Work on [[checkout]].\n\n%% alice-smith is a private note %%\n",
        entities=["project/checkout"],
        cross_refs=["project/checkout"],
    )
    found, _ = _one(make_vault, load_vault, note, check="cross_refs_stale")
    assert [f.message for f in found if f.path == note[0]] == []
