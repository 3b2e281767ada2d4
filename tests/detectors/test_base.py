"""The detector contract (mlaudit_core/detectors/base.py), enumerated over every registered
detector: what a detector carries itself (its documentation, its cases, the next actions it
recommends, how it marks a plot), so that the engine (narrative, renderers) only iterates.

A detector that lacks its documentation fails here (its cases: test_detector_cases.py's
test_every_detector_has_cases); a remedy without what it tells
apart or without a cost fails here; a new ``if code == ...`` outside a detector's own module fails
the ratchet below.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mlaudit_core.detectors import registry
from mlaudit_core.detectors.base import Detector, PlotMark, Remedy
from mlaudit_core.report import Finding, Outcome, Severity

ROOT = Path(__file__).resolve().parents[2]


def test_every_detector_documents_why_and_remedy():
    """The docstring is the documentation (`mlaudit rule CODE`): a summary line, why it matters
    and its remedy."""
    bad = []
    for code, cls in registry().items():
        doc = cls.doc()
        if not cls.summary() or "why it matters" not in doc.lower() or "remedy" not in doc.lower():
            bad.append(code)
    assert not bad, (
        f"detectors without summary / 'Why it matters' / 'Remedy' in their docstring: {bad}"
    )


def test_remedies_say_what_they_tell_apart_and_what_they_cost():
    n = 0
    for code, cls in registry().items():
        rem = [*cls.remedies, *cls.correctness_remedies] + (
            [cls.crash_remedy] if cls.crash_remedy else []
        )
        for r in rem:
            n += 1
            assert isinstance(r, Remedy) and r.action.strip() and r.why.strip(), code
            assert r.cost in ("minutes", "hours", "days"), (code, r.cost)
        costs = [("minutes", "hours", "days").index(r.cost) for r in cls.remedies]
        assert costs == sorted(costs), f"{code}: remedies not cheapest first"
    assert n >= 17, "the systems, label and crash-signature detectors carry their remedies"


def test_the_narrative_takes_a_detectors_remedies_from_the_detector():
    """The first actions of a report whose primary finding is SY002 are SY002's own remedies."""
    from mlaudit_core.verdict.narrative import _remedies

    sy002 = registry()["SY002"]
    assert _remedies("SY002") == [(r.action, r.why, r.cost) for r in sy002.remedies]
    assert _remedies("XX999") == []


def test_plot_marks_come_from_the_detector():
    """A detector answers how its finding marks a plot: a list, or None to draw its evidence."""
    op001 = registry()["OP001"]
    f = Finding(
        code="OP001",
        name=op001.name,
        severity=Severity.ERROR,
        message="m",
        facts={"onset_step": 120},
    )
    marks = op001.plot_marks(f)
    assert marks == [
        PlotMark(
            "vline",
            "OP001 divergence (step 120)",
            "divergence",
            (120,),
            note="OP001: divergence from step 120",
        )
    ]
    assert op001.plot_marks(f.model_copy(update={"facts": {}})) is None
    assert Detector.plot_marks(f) is None


#: ``code ==`` / ``code != ...`` / ``code in (...)`` / ``code not in (...)`` decisions outside the
#: detectors' own modules, per file: the knowledge to move into the detectors. None is left; a new
#: one fails.
CODE_CHAINS: dict[str, int] = {}
_CHAIN = re.compile(r"\bcode\s*(?:==|!=|in|not\s+in)\s*[(\[{\"']")
_CODE = re.compile(r"^[A-Z]{2,3}\d{3}$")
#: Tables keyed by detector code outside the detectors' own modules (a dict with a code as a key,
#: a tuple, list or set of two codes or more), per file. A decision table's row naming the
#: findings it reads (an argument of a call: ``Rule(..., codes=("LI001", "OP001"))``) is the
#: table's own knowledge and is not counted; ``live/detectors.py`` is the live detectors' module
#: (its table defines their codes).
CODE_TABLES = {"mlaudit_core/live/detectors.py": 1}


