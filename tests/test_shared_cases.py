"""The real failure cases of ../shared/cases (copied unchanged into tests/data/cases) as end-to-end tests.

Each case goes through ``mlaudit logs`` (its *.log files, its *.txt files as --config)
and the JSON report is checked against the case's expected.json: the cause, the
outcome, every ``must_find`` fact with its figures (checked below, one function per
case), and no ``must_not`` conclusion. The CI case (ci-golden-drift-after-image-bump)
belongs to the CI audit and is not a console-log case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

CASES = Path(__file__).parent / "data" / "cases"
NOT_LOG_CASES = {"ci-golden-drift-after-image-bump"}


def audit_case(case: Path) -> dict:
    args = ["logs", *[str(p) for p in sorted(case.glob("*.log"))]]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--name", case.name, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def finding(report: dict, code: str) -> dict:
    got = [f for f in report["findings"] if f["code"] == code]
    assert got, f"no {code} finding; codes: {[f['code'] for f in report['findings']]}"
    return got[0]


def texts(report: dict) -> str:
    """Everything a reader sees: verdict summary, findings with evidence, hypotheses, next actions."""
    parts = [report["verdict"]["summary"]]
    for f in report["findings"]:
        parts.append(f["message"])
        parts += [json.dumps(e) for e in f["evidence"]]
    parts += [a["action"] + " " + a["why"] for a in report["next_actions"]]
    parts += [h["statement"] for h in report["hypotheses"]]
    return "\n".join(parts)


def hypothesis(report: dict, words: str) -> dict:
    got = [h for h in report["hypotheses"] if words in h["statement"]]
    assert got, [h["statement"] for h in report["hypotheses"]]
    return got[0]


# --- per-case must_find / must_not checks (figures as in expected.json) --------------------------


def check_dataloader_bound_imagenet(r: dict) -> None:
    sy = finding(r, "SY002")
    # data-loading time is nearly all of each iteration's time (ratio about 0.95-1.0)
    assert 0.95 <= sy["facts"]["ratio"] <= 1.0
    assert "99.8% of each step" in sy["message"]
    # the run is input-bound, not compute-bound: the accelerators mostly wait
    assert "input-bound, not compute-bound" in sy["message"]
    assert hypothesis(r, "compute-bound")["status"] == "rejected"
    assert hypothesis(r, "input-bound")["status"] == "supported"
    # next action points at storage / input pipeline, not at hyperparameters
    actions = [a["action"] for a in r["next_actions"]]
    assert any("faster storage" in a and "cache" in a for a in actions), actions
    assert not any("learning rate" in a.lower() or " LR " in a for a in actions)
    # must_not: any convergence or model-quality diagnosis
    assert not [
        f
        for f in r["findings"]
        if f["family"] in ("optimization", "generalization") and f["severity"] != "info"
    ]
    assert hypothesis(r, "model or convergence")["status"] == "rejected"


def check_fp16_true_nan_after_first_step(r: dict) -> None:
    op = finding(r, "OP004")
    # loss is finite until the first optimizer step, then NaN on every iteration
    assert "finite through iteration 7 (the first optimizer step)" in op["message"]
    assert "nan from step 8 on (on every point after)" in op["message"]
    assert (
        op["facts"]["first_optimizer_step_at"] == 7 and op["facts"]["all_after_nonfinite"] is True
    )
    # no gradual loss growth before the NaN, so it is not a learning-rate divergence
    summary = r["verdict"]["summary"]
    assert "No gradual loss growth before the non-finite onset" in summary
    assert "not a learning-rate divergence" in summary
    assert "last finite 1.12 vs median 1.303" in summary
    assert hypothesis(r, "learning rate too high")["status"] == "rejected"
    # the precision setting (pure 16-bit, no master weights / loss scaling) is the cause to test first
    assert "precision = 16-true is pure 16-bit (no fp32 master weights, no loss scaling)" in summary
    first = r["next_actions"][0]["action"]
    assert first.startswith("Check the precision setting first")
    # must_not: lowering the learning rate as the first action
    assert "LR" not in first and "learning rate" not in first.lower()


def check_healthy_fp16_finetune(r: dict) -> None:
    rt = finding(r, "RT006")
    f = rt["facts"]
    # 3 skipped steps out of 1352 from loss-scale overflow, loss scale never below 8192, no NaN
    assert (f["n_skipped"], f["total_steps"], f["min_loss_scale"]) == (3, 1352, 8192.0)
    assert f["skip_steps"] == [893, 952, 988]
    assert f["loss_nonfinite"] is False
    assert "3 steps skipped for fp16 gradient overflow out of 1352" in rt["message"]
    assert "never below 8192" in rt["message"] and "no NaN/inf" in rt["message"]
    # loss keeps decreasing after the overflow messages
    assert "kept decreasing after the overflows" in rt["message"]
    assert f["loss_after"] < f["loss_before"]
    # verdict healthy; the overflow messages are reported as benign, not as a failure
    assert rt["severity"] == "info" and "benign" in rt["message"]
    assert hypothesis(r, "fp16 overflow messages are a failure")["status"] == "rejected"
    # must_not: an fp16 overflow failure or divergence verdict; a throughput problem
    assert not [
        x
        for x in r["findings"]
        if x["code"] in ("OP001", "LI001", "OP007") and x["severity"] != "info"
    ]
    assert not [x for x in r["findings"] if x["family"] == "systems" and x["severity"] != "info"]


def check_oom_in_evaluation(r: dict) -> None:
    rt = finding(r, "RT001")
    # CUDA out-of-memory, raised inside the evaluation code path, not in a training step
    assert rt["facts"]["code_path"] == "evaluation"
    assert "in the evaluation code path" in r["verdict"]["summary"]
    assert "score_fast_model" in rt["message"]
    # the figures: 4.18 GiB requested, 2.44 GiB free, 10.92 GiB total
    assert rt["facts"]["requested_gib"] == pytest.approx(4.18)
    assert rt["facts"]["free_gib"] == pytest.approx(2.44)
    assert rt["facts"]["total_gib"] == pytest.approx(10.92)
    assert "requested 4.18 GiB" in rt["message"] and "free 2.44 GiB" in rt["message"]
    assert "10.92 GiB total capacity" in texts(r)
    # next action: reduce evaluation peak memory (chunk, smaller eval batch, or evaluate on CPU)
    first = r["next_actions"][0]["action"]
    assert "Reduce evaluation peak memory" in first and "chunk" in first and "on CPU" in first
    # must_not: a memory-leak diagnosis of the training loop
    assert hypothesis(r, "memory leak in the training loop")["status"] == "rejected"
    assert "leak" not in r["verdict"]["summary"]


def check_overfit_small_data(r: dict) -> None:
    ge = finding(r, "GE001")
    # validation loss rises every epoch from epoch 2 (0.7477 -> 1.4827) while training loss falls
    assert ge["facts"]["best"] == pytest.approx(0.7477) and ge["facts"]["final"] == pytest.approx(
        1.4827
    )
    assert "from its best 0.7477 at step 1 to 1.483 at step 5" in ge["message"]
    assert "rose in 100% of evals after the best" in ge["message"]
    assert ge["facts"]["train_loss_change"] < 0
    # validation accuracy stays near chance for 2 classes while training accuracy reaches ~0.85
    ch = finding(r, "GE004")
    assert "stays near chance (0.5 for 2 classes)" in ch["message"]
    assert "train/accuracy reaches 0.8454" in ch["message"]
    # best checkpoint by validation loss is epoch 1 (Keras epoch lines: the step is the epoch)
    assert ge["facts"]["onset_step"] == 1 and "early stopping at step 1" in ge["message"]
    # next action: more data, augmentation or regularisation
    assert any(
        "regularisation" in a["action"]
        and "augmentation" in a["action"]
        and "more data" in a["action"]
        for a in r["next_actions"]
    )


def check_resume_counter_reset(r: dict) -> None:
    li = finding(r, "LI003")
    # the global step (542) does not match epoch 16 x 542 steps per epoch = 8672
    assert (
        "the global step (542) does not match epoch 16 x 542 steps per epoch = 8672"
        in li["message"]
    )
    assert (li["facts"]["step"], li["facts"]["expected_step"]) == (542, 8672)
    # the step counter restarted from zero in the resumed run: the checkpoint was likely never restored
    assert "restarted from zero in a resumed run" in li["message"]
    assert "was likely never restored" in li["message"]
    # warns that new checkpoints named by step would overwrite early ones
    assert "checkpoints are named by step (model-542)" in li["message"]
    assert "would overwrite" in li["message"]
    assert any("overwrite" in a["action"] for a in r["next_actions"])


CHECKS = {
    name[len("check_") :].replace("_", "-"): fn
    for name, fn in globals().items()
    if name.startswith("check_")
}


def log_cases():
    return sorted(p for p in CASES.iterdir() if p.is_dir() and p.name not in NOT_LOG_CASES)


def test_every_case_has_a_check():
    assert {p.name for p in log_cases()} == set(CHECKS)


@pytest.mark.parametrize("case", log_cases(), ids=lambda p: p.name)
def test_shared_case(case: Path):
    expected = json.loads((case / "expected.json").read_text())
    report = audit_case(case)
    v = report["verdict"]
    assert v["cause"] == expected["cause"], v["summary"]
    assert v["outcome"] in expected["outcome_any_of"], v["summary"]
    CHECKS[case.name](report)
