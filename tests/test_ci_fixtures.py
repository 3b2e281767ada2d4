"""Each CI failure class on a real fixture repository: golden-value tests run by a real pytest job.

The repository (tests/ci_fixture_repo.py) trains a numpy softmax regression,
records golden values, and its CI job (``python train.py`` + ``pytest -rA``) is
run for real in ``tmp_path``; ``mlaudit ci`` then audits the job's log.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from ci_fixture_repo import GOOD, TEST_EVAL_PY, TEST_LENGTH_PY, make_repo, run_ci_job
from typer.testing import CliRunner

from mlaudit.cli import app


def audit(repo, *logs, extra=()) -> dict:
    out = repo.parent / "report.json"
    res = CliRunner().invoke(
        app,
        [
            "ci",
            "--repo",
            str(repo),
            "--logs",
            *map(str, logs),
            *extra,
            "--format",
            "json",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def codes(report) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in report["findings"]:
        out.setdefault(f["code"], []).append(f)
    return out


@pytest.fixture(scope="module")
def slow_job(tmp_path_factory):
    """Same config as the golden run; the input pipeline is slower (10 ms per batch) than the 5 ms budget."""
    repo = make_repo(tmp_path_factory.mktemp("timing"))
    return repo, run_ci_job(repo, GOOD, env={"DATA_DELAY_S": "0.01"})


def test_only_timing_gate_fails_is_runtime_not_model_regression(slow_job):
    repo, log = slow_job
    assert "FAILED tests/test_train.py::test_step_time_budget" in log.read_text()
    assert "PASSED tests/test_train.py::test_loss_matches_golden" in log.read_text()
    r = audit(repo, log)
    assert r["verdict"]["cause"] in ("infra_runtime", "metric_policy")
    assert r["verdict"]["cause"] != "model_convergence" and r["verdict"]["outcome"] != "regressed"
    t = codes(r)["CI005"][0]
    assert t["facts"]["metrics_pass"] is True
    check = t["facts"]["checks"][0]
    assert (
        check["kind"] == "timing"
        and check["threshold"] == 0.005
        and check["path"] == "tests/test_train.py"
    )
    loss = [f for f in codes(r)["CI002"] if f["facts"]["metric"] == "loss"][0]
    assert loss["facts"]["max_rel"] < 1e-5  # the log prints 6 decimals; the run is the golden run
    hyp = {h["statement"].split(":")[0]: h["status"] for h in r["hypotheses"]}
    assert hyp["model/convergence regression"] == "rejected"


def test_loss_regressed_beyond_golden_seed_band_is_model_convergence(tmp_path):
    repo = make_repo(tmp_path, loss_rtol=0.02, extra_golden_seeds=(1, 2))
    log = run_ci_job(
        repo, dict(GOOD, lr=0.02)
    )  # the change under test: a 25x smaller learning rate
    assert "FAILED tests/test_train.py::test_loss_matches_golden" in log.read_text()
    r = audit(repo, log)
    assert r["verdict"]["cause"] == "model_convergence" and r["verdict"]["outcome"] == "regressed"
    loss = [f for f in codes(r)["CI002"] if f["facts"]["metric"] == "loss"][0]
    assert loss["severity"] == "error" and loss["facts"]["tolerance_failed"]
    assert loss["facts"]["first_rel"] == pytest.approx(
        0, abs=1e-5
    )  # same start: not a correctness change
    band = loss["facts"]["band"]
    assert band["n"] == 3 and band["verdict"] == "worse" and band["run_tail_mean"] > band["band_hi"]
    assert "golden seeds" in r["verdict"]["summary"]


def test_golden_file_of_another_length_is_test_setup(tmp_path):
    repo = make_repo(tmp_path, golden_cfg=dict(GOOD, steps=20), test_py=TEST_LENGTH_PY)
    log = run_ci_job(repo, GOOD)  # the test now trains 40 steps; the golden file has 20
    assert "mismatch" in log.read_text()
    r = audit(repo, log)
    assert r["verdict"]["cause"] == "metric_policy" and r["verdict"]["outcome"] == "succeeded"
    f = codes(r)["CI004"][0]
    assert (f["facts"]["n_golden"], f["facts"]["n_actual"], f["facts"]["direction"]) == (
        20,
        40,
        "actual_longer",
    )
    assert f["facts"]["common_ok"] is True
    assert "Regenerate the golden values" in r["next_actions"][0]["action"]


def test_metric_library_upgrade_changing_f1_is_metric_policy_with_version_delta(tmp_path):
    repo = make_repo(
        tmp_path,
        test_py=TEST_EVAL_PY,
        golden_env={"F1_AVERAGE": "micro"},
        files={"requirements.txt": "numpy>=1.26\nscikit-learn==1.5.0\n"},
    )
    header = (
        "Bump scikit-learn from 1.3.2 to 1.5.0 (#812)\n"
        "Successfully installed scikit-learn-1.5.0 threadpoolctl-3.5.0"
    )
    log = run_ci_job(
        repo, GOOD, env={"F1_AVERAGE": "macro"}, header=header
    )  # the new default averaging
    assert "FAILED tests/test_train.py::test_val_f1_matches_golden" in log.read_text()
    r = audit(repo, log)
    assert r["verdict"]["cause"] == "metric_policy" and r["verdict"]["cause"] != "model_convergence"
    f = codes(r)["CI009"][0]
    assert (f["facts"]["library"], f["facts"]["old"], f["facts"]["new"]) == (
        "scikit-learn",
        "1.3.2",
        "1.5.0",
    )
    assert "scikit-learn changed 1.3.2 -> 1.5.0" in f["message"]
    assert any(
        e.get("source") == "ci.log" or e.get("source", "").endswith("ci.log") for e in f["evidence"]
    )
    assert "val_loss" in f["facts"]["loss_metrics"]


def test_claim_contradicted_by_logged_metric_is_unsupported_claim(slow_job, tmp_path):
    repo, log = slow_job
    pr = tmp_path / "PR.md"
    pr.write_text(
        "## Faster input pipeline\n\nVal accuracy 95.0% on the held-out split, no regression.\n"
    )
    r = audit(repo, log, extra=["--claims", str(pr)])
    assert r["verdict"]["cause"] == "unsupported_claim"
    bad = codes(r)["CL001"][0]
    assert bad["facts"]["value"] == 95.0 and bad["facts"]["line"] == 3
    assert bad["facts"]["figures"]["final"] < 0.9
    ok = codes(r)["CL003"][0]
    assert ok["facts"]["claims"][0]["kind"] == "no_regression"


def test_schema_output_validates(slow_job, tmp_path):
    repo, log = slow_job
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": [
            "classification",
            "is_model_regression",
            "failing_checks",
            "evidence",
            "calculations",
            "recommendation",
            "confidence",
        ],
        "additionalProperties": False,
        "properties": {
            "classification": {
                "enum": [
                    "model_regression",
                    "correctness_bug",
                    "data_config",
                    "infra_runtime",
                    "gate_policy",
                    "unsupported_claim",
                ]
            },
            "is_model_regression": {"type": "boolean"},
            "failing_checks": {"type": "array", "items": {"type": "string"}},
            "evidence": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["file", "line", "text"],
                    "additionalProperties": False,
                    "properties": {
                        "file": {"type": "string"},
                        "line": {"type": "integer"},
                        "text": {"type": "string"},
                    },
                },
            },
            "calculations": {"type": "array", "items": {"$ref": "#/$defs/calc"}},
            "recommendation": {"type": "string", "minLength": 10},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "$defs": {
            "calc": {
                "type": "object",
                "required": ["metric", "formula", "max_rel_diff"],
                "properties": {
                    "metric": {"type": "string"},
                    "formula": {"type": "string"},
                    "max_rel_diff": {"type": "number"},
                },
            }
        },
    }
    sp, out = tmp_path / "schema.json", tmp_path / "answer.json"
    sp.write_text(json.dumps(schema))
    res = CliRunner().invoke(
        app,
        [
            "ci",
            "--repo",
            str(repo),
            "--logs",
            str(log),
            "--schema",
            str(sp),
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["classification"] == "infra_runtime" and doc["is_model_regression"] is False
    assert any("step_time" in s for s in doc["failing_checks"])
    assert any(e["file"] == "tests/test_train.py" for e in doc["evidence"])
    assert {c["metric"] for c in doc["calculations"]} >= {"loss", "val_accuracy"}


def test_bad_inputs_exit_2_with_one_line_and_write_nothing(slow_job, tmp_path):
    repo, log = slow_job
    out = tmp_path / "x.json"
    r = CliRunner().invoke(
        app, ["ci", "--repo", str(repo), "--logs", str(tmp_path / "missing.log"), "--out", str(out)]
    )
    assert r.exit_code == 2 and "missing.log: file not found" in r.output and not out.exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = CliRunner().invoke(
        app, ["ci", "--repo", str(repo), "--logs", str(log), "--golden", str(bad)]
    )
    assert r.exit_code == 2 and "not valid JSON" in r.output
    sch = tmp_path / "schema.json"
    sch.write_text(
        json.dumps({"type": "object", "required": ["x"], "properties": {"x": {"type": "nonsense"}}})
    )
    r = CliRunner().invoke(
        app,
        ["ci", "--repo", str(repo), "--logs", str(log), "--schema", str(sch), "--out", str(out)],
    )
    assert r.exit_code == 2 and "not a valid JSON Schema" in r.output and not out.exists()


@pytest.mark.parametrize("option", ["--logs", "--claims"])
def test_binary_log_or_claims_file_is_one_line_exit_2(tmp_path, option):
    repo = tmp_path / "repo"
    repo.mkdir()
    text_log = tmp_path / "ci.log"
    text_log.write_text("FAILED tests/test_train.py::test_loss - assert 2.5 < 2.0\n")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    out = tmp_path / "report.json"
    logs = str(binary) if option == "--logs" else str(text_log)
    args = ["ci", "--repo", str(repo), "--logs", logs, "--out", str(out)]
    if option == "--claims":
        args += ["--claims", str(binary)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error:"), r.output
    assert f"{option} {binary}: binary file" in lines[0] and "Traceback" not in r.output
    assert not out.exists()


def test_text_log_warnings_reach_the_report_notes(tmp_path):
    from mlaudit_core.ci.logs import read_log_lines

    log = tmp_path / "ci.log"
    log.write_bytes(b"step 1 loss 2.0\r\nbad \xff byte\n\nlast")
    notes: list[str] = []
    lines = read_log_lines(log, "ci.log", notes)
    assert [(x.lineno, x.text) for x in lines] == [
        (1, "step 1 loss 2.0"),
        (2, "bad \ufffd byte"),
        (3, ""),
        (4, "last"),
    ]
    assert len(notes) == 1 and "not valid UTF-8" in notes[0]
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert read_log_lines(empty) == []


@pytest.mark.e2e  # runs the fixture repository's CI job
def test_the_ci_reports_action_for_a_golden_file_of_another_length_is_ci004s_remedy(tmp_path):
    """The verdict row reads its next action from the detector of its finding
    (``Detector.remedies_for``): the report's first action is CI004's remedy for that finding."""
    from mlaudit_core.detectors import registry
    from mlaudit_core.report import Finding

    repo = make_repo(tmp_path, golden_cfg=dict(GOOD, steps=20), test_py=TEST_LENGTH_PY)
    r = audit(repo, run_ci_job(repo, GOOD))
    f = Finding.model_validate(codes(r)["CI004"][0])
    want = [x.action for x in registry()["CI004"].remedies_for(f)]
    assert want and [a["action"] for a in r["next_actions"]][: len(want)] == want
    assert f.facts["golden_source"] in want[0]


@pytest.mark.e2e  # runs the fixture repository's CI job
def test_a_contradicted_claims_first_action_is_cl001s_remedy(slow_job, tmp_path):
    """The claims step reads its action from the claims detector (``Detector.remedies_for``)."""
    from mlaudit_core.detectors import registry
    from mlaudit_core.report import Finding

    repo, log = slow_job
    pr = tmp_path / "PR.md"
    pr.write_text("## Faster input pipeline\n\nVal accuracy 95.0% on the held-out split.\n")
    r = audit(repo, log, extra=["--claims", str(pr)])
    f = Finding.model_validate(codes(r)["CL001"][0])
    (first, *_) = registry()["CL001"].remedies_for(f)
    assert r["next_actions"][0]["action"] == first.action
    hs = registry()["CL001"].hypotheses(f, r["verdict"]["outcome"]) or []
    assert [h.status for h in hs] == ["rejected"]