def _code_tables(source: str) -> int:
    """Code-keyed tables in ``source``, outside call arguments."""
    tree = ast.parse(source)
    in_call = {
        id(a)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        for a in [*n.args, *(k.value for k in n.keywords)]
    }
    n = 0
    for node in ast.walk(tree):
        if id(node) in in_call:
            continue
        if isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        else:
            continue
        codes = [e for e in items if isinstance(e, ast.Constant) and _CODE.match(str(e.value))]
        n += bool(codes) if isinstance(node, ast.Dict) else len(codes) >= 2
    return n


def _outside_the_detectors():
    for path in sorted((ROOT / "mlaudit_core").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith("mlaudit_core/detectors/"):
            yield rel, path.read_text(encoding="utf-8")


def test_no_new_code_chain_outside_the_detectors():
    found = {}
    for rel, source in _outside_the_detectors():
        n = len(_CHAIN.findall(source))
        if n:
            found[rel] = n
    over = {k: (v, CODE_CHAINS.get(k, 0)) for k, v in found.items() if v > CODE_CHAINS.get(k, 0)}
    assert not over, f"new `code ==` decisions outside a detector module (found, allowed): {over}"
    assert "mlaudit_core/render/plots.py" not in found, "plot marks are the detectors' (plot_marks)"


def test_the_chain_count_sees_every_comparison_with_a_code():
    for line in (
        'if f.code == "CI002":',
        'if f.code != "BL003":',
        'if f.code in ("RT001", "RT002"):',
        'if f.code not in ["RT001"]:',
        'if f.code in {"RT001"}:',
    ):
        assert len(_CHAIN.findall(line)) == 1, line
    assert not _CHAIN.findall("if f.code in CODES:")


def test_no_new_code_keyed_table_outside_the_detectors():
    found = {rel: n for rel, source in _outside_the_detectors() if (n := _code_tables(source))}
    over = {k: (v, CODE_TABLES.get(k, 0)) for k, v in found.items() if v > CODE_TABLES.get(k, 0)}
    assert not over, f"new code-keyed tables outside a detector module (found, allowed): {over}"


def test_the_table_count_sees_a_code_keyed_table():
    assert _code_tables('IMPLIES = {"OP001": "diverged"}\n') == 1
    assert _code_tables('CRASH = ("RT001", "RT002")\n') == 1
    assert _code_tables('Rule("V01", codes=("RT001", "RT002"))\n') == 0
    assert _code_tables('x = ("RT001", "other")\n') == 0


def test_the_crash_remedy_of_an_oom_follows_its_code_path():
    """RT001 chooses its first action from where the allocation failed."""
    rt001 = registry()["RT001"]
    f = Finding(code="RT001", name=rt001.name, severity=Severity.ERROR, message="m")
    ev = rt001.crash_remedy_for(f.model_copy(update={"facts": {"code_path": "evaluation"}}))
    tr = rt001.crash_remedy_for(f.model_copy(update={"facts": {"code_path": "training"}}))
    assert ev is not None and "evaluation peak memory" in ev.action
    assert tr is not None and tr.action.startswith("Halve the micro-batch")
    assert registry()["RT007"].crash_remedy_for(f) is registry()["RT007"].crash_remedy


def test_a_reset_counter_gets_its_detectors_correctness_remedies_and_no_generic_actions():
    """LI002 as the primary finding of a correctness bug: the report's first actions are LI002's
    correctness remedies, and no generic action of the outcome (the curves are two runs)."""
    from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, RunStatus
    from mlaudit_core.verdict import decide
    from mlaudit_core.verdict.narrative import _ACTIONS

    li002 = registry()["LI002"]
    run = RunData(
        identity=RunIdentity(tracker="test", id="reset"),
        status=RunStatus.FINISHED,
        metrics=MetricTable(["loss"] * 6, [1, 2, 3, 1, 2, 3], [2.0, 1.5, 1.2, 1.1, 1.0, 0.9]),
    )
    f = Finding(code="LI002", name=li002.name, severity=Severity.ERROR, message="LI002 fired")
    rep = decide(run, [f], [])
    assert (rep.verdict.outcome.value, rep.verdict.cause.value) == ("unstable", "correctness_bug")
    acts = [a.action for a in rep.next_actions]
    assert acts[:2] == [r.action for r in li002.correctness_remedies], acts
    generic = {a for a, _, _ in _ACTIONS.get(rep.verdict.outcome, [])}
    assert not generic & set(acts), acts


def test_the_ledger_takes_a_primary_findings_hypotheses_from_its_detector():
    """RT001 adds its two hypotheses to a crash only; LI002 to anything but a crash."""
    from mlaudit_core.report import Outcome

    rt001, li002 = registry()["RT001"], registry()["LI002"]
    oom = Finding(
        code="RT001",
        name=rt001.name,
        severity=Severity.ERROR,
        message="OOM",
        facts={"code_path": "evaluation"},
    )
    hs = rt001.hypotheses(oom, Outcome.CRASHED)
    assert hs is not None and [h.status for h in hs] == ["supported", "rejected"]
    assert rt001.hypotheses(oom, Outcome.DIVERGED) is None
    reset = Finding(code="LI002", name=li002.name, severity=Severity.ERROR, message="reset")
    assert li002.hypotheses(reset, Outcome.CRASHED) is None
    assert [h.status for h in li002.hypotheses(reset, Outcome.UNSTABLE) or []] == [
        "supported",
        "open",
    ]
    assert registry()["LI003"].hypotheses(reset, Outcome.UNSTABLE) == li002.hypotheses(
        reset, Outcome.UNSTABLE
    )


def _finding(code: str, severity: Severity = Severity.INFO, **facts) -> Finding:
    det = registry()[code]
    return Finding(code=code, name=det.name, severity=severity, message=f"{code} m", facts=facts)


def test_surprising_facts_come_from_the_detectors_in_rank_order():
    """OP002 (benign spike) before GE001 (calibration), both before the curves' facts; OP005's
    early-zero learning rate after them; a finding whose detector has nothing to say adds nothing."""
    from mlaudit_core.verdict.narrative import finding_surprises

    fs = [
        _finding("OP005", early_zero_step=40),
        _finding("GE001", kind="calibration"),
        _finding("OP002"),
        _finding("OP002", Severity.WARNING),
        _finding("LI001"),
    ]
    assert finding_surprises(fs, after_curves=False) == ["benign: OP002 m", "calibration: GE001 m"]
    assert finding_surprises(fs, after_curves=True) == ["OP005 m"]
    assert finding_surprises([_finding("CI006", Severity.WARNING)]) == ["CI006 m"]


def test_a_ci_reports_answers_come_from_its_findings_detectors():
    """CI002 gives a calculation and its checks as passing / failing, CI005 a failing row and its
    failing gates, the claims detectors their claims and what they say of them."""
    reg = registry()
    check = {"kind": "allclose", "path": "t.py", "line": 3, "expr": "e", "active": True}
    ci002 = _finding(
        "CI002",
        Severity.ERROR,
        metric="loss",
        checks=[dict(check, passed=True), dict(check, passed=False), dict(check, passed=None)],
    )
    ans = reg["CI002"].ci_answers(ci002)
    assert [len(ans[k]) for k in ("calculations", "passing", "failing")] == [1, 1, 1]
    assert reg["CI002"].failing_gates(ci002) == [("loss", dict(check, passed=False))]
    ci005 = _finding("CI005", Severity.ERROR, checks=[{"expr": "t < 5", "path": "t.py"}])
    assert reg["CI005"].ci_answers(ci005)["failing"][0]["metric"] == "CI005"
    assert reg["CI005"].failing_gates(ci005) == [("t < 5", {"expr": "t < 5", "path": "t.py"})]
    assert [reg[c].claim_status for c in ("CL001", "CL002", "CL003")] == [
        "contradicted",
        "unverifiable",
        "supported",
    ]
    assert Detector.ci_answers(ci002) == {} and Detector.claim_status is None


def _carries_remedies(cls: type[Detector]) -> bool:
    return bool(cls.remedies or cls.correctness_remedies or cls.crash_remedy) or any(
        getattr(cls, m).__func__ is not getattr(Detector, m).__func__
        for m in ("remedies_for", "crash_remedy_for")
    )


def _carries_hypotheses(cls: type[Detector]) -> bool:
    return cls.hypotheses.__func__ is not Detector.hypotheses.__func__  # type: ignore[attr-defined]


#: Detectors that do not carry their remedies / their hypotheses yet: the knowledge still to write
#: into them (issue 29 item 1). A detector added without them fails; one that gains them must
#: leave this list (the test fails until it does), so the lists only shrink.
LACKS_REMEDIES: frozenset[str] = frozenset()
LACKS_HYPOTHESES: frozenset[str] = frozenset()


def test_every_detector_carries_its_remedies_and_hypotheses():
    """Enumerates every registered detector: each carries its remedies (next actions with cost and
    what each tells apart, checked above) and its hypotheses (``Detector.hypotheses``), or is one
    of today's known gaps; a gap that is filled must leave the list."""
    reg = registry()
    no_rem = {c for c, cls in reg.items() if not _carries_remedies(cls)}
    no_hyp = {c for c, cls in reg.items() if not _carries_hypotheses(cls)}
    assert not no_rem - LACKS_REMEDIES, (
        f"detectors without remedies: {sorted(no_rem - LACKS_REMEDIES)}"
    )
    assert not no_hyp - LACKS_HYPOTHESES, (
        f"detectors without hypotheses: {sorted(no_hyp - LACKS_HYPOTHESES)}"
    )
    filled = (LACKS_REMEDIES - no_rem) | (LACKS_HYPOTHESES - no_hyp)
    assert not filled, f"carry their remedies/hypotheses now (or are gone): {sorted(filled)}"


def test_the_remedy_and_hypothesis_checks_see_a_detector_without_them():
    """The enumeration above can fail: a detector class with no remedies and no hypotheses is
    seen as lacking both, one with them as carrying both."""
    bare = type("Bare", (Detector,), {"__doc__": "x"})
    assert not _carries_remedies(bare) and not _carries_hypotheses(bare)
    rt001 = registry()["RT001"]
    assert _carries_remedies(rt001) and _carries_hypotheses(rt001)


def test_what_a_detector_tells_the_verdict_is_one_of_its_values():
    outcomes = {o.value for o in Outcome} | {"degraded"}
    for code, det in registry().items():
        assert det.implies is None or det.implies in outcomes, code
        assert det.slow_rank is None or det.family == "systems", code
        assert not det.supersedable_crash or det.family == "runtime", code
    ranks = [d.slow_rank for d in registry().values() if d.slow_rank is not None]
    assert len(ranks) == len(set(ranks)) >= 4


def test_a_signal_stop_is_a_traceback_stopped_from_outside():
    rt005 = registry()["RT005"]

    def tb(exc: str, msg: str) -> Finding:
        facts = {"exception_type": exc, "exception_message": msg}
        return Finding(
            code="RT005", name="python-traceback", severity=Severity.ERROR, message="", facts=facts
        )

    assert rt005.stopped_from_outside(tb("KeyboardInterrupt", ""))
    assert rt005.stopped_from_outside(tb("RuntimeError", "Process 3 got signal: 15"))
    assert not rt005.stopped_from_outside(tb("RuntimeError", "shape mismatch"))
    assert registry()["RT010"].stopped_from_outside(tb("", ""))
    assert not Detector.stopped_from_outside(tb("KeyboardInterrupt", ""))
