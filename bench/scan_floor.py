#!/usr/bin/env python3
"""The floor for a cold `scan`: read each note, skip code, extract and resolve its links. No more.

    python bench/scan_floor.py VAULT            # prints notes, links, unresolved, CPU seconds

Issue 18 asks a cold `palinode-vault scan` of a real vault to stay within 1.5 times the CPU of
this script. It is deliberately plain (standard library, one process, one regex per construct)
and deliberately approximate: fenced code and inline code spans are skipped, `[[...]]`,
`![[...]]` and `[...](...)` are extracted, each target is resolved against the vault's files by
exact path or by name. It does not know about lists, quotes, tables, HTML, escapes, headings,
frontmatter or the rest of CommonMark, so its counts differ a little from `scan`'s; it is a
measure of what reading and linking the notes cannot avoid costing, not a parser.

Compare CPU (user + sys), not wall time: `scan` parses on every core.

    /usr/bin/time -f "%U user %S sys" python bench/scan_floor.py VAULT
    rm -rf VAULT/.palinode && /usr/bin/time -f "%U user %S sys" palinode-vault scan --vault VAULT --json
"""

from __future__ import annotations

import os
import re
import sys
import time

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
WIKI = re.compile(r"!?\[\[([^\[\]\n]+)\]\]")
MD = re.compile(r"!?\[[^\[\]\n]*\]\(([^()\s]+)\)")
EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def walk(root: str) -> list[str]:
    """Vault-relative paths of every file, skipping dot-files and dot-folders."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out.extend(prefix + f for f in files if not f.startswith("."))
    return out


def links_of(text: str) -> list[str]:
    """Link targets outside fenced code and code spans."""
    targets = []
    fence = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if "[" not in line:
            continue
        if "`" in line:
            line = CODE_SPAN.sub("", line)
        for w in WIKI.finditer(line):
            targets.append(w.group(1).split("|", 1)[0].split("#", 1)[0].strip())
        if "](" in line:
            for md in MD.finditer(line):
                href = md.group(1)
                if not EXTERNAL.match(href):
                    targets.append(href.split("#", 1)[0])
    return targets


def main(root: str) -> None:
    cpu0 = time.process_time()
    files = walk(root)
    by_path = {f.lower(): f for f in files}
    by_name: dict[str, list[str]] = {}
    for f in files:
        name = f.rsplit("/", 1)[-1].lower()
        by_name.setdefault(name, []).append(f)
        if name.endswith(".md"):
            by_name.setdefault(name[:-3], []).append(f)
    notes = [f for f in files if f.lower().endswith(".md")]
    n_links = unresolved = 0
    for rel in notes:
        with open(os.path.join(root, rel), "rb") as handle:
            text = handle.read().decode("utf-8").replace("\r\n", "\n")
        for target in links_of(text):
            n_links += 1
            if not target:
                continue  # a link inside the note itself
            key = target.lstrip("/").lower()
            if key in by_path or key + ".md" in by_path:
                continue
            if key.rsplit("/", 1)[-1] not in by_name:
                unresolved += 1
    cpu = time.process_time() - cpu0
    print(f"notes {len(notes)} links {n_links} unresolved {unresolved} cpu {cpu:.2f} s")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: scan_floor.py VAULT")
    main(sys.argv[1])
