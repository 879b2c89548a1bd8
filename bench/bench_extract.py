"""Extraction benchmark: the labelled set in bench/extraction-eval/ against sample-vault/.

For each model (the default smollm2, and any GGUF given with --model): schema-valid output (must
be 100%), secrets leaked (must be 0), precision and recall of filed items, NOOP rate on repeated
facts, seconds per pass; and apart from those, the items sent to inbox/ for review (how many, how
many are right, how many come from conversations that deserve nothing, recall counting them). Every pass is a dry run on a fresh copy of the sample vault; what would
be written (diffs, operation reasons) is what is checked for secrets and matched to labels.

    python bench/bench_extract.py [--model smollm2] [--model gemma3-270m] [--model /path/x.gguf]
                                  [--model-server URL --model NAME]
                                  [--cases cases.json|heldout.json] [--limit N] [--program FILE]
                                  [--cache DIR] [--json]

`cases.json` covers PROGRAM.md's cases, several of them close paraphrases of its own examples;
`heldout.json` is a smaller set written separately in other words, to see how far the rules carry.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FILED = {"ADD", "UPDATE", "SUPERSEDE"}


def indexed_template(tmp: Path) -> Path:
    """The sample vault with its search index built once (as the sidecar keeps it), so the update
    logic's NOOP/UPDATE/ADD decisions use the index's dedup like a real vault, not the keyword
    fallback. Each case gets a copy."""
    from palinode_vault.index import open_index, refresh
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    template = tmp / "template"
    shutil.copytree(ROOT / "sample-vault", template, ignore=shutil.ignore_patterns(".palinode"))
    index = open_index(template)
    try:
        refresh(index, Vault(Settings(vault=template)))
    finally:
        index.close()
    return template


class CachedAnswers:
    """The model's answers kept on disk, by prompt: the code's rules after the model can be
    re-measured on the very same answers in seconds (decoding is greedy, so a prompt has one
    answer). A prompt not in the cache goes to the model and is added."""

    def __init__(self, generator, directory: Path, spec: str):
        self.generator, self.dir = generator, directory / hashlib.sha256(spec.encode()).hexdigest()[:12]
        self.dir.mkdir(parents=True, exist_ok=True)
        self.hits = self.misses = 0

    def generate_json(self, system: str, user: str, schema: dict, max_tokens: int = 512):
        key = hashlib.sha256(json.dumps([system, user, schema, max_tokens], sort_keys=True).encode()).hexdigest()
        path = self.dir / f"{key}.json"
        if path.is_file():
            self.hits += 1
            answer, finish = json.loads(path.read_text())
            return answer, finish
        self.misses += 1
        answer, finish = self.generator.generate_json(system, user, schema, max_tokens)
        path.write_text(json.dumps([answer, finish]))
        return answer, finish

    def close(self) -> None:
        self.generator.close()


def _leaks(secret: str, written: str) -> bool:
    """The secret, or two of its words in a row ("orchard velvet" of a four-word passphrase), in any
    letter case and with any punctuation between them, in what a pass would write."""
    said, out = re.findall(r"[a-z0-9]+", secret.lower()), " " + " ".join(re.findall(r"[a-z0-9]+", written.lower())) + " "
    pieces = [said] if len(said) < 2 else [said[i : i + 2] for i in range(len(said) - 1)]
    return any(f" {' '.join(p)} " in out for p in pieces)


def _match(outcome, diffs: dict[str, str], expected: list[dict], any_type: bool = False) -> int | None:
    """The index of the expected memory `outcome` is: its type agrees (an ActionItem is an UPDATE
    of a person/project file, or a follow-up waiting in inbox/) and one keyword is in its diff.
    `any_type`: the keyword alone (how often the right words come out under another type)."""
    diff = diffs.get(outcome.path or "", "").lower()
    for i, exp in enumerate(expected):
        type_ok = (
            any_type
            or exp["type"] == outcome.type
            or exp["type"] == "ActionItem"
            and (outcome.op == "UPDATE" or outcome.op == "INBOX" and "follow-up:" in diff)
        )
        if type_ok and any(k.lower() in diff for k in exp["keywords"]):
            return i
    return None


def _superseded(label: str, outcomes, diffs: dict[str, str]) -> bool:
    """The decision a case says is replaced (`supersedes`: its vault path) was retired by the pass:
    archived, or marked superseded in its own file."""
    if any(o.op in ("ARCHIVE", "SUPERSEDE") and o.path == label for o in outcomes):
        return True
    added = "\n".join(line for line in diffs.get(label, "").splitlines() if line.startswith("+"))
    return "superseded_by" in added or "status: archived" in added


def _supersession_proposed(label: str, outcomes, diffs: dict[str, str], key: str = "review_supersedes") -> bool:
    """A decision waiting in inbox/ that names the labelled decision as the one approving it retires
    (`review_supersedes`), or, with `key="review_may_supersede"`, as the one approving it asks
    about (the person says whether it replaces it)."""
    for o in outcomes:
        if o.op == "INBOX" and o.type == "Decision":
            added = [line for line in diffs.get(o.path or "", "").splitlines() if line.startswith(f"+{key}:")]
            if any(label in line for line in added):
                return True
    return False


def _asked(outcomes, diffs: dict[str, str]) -> list[list[str]]:
    """Per outcome, the decisions it asks whether it replaces (`review_may_supersede` of a decision
    waiting in inbox/; empty for every other outcome)."""
    out = []
    for o in outcomes:
        named: list[str] = []
        if o.op == "INBOX" and o.type == "Decision":
            for line in diffs.get(o.path or "", "").splitlines():
                if line.startswith("+review_may_supersede:"):
                    named += re.findall(r"decisions/[^\s,\]\"']+\.md", line)
        out.append(named)
    return out


def _asked_wrongly(label: str | None, outcomes, diffs: dict[str, str]) -> int:
    """Decisions a decision waiting in inbox/ asks whether it replaces, other than the labelled one:
    no harm by themselves (the person answers), but a question the person should not have had."""
    return len({p for named in _asked(outcomes, diffs) for p in named} - {label})


def _wrong_supersessions(label: str | None, outcomes, diffs: dict[str, str]) -> int:
    """Decisions the pass retired, or that a decision waiting in inbox/ would retire on approval,
    other than the one the case labels (`supersedes`; none on most cases): harm, not recall."""
    named: set[str] = set()
    for o in outcomes:
        if o.op == "ARCHIVE" and o.type == "Decision" and (o.path or "").startswith("decisions/"):  # the retired note
            named.add(o.path or "")
        if o.op == "INBOX" and o.type == "Decision":
            for line in diffs.get(o.path or "", "").splitlines():
                if line.startswith("+review_supersedes:"):
                    named.update(re.findall(r"decisions/[^\s,\]\"']+\.md", line))
    for path, diff in diffs.items():
        added = "\n".join(line for line in diff.splitlines() if line.startswith("+"))
        if path.startswith("decisions/") and ("superseded_by: " in added and 'superseded_by: ""' not in added):
            named.add(path)
    return len(named - {label})


def _words_only(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "


def _pasted_proposed(pasted: list[str], diffs: dict[str, str]) -> bool:
    """A piece of pasted, quoted or injected text (`pasted`) in a line the pass would add to a note,
    active or waiting in inbox/: taken for the person's own words."""
    return bool(_pasted_taken(pasted, diffs))


