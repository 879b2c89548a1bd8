#!/usr/bin/env python3
"""Generate a synthetic Obsidian memory vault for benchmarks, deterministic for a seed.

    python bench/make_vault.py OUT_DIR [--notes 10000] [--seed 7]

The same seed and note count give byte-identical files: one `random.Random(seed)` drives
everything and no content depends on the clock. Besides the notes, OUT_DIR gets
`bench-manifest.json`, which lists every deliberate defect (broken links and anchors, label links
Obsidian cannot resolve, drift both ways, links hidden in code, stale footers, ...) so that
benchmarks and tests can check a scan's findings against what was planted.

Standard library only, so it runs before the package is installed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import struct
import sys
import time
import unicodedata
import zlib
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import quote

MANIFEST_NAME = "bench-manifest.json"
MANIFEST_VERSION = 1
# A fixed "today" so that the output never depends on when it is generated.
TODAY = date(2026, 3, 31)

# Share of the non-top-level notes per folder (daily/ and archive/ are structural).
FOLDER_SHARES = (
    ("people", 0.12),
    ("projects", 0.05),
    ("decisions", 0.16),
    ("insights", 0.14),
    ("research", 0.14),
    ("inbox", 0.05),
    ("archive", 0.10),
    ("daily", 0.24),
)
TYPE_OF_KIND = {
    "person": "PersonMemory",
    "project": "ProjectSnapshot",
    "decision": "Decision",
    "insight": "Insight",
    "research": "ResearchRef",
}
FOOTER_START = "<!-- palinode:see-also -->"
FOOTER_END = "<!-- /palinode:see-also -->"
LEGACY_FOOTER_MARKER = "<!-- palinode-auto-footer -->"

# Rates of the deliberate imperfections (per emitted link or per memory note).
BROKEN_LINK_RATE = 0.012
BROKEN_ANCHOR_RATE = 0.002
DRIFT_RATE = 0.02  # each way
CODE_RATE = 0.20

# --- vocabulary (hand-written; no downloads) -------------------------------------------------

FIRST_NAMES = """
Alice Bob Charlie Dana Elena Farid Grace Hiro Imani Jonas Keiko Liam Maya Noah Olivia Priya
Quinn Rafael Sofia Tariq Uma Victor Wen Xavier Yara Zane Amara Bruno Chloe Diego Esther Felix
Greta Hassan Ingrid Jamal Kira Lucas Mina Nikolai Oona Pedro Rosa Samuel Tomás Ursula Valentina
Wyatt Ximena Yusuf Zoë Aisha Ben Carmen Dmitri Eva Finn Gabriel Hana Ivan Julia Kwame Leila Marco
Nadia Oscar Paula Ravi Selin Theo Ana Björn Clara David Emil Fatima George Helena Isaac Jade Kai
Laura Mateo Nora Omar Pia Rohan Sara Tobias Vera Will Yuki Zara Adrian Beatriz Conor Daria Elif
José Lena Mohammed Niamh Sean Chiara Ayumi Ngozi Lars Mei
""".split()

LAST_NAMES = """
Smith Jones Garcia Müller Okafor Tanaka Rossi Novak Kowalski Silva Haddad Nguyen Kim Patel Cohen
Larsen Dubois Fischer Moreau Ivanova Costa Mendes Khan Ali Santos Reyes Ortiz Becker Wagner Lund
Berg Nakamura Sato Yamamoto Chen Wang Liu Zhang Singh Sharma Gupta Rahman Ahmed Hussein Mensah
Owusu Adeyemi Eze Walsh Murphy Kelly Brennan O'Neil Park Choi Lee Svensson Nilsson Andersen
Hansen Jensen Virtanen Korhonen Horvat Kovac Popescu Ionescu Papadopoulos Georgiou Demir Yilmaz
Kaya Sousa Ferreira Almeida Romero Navarro Castillo Vargas Herrera Medina Flores Morales Torres
Baker Carter Mitchell Turner Parker Collins Edwards Stewart Morris Rogers Reed Cook Bell Bailey
Cooper Richardson Cox Ward Peterson Gray James Watson Brooks Sanders Price Bennett Wood Barnes
""".split()

PROJECT_ADJECTIVES = """
amber azure bright cobalt copper crimson dusty emerald golden granite hidden iron jade lunar
misty northern obsidian pale quiet rapid scarlet silent silver solar swift tidal velvet violet
wild winter autumn brave cinder distant electric frozen gentle hollow indigo kindred little
marble midnight neon olive polar rusty shadow southern spring stellar sunny tawny urban
""".split()

PROJECT_NOUNS = """
falcon heron otter lynx badger comet harbor beacon lantern compass anchor summit glacier canyon
meadow orchard river delta forge anvil kestrel marten pike raven sparrow willow cedar maple
quartz basalt bison condor dune ember fjord grove hawk ibis jackal koi lagoon mesa nebula osprey
pelican quarry reef stork tundra vole walrus yak zephyr atlas bramble
""".split()

DOMAINS = """
checkout billing search onboarding payments catalog inventory analytics mobile auth ledger
notifications reporting pricing support docs ingest sync export scheduler gateway recall
""".split()

PROJECT_SUFFIXES = """
redesign migration rewrite v2 pilot rollout cleanup revamp platform service pipeline api
""".split()

DECISION_VERBS = """
adopt drop keep move switch-to replace split merge freeze deprecate pin defer limit cache
retire standardize-on vendor inline batch
""".split()

TECH_TERMS = """
sqlite postgres redis kafka grpc graphql rest webhooks cron terraform docker kubernetes nomad
rust go python typescript react svelte htmx tailwind vite esbuild pytest playwright sentry
grafana prometheus opentelemetry s3 cloudflare fastly nginx caddy llama-cpp gguf embeddings
sqlite-vec fts5 markdown yaml json protobuf feature-flags monorepo trunk-based-dev ci-runners
staging-env legacy-browser-support nightly-builds release-trains code-owners
""".split()

INSIGHT_NOUNS = """
curation volume latency accuracy small-batches big-bang-releases pairing reviews checklists
dashboards alerts retries idempotency caching naming tests docs demos prototypes deadlines
estimates handoffs context ownership defaults timeouts backpressure migrations rollbacks
""".split()

INSIGHT_LINKS = "beats needs-before hides outlasts breaks-without compounds-with trumps".split()

RESEARCH_TOPICS = """
vector-search hybrid-retrieval reranking chunking tokenizers quantization local-llms
memory-consolidation knowledge-graphs link-prediction entity-resolution deduplication
spaced-repetition note-taking zettelkasten crdts local-first sync-protocols file-watching
incremental-parsing markdown-parsers sqlite-internals wal-mode fuzzy-matching bm25 embeddings
""".split()

RESEARCH_KINDS = "survey benchmark notes paper comparison postmortem talk primer".split()
RESEARCH_QUALIFIERS = """
for-agents at-scale in-practice on-device for-small-teams revisited in-sqlite with-llms
offline tradeoffs pitfalls for-obsidian in-rust in-python explained
""".split()

ROLES = """
designer|staff engineer|product manager|engineering manager|data scientist|SRE|founder|
advisor|contractor|QA lead|tech writer|security engineer|recruiter|investor|customer
""".replace("\n", "").split("|")

TAGS = """
memory agents architecture infra hiring planning retro product design security perf ux
research ops ml data onboarding writing
""".split()

WORDS = """
the a an and or but so because while after before during since until when then also still
team release sprint roadmap backlog milestone demo review design prototype spec draft plan
service queue index cache schema migration deploy rollback incident outage alert dashboard
metric latency throughput error budget budget cost vendor contract invoice customer user
feedback interview survey churn signup retention funnel experiment flag cohort segment
we they it this that these those some most every each few many several
agreed decided noticed learned suspect expect proposed rejected shipped blocked paused moved
fixed broke tested measured reviewed merged reverted documented owned asked promised
quickly slowly carefully finally mostly rarely again already probably clearly barely
small large fast slow stale fresh simple brittle solid flaky manual automatic local remote
new old first last next weekly daily quarterly early late open closed pending done
for with without about into onto from over under across through between against
to of in on at by as is was are were be been has have had will would could should may
monday tuesday wednesday thursday friday morning afternoon evening week month quarter
notes follow-up context constraint tradeoff risk assumption question answer option
pipeline worker client server browser phone laptop repo branch commit ticket board doc
parser graph link note vault folder file footer heading block entity alias tag
""".split()

SENTENCE_ENDS = (".",) * 12 + ("!", "?", "...")

LINK_PHRASES = (
    "Met with {} about",
    "Checked in with {} on",
    "See {} for",
    "Per {}, we",
    "Following up on {} and",
    "{} owns",
    "Paired with {} on",
    "Reviewed {} together with",
    "Raised in {}:",
    "Context from {}:",
    "Handed off to {} after",
    "Compare with {} before",
)

CODE_LANGS = ("python", "bash", "yaml", "json", "sql", "ts", "")

TOP_DOCS = (
    ("Home", ("Projects", "People", "Recent Decisions")),
    ("Team Handbook", ("How We Work", "Rituals", "Tools")),
    ("Vault Guide", ("Folders", "Frontmatter", "Links", "Footers")),
    ("Glossary", ("Terms",)),
    ("Reading List", ("Queue", "Done")),
)


# --- the plan ------------------------------------------------------------------------------------


@dataclass(eq=False)
class Note:
    """One planned file: where it goes, how other notes link to it, what it links to."""

    path: str  # vault-relative, with "/"
    folder: str  # top folder ("" for top-level documents)
    kind: str  # person project decision insight research inbox daily archive top
    stem: str  # file name without .md: what a [[link]] says
    slug: str  # slug in entity refs (research: without the date)
    label: str  # human-readable name or title
    headings: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    size: int = 1500  # target size in bytes (approximate)
    entities: list[Note] = field(default_factory=list)
    category: str = ""  # memory tier: category key; inbox notes take their future kind's
    day: date = TODAY  # research, daily: the date in the name; others: last update
    extra: dict = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.slug}"

    @property
    def linkable_headings(self) -> list[str]:
        # Obsidian rewrites ':' etc. in heading links; link only to plain headings.
        return [h for h in self.headings if not any(c in h for c in ":#|^[]%")]


def ascii_slug(text: str) -> str:
    """Lowercase, hyphens not spaces, accents folded: 'José García' -> 'jose-garcia'."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = []
    for ch in folded.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")


