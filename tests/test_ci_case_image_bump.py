"""The shared CI case ``ci-golden-drift-after-image-bump`` (Megatron-LM golden drift after a container bump).

Inputs are copied unchanged from ``shared/cases`` into ``tests/data/cases``; the
audit runs through the real CLI and writes its JSON report into ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

CASE = Path(__file__).parent / "data" / "cases" / "ci-golden-drift-after-image-bump"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("ci-case") / "report.json"
    res = CliRunner().invoke(
        app,
        [
            "ci",
            "--repo",
            str(CASE),
            "--logs",
            str(CASE / "ci_failure.txt"),
            str(CASE / "artifact_refs.txt"),
            "--golden",
            str(CASE / "golden_vs_new_h100.csv"),
            "--format",
            "json",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def _one(report: dict, code: str, **match) -> dict:
    hits = [
        f
        for f in report["findings"]
        if f["code"] == code and all(f["facts"].get(k) == v for k, v in match.items())
    ]
    assert hits, f"no {code} finding with {match}"
    return hits[0]


def test_verdict_matches_ground_truth(report):
    expected = json.loads((CASE / "expected.json").read_text())
    assert report["verdict"]["cause"] == expected["cause"] == "metric_policy"
    assert report["verdict"]["outcome"] in expected["outcome_any_of"]


def test_lm_loss_relative_difference_far_inside_tolerance(report):
    f = _one(report, "CI002", metric="lm loss")
    assert 5e-6 < f["facts"]["max_rel"] < 2e-5  # ~1e-5 (step 41: 10.37226 vs 10.37237)
    approx = [c for c in f["facts"]["checks"] if c["kind"] == "approximate"][0]
    assert approx["rtol"] == 0.05 and approx["passed"] is True and approx["n_exceed"] == 0
    exact = [c for c in f["facts"]["checks"] if c["kind"] == "deterministic"][0]
    assert exact["passed"] is False and exact["n_exceed"] > 0
    assert approx["path"] == "thresholds.py.txt" and approx["line"] == 6


def test_num_zeros_inside_its_wider_tolerance(report):
    f = _one(report, "CI002", metric="num-zeros")
    assert 0.07 < f["facts"]["max_rel"] <= 0.08
    approx = [c for c in f["facts"]["checks"] if c["kind"] == "approximate"][0]
    assert approx["rtol"] == 0.2 and approx["passed"] is True


def test_exact_match_failed_while_tolerance_passes_is_drift(report):
    f = _one(report, "CI003")
    assert {m["metric"] for m in f["facts"]["metrics"]} == {"lm loss", "num-zeros"}
    assert "not a model regression" in f["message"]
    assert any(c["new"] and c["new"].startswith("26.04") for c in f["facts"]["env_changes"])
    hyps = {h["statement"].split(":")[0]: h["status"] for h in report["hypotheses"]}
    assert hyps["model/convergence regression"] == "rejected"
    assert (
        hyps["numerical drift from an environment change (image, library, hardware)"] == "supported"
    )


def test_recommends_refreshing_goldens_and_keeping_tolerance_gate(report):
    first = report["next_actions"][0]["action"].lower()
    assert "refresh the golden values" in first and "26.04" in first
    assert "keep the tolerance" in first


def test_notes_unchecked_iteration_time_rise(report):
    f = _one(report, "CI006", metric="iteration-time")
    assert 0.35 <= f["facts"]["median_rel_change"] <= 0.5  # "roughly 40%"
    assert "no active gate checks it" in f["message"]
    assert any("iteration-time" in a["action"] for a in report["next_actions"])


def test_must_not_call_it_a_model_regression(report):
    assert report["verdict"]["cause"] != "model_convergence"
    assert report["verdict"]["outcome"] != "regressed"
    assert not any(f["code"] == "CI002" and f["severity"] == "error" for f in report["findings"])


def test_evidence_cites_failure_line_and_gates(report):
    f = _one(report, "CI007")
    assert f["facts"]["failed_metrics"] == ["lm loss", "num-zeros"]
    assert any(e.get("source") == "ci_failure.txt" and e.get("line") == 6 for e in f["evidence"])
    gates = _one(report, "CI001")["facts"]["gates"]
    assert {(g["metric"], g["kind"]) for g in gates} >= {
        ("lm loss", "deterministic"),
        ("lm loss", "approximate"),
        ("num-zeros", "approximate"),
        ("iteration-time", "approximate"),
    }


def test_renders_as_markdown_and_html(tmp_path):
    for suffix in ("md", "html"):
        out = tmp_path / f"report.{suffix}"
        res = CliRunner().invoke(
            app,
            [
                "ci",
                "--repo",
                str(CASE),
                "--logs",
                str(CASE / "ci_failure.txt"),
                "--golden",
                str(CASE / "golden_vs_new_h100.csv"),
                "--format",
                "markdown",
                "--out",
                str(out),
            ],
        )
        assert res.exit_code == 0, res.output
        text = out.read_text()
        assert "metric_policy" in text and "lm loss" in text
