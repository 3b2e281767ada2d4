"""The verdict policy table (mlaudit_core.verdict.policy.POLICY), enumerated: every rule's own cases.

Each case is a small finding set plus run facts (status, series, params, console, loader notes);
it is turned into a real :class:`RunData` and a real context (evidence assessment included), and
the rule must give the case's verdict, or not fire where the case says ``None``. A second test
runs the same cases through the whole policy (all rules in precedence order) wherever the case's
rule is the first that should match, so a reordering that shadows a rule fails here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, DetectorRun, Finding, Outcome, Severity
from mlaudit_core.rundata import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus
from mlaudit_core.verdict import POLICY, build_context, decide, table_markdown
from mlaudit_core.verdict.policy import first_match

CASES = [(rule, case) for rule in POLICY for case in rule.cases]


def make_run(case) -> RunData:
    keys, steps, values = [], [], []
    for k, vals in case.series.items():
        keys += [k] * len(vals)
        steps += list(range(len(vals)))
        values += list(vals)
    run = RunData(
        identity=RunIdentity(tracker="test", id=case.name),
        status=RunStatus(case.status),
        params=dict(case.params),
        metrics=MetricTable(keys, steps, values) if keys else MetricTable.empty(),
        console=[ConsoleLine("train.log", i + 1, t) for i, t in enumerate(case.console)],
        notes=list(case.notes),
    )
    return run


def make_findings(case) -> list[Finding]:
    from mlaudit_core.detectors import registry

    reg = registry()
    out = []
    for code, sev, facts in case.findings:
        cls = reg.get(code)
        out.append(
            Finding(
                code=code,
                name=cls.name if cls else code,
                severity=Severity(sev),
                message=f"{code} fired",
                facts=dict(facts),
                family=cls.family if cls else "",
            )
        )
    return out


def det_runs(run: RunData) -> list[DetectorRun]:
    """The learning detectors as having run when a learning series with >= 3 points exists."""
    long = any(np.isfinite(run.metrics.series(k).values).sum() >= 3 for k in run.metrics.keys)
    return [DetectorRun(code="OP003", name="loss-plateau", status="ran" if long else "skipped")]


def test_table_is_well_formed():
    ids = [r.id for r in POLICY]
    assert len(ids) == len(set(ids)), "rule ids are unique"
    prec = [r.precedence for r in POLICY]
    assert prec == sorted(prec) and len(set(prec)) == len(prec), "precedence is strictly increasing"
    for r in POLICY:
        assert r.needs and r.outcomes and r.causes, r.id
        assert r.cases, f"rule {r.id} has no case"
        assert any(c.expect for c in r.cases), f"rule {r.id} has no case where it fires"
        for c in r.cases:
            if c.expect:
                assert Outcome(c.expect[0]) in r.outcomes, (r.id, c.name)
    assert POLICY[-1].name == "healthy" and POLICY[-2].name == "no-judgeable-signal"
    md = table_markdown()
    assert all(f"| {r.id} | {r.name} |" in md for r in POLICY)


@pytest.mark.parametrize("rule,case", CASES, ids=[f"{r.id}-{c.name}" for r, c in CASES])
def test_rule_case(rule, case):
    run = make_run(case)
    findings = make_findings(case)
    ctx = build_context(run, findings, det_runs(run))
    d = rule.apply(ctx)
    got = None if d is None else (d.outcome.value, d.cause.value)
    assert got == case.expect, d.summary if d else "rule did not fire"
    if d is not None:
        assert d.rule == rule.id and d.summary


@pytest.mark.parametrize(
    "rule,case",
    [(r, c) for r, c in CASES if c.expect],
    ids=[f"{r.id}-{c.name}" for r, c in CASES if c.expect],
)
def test_case_through_the_whole_policy(rule, case):
    """The case's verdict holds through every rule in order, unless an earlier rule's own evidence
    in the same case fires first (then that rule must be earlier in the table)."""
    run = make_run(case)
    findings = make_findings(case)
    ctx = build_context(run, findings, det_runs(run))
    d = first_match(ctx)
    earlier = {r.id for r in POLICY if r.precedence < rule.precedence}
    if d.rule != rule.id:
        assert d.rule in earlier, (d.rule, d.summary)
    else:
        assert (d.outcome.value, d.cause.value) == case.expect


def test_unknown_never_succeeded_and_says_what_to_log():
    """hp_metric only / one point per metric: the report abstains, names what is missing, and the
    first next actions say what to log; confidence is 0."""
    for series in ({"hp_metric": (0.5,)}, {"loss": (0.3,), "val_loss": (0.4,)}, {}):
        run = RunData(
            identity=RunIdentity(tracker="test", id="x"),
            status=RunStatus.FINISHED,
            metrics=MetricTable(
                [k for k, v in series.items() for _ in v],
                [0 for v in series.values() for _ in v],
                [x for v in series.values() for x in v],
            )
            if series
            else MetricTable.empty(),
        )
        rep = decide(run, [], [])
        assert rep.verdict.outcome is Outcome.UNKNOWN, rep.verdict.summary
        assert rep.verdict.confidence == 0.0 and rep.verdict.rule == "V20"
        assert rep.unknowns[0].startswith("verdict: not judged")
        assert "Log the" in rep.next_actions[0].action


def test_float64_lr3_nan_from_step_one_is_the_learning_rate_not_precision():
    """Issue 14: a float64 numpy run with lr=3.0, NaN from step 1, is diverged/model_convergence and
    the advice never says 'check the precision setting'."""
    from mlaudit_core.audit import audit

    vals = [float("nan")] * 40
    run = RunData(
        identity=RunIdentity(tracker="test", id="np"),
        status=RunStatus.FINISHED,
        params={"lr": "3.0", "dtype": "float64", "optimizer": "sgd"},
        metrics=MetricTable(["loss"] * 40, list(range(1, 41)), vals),
    )
    rep = audit(run)
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == (
        "diverged",
        "model_convergence",
    ), rep.verdict.summary
    assert not any("precision" in a.action.lower() for a in rep.next_actions)


def test_no_lr_raise_when_lr_is_already_high():
    """An underfit run at lr 0.05 with Adam (50x typical): never 'raise the learning rate'."""
    from mlaudit_core.audit import audit

    n = 60
    vals = [2.30 - 0.001 * i + 0.01 * ((-1) ** i) for i in range(n)]
    run = RunData(
        identity=RunIdentity(tracker="test", id="u"),
        status=RunStatus.FINISHED,
        params={"learning_rate": "0.05", "optimizer": "Adam"},
        metrics=MetricTable(["loss"] * n, list(range(n)), vals),
    )
    rep = audit(run)
    assert rep.verdict.outcome.value in ("underfit", "plateaued"), rep.verdict.summary
    acts = " ".join(a.action for a in rep.next_actions)
    assert "Raise the learning rate" not in acts and "higher LR" not in acts
    assert "Do not raise the learning rate" in acts


def test_docs_index_holds_the_current_policy_table():
    """docs/index.md shows the table generated from POLICY (regenerate with
    ``python -c "from mlaudit_core.verdict import table_markdown; print(table_markdown())"``)."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "index.md").read_text()
    assert table_markdown() in doc


