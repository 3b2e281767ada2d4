"""The verdict's judgement rules (issue 27 item 3) on runs made with the real frameworks.

Every run under tests/data/judgement/ was made by ``tests/detectors/judgement_runs.py`` with the
real libraries (torch 2.13 ``SummaryWriter``, the HF Trainer's own TensorBoard callback, a ClearML
offline session through the real SDK); what each run is comes from how it was made (the learning
rate, schedule or labels chosen to break it), written in that script's docstrings. Each test audits
the committed artifact through the CLI (``--no-write``), the way a user does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).parent / "data" / "judgement"


def _audit(*args: str, tmp_path: Path) -> dict:
    out = tmp_path / "r.json"
    write = [] if args[0] == "logs" else ["--no-write"]  # mlaudit logs writes nothing but --out
    res = CliRunner().invoke(app, [*args, *write, "--format", "json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


def _finding(rep: dict, code: str) -> dict | None:
    return next((f for f in rep["findings"] if f["code"] == code), None)


# --- chance level from the task's label count (gap 9) and shuffled labels (gap 8) -------------------


def test_chance_level_is_the_label_count_of_id2label_not_type_vocab_size(tmp_path):
    """HF Trainer, 4 labels (``model_config.id2label.0..3``), ``type_vocab_size`` 2, ``vocab_size`` 64:
    the chance level is 1/4, named after the label map."""
    rep = _audit("audit", str(DATA / "hf" / "shuffled" / "tb"), tmp_path=tmp_path)
    ge4 = _finding(rep, "GE004")
    assert ge4 is not None, [f["code"] for f in rep["findings"]]
    assert "0.25 for 4 classes" in ge4["message"]
    assert "type_vocab_size" not in json.dumps(rep) and "ln 64" not in json.dumps(rep)


def test_no_vocabulary_chance_level_for_a_classifier_without_a_label_map(tmp_path):
    """The healthy binary HF classifier (transformers 5 writes no id2label for two labels): its config's
    vocab_size (64) and type_vocab_size (2) are not a chance level."""
    from mlaudit_core.detectors._context import chance
    from mlaudit_core.formats import load_path

    run = next(x for x in load_path(DATA / "hf" / "healthy" / "tb").runs[0] if hasattr(x, "params"))
    assert (
        run.params["model_config.type_vocab_size"] == "2"
        and run.params["model_config.vocab_size"] == "64"
    )
    assert chance(run) is None


@pytest.mark.parametrize("path", ["tb", "trainer_state.json"])
def test_shuffled_labels_are_a_data_failure_with_no_checkpoint_advice(path, tmp_path):
    """Labels drawn at random: the training loss falls to 0.01 while evaluation accuracy never beats 1/4.
    A data/label failure, not healthy and not an overfit of the model; no checkpoint of it is kept.
    trainer_state.json carries no config: K = 4 comes from the first training loss (1.39 = ln 4) and
    the median evaluation accuracy (0.22) agreeing (was overfit/model_convergence)."""
    rep = _audit("audit", str(DATA / "hf" / "shuffled" / path), tmp_path=tmp_path)
    v = rep["verdict"]
    assert v["cause"] == "data_config" and v["outcome"] != "succeeded", v
    assert "chance" in v["summary"]
    actions = " | ".join(a["action"] for a in rep["next_actions"])
    assert "Check that labels line up with inputs" in actions
    assert "checkpoint" not in actions.lower(), actions


# --- non-finite validation loss (gap 1) and a tracker's 0.0 stand-ins (gap 7) -----------------------


def test_validation_loss_inf_while_training_loss_rises_is_a_divergence(tmp_path):
    """SGD warm-up to lr 1.0 on a regression: the training loss falls to 0.07, rises to ~0.36 (not
    2x-and-half-regained: OP001 does not fire), the fp16-summed validation loss is inf at every
    evaluation from step 128. Was succeeded/healthy, then slow (evaluation time)."""
    rep = _audit("audit", str(DATA / "torch_val_inf"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"], v["rule"]) == ("diverged", "model_convergence", "V06b"), v
    assert "val/loss was non-finite at every evaluation from step 128" in v["summary"]
    assert "rose from its minimum" in v["summary"]
    assert v["confidence"] >= 0.7 and "non-finite validation loss observed" in v["basis"]


def test_clearml_zero_stand_ins_after_the_loss_grew_are_a_divergence(tmp_path):
    """A ClearML offline session made with the real SDK: the loss grew to 1e29 after the lr was raised to 3,
    then overflowed; the SDK logged 'NaN value encountered. Reporting it as 0.0' and stored 0.0 from
    step 64 to the end. Was succeeded/data_config ('a loss of exactly zero measures nothing')."""
    rep = _audit(
        "clearml", "--offline", str(DATA / "clearml" / "regression-lr3.zip"), tmp_path=tmp_path
    )
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v
    assert "sat at exactly 0 from step 64" in v["summary"] and "ClearML" in v["summary"]


def test_zero_loss_without_growth_before_is_still_the_zero_loss_rule():
    """The stand-in reading needs the growth: a loss that fell to exactly 0 (templated targets) is not it."""
    from mlaudit_core.verdict.policy import _grown_before_zeros

    steps = np.arange(8)
    assert _grown_before_zeros(steps, np.array([0.85, 0.4, 0.1, 0.05, 0.0, 0.0, 0.0, 0.0])) is None
    got = _grown_before_zeros(steps, np.array([2.0, 0.3, 0.2, 160.0, 7e8, 0.0, 0.0, 0.0]))
    assert got is not None and got[0] == 5 and got[1] == 7e8 and got[2] == 0.2


def test_zero_loss_after_a_fall_from_an_early_peak_is_not_growth(tmp_path):
    """A loss whose highest value among the last points before the zeros is its first point fell, it did not
    grow: the HF Trainer console of own corpus f23b1-02 prints 0.0985 (epoch 1) -> 0.0001 -> 0.0 (its
    4-decimal rounding) while eval_loss falls to 1.5e-5; it was called diverged ('grew to 0.0985, 985x its
    best 0.0001')."""
    from mlaudit_core.verdict.policy import _grown_before_zeros

    steps = np.arange(9)
    assert (
        _grown_before_zeros(steps, np.array([0.0985, 0.0001, 0.0001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
        is None
    )
    log = (
        DATA.parent
        / "realworld"
        / "runs"
        / "Ahmad10Raza--customer-doc-ai-classifier"
        / "train_log.txt"
    )
    v = _audit("logs", str(log), tmp_path=tmp_path)["verdict"]
    assert v["outcome"] != "diverged", v["summary"]


# --- signals that contradict a healthy-looking run (gap 10) -----------------------------------------


def test_recurring_grad_norm_spikes_warn_and_lower_the_confidence_of_a_healthy_run(tmp_path):
    """Every 25th batch from a corrupted shard: the loss recovers at once (benign spikes), the pre-clip
    grad norm spikes 10x+ its median 18 times. The run is healthy on its curves; OP006 warns, the
    summary names the contradicting signal, the confidence is lower than without it."""
    rep = _audit("audit", str(DATA / "torch_signals" / "gradspikes"), tmp_path=tmp_path)
    v = rep["verdict"]
    op6 = _finding(rep, "OP006")
    assert op6 is not None and op6["severity"] == "warning", op6
    assert "separate spikes >= 10x the median" in op6["message"] and "recur" in op6["message"]
    assert v["outcome"] == "succeeded" and "signals say otherwise" in v["summary"], v
    assert "-1 contradicting (OP006)" in v["basis"]


def test_grad_norm_spikes_only_at_the_start_are_not_recurring(tmp_path):
    """The healthy HF run: its grad norm is largest over the first steps only (a fresh head); no
    recurring-spike warning and no contradicting term."""
    rep = _audit("audit", str(DATA / "hf" / "healthy" / "tb"), tmp_path=tmp_path)
    op6 = _finding(rep, "OP006")
    assert op6 is None or not op6["facts"].get("recurring_spikes"), op6
    assert "contradicting" not in rep["verdict"]["basis"]


# --- slow runs read from the records' own wall times (gap 5) ------------------------------------


def test_a_loader_pausing_every_8th_batch_is_slow_from_the_event_wall_times(tmp_path):
    """Only the loss is logged (no step time): the TensorBoard events' wall times show 40 of 308 steps
    taking 2x the median or more, 45% of the step time. Was succeeded/healthy."""
    rep = _audit("audit", str(DATA / "torch_slow" / "paused"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("slow", "infra_runtime"), v
    sy4 = _finding(rep, "SY004")
    assert sy4["facts"]["recurring"] and sy4["facts"]["from_wall_times"]
    assert "wall time per step" in sy4["message"] and "2x the median step time" in sy4["message"]


def test_the_same_loop_without_pauses_is_not_slow(tmp_path):
    """The same loop and logging without the sleeping loader, and a loop of 1 ms steps whose wall-time
    intervals jitter 2x on half the steps: neither is slow."""
    for path in (DATA / "torch_slow" / "healthy", DATA / "torch_signals" / "gradspikes"):
        rep = _audit("audit", str(path), tmp_path=tmp_path)
        assert rep["verdict"]["outcome"] == "succeeded", (path, rep["verdict"])
        assert _finding(rep, "SY004") is None and _finding(rep, "SY001") is None


# --- a NaN inside the warm-up ramp or right after an LR jump is learning-rate evidence (gaps 2, 6) ---


def test_nan_inside_the_warmup_ramp_is_the_learning_rate_not_the_precision(tmp_path):
    """bf16 autocast, LinearLR warm-up towards lr 1e4, the loss logged every 10 steps: 2.15 at step 0,
    NaN from step 10 (no growth logged in between). Was diverged/data_config ('a numerical failure,
    not a learning-rate divergence; the precision setting')."""
    rep = _audit("audit", str(DATA / "torch_lr" / "warmup_nan"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v
    assert "inside the warm-up ramp" in v["summary"] and "step 10" in v["summary"]


def test_nan_right_after_a_schedule_jump_is_the_learning_rate(tmp_path):
    """bf16 autocast, MultiStepLR(gamma=1e5) at step 131: the loss 0.038 at step 130, NaN at step 140,
    the LR logged 0.05 then 5000. Was diverged/data_config."""
    rep = _audit("audit", str(DATA / "torch_lr" / "jump_nan"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v
    assert (
        "right after a learning-rate jump" in v["summary"] and "to 5000 (step 140)" in v["summary"]
    )


# --- several launches in one console log: the run is the launch that trained (gap 3) ----------------


@pytest.mark.parametrize("name", ["eval_after", "resume_after"])
def test_a_launch_that_did_not_train_does_not_replace_the_one_that_did(name, tmp_path):
    """``python train.py MODE >> train.log 2>&1`` twice with the real HF Trainer: a 4-epoch training
    launch, then an evaluation-only launch (``trainer.evaluate()``) or a resume that found training done.
    Was unknown ('too few points': the last launch alone was judged); now the training launch is judged
    and the verdict says which one."""
    rep = _audit("logs", str(DATA / "hf_launches" / name / "train.log"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v
    assert "Judged: launch 1 of 2 in this log, the last one that trained" in v["summary"]
    assert "train/loss (32 points)" in v["summary"]


@pytest.mark.parametrize("command", ["logs", "audit"])
def test_set_up_lines_dataloader_workers_repeat_are_not_launches(command, tmp_path):
    """A plain PyTorch script whose spawned DataLoader workers re-print its two set-up lines every
    epoch, run twice into one log (``>> train.log``): 6 of 6 epochs, then a launch killed with its
    workers after epoch 3 of 6 (tests/detectors/judgement_runs.py ``_torch_workers``). Was
    ``succeeded`` (the two launches joined as one run of 9 epochs) or ``unknown`` (the last
    'launch' only the workers' set-up lines); now 2 launches and the last one stopped at 3 of 6."""
    rep = _audit(command, str(DATA / "torch_workers" / "killed" / "train.log"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("crashed", "inconclusive"), v
    assert "epoch 3 of the 6 planned" in v["summary"], v["summary"]


@pytest.mark.parametrize("command", ["logs", "audit"])
def test_a_lightning_run_killed_and_resumed_from_its_checkpoint_is_one_healthy_run(
    command, tmp_path
):
    """Lightning (TQDM bar) killed with SIGKILL in its fourth epoch of 6, then resumed with
    ``trainer.fit(..., ckpt_path="last")`` into the same log (judgement_runs ``_lightning_resume``):
    the resume redoes epoch 4 from the checkpoint saved after epoch 3, so the step goes back from
    159 to 145 with the per-batch loss where the first launch had it there (the median of 5 points
    each side: one batch's loss is too noisy to compare). Was unstable/correctness_bug ('the resume
    did not restore the training state'); now succeeded/healthy."""
    rep = _audit(
        command, str(DATA / "lightning_resume" / "killed_resumed" / "train.log"), tmp_path=tmp_path
    )
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v
    li002 = _finding(rep, "LI002")
    assert li002 is not None and li002["severity"] == "warning", li002
    assert "resumed from an earlier checkpoint" in li002["message"]


def test_a_relaunch_that_only_set_up_does_not_replace_the_launch_that_trained(tmp_path):
    """The real HF Trainer log's 4-epoch training launch, then a relaunch that printed only its set-up
    lines and stopped before training (no point, no traceback; realworld f8b1-11 has four such
    relaunches after a 10-of-10-epoch launch). Was unknown (the set-up-only launch judged, no
    series); now launch 1 is the run, and the verdict says so."""
    text = (DATA / "hf_launches" / "eval_after" / "train.log").read_text().splitlines()
    second = [i for i, t in enumerate(text) if t.startswith("config: tiny-bert")][1]
    log = tmp_path / "train.log"
    log.write_text("\n".join(text[:second] + text[second : second + 2]) + "\n")
    rep = _audit("logs", str(log), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v
    assert "Judged: launch 1 of 2 in this log, the last one that trained" in v["summary"]


@pytest.mark.parametrize("command", ["logs", "audit"])
def test_two_models_trained_one_after_another_are_two_launches_not_one_per_epoch(command, tmp_path):
    """A plain PyTorch script training two models in a row into one log (judgement_runs
    ``_torch_stages``: stage ``small`` then ``large``, 5 epochs each, the printed step a batch index
    within the epoch). Was unstable/correctness_bug (10 'launches', one per epoch; and a stage start
    timestamped in the same second as the previous stage's last points kept them); now 2 launches, the
    last stage judged on its own 5 epochs: succeeded/healthy, with ``mlaudit logs`` as with ``audit``."""
    rep = _audit(
        command, str(DATA / "torch_stages" / "two_models" / "train.log"), tmp_path=tmp_path
    )
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v
    assert "train/loss (30 points)" in v["summary"], v["summary"]
    assert _finding(rep, "LI002") is None


def test_a_later_launch_that_trained_is_still_the_run(tmp_path):
    """The same log cut after its second launch's first lines plus a copy of the first launch's
    training lines: the last launch trained, so it is the run (no launch_judged)."""
    from mlaudit_core.formats.consolelog import load_logs

    text = (DATA / "hf_launches" / "eval_after" / "train.log").read_text().splitlines()
    second = [i for i, t in enumerate(text) if t.startswith("config: tiny-bert")][1]
    log = tmp_path / "twice.log"
    log.write_text("\n".join(text[:second] + text[:second]) + "\n")
    run = load_logs([log])
    assert run.params.get("log.launches") == "2" and "log.launch_judged" not in run.params


# --- reruns of one configuration in one record, compared with a noise band (gap 4) ------------------


@pytest.mark.parametrize("command", ["logs", "audit"])
def test_a_seed_rerun_within_the_noise_band_is_healthy(command, tmp_path):
    """Keras, the same configuration with seed 0 then seed 1, both histories in one log: the rerun's
    final val loss is 7% above the reference's, inside the two-run band (10x within-run noise, 5%)."""
    rep = _audit(command, str(DATA / "keras_reruns" / "seeds" / "train.log"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v
    bl = [f for f in rep["findings"] if f["code"] == "BL001"]
    assert bl and all(f["severity"] == "info" for f in bl), bl
    assert all(
        f["facts"]["baseline_ids"][0].endswith("#run-1") for f in bl
    )  # the record's first run
    assert "the gap is within noise" in v["summary"] and "not a regression" in v["summary"]


@pytest.mark.parametrize("command", ["logs", "audit"])
def test_a_rerun_far_outside_the_band_is_a_regression(command, tmp_path):
    """The same log with the rerun's labels corrupted on 40% of the examples: val accuracy 0.51 against
    the reference's 0.95, far beyond the band: regressed, against the earlier run of the record."""
    rep = _audit(command, str(DATA / "keras_reruns" / "broken" / "train.log"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["rule"]) == ("regressed", "V10"), v
    bl = next(f for f in rep["findings"] if f["code"] == "BL001" and f["severity"] == "error")
    assert bl["facts"]["baseline_ids"][0].endswith("#run-1")  # the record's first run


def test_split_reruns_needs_a_relaunch_from_scratch():
    """A resumed counter (the loss after the restart where it had got, not back at its start) is not a
    rerun; two complete runs from scratch are."""
    from mlaudit_core.baseline.reruns import split_reruns
    from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, Series

    def run_of(values):
        steps = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5])
        s = Series("loss", steps, np.array(values, dtype=float), np.full(10, np.nan))
        return RunData(RunIdentity("t", "x"), metrics=MetricTable.from_series([s]))

    got = split_reruns(run_of([2.3, 1.5, 1.0, 0.7, 0.5, 2.3, 1.4, 1.0, 0.8, 0.6]))
    assert got is not None and len(got[1]) == 1 and len(got[0].metrics.series("loss")) == 5
    assert split_reruns(run_of([2.3, 1.5, 1.0, 0.7, 0.5, 0.5, 0.45, 0.4, 0.38, 0.36])) is None


def test_a_step_time_that_grows_with_the_run_is_slow_from_the_event_wall_times(tmp_path):
    """``history.append(loss)`` and ``sum(history)`` at every step (the tensor, not ``loss.item()``): each
    step costs more than the last. No step time is logged; the event wall times show the throughput
    falling in every quarter (~1 ms -> ~10 ms a step). Was succeeded/healthy."""
    rep = _audit("audit", str(DATA / "torch_slow" / "leaking"), tmp_path=tmp_path)
    v = rep["verdict"]
    assert (v["outcome"], v["cause"]) == ("slow", "infra_runtime"), v
    sy1 = _finding(rep, "SY001")
    assert sy1["severity"] == "error" and sy1["facts"]["progressive"]
    assert "wall time per step" in sy1["message"] and "falling in every quarter" in sy1["message"]
