"""The CI table (mlaudit_core.ci.classify.CI_RULES), enumerated: every row's own cases.

Each case is a small finding set plus context rows turned into real findings and a real
:class:`CIContext`; the row alone must give the case's verdict, or not fire where the case says
``None``. A second test runs each firing case through the whole table in precedence order, so a
reordering that shadows a row fails here. Real CI jobs go through the same table in
tests/test_ci_fixtures.py, tests/test_ci_follow.py and the tests/data/ci_real fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.ci.classify import CI_RULES, case_evidence, classify, first_match, table_markdown
from mlaudit_core.report import Outcome

CASES = [(rule, case) for rule in CI_RULES for case in rule.cases]


def test_table_is_well_formed():
    ids = [r.id for r in CI_RULES]
    assert len(ids) == len(set(ids)), "row ids are unique"
    prec = [r.precedence for r in CI_RULES]
    assert prec == sorted(prec) and len(set(prec)) == len(prec), "precedence is strictly increasing"
    for r in CI_RULES:
        assert r.needs and r.outcomes and r.causes, r.id
        assert any(c.expect for c in r.cases), f"row {r.id} has no case where it fires"
        for c in r.cases:
            if c.expect:
                assert Outcome(c.expect[0]) in r.outcomes, (r.id, c.name)
                assert c.expect[1] in {x.value for x in r.causes}, (r.id, c.name)
    assert CI_RULES[-1].id == "healthy"
    # every row but the last has a case where it must not fire
    assert all(any(c.expect is None for c in r.cases) for r in CI_RULES[:-1])


@pytest.mark.parametrize("rule,case", CASES, ids=[f"{r.id}-{c.name}" for r, c in CASES])
def test_row_case(rule, case):
    v = rule.apply(case_evidence(case))
    got = None if v is None else (v.outcome.value, v.cause.value)
    assert got == case.expect, v.summary if v else "row did not fire"
    if v is not None:
        assert v.rule == (rule.label or rule.id) and v.summary and 0 < v.confidence <= 1


@pytest.mark.parametrize(
    "rule,case",
    [(r, c) for r, c in CASES if c.expect],
    ids=[f"{r.id}-{c.name}" for r, c in CASES if c.expect],
)
def test_case_through_the_whole_table(rule, case):
    """The case's verdict holds through every row in order, unless an earlier row's own evidence
    in the same case fires first (then that row must be earlier in the table)."""
    v = first_match(case_evidence(case))
    by_label = {r.label or r.id: r for r in CI_RULES}
    if v.rule != (rule.label or rule.id):
        assert by_label[v.rule].precedence < rule.precedence, (v.rule, v.summary)
    else:
        assert (v.outcome.value, v.cause.value) == case.expect


def test_classify_adds_ledger_and_conclusions_to_the_row_verdict():
    """classify: the deciding row's verdict, its finding's message first among the conclusions,
    one hypothesis per alternative with exactly one supported for a regression."""
    rule = next(r for r in CI_RULES if r.id == "regression")
    e = case_evidence(rule.cases[0])
    v = classify([f for fs in e.by.values() for f in fs], e.ctx)
    assert v.rule == "regression" and v.conclusions[0] == "CI002 fired"
    status = {h.statement.split(":")[0]: h.status for h in v.hypotheses}
    assert status["model/convergence regression"] == "supported"
    assert status["test setup"] == "rejected"


def test_docs_ci_holds_the_current_table():
    """docs/ci.md shows the table generated from CI_RULES (regenerate with
    ``python -c "from mlaudit_core.ci.classify import table_markdown; print(table_markdown())"``)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "ci.md").read_text()
    assert table_markdown() in doc
