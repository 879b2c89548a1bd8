"""A vault that Palinode wrote (issue 22): its schemas as they are, its extra fields kept, its
footer migrated whole; lint finds no error, fix writes only machine-owned surfaces, undo reverts.

The sample memory Palinode ships is in ../shared/corpora/palinode-sample-memory (copied per test).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import copy_corpus

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.findings import ERROR
from palinode_vault.core.fix import CROSS_REFS, ENTITIES, FOOTER, plan_fix
from palinode_vault.core.lint import analysis_for
from palinode_vault.maintenance import fix, lint, undo

SAMPLE_MEMORY = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "palinode-sample-memory"


@pytest.fixture
def sample_memory(tmp_path: Path) -> Path:
    if not SAMPLE_MEMORY.is_dir():
        pytest.skip(f"corpus not available: {SAMPLE_MEMORY} (needs the shared folder beside the repo)")
    return copy_corpus(SAMPLE_MEMORY, tmp_path / "palinode-sample-memory")


def _frontmatter(text: str) -> dict:
    block = fm.find_block(text)
    assert block is not None
    data, error = fm.parse(text, block)
    assert error is None
    return data


def test_sample_memory_lints_without_error(sample_memory, load_vault):
    findings = lint(load_vault(sample_memory)).findings
    assert [f for f in findings if f.severity == ERROR] == []
    assert not any("type" in f.message and f.check == "schema" and "id is" not in f.message for f in findings)
    assert not any(word in f.message for f in findings for word in ("summary", "canonical_question"))


def test_fix_on_sample_memory_is_minimal_idempotent_and_undone(sample_memory, load_vault, digest):
    vault = load_vault(sample_memory)
    analysis = analysis_for(vault.state)
    kinds = set()
    for path, note in vault.state.notes.items():
        text = (sample_memory / path).read_text(encoding="utf-8")
        kinds |= set(plan_fix(vault.state, note, text, analysis).kinds)
    assert kinds and kinds <= {FOOTER, CROSS_REFS, ENTITIES}

    before = digest(sample_memory)
    originals = {p: (sample_memory / p).read_text(encoding="utf-8") for p in vault.state.notes}
    result = fix(vault)
    assert sorted(result.written) == sorted(p for p in originals if "/" in p)  # the 7 memory files
    for path in result.written:
        old, new = originals[path], (sample_memory / path).read_text(encoding="utf-8")
        old_data, new_data = _frontmatter(old), _frontmatter(new)
        # every key Palinode wrote (summary included) is kept as it was; only ours are added
        assert {k: v for k, v in new_data.items() if k not in ("cross_refs", "entities")} == {
            k: v for k, v in old_data.items() if k != "entities"
        }
        # the old text survives line for line: the edits only add lines
        old_lines = old.splitlines()
        new_lines = iter(new.splitlines())
        assert all(any(line == n for n in new_lines) for line in old_lines), path
        assert new.count("## See also") <= 1
    assert [f for f in lint(load_vault(sample_memory)).findings if f.fixable] == []

    after = digest(sample_memory)
    assert fix(load_vault(sample_memory)).written == [] and digest(sample_memory) == after

    assert sorted(undo(load_vault(sample_memory)).restored) == sorted(result.written)
    assert digest(sample_memory) == before


PERSON = """---
id: person-alice-smith
category: person
{type}name: Alice Smith
entities: [project/checkout]
last_updated: 2026-11-25
summary: "Alice — design lead."
---
# Alice Smith