def test_schema_1_0_reports_still_parse():
    """A 1.0 report (no unknown outcome, no verdict.rule/basis) reads with the 1.1 model."""
    from mlaudit_core.report import AuditReport

    old = {
        "schema_version": "1.0",
        "tool_version": "0.0.9",
        "run": {"tracker": "mlflow", "id": "abc"},
        "verdict": {
            "outcome": "succeeded",
            "cause": "healthy",
            "confidence": 0.75,
            "summary": "ok",
            "inconclusive": False,
        },
    }
    r = AuditReport.model_validate(old)
    assert r.verdict.rule is None and r.verdict.basis is None and r.schema_version == "1.0"


RUNS = Path(__file__).parent / "data" / "realworld" / "runs"
REPORTS = Path(__file__).parent / "data" / "reports"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def _report_run(prefix: str):
    from mlaudit_core.evidence import collect

    case = next(REPORTS.glob(f"{prefix}-*"))
    return collect(
        None,
        sorted(case.glob("*.log")),
        config=sorted(case.glob("*.txt")),
        name=case.name,
        value_files=False,
    ).run


def test_nan_from_a_window_that_starts_late_is_not_broken_before_any_update():
    """b6-04: darkflow lines 'step 1655 - loss nan' every step, on a CPU (no reduced precision): the
    1654 updates before the paste are not in the data, so the learning rate is the first suspect."""
    rep = audit(_report_run("b6-04"))
    assert (rep.verdict.outcome, rep.verdict.cause) == (
        Outcome.DIVERGED,
        Cause.MODEL_CONVERGENCE,
    ), rep.verdict.summary
    assert "1655" in rep.verdict.summary


def test_nan_from_the_first_logging_interval_stays_broken_inputs():
    """tb05: Lightning logs every 50 steps; NaN from its first point (step 49) is the start of the run."""
    run = _run(RUNS / "Debajyoti2004--Brain_tumor_disease/lightning_logs/version_3")
    rep = audit(run)
    assert (rep.verdict.outcome, rep.verdict.cause) == (Outcome.DIVERGED, Cause.DATA_CONFIG), (
        rep.verdict.summary
    )


def test_a_loss_that_rose_from_its_first_value_and_stayed_is_diverged_not_underfit():
    """own ts23: QLoRA at learning rate 5, loss 1.637 -> 11.8 at step 2 -> exactly 10.3735 (ln 32000)
    for the rest of its 10 steps. It got worse from the start: diverged, not 'barely learned'."""
    rep = audit(_run(RUNS / "poludmik--qlora-fine-tune/output/trainer_state.json"))
    assert rep.verdict.outcome is Outcome.DIVERGED, rep.verdict.summary
    assert any(f.code == "OP001" and f.facts.get("rose_from_start") for f in rep.findings)
