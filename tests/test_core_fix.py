"""Each fix on a small vault, the writer's guarantees (minimal diff, CRLF/BOM, undo, conflicts),
and property tests: fix is idempotent and never changes bytes outside the spans it edits."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palinode_vault.core.fix import plan_fix
from palinode_vault.core.lint import analysis_for
from palinode_vault.maintenance import fix, lint, plan_edits, undo
from palinode_vault.writer import Run

FOOTER = "<!-- palinode:see-also -->\n## See also\n{items}<!-- /palinode:see-also -->\n"


def footer(*names: str) -> str:
    return FOOTER.format(items="".join(f"- [[{n}]]\n" for n in names))


def front(kind: str, slug: str, *, entities: str | None = None, extra: str = "") -> str:
    schema = {"person": "PersonMemory", "project": "ProjectSnapshot", "insight": "Insight", "decision": "Decision"}[kind]
    lines = ["---", f"id: {kind}-{slug}", f"category: {kind}", f"type: {schema}"]
    if kind in ("person", "project"):
        lines.append(f"name: {slug.replace('-', ' ').title()}")
    if entities is not None:
        lines.append(f"entities: {entities}")
    lines.append("last_updated: 2026-11-25")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n---\n"


BASE = {
    "people/alice-smith.md": front("person", "alice-smith") + "# Alice Smith\n",
    "projects/checkout.md": front("project", "checkout") + "# Checkout\n",
}


def _vault(make_vault, load_vault, files):
    root = make_vault({**BASE, **files})
    return root, load_vault(root)


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_bytes().decode("utf-8")


def test_missing_entity_added_canonical_in_the_same_edit_as_the_footer(make_vault, load_vault):
    text = front("insight", "i", entities="[project/checkout]  # keep me") + "Ask [[alice-smith]] first.\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    result = fix(vault)
    assert "insights/i.md" in result.written
    after = _read(root, "insights/i.md")
    assert "entities: [project/checkout, person/alice-smith]  # keep me\n" in after
    assert after.endswith("Ask [[alice-smith]] first.\n\n" + footer("checkout"))
    # both surfaces in one journaled run, one write
    journal = list((root / ".palinode" / "journal").glob("*.jsonl"))
    entries = [json.loads(line) for line in journal[0].read_text().splitlines()[1:]]
    assert [e["path"] for e in entries].count("insights/i.md") == 1


def test_non_canonical_and_mismatched_entities_are_corrected(make_vault, load_vault):
    # People/Alice Smith -> person/alice-smith; project/check (no such file) loses to the body's
    # [[checkout]]: the body wins
    text = front("insight", "i", entities="[People/Alice Smith, project/check]") + "[[alice-smith]] and [[checkout]]\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    fix(vault)
    after = _read(root, "insights/i.md")
    assert "entities: [person/alice-smith, project/checkout]\n" in after
    assert "see-also" not in after


def test_label_link_rewritten_to_slug_with_label(make_vault, load_vault):
    body = (
        "| who | what |\n|-----|------|\n| [[Alice Smith]] | lead |\n\nTalked with [[Alice Smith]] and ![[Alice Smith#Notes]].\n"
    )
    text = front("insight", "i", entities="[person/alice-smith]") + body
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    fix(vault)
    after = _read(root, "insights/i.md")
    assert "| [[alice-smith\\|Alice Smith]] | lead |" in after
    assert "Talked with [[alice-smith|Alice Smith]] and ![[alice-smith#Notes|Alice Smith]]." in after


def test_an_ambiguous_label_is_not_guessed(make_vault, load_vault):
    files = {
        "archive/alice-smith.md": "old notes\n",
        "insights/i.md": front("insight", "i", entities="[person/alice-smith]") + "See [[Alice Smith]].\n",
    }
    root, vault = _vault(make_vault, load_vault, files)
    fix(vault)
    assert "See [[Alice Smith]].\n" in _read(root, "insights/i.md")
    report = lint(load_vault(root))
    assert ("broken_link", "insights/i.md") in {(f.check, f.path) for f in report.findings}


def test_footer_replaced_in_place(make_vault, load_vault):
    text = (
        front("insight", "i", entities="[person/alice-smith, project/checkout]") + "Body.\n\n" + footer("wrong") + "Tail text.\n"
    )
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    fix(vault)
    after = _read(root, "insights/i.md")
    assert after == text.replace(footer("wrong"), footer("alice-smith", "checkout"))


def test_footer_removed_when_empty_with_its_blank_line(make_vault, load_vault):
    head = front("insight", "i", entities="[project/checkout]", extra="cross_refs: [project/checkout]")
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": head + "Body [[checkout]].\n\n" + footer("checkout")})
    fix(vault)
    assert _read(root, "insights/i.md") == head + "Body [[checkout]].\n"


def test_legacy_footer_migrated(make_vault, load_vault):
    legacy = "<!-- palinode-auto-footer -->\n## See also\n- [[checkout]]\n"
    text = front("insight", "i", entities="[project/checkout]") + "Body.\n\n" + legacy
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    fix(vault)
    assert _read(root, "insights/i.md") == text.replace(legacy, footer("checkout"))


def test_person_written_see_also_untouched(make_vault, load_vault):
    text = front("insight", "i", entities="[project/checkout]", extra="cross_refs: [project/checkout]") + (
        "Body.\n\n## See also\n- [[checkout]]\n- [[elsewhere]]\n"
    )
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    result = fix(vault)
    assert "insights/i.md" not in result.written
    assert _read(root, "insights/i.md") == text


def test_cross_refs_written_sorted_and_only_when_changed(make_vault, load_vault):
    text = front("insight", "i", entities="[project/checkout]") + "[[checkout]] with Alice Smith; also project/checkout.\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text})
    fix(vault)
    after = _read(root, "insights/i.md")
    assert "cross_refs: [person/alice-smith, project/checkout]\n" in after
    # same set, other order: a person's reordering is not rewritten? No: the list is machine-owned
    # and sorted, so an unsorted list is rewritten, a sorted equal one is not.
    same = after.replace(
        "cross_refs: [person/alice-smith, project/checkout]", "cross_refs:\n  - person/alice-smith\n  - project/checkout"
    )
    (root / "insights/i.md").write_text(same)
    assert fix(load_vault(root)).written == []
    unsorted = after.replace("[person/alice-smith, project/checkout]", "[project/checkout, person/alice-smith]")
    (root / "insights/i.md").write_text(unsorted)
    fix(load_vault(root))
    assert _read(root, "insights/i.md") == after


def test_second_fix_writes_nothing_and_lint_has_nothing_fixable(make_vault, load_vault, digest):
    files = {
        "insights/i.md": front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n",
        "insights/j.md": front("insight", "j", entities="[person/alice-smith, project/checkout]") + "x\n\n" + footer("nope"),
    }
    root, vault = _vault(make_vault, load_vault, files)
    assert fix(vault).written
    before = digest(root)
    again = load_vault(root)
    result = fix(again)
    assert result.written == [] and digest(root) == before
    assert [f.to_json() for f in lint(again).findings if f.fixable] == []


def test_an_alias_label_link_is_fixed_in_one_run(make_vault, load_vault, digest):
    # `[[Ali]]` -> `[[alice-smith|Ali]]` puts the slug's words in the body: cross_refs must
    # already count them, or the next fix changes cross_refs again
    files = {
        "people/alice-smith.md": front("person", "alice-smith", extra="aliases: [Ali]") + "# Alice Smith\n",
        "insights/i.md": front("insight", "i") + "Talked to [[Ali]] about it.\n",
    }
    root, vault = _vault(make_vault, load_vault, files)
    assert fix(vault).written == ["insights/i.md"]
    text = _read(root, "insights/i.md")
    assert "[[alice-smith|Ali]]" in text and "cross_refs: [person/alice-smith]" in text
    before = digest(root)
    assert fix(load_vault(root)).written == [] and digest(root) == before


def test_dry_run_writes_nothing_and_prints_unified_diffs(make_vault, run_cli, digest):
    root = make_vault({**BASE, "insights/i.md": front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n"})
    before = digest(root)
    result = run_cli("fix", "--vault", root, "--dry-run")
    assert result.exit_code == 0
    assert digest(root) == before
    assert not (root / ".palinode" / "journal").exists()
    out = result.stdout
    assert "--- a/insights/i.md\n+++ b/insights/i.md\n" in out
    assert "-Ask [[Alice Smith]].\n" in out and "+Ask [[alice-smith|Alice Smith]].\n" in out
    data = json.loads(run_cli("fix", "--vault", root, "--dry-run", "--json").stdout)
    assert data["written"] == [] and "insights/i.md" in data["would_write"]
    assert digest(root) == before


def test_fix_json_shape(make_vault, run_cli):
    root = make_vault(
        {
            **BASE,
            "insights/i.md": front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n",
            "insights/bad.md": '---\nid: "x\n---\n[[checkout]]\n',
            "daily/2026-11-30.md": "[[Alice Smith]]\n",
        }
    )
    data = json.loads(run_cli("fix", "--vault", root, "--json").stdout)
    assert set(data) == {"written", "unchanged", "skipped", "run"}
    assert data["written"] == ["insights/i.md"]
    # the run's id is what `undo --run` takes
    undone = json.loads(run_cli("undo", "--vault", root, "--run", data["run"], "--json").stdout)
    assert undone["run"] == data["run"] and undone["restored"] == ["insights/i.md"]
    json.loads(run_cli("fix", "--vault", root, "--json").stdout)  # written again, as before
    assert [s["path"] for s in data["skipped"]] == ["insights/bad.md"]
    assert set(data["skipped"][0]) == {"path", "reason"}
    assert isinstance(data["unchanged"], int) and data["unchanged"] >= 3
    assert _read(root, "daily/2026-11-30.md") == "[[Alice Smith]]\n"  # structural: never fixed


def test_crlf_and_bom_files_stay_crlf_and_bom(make_vault, load_vault):
    text = "\ufeff" + (front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\nMore.\n").replace(
        "\n", "\r\n"
    )
    root = make_vault({**BASE, "insights/i.md": text.encode("utf-8")})
    fix(load_vault(root))
    raw = (root / "insights/i.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")  # every newline is still CRLF
    body = raw.decode("utf-8")
    assert "Ask [[alice-smith|Alice Smith]].\r\nMore.\r\n" in body
    assert "cross_refs" in body and body.endswith("<!-- /palinode:see-also -->\r\n")


def test_invalid_yaml_never_rewritten(make_vault, load_vault):
    bad = "---\nid: insight-i\ncategory: insight\ntype: Insight\nentities: [project/checkout\n---\nAsk [[Alice Smith]].\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": bad})
    result = fix(vault)
    assert result.written == []
    assert result.skipped == [{"path": "insights/i.md", "reason": result.skipped[0]["reason"]}]
    assert "frontmatter does not parse" in result.skipped[0]["reason"]
    assert _read(root, "insights/i.md") == bad


def test_undo_restores_exact_bytes(make_vault, load_vault, digest):
    crlf = ("\ufeff" + front("insight", "c", entities="[project/checkout]") + "Ask [[Alice Smith]].\n").replace("\n", "\r\n")
    files = {
        "insights/i.md": front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n",
        "insights/c.md": crlf.encode("utf-8"),
    }
    root, vault = _vault(make_vault, load_vault, files)
    before = digest(root)
    result = fix(vault)
    assert sorted(result.written) == ["insights/c.md", "insights/i.md"]
    assert digest(root) != before
    undone = undo(vault)
    assert undone.restored == ["insights/c.md", "insights/i.md"]
    assert digest(root) == before
    # the run is used up: a second undo restores nothing
    assert undo(vault).restored == []


def test_undo_leaves_files_edited_since(make_vault, load_vault):
    root, vault = _vault(
        make_vault,
        load_vault,
        {
            "insights/i.md": front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n",
        },
    )
    fix(vault)
    (root / "insights/i.md").write_text("person edited\n")
    result = undo(vault)
    assert result.restored == [] and [p for p, _ in result.skipped] == ["insights/i.md"]
    assert _read(root, "insights/i.md") == "person edited\n"


def test_conflict_between_plan_and_write_writes_nothing(make_vault, load_vault):
    original = front("insight", "i", entities="[project/checkout]") + "Ask [[Alice Smith]].\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": original})
    edits, _ = plan_edits(vault)
    assert [e.path for e in edits] == ["insights/i.md"]
    (root / "insights/i.md").write_text(original + "typed meanwhile\n")
    run = Run(root, "fix")
    assert run.write(edits[0]) is False
    assert run.conflicts == ["insights/i.md"] and run.written == []
    assert _read(root, "insights/i.md") == original + "typed meanwhile\n"
    assert not list(root.glob("insights/.*palinode-tmp*"))


# --- property: idempotent, and nothing outside the edited spans changes ----------------------

_PEOPLE = ["alice-smith", "bob-jones"]
_PROJECTS = ["checkout", "field-kit"]
_REFS = [f"person/{p}" for p in _PEOPLE] + [f"project/{p}" for p in _PROJECTS] + ["person/ghost", "People/Bob Jones"]
_BODY_BITS = [
    "Plain text.",
    "[[alice-smith]]",
    "[[Alice Smith]]",
    "[[bob-jones|Bob]]",
    "[[Field Kit]]",
    "[[checkout#Status]]",
    "`[[checkout]]`",
    "mentions field-kit and checkout",
    "[[ghost]]",
    "[[nowhere]]",
    "| [[Bob Jones]] | x |",
    "%% [[Alice Smith]] %%",
    "- item [[field-kit]]",
    "## Heading",
    "![[Bob Jones]]",
    "[a](../people/bob-jones.md)",
]


@st.composite
def _memory_note(draw, kind, slug):
    entities = draw(st.lists(st.sampled_from(_REFS), max_size=4, unique=True))
    style = draw(st.sampled_from(["flow", "block", "none"]))
    if style == "flow":
        ent = f"entities: [{', '.join(entities)}]\n"
    elif style == "block":
        ent = "entities:\n" + "".join(f"  - {e}\n" for e in entities) if entities else "entities: []\n"
    else:
        ent = ""
    cross = draw(st.sampled_from(["", "cross_refs: [project/checkout]\n", "cross_refs:\n  - zzz/old\n"]))
    schema = {"person": "PersonMemory", "project": "ProjectSnapshot"}[kind]
    head = f"---\nid: {kind}-{slug}\n# a comment\ncategory: {kind}\ntype: {schema}\nname: '{slug}'\n{ent}{cross}last_updated: 2026-11-25\n---\n"
    lines = draw(st.lists(st.sampled_from(_BODY_BITS), max_size=6))
    body = "\n".join(lines)
    tail = draw(
        st.sampled_from(
            [
                "",
                "\n",
                "\n\n" + footer("stale"),
                "\n\n<!-- palinode-auto-footer -->\n## See also\n- [[x]]\n",
                "\n\n## See also\n- [[checkout]]\n",
            ]
        )
    )
    return head + body + tail


@st.composite
def _vault_case(draw):
    files = {}
    for slug in _PEOPLE:
        files[f"people/{slug}.md"] = draw(_memory_note("person", slug))
    for slug in _PROJECTS:
        files[f"projects/{slug}.md"] = draw(_memory_note("project", slug))
    crlf = draw(st.sets(st.sampled_from(sorted(files))))
    bom = draw(st.sets(st.sampled_from(sorted(files))))
    raw = {}
    for path, text in files.items():
        if path in crlf:
            text = text.replace("\n", "\r\n")
        if path in bom:
            text = "\ufeff" + text
        raw[path] = text.encode("utf-8")
    return raw


def _raw_offset(raw: str, norm_offset: int) -> int:
    """Independent of core.text: walk the raw text counting normalised characters."""
    i = 1 if raw.startswith("\ufeff") else 0
    n = 0
    while n < norm_offset:
        i += 2 if raw.startswith("\r\n", i) else 1
        n += 1
    return i


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_vault_case())
def test_fix_is_idempotent_and_keeps_bytes_outside_spans(files):
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        vault = Vault(Settings(vault=root, workers=1))
        vault.load()
        state = vault.state
        analysis = analysis_for(state)
        planned = {}
        for path, note in state.notes.items():
            read = vault.read(path)
            planned[path] = (read.raw, plan_fix(state, note, read.text, analysis).spans)
        fix(vault)
        for path, (raw, spans) in planned.items():
            new = (root / path).read_bytes().decode("utf-8")
            if not spans:
                assert new == raw, path
                continue
            # every gap between spans is byte-identical, in order
            pos_new = 0
            cursor = 0
            for span in sorted(spans, key=lambda s: s.start):
                a = _raw_offset(raw, span.start)
                gap = raw[cursor:a]
                assert new[pos_new : pos_new + len(gap)] == gap, (path, gap)
                inserted = span.new.replace("\n", "\r\n") if "\r\n" in raw else span.new
                assert new[pos_new + len(gap) :].startswith(inserted), (path, inserted)
                pos_new += len(gap) + len(inserted)
                cursor = _raw_offset(raw, span.end)
            assert new[pos_new:] == raw[cursor:], path
            assert new.startswith("\ufeff") == raw.startswith("\ufeff")
            if "\r\n" in raw:
                assert "\n" not in new.replace("\r\n", ""), path
        # idempotent: a second run over the fixed vault writes nothing
        again = Vault(Settings(vault=root, workers=1))
        again.load()
        assert fix(again).written == []


# --- every link fix writes lands, by Obsidian's rules, on the file it means (issue 18) ---------

APOLLO = {
    "people/alice-smith.md": front("person", "alice-smith", extra="aliases: [Al]") + "# Alice Smith\n",
    # a note of the same name inside the linking note's folder: Obsidian opens it for [[alice-smith]]
    "projects/apollo/alice-smith.md": "Meeting notes.\n",
}


def _targets(vault, path: str) -> list[tuple[str, str | None]]:
    note = vault.state.notes[path]
    return [(link.target, t) for link, t in zip(note.links, vault.state.resolved[path])]


def test_footer_link_lands_on_the_entity_not_a_nearer_namesake(make_vault, load_vault):
    files = {**APOLLO, "projects/apollo.md": front("project", "apollo", entities="[person/alice-smith]") + "# Apollo\n"}
    root, vault = _vault(make_vault, load_vault, files)
    fix(vault)
    assert _read(root, "projects/apollo.md").endswith(footer("people/alice-smith"))
    assert _targets(load_vault(root), "projects/apollo.md") == [("people/alice-smith", "people/alice-smith.md")]
    assert fix(load_vault(root)).written == []


def test_label_rewrite_lands_on_the_label_target(make_vault, load_vault):
    files = {**APOLLO, "projects/apollo.md": front("project", "apollo", entities="[person/alice-smith]") + "Ask [[Al]].\n"}
    root, vault = _vault(make_vault, load_vault, files)
    fix(vault)
    assert "Ask [[people/alice-smith|Al]].\n" in _read(root, "projects/apollo.md")
    assert _targets(load_vault(root), "projects/apollo.md") == [("people/alice-smith", "people/alice-smith.md")]


def test_repair_writes_a_link_that_lands_on_the_chosen_file(make_vault, load_vault):
    from palinode_vault.maintenance import repair_links

    files = {
        **APOLLO,
        "projects/apollo.md": front("project", "apollo", entities="[person/alice-smith]") + "Ask [[alise-smith]].\n",
    }
    root, vault = _vault(make_vault, load_vault, files)
    assert repair_links(vault, "alise-smith", "people/alice-smith.md")["written"] == ["projects/apollo.md"]
    assert "Ask [[people/alice-smith]].\n" in _read(root, "projects/apollo.md")
    assert _targets(load_vault(root), "projects/apollo.md") == [("people/alice-smith", "people/alice-smith.md")]


def test_relative_wikilinks_and_embeds_resolve_and_are_left_alone(make_vault, load_vault, digest):
    text = front("insight", "i", entities="[person/alice-smith]") + "Ask [[../people/alice-smith|Alice]] ![[../img/p.png]].\n"
    root, vault = _vault(make_vault, load_vault, {"insights/i.md": text, "img/p.png": b"\x89PNG"})
    assert _targets(vault, "insights/i.md") == [("../people/alice-smith", "people/alice-smith.md"), ("../img/p.png", "img/p.png")]
    findings = [f for f in lint(vault).findings if f.path == "insights/i.md"]
    assert not [f for f in findings if f.check in ("broken_link", "unresolvable_label", "wiki_drift")]
    fix(vault)
    assert "Ask [[../people/alice-smith|Alice]] ![[../img/p.png]].\n" in _read(root, "insights/i.md")


def test_a_listener_hears_each_write_by_the_hash_the_journal_records(make_vault, load_vault):
    """The sidecar learns its own writes from the writer (issue 21), never by reading the file
    back: a person's save landing in between must not pass for ours."""
    import hashlib

    from palinode_vault.writer import listen_for_writes

    root = make_vault(
        {
            "people/ana.md": "---\nid: person-ana\ncategory: person\n---\n# Ana\n\nWorks on [[atlas]].\n",
            "projects/atlas.md": "---\nid: project-atlas\ncategory: project\n---\n# Atlas\n",
        }
    )
    heard: list[tuple[str, str | None]] = []
    stop = listen_for_writes(root, lambda path, digest: heard.append((path, digest)))
    try:
        result = fix(load_vault(root))
        assert result.written and [p for p, _ in heard] == result.written
        for path, digest in heard:
            assert digest == hashlib.sha256((root / path).read_bytes()).hexdigest()
        heard.clear()
        restored = undo(load_vault(root)).restored
        assert sorted(p for p, _ in heard) == sorted(restored)
    finally:
        stop()
    heard.clear()
    fix(load_vault(root))
    assert heard == []  # stopped listening
