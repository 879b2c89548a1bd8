"""bench/make_vault.py: deterministic, well-formed, and its manifest tells the truth.

The link checks here use a small independent reader (fenced and indented code, inline code and
%% comments stripped; Obsidian's name matching), so the generator is checked without the library
it is meant to benchmark. Also covers bench/bench_scan.py's argument handling.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml
from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
MEMORY_FOLDERS = ("people", "projects", "decisions", "insights", "research", "inbox")
ENTITY_KIND = {"people": "person", "projects": "project", "decisions": "decision", "insights": "insight", "research": "research"}
TYPES = {"PersonMemory", "ProjectSnapshot", "Decision", "Insight", "ResearchRef"}
DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-([a-z0-9]+(?:-[a-z0-9]+)*)\.md$")


make_vault = load_script("bench/make_vault.py")
bench_scan = load_script("bench/bench_scan.py")


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "vault"
    assert make_vault.main([str(out), "--notes", "200", "--seed", "7"]) == 0
    return out


@pytest.fixture(scope="module")
def manifest(vault) -> dict:
    return json.loads((vault / "bench-manifest.json").read_text())


def notes_of(vault: Path) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): p.read_text("utf-8").replace("\r\n", "\n")
        for p in sorted(vault.rglob("*.md"))
        if ".obsidian" not in p.parts
    }


def split_frontmatter(text: str) -> tuple[dict | None, str, str]:
    """(data, frontmatter text, body)."""
    if not text.startswith("---\n"):
        return None, "", text
    end = text.index("\n---\n", 3)
    return yaml.safe_load(text[4:end]), text[4:end], text[end + 5 :]


def outside_code(text: str) -> str:
    """The text with fenced/indented code, inline code and %% comments removed."""
    kept, fence, prev_blank, in_indented = [], None, True, False
    for line in text.split("\n"):
        if fence:
            if line.startswith(fence):
                fence = None
            prev_blank = False
            continue
        m = re.match(r"(`{3,}|~{3,})", line)
        if m:
            fence = m.group(1)
            continue
        if re.match(r"( {4}|\t)", line) and (prev_blank or in_indented):
            in_indented = True
            continue
        in_indented = False
        prev_blank = not line.strip()
        kept.append(line)
    text = "\n".join(kept)
    text = re.sub(r"`[^`\n]+`", "", text)
    return re.sub(r"%%.*?%%", "", text, flags=re.S)


WIKILINK = re.compile(r"!?\[\[([^\]]+)\]\]")
MDLINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def wikilink_parts(inner: str) -> tuple[str, str | None]:
    target = re.split(r"\\?\|", inner, maxsplit=1)[0]
    name, _, anchor = target.partition("#")
    return name, (anchor if "#" in target else None)


class VaultIndex:
    """Obsidian's name matching, enough for a generated vault (its file names are unique)."""

    def __init__(self, vault: Path):
        self.files = sorted(
            p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file() and ".obsidian" not in p.parts
        )
        self.by_name = {}
        for f in self.files:
            name = f.rsplit("/", 1)[-1].lower()
            self.by_name.setdefault(name, f)
            if name.endswith(".md"):
                self.by_name.setdefault(name[:-3], f)
        self.texts = notes_of(vault)

    def resolve(self, name: str) -> str | None:
        return self.by_name.get(name.rsplit("/", 1)[-1].lower())

    def resolve_md(self, href: str, source: str) -> str | None:
        href = unquote(href)
        relative = os.path.normpath(os.path.join(os.path.dirname(source), href))
        for cand in (relative, href):
            if cand in self.files:
                return cand
        return None

    def anchor_ok(self, path: str, anchor: str) -> bool:
        text = self.texts[path]
        if anchor.startswith("^"):
            return re.search(rf" \{anchor}$", text, re.M) is not None
        return re.search(rf"^#+ {re.escape(anchor)}$", text, re.M) is not None


# --- determinism -----------------------------------------------------------------------------------


def test_same_seed_gives_identical_bytes(vault, tmp_path):
    again = tmp_path / "again"
    make_vault.generate(again, notes=200, seed=7)
    assert tree_digest(again) == tree_digest(vault)


def test_other_seed_differs(vault, tmp_path):
    other = tmp_path / "other"
    make_vault.generate(other, notes=200, seed=8)
    a, b = tree_digest(vault), tree_digest(other)
    assert a != b
    assert len(set(a) ^ set(b)) > 50  # different file names, not just different words


# --- layout and frontmatter ------------------------------------------------------------------------


def test_counts_and_layout(vault, manifest):
    notes = notes_of(vault)
    assert len(notes) == manifest["notes"] == 200
    folders = Counter(p.split("/")[0] if "/" in p else "." for p in notes)
    for folder in (*MEMORY_FOLDERS, "daily", "archive", "."):
        assert folders[folder] > 0, folder
    attachments = list((vault / "attachments").iterdir())
    assert len(attachments) == manifest["attachments"] >= 4
    for a in attachments:
        data = a.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") if a.suffix == ".png" else data.startswith(b"<svg")


