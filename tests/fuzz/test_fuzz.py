"""Fuzzing the parser, the resolver and the fixer (issue 7, item 4).

Two engines on the same checks (targets.py): hypothesis here, with free text built from link
syntax fragments (tests/test_core_fix.py already covers whole templated vaults on disk), and
atheris (coverage-guided, libFuzzer). By default each target runs a fixed number of inputs
from a fixed seed, so every CI run checks the same inputs (a random run that finds a new bug
belongs on a developer's machine, not in someone else's CI); `PALINODE_FUZZ_SECONDS`
(`bench/reliability.py --long` gives each target minutes) runs for that long from a random
seed. Crashes are written to a temp folder and the test fails with the input's base64; inputs
found that way are kept in FOUND below and checked on every run.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import targets  # noqa: E402

HERE = Path(__file__).parent
FUZZ_SECONDS = int(os.environ.get("PALINODE_FUZZ_SECONDS", "0"))  # 0: fixed seed and run count
FUZZ_RUNS = 20_000

# Inputs atheris found in CI runs (base64), each a bug fixed in core/markdown.py.
FOUND = {
    "parser": [
        # a leading line of only "\r\x0c": markdown-it keeps it in the map, not in the content
        "DQwAAAAAAAAACltbYVx8Yl1dIHwgW1thXHxifCB8IFtbAAAAAAAAAABhXHxiFV1dkSB8IFsNCltbYVx8AAAAAAAAAD9iFV1dIHwgYyB8Yw==",
        # a tab-indented nested list: markdown-it expands the tab in the content
        "LSBpdGVtAISEhISEhISEhISEhISEhISEhISEhISEhIQACtbSIFtbdGVlc3RlZF1dCgAAAAAAAAAACQAgIC0gW1tuZXN0ZWRdXQpkXV0KICAtIFtbbmVzdGVkXV0K",
        # (the 300 s run, 2 December) a frontmatter link in a plain value folded over two lines:
        # YAML reads "[[a b]]", the file holds "[[a\n  b]]", and the link pointed at the key
        "LS0tCmkAAGQ6IHBlcnNv2ztbW1ugpKSkW1tbIC0g//8gdGVtCiAgLSX/XV2cW1tbol1dW1s7W1tbW1uiXV1bW1tbW1tbWyX/XV2cW1tbol1saebG5ubm5l0KLS0tCg==",
    ],
    "fixer": [
        # a label link whose shown text opens a %% comment: cross_refs were computed from the
        # body before the label rewrite put the slug's words in front of the comment
        "8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz81tbJSUlJSUlJSUlJSUlJSUlQWxpY2UgU21pdGhdXQAAAAA=",
    ],
}


@pytest.mark.parametrize("found", FOUND["parser"])
def test_inputs_atheris_found_stay_fixed(found):
    targets.check_parser(targets.text_from(base64.b64decode(found)))


@pytest.mark.parametrize("found", FOUND["fixer"])
def test_fixer_inputs_atheris_found_stay_fixed(found):
    targets.check_fixer(targets.SEEDS[0] + targets.text_from(base64.b64decode(found)))


# found by the hypothesis property below (texts after SEEDS[0])
FIXER_TEXTS = [
    # a code span opened before the footer and closed after it: removing the footer re-paired
    # the backticks, `[[code]]` became a link and the next fix changed cross_refs again
    "[[alice-smith]]`cross_refs: [project/checkout]\n<!-- palinode:see-also -->\n## See also\n- [[x]]\n"
    "<!-- /palinode:see-also -->\n`[[code]]`",
]


@pytest.mark.parametrize("text", FIXER_TEXTS)
def test_fixer_texts_hypothesis_found_stay_fixed(text):
    targets.check_fixer(targets.SEEDS[0] + text)


EXAMPLES = int(os.environ.get("PALINODE_FUZZ_EXAMPLES", "150"))

fragments = st.lists(
    st.one_of(
        st.sampled_from(targets.SEEDS),
        st.text(max_size=12),
        st.sampled_from(["\n", "\r", "[[", "]]", "|", "#", "^", "`", "---\n", "  - ", "> "]),
    ),
    max_size=25,
).map("".join)
relaxed = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


@relaxed
@given(fragments)
def test_parser_property(text):
    targets.check_parser(text)


@relaxed
@given(
    st.lists(
        st.sampled_from(
            [
                "people/a.md",
                "A.md",
                "x/y/a.md",
                "img.png",
                "a b.md",
                "Ünï.md",
                "a#b.md",
                "../a.md",
                "a.MD",
                "people/Alice Smith.md",
            ]
        ),
        max_size=6,
    ),
    st.text(max_size=20) | st.sampled_from(["a", "A", "a.md", "x/y/a", "../a", "/a", "#h", "", "people/", "img.png"]),
)
def test_resolver_property(files, target):
    targets.check_resolver(("\n".join(files) + "\n" + target).encode())


@relaxed
@given(fragments)
def test_fixer_property(text):
    targets.check_fixer(targets.SEEDS[0] + text)


@relaxed
@given(fragments, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_fixer_property_crlf_bom(text, newline, bom):
    raw = (targets.SEEDS[0] + text).replace("\r\n", "\n").replace("\n", newline)
    targets.check_fixer(("\ufeff" if bom else "") + raw)


@pytest.mark.parametrize("target", ["parser", "resolver", "fixer"])
def test_atheris(target, tmp_path):
    try:
        import atheris  # noqa: F401
    except ImportError:
        pytest.skip("atheris is not installed (pip install atheris; it needs Python < 3.13 and clang's libFuzzer)")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(targets.SEEDS):
        (corpus / f"seed-{i}").write_bytes(seed.encode())
    budget = [f"-max_total_time={FUZZ_SECONDS}"] if FUZZ_SECONDS else ["-seed=1", f"-runs={FUZZ_RUNS}"]
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / f"fuzz_{target}.py"),
            *budget,
            "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp_path}/",
            "-print_final_stats=1",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        timeout=FUZZ_SECONDS + 600,
        cwd=tmp_path,
    )
    crashes = sorted(tmp_path.glob("crash-*")) + sorted(tmp_path.glob("timeout-*")) + sorted(tmp_path.glob("oom-*"))
    if proc.returncode != 0 or crashes:
        found = [base64.b64encode(c.read_bytes()).decode() for c in crashes]
        pytest.fail(f"atheris found a failing input for {target} (base64): {found}\n{proc.stderr[-3000:]}")
    assert "Done" in proc.stderr, proc.stderr[-2000:]