def title_case(slug: str) -> str:
    small = {"to", "of", "on", "and", "the", "v2", "with"}
    words = slug.replace("-", " ").split()
    return " ".join(w if (w in small and i) else w[:1].upper() + w[1:] for i, w in enumerate(words))


class Generator:
    """Plans a vault, renders every file into memory, and writes it out."""

    def __init__(self, notes: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.total_notes = notes
        self.taken: set[str] = set()  # lowercase stems and slugs in use
        self.notes: list[Note] = []
        self.by_kind: dict[str, list[Note]] = {}
        self.attachments: list[tuple[str, bytes]] = []
        self.files: dict[str, bytes] = {}
        self.links = 0
        self.pickers: dict[str, object] = {}
        self.manifest: dict[str, list] = {
            "broken_links": [],
            "broken_anchors": [],
            "label_links": [],
            "drift": [],
            "code_links": [],
            "stale_footers": [],
            "legacy_footers": [],
            "superseded_not_archived": [],
            "crlf_files": [],
        }

    # -- names --------------------------------------------------------------------------------

    def claim(self, candidates) -> str | None:
        """First candidate slug not yet taken (case-insensitive), claimed."""
        for slug in candidates:
            if slug and slug.lower() not in self.taken:
                self.taken.add(slug.lower())
                return slug
        return None

    def unique(self, make) -> str:
        for _ in range(60):
            slug = self.claim([make()])
            if slug:
                return slug
        base = make()
        n = 2
        while f"{base}-{n}" in self.taken:
            n += 1
        return self.claim([f"{base}-{n}"])  # type: ignore[return-value]

    def person_name(self) -> str:
        return f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"

    def project_slug(self) -> str:
        r = self.rng
        if r.random() < 0.6:
            return f"{r.choice(PROJECT_ADJECTIVES)}-{r.choice(PROJECT_NOUNS)}"
        return f"{r.choice(DOMAINS)}-{r.choice(PROJECT_SUFFIXES)}"

    def decision_slug(self) -> str:
        r = self.rng
        obj = r.choice(TECH_TERMS)
        tail = f"-for-{r.choice(DOMAINS)}" if r.random() < 0.5 else ""
        return f"{r.choice(DECISION_VERBS)}-{obj}{tail}"

    def insight_slug(self) -> str:
        r = self.rng
        a, b = r.sample(INSIGHT_NOUNS, 2)
        return f"{a}-{r.choice(INSIGHT_LINKS)}-{b}"

    def research_slug(self) -> str:
        r = self.rng
        if r.random() < 0.3:
            return f"{r.choice(RESEARCH_TOPICS)}-{r.choice(RESEARCH_KINDS)}"
        return f"{r.choice(RESEARCH_TOPICS)}-{r.choice(RESEARCH_QUALIFIERS)}-{r.choice(RESEARCH_KINDS)}"

    def block_id(self) -> str:
        return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))

    def some_day(self, span: int = 900) -> date:
        return TODAY - timedelta(days=self.rng.randrange(span))

    def target_size(self) -> int:
        r = self.rng.random()
        if r < 0.01:
            return self.rng.randrange(10_000, 50_000)
        # Long-tailed: median about 1.5 KB, capped where the explicit tiers take over.
        return int(min(50_000, max(350, self.rng.lognormvariate(math.log(650), 0.85))))

    # -- planning -----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        n_top = min(len(TOP_DOCS), max(1, self.total_notes // 40))
        rest = self.total_notes - n_top
        counts = {"": n_top}
        for folder, share in FOLDER_SHARES:
            counts[folder] = int(rest * share)
        counts["daily"] += rest - sum(counts[f] for f, _ in FOLDER_SHARES)
        return counts

    def add(self, note: Note) -> Note:
        self.notes.append(note)
        self.by_kind.setdefault(note.kind, []).append(note)
        return note

    def plan(self) -> None:
        r = self.rng
        counts = self.counts()
        for title, headings in TOP_DOCS[: counts[""]]:
            self.claim([title])
            self.add(Note(f"{title}.md", "", "top", title, ascii_slug(title), title, list(headings)))

        for _ in range(counts["people"]):
            name = ""

            def make() -> str:
                nonlocal name
                name = self.person_name()
                return ascii_slug(name)

            slug = self.unique(make)
            self.add(
                Note(
                    f"people/{slug}.md", "people", "person", slug, slug, name, ["Role", "Context", "Working Style", "Follow-ups"]
                )
            )
        for _ in range(counts["projects"]):
            slug = self.unique(self.project_slug)
            self.add(
                Note(
                    f"projects/{slug}.md",
                    "projects",
                    "project",
                    slug,
                    slug,
                    title_case(slug),
                    [
                        "What This Is",
                        "Status",
                        "People",
                        "Current Work",
                        "Recent Changes",
                        "Blockers",
                        "Key Decisions",
                        "Key Files & Locations",
                    ],
                )
            )
        for _ in range(counts["decisions"]):
            slug = self.unique(self.decision_slug)
            self.add(
                Note(
                    f"decisions/{slug}.md",
                    "decisions",
                    "decision",
                    slug,
                    slug,
                    title_case(slug),
                    ["Statement", "Rationale", "Alternatives Rejected", "Consequences"],
                )
            )
        for _ in range(counts["insights"]):
            slug = self.unique(self.insight_slug)
            self.add(
                Note(
                    f"insights/{slug}.md",
                    "insights",
                    "insight",
                    slug,
                    slug,
                    title_case(slug),
                    ["What Happened", "Why It Matters", "When It Applies", "Evidence"],
                )
            )
        for _ in range(counts["research"]):
            slug = self.unique(self.research_slug)
            day = self.some_day(1100)
            stem = f"{day.isoformat()}-{slug}"
            self.claim([stem])
            self.add(
                Note(
                    f"research/{stem}.md",
                    "research",
                    "research",
                    stem,
                    slug,
                    title_case(slug),
                    ["Summary", "Key Points", "Relevance", "Open Questions"],
                    day=day,
                )
            )
        for _ in range(counts["inbox"]):
            slug = self.unique(
                lambda: f"{r.choice(['idea', 'todo', 'note', 'maybe', 'ask'])}-{r.choice(WORDS[40:120])}-{r.choice(TECH_TERMS)}"
            )
            note = self.add(Note(f"inbox/{slug}.md", "inbox", "inbox", slug, slug, title_case(slug), ["Context"]))
            note.category = r.choice(["insight", "insight", "decision", "person", "project"])
        for i in range(counts["daily"]):
            day = TODAY - timedelta(days=i)
            stem = day.isoformat()
            self.claim([stem])
            self.add(Note(f"daily/{stem}.md", "daily", "daily", stem, stem, stem, [], day=day))
        for _ in range(counts["archive"]):
            if r.random() < 0.15:
                slug = self.unique(lambda: f"retro-{r.randrange(2019, 2026)}-q{r.randrange(1, 5)}")
                sub = ""
            elif r.random() < 0.5:
                slug = self.unique(self.decision_slug)
                sub = "decisions/"
            else:
                slug = self.unique(self.project_slug)
                sub = "projects/"
            self.add(Note(f"archive/{sub}{slug}.md", "archive", "archive", slug, slug, title_case(slug), ["Summary", "Outcome"]))

        for note in self.notes:
            if note.kind not in ("top", "daily"):
                note.category = note.category or note.kind
            if note.kind not in ("top", "daily", "research"):
                note.day = self.some_day()
            note.size = self.target_size()
            if note.kind not in ("daily", "top", "archive") and r.random() < 0.3:
                note.blocks = [self.block_id() for _ in range(r.randint(1, 2))]
        giants = [n for n in self.notes if n.kind in ("daily", "research", "project")]
        for note in r.sample(giants, min(len(giants), max(1, self.total_notes // 2500))):
            note.size = r.randrange(190_000, 215_000)
        for note in self.by_kind.get("daily", []):
            times = sorted(r.sample(range(7 * 60, 23 * 60), max(1, min(40, note.size // 700))))
            note.headings = [f"Session {t // 60:02d}:{t % 60:02d}" for t in times]

        self.plan_entities()
        self.plan_attachments()

    def popular(self, kind: str):
        """A picker that favours a few hub notes of a kind (long-tailed popularity)."""
        if kind not in self.pickers:
            self.pickers[kind] = self.make_picker(kind)
        return self.pickers[kind]

    def make_picker(self, kind: str):
        pool = list(self.by_kind.get(kind, []))
        if not pool:
            return lambda k: []
        weights = [1.0 / (i + 1) ** 0.8 for i in range(len(pool))]
        cum = []
        total = 0.0
        for w in weights:
            total += w
            cum.append(total)
        rng = self.rng

        def pick(k: int) -> list[Note]:
            return rng.choices(pool, cum_weights=cum, k=k)

        return pick

    def plan_entities(self) -> None:
        r = self.rng
        person, project = self.popular("person"), self.popular("project")
        decision, insight = self.popular("decision"), self.popular("insight")
        research = self.popular("research")
        wants = {
            "person": lambda: project(r.randint(1, 3)) + person(r.randint(0, 2)),
            "project": lambda: (
                person(r.randint(2, 6)) + decision(r.randint(0, 3)) + insight(r.randint(0, 1)) + research(r.randint(0, 1))
            ),
            "decision": lambda: project(1) + person(r.randint(1, 2)),
            "insight": lambda: project(r.randint(1, 2)) + person(r.randint(0, 1)),
            "research": lambda: project(1) + person(r.randint(0, 1)),
            "inbox": lambda: [] if r.random() < 0.25 else project(r.randint(0, 1)) + person(1),
        }
        for note in self.notes:
            if note.kind in wants:
                seen: list[Note] = []
                for e in wants[note.kind]():
                    if e is not note and e not in seen:
                        seen.append(e)
                note.entities = seen
        # Supersession: a newer decision replaces an older one, which is archived (mostly).
        decisions = self.by_kind.get("decision", [])
        for new in decisions:
            if r.random() < 0.05:
                old = r.choice(decisions)
                if old is new or "superseded_by" in old.extra or "supersedes" in new.extra:
                    continue
                new.extra["supersedes"] = old
                old.extra["superseded_by"] = new
                old.extra["archived"] = r.random() > 0.1
                if not old.extra["archived"]:
                    self.manifest["superseded_not_archived"].append({"path": old.path, "superseded_by": f"decision-{new.slug}"})

    def plan_attachments(self) -> None:
        r = self.rng
        for i in range(max(4, self.total_notes // 80)):
            choice = r.random()
            if choice < 0.3:
                d = self.some_day()
                name = f"Screenshot {d.isoformat()} at {r.randrange(8, 20):02d}.{r.randrange(60):02d}.{r.randrange(60):02d}.png"
            elif choice < 0.7:
                name = f"diagram-{r.choice(DOMAINS)}-{i}.png"
            else:
                name = f"arch-{r.choice(PROJECT_NOUNS)}-{i}.svg"
            if name.lower() in self.taken:
                continue
            self.taken.add(name.lower())
            data = tiny_png(r) if name.endswith(".png") else tiny_svg(r, name)
            self.attachments.append((f"attachments/{name}", data))

    # -- rendering ----------------------------------------------------------------------------

    def render_all(self) -> None:
        for note in self.notes:
            body = NoteWriter(self, note)
            text = body.render()
            if note.kind not in ("top",) and self.rng.random() < 0.005:
                text = text.replace("\n", "\r\n")
                self.manifest["crlf_files"].append(note.path)
            self.files[note.path] = text.encode("utf-8")
        for path, data in self.attachments:
            self.files[path] = data
        self.files[".obsidian/app.json"] = b'{\n  "alwaysUpdateLinks": true\n}\n'

    def broken_target(self) -> tuple[str, str]:
        """A link target that resolves to nothing, and why it is plausible."""
        r = self.rng
        for _ in range(20):
            if r.random() < 0.7:
                stem = r.choice(self.notes).stem
                if len(stem) < 5:
                    continue
                i = r.randrange(1, len(stem) - 1)
                target = stem[:i] + stem[i + 1 :] if r.random() < 0.5 else (stem[: i - 1] + stem[i] + stem[i - 1] + stem[i + 1 :])
                reason = "typo"
            else:
                target = r.choice([ascii_slug(self.person_name()), self.project_slug(), self.decision_slug()])
                reason = "deleted"
            if target.lower() not in self.taken:
                return target, reason
        return f"missing-note-{r.randrange(10**6)}", "deleted"

    def write(self, out: Path) -> None:
        for rel in sorted(self.files):
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self.files[rel])

    def manifest_dict(self) -> dict:
        counts: dict[str, int] = {}
        for note in self.notes:
            counts[note.folder or "."] = counts.get(note.folder or ".", 0) + 1
        md_bytes = sum(len(d) for p, d in self.files.items() if p.endswith(".md"))
        return {
            "generator": "bench/make_vault.py",
            "version": MANIFEST_VERSION,
            "seed": self.seed,
            "notes": len(self.notes),
            "folders": counts,
            "attachments": len(self.attachments),
            "markdown_bytes": md_bytes,
            "links": self.links,
            **self.manifest,
        }


# --- one note's text -----------------------------------------------------------------------------


class NoteWriter:
    """Renders one planned note. Blocks are joined with blank lines."""

    def __init__(self, gen: Generator, note: Note) -> None:
        self.g = gen
        self.r = gen.rng
        self.note = note
        self.blocks: list[str] = []
        self.size = 0
        self.relink: list[Note] = []  # notes that may be linked again without changing drift
        self.pending_blocks = list(note.blocks)

    # -- small pieces -------------------------------------------------------------------------

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.r.choices(WORDS, k=self.r.randint(lo, hi)))

    def sentence(self) -> str:
        s = self.words(6, 18)
        return s[0].upper() + s[1:] + self.r.choice(SENTENCE_ENDS)

    def link_sentence(self, link: str) -> str:
        return self.r.choice(LINK_PHRASES).format(link) + " " + self.words(3, 10) + "."

    def prose(self, n: int, links: list[str] = ()) -> str:
        parts = [self.sentence() for _ in range(n)]
        for link in links:
            parts.insert(self.r.randrange(len(parts) + 1), self.link_sentence(link))
        if self.r.random() < 0.05:
            parts.insert(self.r.randrange(len(parts) + 1), self.inline_code())
        return " ".join(parts)

    def inline_code(self) -> str:
        if self.r.random() < 0.25:
            target = self.r.choice(self.g.notes).stem
            self.g.manifest["code_links"].append({"path": self.note.path, "target": target})
            return f"Literal `[[{target}]]` is just text."
        return f"Run `{self.r.choice(['make test', 'git pull --rebase', 'pip install -e .', 'npm run build', 'palinode-vault lint'])}` first."

    def add(self, block: str) -> None:
        # Block ids go at the end of a one-line paragraph, where Obsidian looks for them.
        if self.pending_blocks and block[:1].isalpha() and "\n" not in block and "%%" not in block:
            block = f"{block} ^{self.pending_blocks.pop()}"
        self.blocks.append(block)
        self.size += len(block) + 2

    def heading(self, text: str, level: int = 2) -> None:
        self.add("#" * level + " " + text)

    def count(self, n: int = 1) -> None:
        self.g.links += n

    def link(self, t: Note, style: str | None = None, table: bool = False) -> str:
        """A link to an existing note in one of the ways people write them."""
        r = self.r
        if style is None:
            style = r.choices(["slug", "label", "heading", "block", "md"], cum_weights=[50, 76, 85, 89, 100])[0]
        pipe = "\\|" if table else "|"
        self.count()
        if style == "heading" and t.linkable_headings:
            if r.random() < BROKEN_ANCHOR_RATE * 20:
                anchor = "Notes From " + title_case(r.choice(DOMAINS))
                self.g.manifest["broken_anchors"].append(
                    {"path": self.note.path, "target": f"{t.stem}#{anchor}", "anchor": anchor}
                )
                return f"[[{t.stem}#{anchor}]]"
            return f"[[{t.stem}#{r.choice(t.linkable_headings)}]]"
        if style == "block" and t.blocks:
            return f"[[{t.stem}#^{r.choice(t.blocks)}{pipe}{t.label}]]"
        if style == "md":
            if r.random() < 0.15 and self.note.folder:
                href = os.path.relpath(t.path, os.path.dirname(self.note.path))
            else:
                href = t.path
            return f"[{t.label}]({quote(href)})"
        if style == "label" or r.random() < 0.1:
            return f"[[{t.stem}{pipe}{t.label}]]"
        return f"[[{t.stem}]]"

    def maybe_broken(self) -> list[str]:
        """About 1% of links point at nothing; each one is recorded in the manifest."""
        if self.r.random() >= BROKEN_LINK_RATE:
            return []
        target, reason = self.g.broken_target()
        self.g.manifest["broken_links"].append({"path": self.note.path, "target": target, "reason": reason})
        self.count()
        return [f"[[{target}]]"]

    def links_for(self, targets: list[Note]) -> list[str]:
        out = []
        for t in targets:
            out.append(self.link(t))
            out.extend(self.maybe_broken())
        return out

    def code_block(self) -> str:
        r = self.r
        lang = r.choice(CODE_LANGS)
        lines = [self.words(2, 6).replace(" ", "_") + " = " + str(r.randrange(1000)) for _ in range(r.randint(2, 8))]
        if r.random() < 0.5:
            target = r.choice(self.g.notes).stem if r.random() < 0.7 else self.g.broken_target()[0]
            self.g.manifest["code_links"].append({"path": self.note.path, "target": target})
            lines.insert(r.randrange(len(lines) + 1), f"# see [[{target}]]")
        fence = "~~~" if r.random() < 0.15 else "```"
        return f"{fence}{lang}\n" + "\n".join(lines) + f"\n{fence}"

    def comment(self) -> str:
        target = self.r.choice(self.g.notes).stem
        self.g.manifest["code_links"].append({"path": self.note.path, "target": target})
        if self.r.random() < 0.5:
            return f"{self.sentence()} %% check [[{target}]] later %%"
        return f"%%\ndraft: {self.words(4, 10)}\n[[{target}]]\n%%"

    def indented_code(self) -> str:
        # Only after a paragraph: indented code after a list would be list content instead.
        target = self.r.choice(self.g.notes).stem
        self.g.manifest["code_links"].append({"path": self.note.path, "target": target})
        return self.prose(1) + f"\n\n    $ palinode-vault lint --json\n    # [[{target}]] here is output, not a link"

    def nested_list(self, links: list[str] = ()) -> str:
        lines = []
        links = list(links)
        for _ in range(self.r.randint(2, 5)):
            item = self.words(3, 9)
            if links and self.r.random() < 0.6:
                item += " " + links.pop()
            lines.append(f"- {item}")
            for _ in range(self.r.randint(0, 2)):
                lines.append(f"  - {self.words(2, 7)}")
                if self.r.random() < 0.3:
                    lines.append(f"    - {self.words(2, 5)}")
        lines.extend(f"- {self.words(2, 5)} {link}" for link in links)
        return "\n".join(lines)

    def table(self, rows: list[Note]) -> str:
        lines = ["| Who | Role | Since |", "| --- | --- | --- |"]
        for t in rows:
            cell = self.link(t, self.r.choice(["slug", "label"]), table=True)
            lines.append(f"| {cell} | {self.r.choice(ROLES)} | {self.g.some_day().isoformat()} |")
        for _ in range(self.r.randint(1, 3)):
            lines.append(f"| {self.words(1, 2)} | {self.r.choice(ROLES)} | {self.g.some_day().isoformat()} |")
        return "\n".join(lines)

    def embed(self) -> str:
        path, _ = self.r.choice(self.g.attachments)
        name = path.rsplit("/", 1)[1]
        self.count()
        return f"![[{name}|{self.r.choice([300, 480, 640])}]]" if self.r.random() < 0.3 else f"![[{name}]]"

    def extras(self) -> None:
        """Code, comments, tables, embeds: the texture that parsers must get right."""
        r = self.r
        if r.random() < CODE_RATE:
            self.add(self.code_block())
            if r.random() < 0.3:
                self.add(self.indented_code())
        if r.random() < 0.04:
            self.add(self.comment())
        if r.random() < 0.05 and self.g.attachments:
            self.add(self.embed())

    def filler(self, links: bool = True) -> None:
        """Paragraphs and dated update sections until the note reaches its target size."""
        r = self.r
        n = 0
        while self.size < self.note.size:
            n += 1
            if n % 6 == 0:
                self.heading(f"Update {n // 6}", 3)
            targets = [r.choice(self.relink)] if links and self.relink and r.random() < 0.5 else []
            roll = r.random()
            if roll < 0.12:
                self.add(self.nested_list(self.links_for(targets)))
            elif roll < 0.16:
                self.add(self.code_block())
            else:
                self.add(self.prose(r.randint(2, 7), self.links_for(targets)))

    # -- whole notes --------------------------------------------------------------------------

    def render(self) -> str:
        kind = self.note.kind
        if kind == "daily":
            return self.daily()
        if kind == "top":
            return self.top()
        if kind == "archive":
            return self.archive()
        return self.memory()

    def frontmatter(self) -> str:
        n, r = self.note, self.r
        cat = n.category
        lines = [f"id: {cat}-{n.slug}", f"category: {cat}", f"type: {TYPE_OF_KIND[cat]}"]
        if cat == "person":
            lines.append(f"name: {n.label}")
            if r.random() < 0.4:
                first, _, last = n.label.partition(" ")
                lines.append(f"aliases: [{first}, {first[0]}. {last}]")
            lines.append(f"role: {r.choice(ROLES)}")
            lines.append(f"core: {'true' if r.random() < 0.1 else 'false'}")
        elif cat == "project":
            lines.append(f'name: "{n.label}"')
            status = r.choices(["active", "paused", "completed"], [6, 2, 2])[0]
            lines.append(f"status: {status}")
            lines.append(f"core: {'true' if status == 'active' and r.random() < 0.5 else 'false'}")
        elif cat == "decision":
            archived = n.extra.get("archived", False)
            lines.append(f"status: {'archived' if archived else 'active'}")
        ents = ", ".join(e.ref for e in n.entities)
        lines.append(f"entities: [{ents}]")
        if cat == "decision":
            sup = n.extra.get("supersedes")
            lines.append(f"supersedes: [{'decision-' + sup.slug if sup else ''}]")
            by = n.extra.get("superseded_by")
            lines.append(f'superseded_by: "{"decision-" + by.slug if by else ""}"')
            lines.append(f"confidence: {r.choice([0.6, 0.7, 0.8, 0.9, 0.95])}")
            lines.append(f"created: {n.day.isoformat()}T{r.randrange(8, 19):02d}:00:00Z")
        elif cat == "insight":
            lines.append(f"recurrence_count: {r.randint(1, 5)}")
            lines.append(f"evidence_refs: [daily/{self.g.some_day(400).isoformat()}]")
        elif cat == "research":
            lines.append(f"source_url: https://example.org/{n.slug}")
            lines.append(f"date: {n.day.isoformat()}")
        elif cat == "person":
            lines.append(f"last_contact: {self.g.some_day(120).isoformat()}")
        if cat == "research" or r.random() < 0.3:
            lines.append(f"tags: [{', '.join(r.sample(TAGS, r.randint(1, 3)))}]")
        ups = [e for e in n.entities if e.kind == "project"]
        if ups and r.random() < 0.03:
            lines.append(f'up: "[[{ups[0].stem}]]"')
            self.count()
        lines.append(f"last_updated: {n.day.isoformat()}T{r.randrange(24):02d}:{r.randrange(60):02d}:00Z")
        return "---\n" + "\n".join(lines) + "\n---\n"

    def memory(self) -> str:
        n, r, m = self.note, self.r, self.g.manifest
        # Decide how each entity is covered: inline link, footer only, or (drift) not at all.
        inline: list[Note] = []
        footer: list[Note] = []
        forms: dict[int, str] = {}
        missing = r.choice(n.entities) if n.entities and r.random() < DRIFT_RATE else None
        for e in n.entities:
            if e is missing:
                m["drift"].append({"path": n.path, "kind": "entity_without_link", "entity": e.ref})
            elif r.random() < 0.28:
                footer.append(e)
            else:
                inline.append(e)
                if r.random() < 0.01 and e.label.lower() not in self.g.taken:
                    forms[id(e)] = "label_form"
        # A label link such as [[Alice Smith]] does not resolve, so it cannot cover its entity.
        footer += [e for e in inline if id(e) in forms]
        self.relink = [e for e in inline if id(e) not in forms]

        inline_links = []
        for e in inline:
            if id(e) in forms:
                m["label_links"].append({"path": n.path, "target": e.label, "file": e.path})
                self.count()
                inline_links.append(f"[[{e.label}]]")
            else:
                inline_links.append(self.link(e))
            inline_links.extend(self.maybe_broken())
        if r.random() < DRIFT_RATE:
            pool = self.g.by_kind.get(r.choice(["person", "project"]), [])
            stray = r.choice(pool) if pool else None
            if stray is not None and stray is not n and stray not in n.entities:
                m["drift"].append({"path": n.path, "kind": "link_without_entity", "entity": stray.ref})
                inline_links.append(self.link(stray, "slug"))
        if r.random() < 0.04 and self.g.by_kind.get("top"):
            inline_links.append(self.link(r.choice(self.g.by_kind["top"]), "slug"))

        title = {"decision": "Decision: ", "insight": "Insight: "}.get(n.category, "")
        self.add(f"# {title}{n.label}")
        self.add(self.prose(r.randint(1, 3)))
        per_section = max(1, math.ceil(len(inline_links) / max(1, len(n.headings) - 1)))
        for i, heading in enumerate(n.headings):
            self.heading(heading)
            chunk, inline_links = inline_links[:per_section], inline_links[per_section:]
            if heading in ("Follow-ups", "Current Work", "Key Points", "Evidence"):
                self.add(self.tasks(chunk) if heading == "Follow-ups" else self.nested_list(chunk))
            elif heading == "People" and n.kind == "project" and r.random() < 0.3:
                self.add(self.table([e for e in self.relink if e.kind == "person"][:4]))
                self.add(self.prose(1, chunk))
            elif heading == "Key Files & Locations":
                self.add(
                    f"- Repo: `acme/{n.slug}`\n- Local: `~/src/{n.slug}`\n"
                    f"- Branch: `feat/{r.choice(DOMAINS)}`" + "".join(f"\n- {c}" for c in chunk)
                )
            else:
                self.add(self.prose(r.randint(1, 4), chunk))
            if i == 1:
                self.extras()
        if r.random() < 0.05 and n.linkable_headings:
            self.count()
            self.add(f"Back to [[#{r.choice(n.linkable_headings)}]] for the short version.")
        if r.random() < 0.02 and self.relink:
            self.heading("See also")  # written by a person: no markers, never touched
            self.add("\n".join(f"- {self.link(e, 'slug')}" for e in self.relink[:3]))
        self.filler()
        while self.pending_blocks:
            self.add(self.prose(1))
        body = "\n\n".join(self.blocks) + "\n"
        if footer:
            body += "\n" + self.footer(footer)
        return self.frontmatter() + "\n" + body

    def footer(self, entities: list[Note]) -> str:
        n, r = self.note, self.r
        stems = [e.stem for e in entities]
        if self.relink and r.random() < 0.01:
            stems.append(self.relink[0].stem)  # already linked inline: the footer is stale
            self.g.manifest["stale_footers"].append({"path": n.path, "extra": self.relink[0].stem})
        self.count(len(stems))
        items = "\n".join(f"- [[{s}]]" for s in stems)
        if r.random() < 0.01:
            self.g.manifest["legacy_footers"].append(n.path)
            return f"{LEGACY_FOOTER_MARKER}\n## See also\n{items}\n"
        return f"{FOOTER_START}\n## See also\n{items}\n{FOOTER_END}\n"

    def tasks(self, links: list[str]) -> str:
        lines = []
        for link in links or [""]:
            done = self.r.random() < 0.4
            due = self.g.some_day(60).isoformat()
            lines.append(f"- [{'x' if done else ' '}] {self.words(3, 8)} {link} (due: {due})".replace("  ", " "))
        return "\n".join(lines)

    def daily(self) -> str:
        n, r = self.note, self.r
        people, projects = self.g.popular("person"), self.g.popular("project")
        others = [k for k in ("decision", "insight", "research", "archive") if self.g.by_kind.get(k)]
        self.add(f"# {n.stem} ({n.day.strftime('%A')})")
        per = max(1, n.size // max(1, len(n.headings)))
        for heading in n.headings:
            self.heading(heading)
            stop = self.size + per
            first = True
            while self.size < stop or first:
                first = False
                targets = people(r.randint(0, 2)) + projects(r.randint(0, 1))
                if others and r.random() < 0.3:
                    targets.append(r.choice(self.g.by_kind[r.choice(others)]))
                roll = r.random()
                if roll < 0.55:
                    self.add(self.nested_list(self.links_for(targets)))
                elif roll < 0.62:
                    self.add(self.tasks(self.links_for(targets)))
                else:
                    self.add(self.prose(r.randint(1, 4), self.links_for(targets)))
                if r.random() < 0.08:
                    self.extras()
        return "\n\n".join(self.blocks) + "\n"

    def archive(self) -> str:
        n, r = self.note, self.r
        fm = ""
        if r.random() < 0.8:
            kind = "decision" if n.path.startswith("archive/decisions/") else "project"
            fm = (
                f"---\nid: {kind}-{n.slug}\ncategory: {kind}\ntype: {TYPE_OF_KIND[kind]}\n"
                f"status: archived\nlast_updated: {n.day.isoformat()}T12:00:00Z\n---\n\n"
            )
        self.relink = self.g.popular("person")(2) + self.g.popular("project")(1)
        self.add(f"# {n.label}")
        for heading in n.headings:
            self.heading(heading)
            self.add(self.prose(r.randint(2, 5), self.links_for([r.choice(self.relink)])))
        self.extras()
        self.filler()
        return fm + "\n\n".join(self.blocks) + "\n"

    def top(self) -> str:
        n, r, g = self.note, self.r, self.g
        self.add(f"# {n.label}")
        self.add(self.prose(2))
        lists = {
            "Projects": g.by_kind.get("project", [])[:40],
            "People": g.by_kind.get("person", [])[:30],
            "Recent Decisions": g.by_kind.get("decision", [])[-20:],
            "Queue": g.by_kind.get("research", [])[:30],
            "Done": g.by_kind.get("research", [])[30:50],
        }
        for heading in n.headings:
            self.heading(heading)
            if heading in lists:
                self.add("\n".join(f"- {self.link(t, 'label')}" for t in lists[heading]) or "- none yet")
            elif heading == "Links":
                self.add(
                    self.prose(1) + "\n\n```markdown\nMet with [[Alice Smith]] about Q3.\n"
                    "[[alice-smith|Alice Smith]] resolves; [[Alice Smith]] does not.\n```"
                )
                g.manifest["code_links"].append({"path": n.path, "target": "Alice Smith"})
                g.manifest["code_links"].append({"path": n.path, "target": "alice-smith|Alice Smith"})
            elif heading == "Footers":
                self.add("```\n" + FOOTER_START + "\n## See also\n- [[example-note]]\n" + FOOTER_END + "\n```")
                g.manifest["code_links"].append({"path": n.path, "target": "example-note"})
            elif heading == "Terms":
                self.add(
                    "| Term | Meaning |\n| --- | --- |\n"
                    + "\n".join(f"| {w} | {self.words(4, 9)} |" for w in r.sample(TECH_TERMS, 12))
                )
            else:
                self.add(self.prose(r.randint(2, 5)))
        if len(g.by_kind.get("top", [])) > 1 and n is not g.by_kind["top"][0]:
            self.add("Back to " + self.link(g.by_kind["top"][0], "slug"))
        return "\n\n".join(self.blocks) + "\n"


# --- attachments ---------------------------------------------------------------------------------


def tiny_png(rng: random.Random) -> bytes:
    """An 8x8 single-colour PNG, built by hand (deterministic bytes)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    colour = bytes(rng.randrange(256) for _ in range(3))
    raw = b"".join(b"\x00" + colour * 8 for _ in range(8))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def tiny_svg(rng: random.Random, name: str) -> bytes:
    x, y, rad = rng.randrange(10, 50), rng.randrange(10, 50), rng.randrange(5, 20)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">'
        f'<title>{name}</title><rect width="64" height="64" fill="#eee"/>'
        f'<circle cx="{x}" cy="{y}" r="{rad}" fill="#36c"/></svg>\n'
    ).encode()


# --- entry point ---------------------------------------------------------------------------------


def generate(out: Path, notes: int = 10_000, seed: int = 7) -> dict:
    """Write a vault of `notes` markdown notes into `out`; return the manifest."""
    gen = Generator(notes, seed)
    gen.plan()
    gen.render_all()
    manifest = gen.manifest_dict()
    gen.files[MANIFEST_NAME] = (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()
    gen.write(out)
    return manifest


def prepare_out_dir(out: Path, force: bool) -> None:
    """Refuse to write into a folder with other content; --force replaces an earlier bench vault."""
    if not out.exists():
        return
    if not out.is_dir():
        raise SystemExit(f"make_vault: {out} exists and is not a folder")
    if not any(out.iterdir()):
        return
    if not force:
        raise SystemExit(
            f"make_vault: {out} is not empty; pick a new folder or pass --force to replace a vault this script generated"
        )
    if not (out / MANIFEST_NAME).is_file():
        raise SystemExit(
            f"make_vault: {out} has no {MANIFEST_NAME}, so it was not generated here; refusing to delete it even with --force"
        )
    shutil.rmtree(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, metavar="OUT_DIR", help="folder to create the vault in")
    p.add_argument("--notes", type=int, default=10_000, help="markdown notes to write (default 10000)")
    p.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    p.add_argument("--force", action="store_true", help="replace OUT_DIR if it holds a vault generated by this script")
    args = p.parse_args(argv)
    if args.notes < 20:
        p.error("--notes must be at least 20")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    prepare_out_dir(args.out, args.force)
    start = time.perf_counter()
    m = generate(args.out, args.notes, args.seed)
    took = time.perf_counter() - start
    broken = len(m["broken_links"])
    print(
        f"{m['notes']} notes, {m['attachments']} attachments, "
        f"{m['markdown_bytes'] / 1e6:.1f} MB markdown, {m['links']} links "
        f"({broken} broken, {len(m['label_links'])} label-form, {len(m['drift'])} drift) "
        f"in {took:.1f} s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