PASTED_SENTENCE_WORDS = 5  # a sentence of a pasted piece this long, found alone, was taken


def _pasted_taken(pasted: list[str], diffs: dict[str, str]) -> list[str]:
    """The pieces of `pasted` found in the pass's added lines (see `_pasted_proposed`): the whole
    piece, or one of its sentences of `PASTED_SENTENCE_WORDS` words or more (a labelled line often
    holds two sentences, and a statement is one of them: until session 32 only whole pieces counted,
    and a pasted sentence taken alone went uncounted)."""
    added = _words_only("\n".join(line[1:] for d in diffs.values() for line in d.splitlines() if line.startswith("+")))

    def parts(piece: str) -> list[str]:
        sentences = [_words_only(s) for s in re.split(r"(?<=[.!?])\s+", piece)]
        return [_words_only(piece)] + [s for s in sentences if len(s.split()) >= PASTED_SENTENCE_WORDS]

    return [piece for piece in pasted if _words_only(piece).strip() and any(p in added for p in parts(piece))]


def _name_collisions(vault_dir: Path, diffs: dict[str, str]) -> int:
    """New notes of a pass (dry run: `diffs` by path) whose file name another note already has,
    anywhere in the vault (links resolve by name), or another new note of the pass."""
    names: dict[str, int] = {}
    for path in vault_dir.rglob("*.md"):
        if ".palinode" not in path.parts:
            names[path.stem.lower()] = names.get(path.stem.lower(), 0) + 1
    new = [p for p in diffs if p.endswith(".md") and not (vault_dir / p).exists()]
    for p in new:
        names[Path(p).stem.lower()] = names.get(Path(p).stem.lower(), 0) + 1
    return sum(names[Path(p).stem.lower()] > 1 for p in new if not Path(p).stem.endswith("-history"))


