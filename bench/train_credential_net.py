"""Fit the credential net (palinode_vault/memory/extraction/credential_net.py) on labelled secrets.

Every conversation of the given sets is cut into messages the way the extraction pass reads it;
each word gets the net's features (its shape and its context in the conversation), and a word is
(but plain words of prose, which the net never judges) labelled a secret when it overlaps the case's labelled `secret` where that string stands in a
message. Conversations written from secret forms (`generated`) join every fit, never the
measure: the cross-validation judges only the held-out real set. A logistic regression (L2, plain gradient descent from zero: the same data gives the
same weights; the secret words weighted up to a tenth of the rest together, they are rare) is
fitted on all of them, and before that each set is held out in turn and judged by weights fitted
on the others. The cross-validation reports, at each threshold: how many labelled secrets the
net alone withholds whole, how many leak past every layer (provider rules, value rules, the net),
and how many words that are no secret it withholds per conversation (in conversations with no
secret too: words a memory may need). The threshold written is the lowest among those where
the cross-validated net leaks fewest that withholds at most MAX_WRONG words that are no secret
per conversation (one word lost in five conversations): a leak is worse than a lost word.

    python bench/train_credential_net.py [--sets cases,heldout,...] [--l2 1.0] [--out FILE] [--cv-only]

The weights go to palinode_vault/memory/extraction/credential_net.json with the sets (and their
sha256) they came from and the cross-validation. Only a set the net has not seen measures it.
A refit ships only when tests/test_memory_secret_forms.py passes with it: plain values said in
credential talk must stay (session 24's fit on 55 sets withheld a colour code and was put back,
so the shipped weights are trained on fewer sets than DEFAULT_SETS lists).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
from train_judge import DEFAULT_SETS  # every development set, listed once (this script's folder is on the path)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVAL = HERE / "extraction-eval"
L2 = 1.0
STEPS = 3000
#: Real notes that hold no secret (the Obsidian Help vault in every language), for the last
#: check's operating point: every tenth note is read.
REAL_NOTES = ROOT.parent / "shared" / "corpora" / "obsidian-help-all"
TEXT_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
#: Conversations written from secret forms (`generated`) added to every fit.
GENERATED = 400
RATE = 2.0
#: Words withheld that are no secret, per conversation, the threshold may cost at most.
MAX_WRONG = 0.2
THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def conversations(set_names: list[str]) -> list[dict]:
    """Each case as its messages, the word rows of the net and the labels."""
    from palinode_vault.memory.extraction.transcript import parse_transcript

    raw = [
        {
            "set": name,
            "case": case["id"],
            "messages": [(t.role, t.content) for t in parse_transcript(case["transcript"])],
            "secret": case.get("secret") or "",
        }
        for name in set_names
        for case in json.loads((EVAL / f"{name}.json").read_text())
    ]
    return [labelled(c) for c in raw]


def labelled(case: dict) -> dict:
    """`case` with the net's rows (eligible words only) and their labels."""
    from palinode_vault.memory.extraction.credential_net import eligible, features

    messages, secret = case["messages"], case["secret"]
    rows, labels = [], []
    for m, words in enumerate(features(messages)):
        text = messages[m][1]
        spans = []
        at = text.find(secret) if secret else -1
        while at >= 0:
            spans.append((at, at + len(secret)))
            at = text.find(secret, at + 1)
        for w, x in words:
            if not eligible(x):
                continue  # prose the net never judges
            rows.append(x)
            labels.append(1.0 if any(w.start < e and s < w.end for s, e in spans) else 0.0)
    return {**case, "x": rows, "y": labels}


def text_threshold(w: np.ndarray, root: Path) -> tuple[float, dict]:
    """The lowest threshold at which the net flags no more of `root`'s notes (every tenth, read
    paragraph by paragraph, as the last check reads a text) than the value rules alone do: a false
    alarm there refuses a note, so the net may add catches but not refusals."""
    from palinode_vault.memory.extraction import secrets
    from palinode_vault.memory.extraction.credential_net import Net

    net = Net(tuple(float(v) for v in w), 0.5)
    paths = sorted(root.rglob("*.md"))[::10]
    rules = 0
    peaks = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        rules += bool(secrets.find_secrets(text, net=False))
        _, parts = secrets.paragraphs(text)
        peaks.append(max((p for rows in net.scores(parts) for _, p in rows), default=0.0))
    flagged = {str(t): sum(p >= t for p in peaks) for t in TEXT_THRESHOLDS}
    highest = next((t for t in TEXT_THRESHOLDS if flagged[str(t)] <= rules), TEXT_THRESHOLDS[-1])
    return highest, {"notes": len(paths), "value_rules_flag": rules, "net_flags_at": flagged}