Works on [[checkout]].
"""
PROJECT = "---\nid: project-checkout\ncategory: project\nname: Checkout\nlast_updated: 2026-11-25\n---\n# Checkout\n"


def _schema(make_vault, load_vault, person: str) -> list:
    root = make_vault({"people/alice-smith.md": person, "projects/checkout.md": PROJECT})
    return [f for f in lint(load_vault(root)).findings if f.check == "schema" and f.path == "people/alice-smith.md"]


def test_type_is_optional_and_optional_fields_may_be_missing(make_vault, load_vault):
    # no type:, no aliases, role or last_contact (Palinode's own person files)
    assert _schema(make_vault, load_vault, PERSON.format(type="")) == []
    assert _schema(make_vault, load_vault, PERSON.format(type="type: PersonMemory\n")) == []


def test_a_type_that_disagrees_with_category_is_a_warning_naming_both(make_vault, load_vault):
    found = _schema(make_vault, load_vault, PERSON.format(type="type: Insight\n"))
    assert len(found) == 1 and found[0].severity == "warning"
    assert "Insight" in found[0].message and "person" in found[0].message and "PersonMemory" in found[0].message
    assert found[0].line == 4


def test_category_decides_the_schema(make_vault, load_vault):
    wrong_kind = PERSON.format(type="").replace("category: person", "category: project")
    found = _schema(make_vault, load_vault, wrong_kind)
    assert [f.severity for f in found] == [ERROR] and "people/" in found[0].message
    unknown = PERSON.format(type="type: PersonMemory\n").replace("category: person", "category: human")
    found = _schema(make_vault, load_vault, unknown)
    assert [f.severity for f in found] == [ERROR] and "'human'" in found[0].message
    no_name = PERSON.format(type="").replace("name: Alice Smith\n", "")
    found = _schema(make_vault, load_vault, no_name)
    assert [f.severity for f in found] == [ERROR] and "name" in found[0].message


def test_inbox_files_follow_their_category(make_vault, load_vault):
    inbox = (
        "---\nid: inbox-x\ncategory: decision\nstatus: review\nconfidence: 0.4\nlast_updated: 2026-11-30\n---\n# Decision: x\n"
    )
    root = make_vault({"inbox/x.md": inbox})
    assert [f for f in lint(load_vault(root)).findings if f.check == "schema"] == []


EXTRA = """---
id: decision-rest-api
category: decision
entities: [project/checkout]
last_updated: 2026-11-25
summary: "REST over GraphQL — simpler caching."
canonical_question: "Which API style does checkout use?"
epistemic_status: decided
confidence_basis: architecture review
provenance:
  source: session-2026-11-25
  extracted_by: palinode
---
# Decision: REST API

We asked [[alice-smith]] first.
"""


def test_palinode_extra_fields_survive_a_write_and_are_never_reported(make_vault, load_vault):
    person = PERSON.format(type="").replace("Works on [[checkout]].", "Works on [[checkout]] and [[rest-api]].")
    root = make_vault({"people/alice-smith.md": person, "projects/checkout.md": PROJECT, "decisions/rest-api.md": EXTRA})
    vault = load_vault(root)
    findings = lint(vault).findings
    assert not any(
        k in f.message for f in findings for k in ("summary", "canonical_question", "epistemic", "provenance", "confidence_basis")
    )
    assert "decisions/rest-api.md" in fix(vault).written
    after = (root / "decisions/rest-api.md").read_text(encoding="utf-8")
    head = EXTRA.split("entities:")[0]
    assert after.startswith(head + "entities: [project/checkout, person/alice-smith]\n")
    kept = EXTRA[EXTRA.index("last_updated:") : EXTRA.index("---\n# Decision")]
    assert kept in after  # every Palinode field, byte for byte
    assert after.count("provenance:") == 1


def test_palinode_footer_heading_first_migrates_whole(make_vault, load_vault):
    palinode_footer = "## See also\n<!-- palinode-auto-footer -->\n- [[checkout]]\n"
    text = EXTRA.replace("We asked [[alice-smith]] first.\n", "Body.\n\n" + palinode_footer)
    text = text.replace("entities: [project/checkout]", "entities: [project/checkout]")
    root = make_vault({"decisions/rest-api.md": text, "projects/checkout.md": PROJECT})
    vault = load_vault(root)
    stale = [f for f in lint(vault).findings if f.check == "footer_stale"]
    assert (
        len(stale) == 1
        and "old marker" in stale[0].message
        and stale[0].line == text[: text.index("## See also")].count("\n") + 1
    )
    fix(vault)
    after = (root / "decisions/rest-api.md").read_text(encoding="utf-8")
    assert after.count("## See also") == 1 and "palinode-auto-footer" not in after
    assert after.endswith("Body.\n\n<!-- palinode:see-also -->\n## See also\n- [[checkout]]\n<!-- /palinode:see-also -->\n")
    assert fix(load_vault(root)).written == []
