"""How many of the tokens the index embeds are markup rather than words, per kind of markup.

Every distinct chunk embedding text of a vault (what `chunk_note` gives the embedder: context
prefix and prose) is tokenised with the embedder's own tokenizer; then each kind of markup is
taken out in turn and the texts tokenised again. "Saves" is the drop in tokens embedded (at most
`max_tokens` a text: tokens past the window are never embedded, so removing them saves nothing).
MiniLM's WordPiece makes every punctuation mark a token of its own (`**` is two, a table rule
one per dash) and a URL about a dozen.

    .venv/bin/python bench/bench_tokens.py VAULT [VAULT ...]

Read-only: it reads the notes and writes nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: label -> (pattern, replacement) applied in order
MARKUP: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "emphasis marks (** __ == ~~ *x*)": [
        (re.compile(r"\*\*|__|==|~~"), ""),
        (re.compile(r"(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])"), ""),
    ],
    "markdown link targets ([x](url) -> x)": [
        (re.compile(r"!?\[([^\]\n]*)\]\((?:<[^>\n]*>|[^)\s]*)(?:\s+\"[^\"\n]*\")?\)"), r"\1")
    ],
    "bare URLs and autolinks": [(re.compile(r"<?https?://[^\s)>\]]+>?"), "")],
    "table rules (| --- | :-: |)": [(re.compile(r"^(?=[^\n]*\|)(?=[^\n]*-)[ \t|:-]+$", re.MULTILINE), "")],
    "table pipes": [(re.compile(r"^[ \t]*\|[ \t]*|[ \t]*\|[ \t]*$", re.MULTILINE), ""), (re.compile(r"[ \t]*\|[ \t]*"), " ")],
    "list marks and task boxes": [(re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX/-]\][ \t]*)?", re.MULTILINE), "")],
    "quote and callout marks": [
        (re.compile(r"^[ \t]*(?:>[ \t]?)+\[!(\w+)\][+-]?", re.MULTILINE), r"\1"),
        (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE), ""),
    ],
    "footnote marks [^x]": [(re.compile(r"\[\^[^\]\s]+\]:?"), "")],
    "HTML tags": [(re.compile(r"</?[A-Za-z][^>\n]*>"), "")],
    "%% and thematic breaks": [(re.compile(r"%%"), ""), (re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.MULTILINE), "")],
    "hashtag marks (#)": [(re.compile(r"(?<![\w#&])#(?=[^\s#\d])"), "")],
}


def embedding_texts(folder: Path) -> list[str]:
    """The distinct chunk embedding texts the index would embed for the notes under `folder`."""
    from palinode_vault.core.note import parse_note
    from palinode_vault.core.text import normalise, sha256_text
    from palinode_vault.index.chunks import chunk_note

    texts: dict[str, None] = {}
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if rel.parts[0] in (".obsidian", ".palinode", ".trash"):
            continue
        text, _ = normalise(path.read_text(encoding="utf-8", errors="replace"))
        for chunk in chunk_note(parse_note(rel.as_posix(), text, sha256_text(text)), text):
            if chunk.hash:
                texts[chunk.embed] = None
    return list(texts)


def report(name: str, texts: list[str], embedder) -> None:
    cap = embedder.max_tokens

    def count(text: str) -> int:
        return embedder.count_tokens(text)

    base = [count(t) for t in texts]
    embedded = sum(min(cap, n) for n in base)
    truncated = sum(n > cap for n in base)
    print(f"\n{name}: {len(texts)} texts, {sum(base)} tokens ({sum(base) / len(texts):.1f} a text), ", end="")
    print(f"{embedded} embedded (at most {cap} a text; {truncated} texts truncated)")
    prefix = sum(count(t.split("\n", 1)[0]) - 2 for t in texts)  # [CLS] and [SEP] are not the prefix's
    print(f"  context prefix (first line: folder, title, heading path): {prefix} tokens, {100 * prefix / embedded:.1f} %")
    every: list[tuple[re.Pattern[str], str]] = []
    for label, rules in MARKUP.items():
        new = [count(_apply(t, rules)) if any(rx.search(t) for rx, _ in rules) else n for t, n in zip(texts, base)]
        saved = embedded - sum(min(cap, n) for n in new)
        touched = sum(a != b for a, b in zip(base, new))
        print(f"  {label:<42} saves {saved:>9} = {100 * saved / embedded:5.2f} %  ({touched} texts)")
        every += rules
    new = [count(_apply(t, every)) for t in texts]
    saved = embedded - sum(min(cap, n) for n in new)
    print(f"  {'all of the above':<42} saves {saved:>9} = {100 * saved / embedded:5.2f} %")
    marks: Counter[str] = Counter()
    total = 0
    llama = embedder._llama
    for t in texts:
        for token in llama.tokenize(t.encode("utf-8", "replace"), add_bos=False, special=False)[: cap - 2]:
            total += 1
            piece = llama.detokenize([token]).decode("utf-8", "replace").strip()
            if not re.search(r"\w", piece):
                marks[piece] += 1
    share = sum(marks.values())
    top = ", ".join(f"{k!r} {100 * v / total:.1f} %" for k, v in marks.most_common(10))
    print(f"  punctuation-only tokens: {100 * share / total:.1f} % of content tokens; most common: {top}")


def _apply(text: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    for rx, replacement in rules:
        text = rx.sub(replacement, text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vaults", type=Path, nargs="+")
    args = parser.parse_args()

    from palinode_vault.models import Embedder

    embedder = Embedder(n_threads=1)
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    for folder in args.vaults:
        report(folder.name, embedding_texts(folder), embedder)


if __name__ == "__main__":
    main()