def generated(count: int = GENERATED, seed: int = 11) -> list[dict]:
    """Conversations written from secret forms, not from any set: a made-up value (letters, digits
    and symbols mixed; digits only; digits said as words; printed groups) said after a credential
    phrase of cue_words/credentials.toml, in the same message or the speaker's next one, beside
    prose that holds dates, times, versions, counts, percentages and colours (which are no secret);
    and a quarter of them credential talk with no value, whose dates and counts are its only
    made-up-looking words (a reset "on 2026-03-14", a rotation "at 9:40")."""
    import random
    import string

    from palinode_vault.memory.extraction.credential_net import vocabulary

    rng = random.Random(seed)
    talks = [" ".join(p) for p in vocabulary().credentials]
    spoken = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "zero", "oh"]

    def value() -> str:
        kind = rng.randrange(5)
        if kind == 0:
            return "".join(rng.choice(string.ascii_letters + string.digits + "!#$%&*+-.") for _ in range(rng.randint(8, 16)))
        if kind == 1:
            return "".join(rng.choice(string.digits) for _ in range(rng.randint(3, 8)))
        if kind == 2:
            return " ".join(rng.choice(spoken) for _ in range(rng.randint(4, 6)))
        if kind == 3:
            return " ".join(
                "".join(rng.choice("bcdfghjklmnpqrstvwxz0123456789") for _ in range(4)) for _ in range(rng.randint(3, 4))
            )
        return rng.choice(["Brisa", "Tejo", "Harbor", "Quay"]) + rng.choice("!#$-.") + str(rng.randint(10, 9999))

    def plain() -> str:
        """A date, time, version, count, ordinal, year, percentage or colour: no secret."""
        day, month = rng.randint(1, 28), rng.randint(1, 12)
        return rng.choice(
            [
                f"{rng.randint(2019, 2031)}-{month:02d}-{day:02d}",
                f"{day:02d}/{month:02d}",
                f"{rng.randint(0, 23)}:{rng.choice(['00', '15', '30', '40', '45'])}",
                f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}",
                f"{rng.randint(0, 9)}.{rng.randint(0, 30)}",
                str(rng.randint(2, 60)),
                f"{day}{'st' if day in (1, 21) else 'nd' if day in (2, 22) else 'rd' if day in (3, 23) else 'th'}",
                str(rng.randint(1990, 2031)),
                f"{rng.randint(1, 100)}%",
                f"{rng.randint(2, 48)}-hour",
                "#" + "".join(rng.choice("0123456789ABCDEF") for _ in range(6)),
            ]
        )

    units = ["", " people", " min", " days", " times"]
    before = ["on", "at", "for", "since", "by", "in", "after", "from", "until"]
    cases = []
    for n in range(count):
        talk, secret = rng.choice(talks), value()
        copula = rng.choice(["is", "was", ":", "=", "it's", "->", "is now"])
        note = f"{rng.choice(before)} {plain()}{rng.choice(units)}"
        shape = rng.random()
        if shape < 0.45:
            messages = [("user", f"ok {talk} {copula} {secret} {note}, thanks"), ("assistant", "Got it.")]
        elif shape < 0.75:
            messages = [("user", f"i'll send {talk} {note}"), ("assistant", "Sure."), ("user", f"{secret}")]
        else:  # talk of a credential with no value at all: its dates, times and counts are no secret
            secret = ""
            verb = rng.choice(["we reset", "they changed", "i rotated", "she updated", "we set up", "he asked for"])
            messages = [("user", f"{verb} {talk} {note} after the audit"), ("assistant", "Noted.")]
        cases.append({"set": "generated", "case": f"g{n}", "messages": messages, "secret": secret})
    return cases


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weighted logistic regression, L2 on every weight but the bias (the last feature)."""
    w = np.zeros(x.shape[1])
    positives = max(1.0, y.sum())
    weight = np.where(y > 0, max(1.0, 0.1 * (len(y) - positives) / positives), 1.0)
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    total = weight.sum()
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        w -= RATE * (x.T @ (weight * (p - y)) + penalty * w) / total
    return w


def leaked(case: dict, w: np.ndarray, threshold: float) -> bool:
    """Whether the case's secret is still in the text the model would see, past every layer
    (provider rules, value rules, the net with weights `w`)."""
    from palinode_vault.memory.extraction import secrets
    from palinode_vault.memory.extraction.credential_net import Net

    net = Net(tuple(float(v) for v in w), threshold)
    return any(case["secret"] in text for text, _ in secrets.redact_conversation(case["messages"], net))


def evaluate(cases: list[dict], probs: list[np.ndarray], weights: list[np.ndarray]) -> dict[str, dict]:
    """At each threshold, what the held-out weights did (see the module docstring)."""
    out = {}
    for t in THRESHOLDS:
        whole = leaks = wrong = wrong_clean = 0
        for case, p, w in zip(cases, probs, weights):
            y = np.array(case["y"])
            wrong_here = int(((p >= t) & (y == 0)).sum())
            wrong += wrong_here
            if not case["secret"]:
                wrong_clean += wrong_here
                continue
            whole += bool(((p >= t) | (y == 0)).all())
            leaks += leaked(case, w, t)
        secret_cases = sum(1 for c in cases if c["secret"])
        out[str(t)] = {
            "secrets": secret_cases,
            "net_alone_whole": whole,
            "leaked_past_every_layer": leaks,
            "words_withheld_not_secret_per_conversation": round(wrong / len(cases), 2),
            "in_conversations_without_secret": round(wrong_clean / max(1, sum(1 for c in cases if not c["secret"])), 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS)
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--out", type=Path, default=ROOT / "palinode_vault/memory/extraction/credential_net.json")
    parser.add_argument("--cv-only", action="store_true")
    parser.add_argument("--real-notes", type=Path, default=REAL_NOTES, help="a vault with no secrets, for text_threshold")
    args = parser.parse_args(argv)
    from palinode_vault.memory.extraction.credential_net import NAMES

    names = args.sets.split(",")
    cases = conversations(names)
    extra = [labelled(c) for c in generated()]
    held: list[np.ndarray] = []
    fitted: list[np.ndarray] = []
    for name in names:
        train = [c for c in cases if c["set"] != name] + extra
        w = fit(np.array([r for c in train for r in c["x"]]), np.array([v for c in train for v in c["y"]]), args.l2)
        for c in cases:
            if c["set"] == name:
                held.append(1.0 / (1.0 + np.exp(-np.clip(np.array(c["x"]).reshape(-1, len(NAMES)) @ w, -30, 30))))
                fitted.append(w)
    order = [c for name in names for c in cases if c["set"] == name]
    cv = evaluate(order, held, fitted)
    fewest = min(v["leaked_past_every_layer"] for v in cv.values())
    affordable = [float(t) for t, v in cv.items() if v["words_withheld_not_secret_per_conversation"] <= MAX_WRONG]
    threshold = min([t for t in affordable if cv[str(t)]["leaked_past_every_layer"] == fewest] or affordable or [0.5])
    print(json.dumps({"cross_validation": cv, "threshold": threshold}, indent=1))
    if args.cv_only:
        return 0
    everything = cases + extra
    w = fit(np.array([r for c in everything for r in c["x"]]), np.array([v for c in everything for v in c["y"]]), args.l2)
    text_at, real = (0.9, {"absent": str(args.real_notes)})
    if args.real_notes.is_dir():
        text_at, real = text_threshold(w, args.real_notes)
    data = {
        "about": "credential net weights; written by bench/train_credential_net.py, read by credential_net.py",
        "features": list(NAMES),
        "weights": [round(float(v), 5) for v in w],
        "threshold": threshold,
        "text_threshold": text_at,
        "real_notes": real,
        "l2": args.l2,
        "trained_on": {n: hashlib.sha256((EVAL / f"{n}.json").read_bytes()).hexdigest()[:16] for n in names},
        "generated": GENERATED,
        "words": {"secret": int(sum(sum(c["y"]) for c in everything)), "all": sum(len(c["y"]) for c in everything)},
        "cross_validation": cv,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
