"""One YAML case file per detector (tests/detectors/cases/<CODE>.yaml), run by one parametrised test.

A case gives series (built from small declarative generators below), optional
console text and run status, optional ``run_params``/``tags``/``environment``, baseline runs
(``baselines``: a list of run specs), CI evidence (``ci``: a CIContext dict) and
claims text (``claims``), and what must (``fires``) or must not fire. Every
registered detector must have a case file with at least one firing and one
quiet case: a new detector without cases fails ``test_every_detector_has_cases``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from mlaudit_core import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus, Settings
from mlaudit_core.audit import run_detectors
from mlaudit_core.detectors import registry

CASES = Path(__file__).parent / "cases"


def build(spec: dict) -> np.ndarray:
    """Values from a generator spec: values / const / linear / decay, joined with ``then``, ``at`` overrides."""
    rng = np.random.default_rng(spec.get("seed", 0))
    if "values" in spec:
        v = np.array([float(x) for x in spec["values"]])
    elif "const" in spec:
        v = np.full(int(spec["n"]), float(spec["const"]))
    elif "linear" in spec:
        v = np.linspace(float(spec["linear"][0]), float(spec["linear"][1]), int(spec["n"]))
    elif "decay" in spec:
        start, end = (float(x) for x in spec["decay"])
        n = int(spec["n"])
        tau = float(spec.get("tau", 0.2)) * n
        v = end + (start - end) * np.exp(-np.arange(n) / tau)
    else:
        raise ValueError(f"unknown series spec {spec}")
    if spec.get("noise"):
        v = v * (1 + float(spec["noise"]) * rng.standard_normal(v.size))
    if "then" in spec:
        v = np.concatenate([v, build(spec["then"])])
    for idx, val in (spec.get("at") or {}).items():
        v[int(idx)] = float(val)
    return v


def make_run(case: dict) -> RunData:
    from datetime import datetime, timezone

    keys, steps, values, walls = [], [], [], []
    for key, spec in (case.get("metrics") or {}).items():
        v = build(spec)
        if "steps" in spec:
            st = np.array(spec["steps"], dtype=np.int64)
        else:
            every = int(spec.get("every", 1))
            st = np.arange(1, v.size + 1, dtype=np.int64) * every
        keys += [key] * v.size
        steps.append(st)
        values.append(v)
        # wall times: 1000 s + cumulative gaps from a generator spec (default: unknown)
        walls.append(
            1000.0 + np.cumsum(build(spec["wall_gaps"]))
            if "wall_gaps" in spec
            else np.full(v.size, np.nan)
        )
    table = MetricTable(
        keys,
        np.concatenate(steps) if steps else [],
        np.concatenate(values) if values else [],
        np.concatenate(walls) if walls else [],
    )
    console = [
        ConsoleLine("console.log", i, t)
        for i, t in enumerate((case.get("console") or "").splitlines(), 1)
    ]
    run = RunData(
        RunIdentity("test", case["name"]),
        status=RunStatus(case.get("status", "finished")),
        metrics=table,
        console=console,
    )
    # inputs beyond one run: run params/tags/environment, baseline runs, CI evidence, claims text
    for attr, key in (("params", "run_params"), ("tags", "tags"), ("environment", "environment")):
        getattr(run, attr).update({str(k): str(v) for k, v in (case.get(key) or {}).items()})
    for attr in ("start_time", "end_time"):  # epoch seconds
        if attr in case:
            setattr(run, attr, datetime.fromtimestamp(float(case[attr]), tz=timezone.utc))
    if case.get("baselines"):
        from mlaudit_core.baseline import attach_baselines

        attach_baselines(
            run,
            [
                make_run({"name": f"{case['name']}-baseline{i}", **b})
                for i, b in enumerate(case["baselines"])
            ],
        )
    if case.get("ci"):
        from mlaudit_core.ci import CIContext, attach_context

        attach_context(run, CIContext.from_dict(case["ci"]))
    if case.get("claims"):
        from mlaudit_core.claims import attach_claims

        attach_claims(run, case["claims"])
    return run


def all_cases():
    for path in sorted(CASES.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for case in doc["cases"]:
            yield pytest.param(doc["code"], case, id=f"{doc['code']}-{case['name']}")


@pytest.mark.parametrize("code,case", list(all_cases()))
def test_detector_case(code, case):
    run = make_run(case)
    settings = Settings(select=[code], detectors={code: case.get("params", {})})
    findings, runs = run_detectors(run, settings)
    status = {r.code: r for r in runs}[code]
    assert status.status != "errored", status.reason
    mine = [f for f in findings if f.code == code]
    if case.get("skipped"):
        assert status.status == "skipped", f"expected a skip, got {status}"
        return
    if case["fires"]:
        assert mine, f"{code} did not fire on {case['name']} ({status.status}: {status.reason})"
        f = mine[0]
        if "severity" in case:
            assert f.severity.value == case["severity"], f.message
        for k, v in (case.get("facts") or {}).items():
            got = f.facts[k]
            if isinstance(v, float):
                assert got == pytest.approx(v, rel=0.05, abs=1e-9), (k, got)
            else:
                assert got == v, (k, got)
        for text in case.get("message_has", []):
            assert text in f.message, (text, f.message)
        assert f.evidence, "a finding must carry evidence"
    else:
        assert not mine, f"{code} fired on {case['name']}: {mine[0].message}"


def test_every_detector_has_cases():
    covered = {}
    for path in CASES.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        fires = {bool(c.get("fires")) for c in doc["cases"] if not c.get("skipped")}
        covered[doc["code"]] = fires
    missing = [c for c in registry() if covered.get(c) != {True, False}]
    assert not missing, f"detectors without a firing and a quiet case file: {missing}"