def test_memory_notes_have_id_category_type(vault):
    ids = Counter()
    for path, text in notes_of(vault).items():
        if path.split("/")[0] not in MEMORY_FOLDERS:
            continue
        data, _, _ = split_frontmatter(text)
        assert data is not None, path
        for key in ("id", "category", "type", "last_updated", "entities"):
            assert key in data, (path, key)
        assert data["type"] in TYPES, path
        stem = path.rsplit("/", 1)[1][:-3]
        m = DATED.match(path.rsplit("/", 1)[1])
        slug = m.group(2) if path.startswith("research/") else stem
        assert data["id"] == f"{data['category']}-{slug}", path
        for ref in data["entities"]:
            assert re.fullmatch(r"(person|project|decision|insight|research)/[a-z0-9-]+", ref), (path, ref)
        ids[data["id"]] += 1
    assert ids and max(ids.values()) == 1


def test_research_files_are_named_by_date(vault):
    research = list((vault / "research").glob("*.md"))
    assert research
    for p in research:
        m = DATED.match(p.name)
        assert m, p.name
        data, _, _ = split_frontmatter(p.read_text("utf-8").replace("\r\n", "\n"))
        assert str(data["date"]) == m.group(1) == date.fromisoformat(m.group(1)).isoformat()


def test_daily_notes_have_no_frontmatter(vault):
    daily = list((vault / "daily").glob("*.md"))
    assert daily
    for p in daily:
        date.fromisoformat(p.stem)
        assert not p.read_text("utf-8").startswith("---"), p.name


def test_sizes_are_long_tailed(tmp_path):
    out = tmp_path / "v"
    make_vault.generate(out, notes=1000, seed=3)
    sizes = sorted(p.stat().st_size for p in out.rglob("*.md"))
    median = sizes[len(sizes) // 2]
    assert 1000 <= median <= 2200
    assert sizes[-1] >= 150_000  # a giant
    assert sum(s >= 10_000 for s in sizes) >= 5


# --- links and the manifest ------------------------------------------------------------------------


def test_every_link_resolves_or_is_a_recorded_defect(vault, manifest):
    index = VaultIndex(vault)
    broken, labels, anchors = Counter(), Counter(), Counter()
    checked = 0
    for path, text in index.texts.items():
        for inner in WIKILINK.findall(outside_code(text)):
            checked += 1
            name, anchor = wikilink_parts(inner)
            target = index.resolve(name) if name else path
            if target is None:
                if " " in name:
                    labels[(path, name)] += 1
                else:
                    broken[(path, name)] += 1
                continue
            if anchor is not None and not index.anchor_ok(target, anchor):
                anchors[(path, inner)] += 1
        for href in MDLINK.findall(outside_code(split_frontmatter(text)[2])):
            checked += 1
            assert index.resolve_md(href, path), (path, href)
    assert checked > 1000
    assert broken == Counter((b["path"], b["target"]) for b in manifest["broken_links"])
    assert labels == Counter((b["path"], b["target"]) for b in manifest["label_links"])
    assert anchors == Counter((b["path"], b["target"]) for b in manifest["broken_anchors"])


def test_links_inside_code_are_recorded(vault, manifest):
    texts = notes_of(vault)
    assert manifest["code_links"]
    for item in manifest["code_links"]:
        text = texts[item["path"]]
        assert f"[[{item['target']}]]" in text
        assert (
            f"[[{item['target']}]]" not in outside_code(text) or text.count(f"[[{item['target']}") > 1
        )  # the same target may also be linked for real


def entity_ref(path: str) -> str | None:
    folder, _, name = path.partition("/")
    if folder not in ENTITY_KIND or "/" in name:
        return None
    stem = name[:-3]
    m = DATED.match(name)
    return f"{ENTITY_KIND[folder]}/{m.group(2) if folder == 'research' and m else stem}"


def test_drift_in_manifest_is_exactly_the_drift(vault, manifest):
    """Entities vs resolving body links (footer included), per memory note, match the manifest."""
    index = VaultIndex(vault)
    found = set()
    for path, text in index.texts.items():
        if path.split("/")[0] not in MEMORY_FOLDERS:
            continue
        data, _, body = split_frontmatter(text)
        entities = set(data["entities"])
        linked = set()
        body = outside_code(body)
        for inner in WIKILINK.findall(body):
            target = index.resolve(wikilink_parts(inner)[0])
            if target and entity_ref(target):
                linked.add(entity_ref(target))
        for href in MDLINK.findall(body):
            target = index.resolve_md(href, path)
            if target and entity_ref(target):
                linked.add(entity_ref(target))
        linked.discard(entity_ref(path))
        found |= {(path, "entity_without_link", e) for e in entities - linked}
        found |= {(path, "link_without_entity", e) for e in linked - entities}
    expected = {(d["path"], d["kind"], d["entity"]) for d in manifest["drift"]}
    assert expected
    assert found == expected


def test_footers_use_the_markers(vault):
    texts = notes_of(vault)
    footers = [t for p, t in texts.items() if p.split("/")[0] in MEMORY_FOLDERS and "<!-- palinode:see-also -->" in t]
    assert len(footers) > 10
    for text in footers:
        start = text.index("<!-- palinode:see-also -->")
        block = text[start:]
        assert re.fullmatch(
            r"<!-- palinode:see-also -->\n## See also\n(- \[\[[^\]]+\]\]\n)+"
            r"<!-- /palinode:see-also -->\n",
            block,
        ), block


def test_cli_prints_summary_and_refuses_foreign_folder(tmp_path):
    out = tmp_path / "v"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench/make_vault.py"), str(out), "--notes", "50"], capture_output=True, text=True, check=True
    )
    assert "50 notes" in run.stdout and "links" in run.stdout
    assert (out / "bench-manifest.json").is_file()
    again = subprocess.run(
        [sys.executable, str(ROOT / "bench/make_vault.py"), str(out), "--notes", "50"], capture_output=True, text=True
    )
    assert again.returncode != 0 and "--force" in again.stderr
    assert make_vault.main([str(out), "--notes", "50", "--force"]) == 0
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.md").write_text("mine")
    with pytest.raises(SystemExit, match="refusing"):
        make_vault.main([str(foreign), "--notes", "50", "--force"])
    assert (foreign / "keep.md").read_text() == "mine"


