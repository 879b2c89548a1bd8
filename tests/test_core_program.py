"""PROGRAM.md's settings block: the search fusion keys and what older files without them mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from palinode_vault.core.program import ProgramError, parse_program

SHIPPED = (Path(__file__).resolve().parents[1] / "PROGRAM.md").read_text(encoding="utf-8")
FUSION = "  fusion: weighted              # weighted: scaled scores blended; rrf: reciprocal rank fusion\n"
WEIGHT = "  vector_weight: 0.7            # weighted fusion: share of meaning (vectors); the rest is keywords\n"


def test_shipped_program_fuses_by_weighted_scores():
    search = parse_program(SHIPPED).search
    assert (search.fusion, search.vector_weight, search.rrf_k) == ("weighted", 0.7, 60)


def test_a_program_older_than_weighted_fusion_keeps_reciprocal_ranks():
    assert FUSION in SHIPPED and WEIGHT in SHIPPED
    older = SHIPPED.replace(FUSION, "").replace(WEIGHT, "")
    search = parse_program(older).search
    assert search.fusion == "rrf" and search.vector_weight is None


@pytest.mark.parametrize(
    "change, message",
    [
        ((WEIGHT, ""), "needs vector_weight"),
        ((WEIGHT, "  vector_weight: 1.5\n"), "search.vector_weight"),
        ((FUSION, "  fusion: mean\n"), "search.fusion"),
    ],
)
def test_bad_fusion_settings_are_named(change, message):
    with pytest.raises(ProgramError, match=message) as caught:
        parse_program(SHIPPED.replace(*change), "vault/PROGRAM.md")
    assert str(caught.value).startswith("vault/PROGRAM.md:")