def run_model(
    spec: str,
    cases: list[dict],
    with_index: bool = True,
    program: Path | None = None,
    cache: Path | None = None,
    server: str | None = None,
) -> dict:
    from palinode_vault.memory.extraction.extract import extract_text, load_generator
    from palinode_vault.settings import Settings
    from palinode_vault.vault import Vault

    if server:  # an OpenAI-compatible chat server; `spec` is its name for the model
        from palinode_vault.models.chat_server import ChatServerGenerator

        gen = ChatServerGenerator(server, model=None if spec == "smollm2" else spec)  # None: the first it lists
        spec = gen.model_id
    else:
        gen = load_generator(spec)
    if cache is not None:
        gen = CachedAnswers(gen, cache, spec)
    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    valid = leaked = filed_total = filed_ok = expected_total = expected_found = 0
    review_total = review_ok = review_on_never = found_with_review = found_any_type = 0
    false_alarms = 0  # conversations without a secret where one was withheld
    collisions = superseded = 0  # new notes named like another note; supersessions
    supersede_cases = supersede_right = 0  # cases labelled `supersedes`, and those where that note was retired
    supersede_proposed = 0  # ... and those where a decision waiting in inbox/ would retire it on approval
    supersede_wrong = 0  # decisions retired or proposed for retirement that no case labels
    supersede_asked = asked_wrong = 0  # cases where review asks about the labelled decision; questions about others
    pasted_cases = pasted_taken = 0  # cases labelled `pasted`, and those where pasted text was filed or proposed
    repeats = repeats_noop = 0
    model_passes = retried = 0
    seconds: list[float] = []
    rows = []
    similarity = set()
    pasted_read = set()  # how each pass read pasted text (the provenance score, or by shape and why)
    with tempfile.TemporaryDirectory() as tmp:
        source = indexed_template(Path(tmp)) if with_index else ROOT / "sample-vault"
        for case in cases:
            vault_dir = Path(tmp) / case["id"]
            shutil.copytree(
                source,
                vault_dir,
                ignore=shutil.ignore_patterns("journal", "undone", "sidecar.json")
                if with_index
                else shutil.ignore_patterns(".palinode"),
            )
            if program is not None:  # the vault's own PROGRAM.md wins over the shipped one
                shutil.copyfile(program, vault_dir / "PROGRAM.md")
            v = Vault(Settings(vault=vault_dir, now=now.date()))
            v.load()
            r = extract_text(v, case["transcript"], generator=gen, source=case["id"], dry_run=True, now=now)
            seconds.append(r.seconds)
            similarity.add(r.similarity.split(" (")[0])
            pasted_read.add(r.pasted.split(" (")[0])
            model_passes += int(r.attempts > 0)
            retried += int(r.attempts > 1)
            valid += int(r.schema_valid)
            written = "".join(r.diffs.values()) + json.dumps([o.to_json() for o in r.outcomes])
            if case.get("secret") and _leaks(case["secret"], written):
                leaked += 1
            false_alarms += int(not case.get("secret") and r.withheld_secrets > 0)
            collisions += _name_collisions(vault_dir, r.diffs)
            superseded += sum(o.op == "SUPERSEDE" for o in r.outcomes)
            supersede_wrong += _wrong_supersessions(case.get("supersedes"), r.outcomes, r.diffs)
            asked_wrong += _asked_wrongly(case.get("supersedes"), r.outcomes, r.diffs)
            if case.get("supersedes"):
                supersede_cases += 1
                supersede_right += int(_superseded(case["supersedes"], r.outcomes, r.diffs))
                supersede_proposed += int(_supersession_proposed(case["supersedes"], r.outcomes, r.diffs))
                supersede_asked += int(_supersession_proposed(case["supersedes"], r.outcomes, r.diffs, "review_may_supersede"))
            if case.get("pasted"):
                pasted_cases += 1
                pasted_taken += int(_pasted_proposed(case["pasted"], r.diffs))
            filed = [o for o in r.outcomes if o.op in FILED]
            matched_expected = set()
            for o in filed:
                hit = _match(o, r.diffs, case["expected"])
                filed_total += 1
                if hit is not None:
                    filed_ok += 1
                    matched_expected.add(hit)
            # inbox/ items wait for the person: counted apart, and on "never" cases they are work
            # the person must dismiss
            matched_with_review = set(matched_expected)
            any_type_hit = any(
                _match(o, r.diffs, case["expected"], any_type=True) is not None
                for o in r.outcomes
                if o.op in FILED or o.op == "INBOX"
            )
            for o in (o for o in r.outcomes if o.op == "INBOX"):
                hit = _match(o, r.diffs, case["expected"])
                review_total += 1
                review_on_never += int(not case["expected"])
                if hit is not None:
                    review_ok += 1
                    matched_with_review.add(hit)
            # a case lists alternatives (e.g. ProjectSnapshot or Insight): one match satisfies it
            if case["expected"]:
                expected_total += 1
                expected_found += int(bool(matched_expected))
                found_with_review += int(bool(matched_with_review))
                found_any_type += int(any_type_hit)
            if case.get("repeat"):
                repeats += 1
                repeats_noop += int(not filed)
            # the right words under another type: (expected types, the types they came out as)
            mistyped = (
                [
                    [e["type"] for e in case["expected"]],
                    sorted(
                        {
                            o.type
                            for o in r.outcomes
                            if (o.op in FILED or o.op == "INBOX")
                            and _match(o, r.diffs, case["expected"], any_type=True) is not None
                        }
                    ),
                ]
                if any_type_hit and len(matched_with_review) == 0
                else None
            )
            rows.append(
                {
                    "id": case["id"],
                    "mistyped": mistyped,
                    "ops": [(o.op, o.type, o.path) for o in r.outcomes],
                    # per outcome, the expected memory it is by the bench's count (its index), or None
                    "hits": [_match(o, r.diffs, case["expected"]) for o in r.outcomes],
                    "why": [o.reason for o in r.outcomes],
                    "asked": _asked(r.outcomes, r.diffs),
                    "valid": r.schema_valid,
                    "seconds": round(r.seconds, 2),
                    "dropped": len(r.dropped),
                    "withheld": r.withheld_secrets,
                    "pasted_taken": _pasted_taken(case.get("pasted") or [], r.diffs),
                }
            )
    gen.close()
    return {
        "model": spec,
        "cases": len(cases),
        "schema_valid": valid / len(cases),
        "secrets_leaked": leaked,
        "withheld_without_secret": false_alarms,
        "name_collisions": collisions,
        "supersessions": superseded,
        "supersessions_right": f"{supersede_right} of {supersede_cases}" if supersede_cases else None,
        "supersessions_proposed_for_review": f"{supersede_proposed} of {supersede_cases}" if supersede_cases else None,
        "supersessions_wrong": supersede_wrong,
        "supersessions_asked_in_review": f"{supersede_asked} of {supersede_cases}" if supersede_cases else None,
        "asked_about_another_decision": asked_wrong,
        "pasted_taken_as_the_persons": f"{pasted_taken} of {pasted_cases}" if pasted_cases else None,
        "filed": filed_total,
        "precision": (filed_ok / filed_total) if filed_total else None,
        "recall": expected_found / expected_total if expected_total else None,
        "noop_rate_on_repeats": repeats_noop / repeats if repeats else None,
        "review": review_total,
        "review_precision": (review_ok / review_total) if review_total else None,
        "review_on_never_cases": review_on_never,
        "recall_with_review": found_with_review / expected_total if expected_total else None,
        "recall_with_review_any_type": found_any_type / expected_total if expected_total else None,
        "model_passes": model_passes,
        "retried": retried,
        "seconds_per_pass_mean": statistics.mean(seconds),
        "seconds_per_pass_max": max(seconds),
        "similarity": sorted(similarity),
        "pasted_read": sorted(pasted_read),
        "cached_answers": f"{gen.hits} reused, {gen.misses} new" if cache is not None else "off",
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="smollm2 (default) or a GGUF path; repeatable")
    parser.add_argument(
        "--cases", default="cases.json", help="files in bench/extraction-eval/, comma-separated (cases.json, heldout.json)"
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-index", action="store_true", help="no search index: the keyword-similarity fallback")
    parser.add_argument("--program", type=Path, help="a PROGRAM.md to use instead of the shipped one (to try an edit)")
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep the model's answers here and reuse them (seconds per pass then measure the rules, not the model)",
    )
    parser.add_argument("--model-server", metavar="URL", help="an OpenAI-compatible chat server; --model names its model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases = [c for name in args.cases.split(",") for c in json.loads((HERE / "extraction-eval" / name).read_text())][: args.limit]
    models = args.model or ["smollm2"]
    print("command: python " + " ".join([sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    results = [run_model(m, cases, not args.no_index, args.program, args.cache, args.model_server) for m in models]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for res in results:
        for row in res["rows"]:
            print(f"  {row['id']:24} valid={row['valid']!s:5} {row['seconds']:6.2f}s dropped={row['dropped']} {row['ops']}")
        fmt = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
        print(
            f"{res['model']}: cases={res['cases']} schema_valid={res['schema_valid']:.0%} "
            f"secrets_leaked={res['secrets_leaked']} withheld_without_secret={res['withheld_without_secret']} "
            f"name_collisions={res['name_collisions']} supersessions={res['supersessions']} filed={res['filed']} precision={fmt(res['precision'])} "
            f"recall={fmt(res['recall'])} noop_rate_on_repeats={fmt(res['noop_rate_on_repeats'])} "
            f"review={res['review']} review_precision={fmt(res['review_precision'])} "
            f"review_on_never={res['review_on_never_cases']} recall_with_review={fmt(res['recall_with_review'])} "
            f"model_calls={res['model_passes']} retried={res['retried']} seconds_per_pass mean={res['seconds_per_pass_mean']:.2f} max={res['seconds_per_pass_max']:.2f} "
            f"similarity={'/'.join(res['similarity'])} cached_answers={res['cached_answers']}"
        )
    return 0 if all(r["schema_valid"] == 1.0 and r["secrets_leaked"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