# --- bench_scan.py: argument handling --------------------------------------------------------------


def fake_binary(tmp_path: Path) -> Path:
    """A stand-in palinode-vault: makes the cache folder and prints counts."""
    exe = tmp_path / "palinode-vault"
    exe.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "vault = sys.argv[sys.argv.index('--vault') + 1]\n"
        "os.makedirs(os.path.join(vault, '.palinode'), exist_ok=True)\n"
        "print(json.dumps({'markdown_files': 3, 'links': 4, 'findings': [1, 2]}))\n"
    )
    exe.chmod(0o755)
    return exe


def test_scan_args_defaults(tmp_path):
    exe = fake_binary(tmp_path)
    args = bench_scan.parse_args([str(tmp_path), "--binary", str(exe)])
    assert args.runs == 5 and args.note is None and args.vault == tmp_path.resolve()
    assert bench_scan.default_binary() == Path(sys.executable).parent / "palinode-vault"
    assert bench_scan.scan_command(exe, tmp_path) == [str(exe), "scan", "--vault", str(tmp_path), "--json"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{vault}", "--runs", "0"], "--runs must be at least 1"),
        (["{vault}/nope"], "vault folder not found"),
        (["{vault}", "--binary", "{vault}/missing"], "palinode-vault not found"),
        (["{vault}", "--note", "../outside.md"], "--note must be a markdown file inside the vault"),
    ],
)
def test_scan_args_errors(tmp_path, capsys, argv, message):
    exe = fake_binary(tmp_path)
    (tmp_path / "outside.md").write_text("x")
    vault = tmp_path / "v"
    vault.mkdir()
    argv = [a.format(vault=vault) for a in argv]
    if "--binary" not in argv:
        argv += ["--binary", str(exe)]
    with pytest.raises(SystemExit):
        bench_scan.parse_args(argv)
    assert message in capsys.readouterr().err


def test_scan_harness_with_a_fake_binary(tmp_path, capsys):
    exe = fake_binary(tmp_path)
    vault = tmp_path / "v"
    make_vault.generate(vault, notes=40, seed=1)
    before = tree_digest(vault)
    assert bench_scan.main([str(vault), "--runs", "2", "--binary", str(exe), "--no-in-process"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["command"] == f"{exe} scan --vault {vault} --json"
    assert result["scan"] == {"markdown_files": 3, "links": 4}
    assert result["note"].startswith("projects/") and result["peak_rss_mb"] > 0
    assert "| cold scan (no cache) |" in out
    after = tree_digest(vault)
    after = {k: v for k, v in after.items() if not k.startswith(".palinode/")}
    assert after == before  # the changed note is restored byte for byte


def test_scan_harness_reports_a_failing_binary(tmp_path, capsys):
    exe = tmp_path / "palinode-vault"
    exe.write_text(f"#!{sys.executable}\nimport sys\nprint('no such command: scan', file=sys.stderr)\nsys.exit(2)\n")
    exe.chmod(0o755)
    vault = tmp_path / "v"
    make_vault.generate(vault, notes=30, seed=1)
    assert bench_scan.main([str(vault), "--runs", "1", "--binary", str(exe)]) == 2
    assert "no such command: scan" in capsys.readouterr().err
