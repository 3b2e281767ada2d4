"""Verdict rules that generalise (issue 27): each test audits a real, already-scored artifact of the own
corpus (tests/data/realworld, labels.json) the way ``benchmarks/diagnosis_eval.py`` does (the reader's
last run, :func:`mlaudit_core.audit.audit`), and asserts the rule a careful analyst applies to any run,
not the artifact's label alone: what the run's ending, clock or metrics show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.plan import NORMAL_END
from mlaudit_core.verdict.evidence import early_stop_line, ending

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _run(rel: str):
    return list(load_path(RUNS / rel).runs)[-1][1]


def _codes(rep) -> set[str]:
    return {f.code for f in rep.findings}


# --- a planned end: early stopping and end-of-training lines are not a crash -------------------------


@pytest.mark.parametrize(
    "rel, stop_line",
    [
        # Python-logging ResNet: 'Validation loss has not improved for 3 epochs. Stopping training.' at epoch 11 of 25
        ("fAKe2004--TouhouImageClassification/train.out", "Stopping training"),
        # OpenNMT-py: 'Training finished after not improving. Early Stop!' at step 1600 of 100000
        ("BitMap4--morphological-inflections/train.log", "Early Stop!"),
    ],
)
def test_ending_an_early_stop_line_below_the_planned_length_is_a_planned_end(rel, stop_line):
    run = _run(rel)
    assert any(stop_line in c.text for c in run.console)
    e = ending(run, [])
    assert e.short, "the run is below its planned length"
    assert e.early_stopped and not e.stopped
    assert audit(run).verdict.outcome.value != "crashed"


def test_ending_tf_estimator_loss_for_final_step_is_an_end_line():
    """TensorFlow 1 Estimator (BERT run_classifier): the same '***** Running training *****' banner as the
    HF Trainer, then 'Loss for final step' when train() returns: not an HF log without its end line."""
    run = _run("Brokenwind--BertSimilarity/train.log")
    assert ending(run, []).missing_end_line is None
    v = audit(run).verdict
    assert v.outcome.value == "succeeded", v.summary


@pytest.mark.parametrize(
    "line, end",
    [
        ("2025-05-14 16:59:24,568 - ResNet_train - INFO - Training finished.", True),
        ("[2024-05-08 04:08:04,516 INFO] Training finished after not improving. Early Stop!", True),
        ("INFO:tensorflow:Loss for final step: 0.0025181356.", True),
        ("2018-01-28 02:24:49,751 INFO    : Training complete in 946m 39s", True),
        ("Training finished epoch 3, starting epoch 4", False),
        ("Training completes when the budget is spent", False),
    ],
)
def test_normal_end_plain_prose_end_lines(line, end):
    assert bool(NORMAL_END.search(line)) is end


@pytest.mark.parametrize(
    "line, stop",
    [
        ("Validation loss has not improved for 3 epochs. Stopping training.", True),
        ("Epoch 00012: early stopping", True),
        ("Training finished after not improving. Early Stop!", True),
        ("early_stopping=True", False),
        ("  early_stopping_patience: 3", False),
        ("--early_stop 10", False),
        ("val_loss did not improve from 0.31", False),
    ],
)
def test_early_stop_line_is_a_report_not_a_config_echo(line, stop):
    assert early_stop_line(line) is stop


# --- SY005: time outside training needs a clock that times the steps --------------------------------


def test_sy005_idle_time_between_appended_launches_is_not_run_time():
    """Three launches appended to one log ('Training complete in 946m 39s', then 8 h idle, then the next
    launch), with a per-200-batch line and an epoch summary alternating in one series (20 s / 264 s): not
    slow. Before: slow/infra_runtime, '76.6% of the wall time outside training steps'."""
    rep = audit(_run("Haisu7025--CatVSDog/logs/resnet.log"))
    assert "SY005" not in _codes(rep)
    assert rep.verdict.outcome.value != "slow"


def test_sy005_wall_times_that_do_not_time_the_steps_are_not_judged():
    """TF1 Estimator training lines carry no timestamp (only 'Finished evaluation at ...' does), and the
    ResNet log's resumed segment overlays an earlier step range: no evaluation share is computed from
    either clock. Before: 'evaluation takes 100%' and '662% of the wall time'."""
    for rel in (
        "Brokenwind--BertSimilarity/train.log",
        "fAKe2004--TouhouImageClassification/train.out",
    ):
        rep = audit(_run(rel))
        assert "SY005" not in _codes(rep), rel
        assert rep.verdict.outcome.value not in ("slow", "crashed"), (rel, rep.verdict.summary)


# --- a failure signature ends the run only when no progress follows it --------------------------------


def test_superseded_crash_heartbeat_warnings_followed_by_epochs_do_not_end_the_run():
    """torch elastic: six 'failed to send a keep-alive heartbeat ... RendezvousTimeoutError' WARNING lines
    between epochs 38 and 39, then 8 more normal epochs. RT002 stays reported; the run is not crashed
    (before: crashed/infra_runtime), and the summary says training went on after the lines."""
    rep = audit(_run("davijoocho--convolutional-neural-network/train.out"))
    assert "RT002" in _codes(rep)
    assert rep.verdict.outcome.value != "crashed", rep.verdict.summary
    assert "Training went on after these failure lines" in rep.verdict.summary


def test_ge002_a_rising_high_accuracy_is_learning_whatever_the_relative_loss_drop():
    """Same run: C.E. loss 0.977 -> 0.951 (2.75%) while training accuracy rose 94.8% -> 98.5%: the first
    logged loss already follows learning; GE002 gives an info finding, not underfit (a must_not)."""
    rep = audit(_run("davijoocho--convolutional-neural-network/train.out"))
    ge2 = [f for f in rep.findings if f.code == "GE002"]
    assert ge2 and all(f.severity.value == "info" for f in ge2)
    assert ge2[0].facts.get("accuracy_learned") is True
    assert rep.verdict.outcome.value != "underfit"


# --- a held-out loss near its floor, a task metric at its best, a score at its ceiling ----------------


def test_ge001_task_metric_at_its_best_at_the_end_is_not_an_overfit():
    """Whisper-large trainer_state, 15000/15000 steps: eval_loss 0.209 -> 0.239 while eval_wer fell to its
    best 9.62 at the last evaluation. Before: overfit/model_convergence."""
    rep = audit(_run("anthonyrathe--fixed-whisperv2-flemish/trainer_state.json"))
    ge1 = [f for f in rep.findings if f.code == "GE001"]
    assert ge1 and ge1[0].severity.value == "info" and ge1[0].facts["task_metric"] == "eval_wer"
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_ge001_op008_a_rise_near_the_loss_floor_is_noise():
    """TCN, 500 epochs: val loss 0.0766 -> best 0.0003 -> 0.0005 (GL 67%, a rise of 0.0002) and factor jumps
    between 0.0003 and 0.0029. Before: overfit (GE001), then unstable (OP008)."""
    rep = audit(_run("AmmarRashed--EmoNetTCN/training.log"))
    assert "OP008" not in _codes(rep)
    ge1 = [f for f in rep.findings if f.code == "GE001"]
    assert ge1 and ge1[0].facts.get("kind") == "near_floor" and ge1[0].severity.value == "info"
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_op008_factor_jumps_of_a_loss_near_its_floor_are_not_erratic():
    """Keras History CSV, 132 epochs: val_loss 3.3 -> 0.055, then bouncing 0.055-0.199 (2x jumps 12 times).
    Before: unstable/model_convergence (V14c)."""
    rep = audit(
        _run("JosephHuang913--mmAlphabet-Air-Writing-Alphabet-Recognition-System/train_history.csv")
    )
    assert "OP008" not in _codes(rep)
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_ge007_sy005_accuracy_at_its_ceiling_and_relaunch_gaps():
    """Three 10-epoch launches appended ('Epoch 1..10' each), validation accuracy 100% from epoch 3: a score
    at its ceiling is not a plateau, and the idle time between launches (the epoch counter starting again)
    is not time outside training. Before: plateaued (GE007), with SY005 under it."""
    rep = audit(_run("Abas527--chest-cancer-classifier/logs/training.log"))
    assert "GE007" not in _codes(rep) and "SY005" not in _codes(rep)
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


# --- a loss unbounded below; a task metric that never leaves its floor --------------------------------


def test_op001_a_loss_running_to_minus_1e9_diverged():
    """TTS console: the vocoder loss goes 0.005 -> -1e9 and the total loss follows. Lower is not better
    past the loss's valid range. Before: succeeded/healthy (a must_not)."""
    rep = audit(_run("CISC-867--Project/overnight.log"))
    op1 = [f for f in rep.findings if f.code == "OP001"]
    assert op1 and op1[0].facts.get("unbounded_below") is True
    assert rep.verdict.outcome.value == "diverged", rep.verdict.summary


def test_ge002_a_task_metric_that_never_leaves_its_floor_is_underfit():
    """GRPO console, 3/3 epochs: accuracy 0.06, 0.04, 0.06, 0.00, 0.06, 0.01 while the policy loss sits near
    0 by construction. Before: succeeded/healthy (a must_not)."""
    rep = audit(_run("JunyiJ--PostTraining-LLM-Small/logs/train_grpo_gemma2_1.log"))
    ge2 = [f for f in rep.findings if f.code == "GE002" and f.facts.get("task_floor")]
    assert ge2 and ge2[0].facts["key"] == "train/accuracy"
    assert rep.verdict.outcome.value == "underfit", rep.verdict.summary


def test_ge002_task_floor_needs_a_metric_that_never_rose():
    """The rule's other side on real input: the healthy Keras air-writing run (accuracy 0.06 -> 0.97) and
    the DDP CNN (94% -> 98%) have no task-floor finding."""
    for rel in (
        "JosephHuang913--mmAlphabet-Air-Writing-Alphabet-Recognition-System/train_history.csv",
        "davijoocho--convolutional-neural-network/train.out",
    ):
        rep = audit(_run(rel))
        assert not [f for f in rep.findings if f.code == "GE002" and f.facts.get("task_floor")], rel


# --- a run never better than its majority baseline; a task metric at its best at the end -------------


def test_ge002_never_beat_the_majority_baseline_is_underfit_not_overfit():
    """HF sentiment classifier, 10/10 epochs: epoch-1 accuracy 0.902 at macro-F1 0.190 = (2p/(1+p))/5, a
    constant predictor over 5 classes; later accuracy 0.41-0.82. Before: overfit (GE001 on eval_loss)."""
    rep = audit(_run("arshiv-web--Financial-News-Sentiment-Analysis/trainer_state.json"))
    assert "GE001" not in _codes(rep)
    ge2 = [f for f in rep.findings if f.code == "GE002" and f.facts.get("majority_baseline")]
    assert ge2 and ge2[0].facts["classes"] == 5
    assert rep.verdict.outcome.value == "underfit", rep.verdict.summary


def test_ge002_majority_baseline_needs_a_run_that_never_beat_it():
    """COCO-crop classifier: one evaluation (0.849) fits the constant-predictor shape for 2 classes by
    coincidence, but the run reached 0.921: it beat that baseline, healthy."""
    rep = audit(_run("DanilovLeo--cv-hw3/hw2_5/logs/cls_train_baseline.log"))
    assert not [f for f in rep.findings if f.facts.get("majority_baseline")]
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_ge007_flat_eval_loss_while_the_task_metric_improves_to_the_end_is_not_a_plateau():
    """HF summariser, 10/10 epochs: eval loss flat after epoch 6 while ROUGE-1 rose to its best at the last
    evaluation. Before: plateaued (GE007 'diminishing')."""
    rep = audit(_run("Jaong--Checkpoint-of-CPT/trainer_state.json"))
    assert "GE007" not in _codes(rep)
    assert rep.verdict.outcome.value == "succeeded", rep.verdict.summary


def test_ge002_a_held_out_score_frozen_at_one_value_is_stuck():
    """Keras CSVLogger of a brain-tumour segmentation: pixel accuracy 0.987, loss falling, but
    val_mean_io_u (Keras's snake-cased MeanIoU, read as an IoU score) repeats 0.3755 at 29 of 35 epochs:
    one mask for every input. Before: succeeded/healthy (a must_not)."""
    from mlaudit_core.roles import parse_name

    assert parse_name("val_mean_io_u").head == "iou"
    rep = audit(_run("ArjunPesaru--Brain_tumor_project/training.log"))
    ge2 = [f for f in rep.findings if f.code == "GE002" and f.facts.get("stuck_accuracy")]
    assert ge2 and ge2[0].facts["key"] == "val_mean_io_u"
    assert rep.verdict.outcome.value in ("underfit", "plateaued"), rep.verdict.summary


def test_healthy_needs_a_loss_that_did_not_end_above_its_start(tmp_path):
    """The last launch of the radio-classifier log (its lines verbatim: 'Starting training for 1 epochs',
    one epoch, 'Training completed!'): the loss read goes 2.547 -> 21.9 over 3 points with no held-out
    series. Too few points for a divergence, but a loss that rose is no evidence of success: unknown,
    never succeeded."""
    text = (
        (RUNS / "BelaBartok39--ML_Radio_Project/training.log").read_text().rstrip("\n").split("\n")
    )
    start = max(i for i, ln in enumerate(text) if ln.endswith("Setting up datasets..."))
    lines = text[start:]
    assert lines[0].endswith("Setting up datasets...") and lines[-1].endswith("Training completed!")
    log = tmp_path / "training.log"
    log.write_text("\n".join(lines) + "\n")
    v = audit(list(load_path(log).runs)[-1][1]).verdict
    assert v.outcome.value == "unknown", v.summary


@pytest.mark.parametrize("rel", ["FarjadAhmed--detr_custom_dcmha/output/log.txt"])
def test_nothing_learned_to_overfit_when_the_held_out_score_never_left_its_floor(rel):
    """DETR JSON log, 4 epochs: train class error ~100%, test loss rising, COCO AP <= 7e-8 at every epoch.
    A rising held-out loss on a model that learned nothing measurable is not an overfit. Before: overfit
    (V12a gap-overfit)."""
    v = audit(_run(rel)).verdict
    assert (v.outcome.value, v.rule) == ("underfit", "V11c"), v.summary


def test_li002_one_start_up_value_on_another_counter_is_not_a_reset():
    """DeepSpeed ZeRO-2 console, 100/100 steps and 'Training done': the engine's 'step=0' start-up line
    and then the trainer's 'Step 1/100': the learning-rate series goes 2 -> 1 after two points. A warning
    (startup), not the step-reset error. Before: unstable/correctness_bug (a must_not)."""
    rep = audit(_run("linskybing--LLM/logs/nv/zero_2_offload.out"))
    li2 = [f for f in rep.findings if f.code == "LI002"]
    assert li2 and li2[0].severity.value == "warning" and li2[0].facts.get("startup") is True
    assert rep.verdict.outcome.value != "unstable", rep.verdict.summary


# --- a small relative drop with no reference level is a plateau, not an underfit ----------------------


@pytest.mark.parametrize(
    "rel",
    [
        # LoRA fine-tune of a pretrained LM, 3/3 epochs: loss 1.42 -> 1.36, eval loss tracking it
        "ananyakaligal--Gemma2B-Finetuning/results/checkpoint-68559/trainer_state.json",
    ],
)
def test_ge002_a_small_relative_drop_without_a_reference_level_is_a_plateau(rel):
    rep = audit(_run(rel))
    (g,) = [f for f in rep.findings if f.code == "GE002"]
    assert g.facts["relative_drop_only"] is True
    assert not g.facts["at_chance"] and not g.facts["score_floor"] and not g.facts["never_fell"]
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("plateaued", "model_convergence"), v.summary


@pytest.mark.parametrize(
    "rel, reference",
    [
        # AlexNet at lr 3e-3: training loss at ln 10 with validation accuracy 10%
        (
            "nicetea17--CIFAR10-Classifier-AlexNet-and-Resnet18/wandb/run-20251020_211912-o6b5bny5",
            "at_chance",
        ),
        # TF2 MSE regressor whose training loss never went below its first value
        ("LenaSchoetker--IANNwTF/4_homework_group_22/logs/config_name/subtract", "never_fell"),
    ],
)
def test_ge002_a_small_drop_with_a_reference_level_stays_underfit(rel, reference):
    rep = audit(_run(rel))
    (g,) = [f for f in rep.findings if f.code == "GE002"]
    assert g.facts[reference] and g.facts["relative_drop_only"] is False
    assert rep.verdict.outcome.value == "underfit", rep.verdict.summary


# --- the lone training loss still falling at its pace at the end: a small drop is no plateau -----------


@pytest.mark.parametrize(
    "rel",
    [
        # 'Epoch k/200 | Loss' of a binary segmentation model: quarter medians 0.553, 0.529, 0.515, 0.506
        "Aman2125--Rooftop-Image-segmentation/training.log",
        # LM pretraining console, steps 700-2840 (its start lost): quarter medians 4.34, 4.15, 4.09, 3.99
        "269652--neuroslm/training.log",
    ],
)
def test_policy_loss_alone_still_falling_is_not_a_plateau(rel):
    from mlaudit_core.roles import Role
    from mlaudit_core.verdict.policy import still_falling_at_pace

    run = _run(rel)
    rep = audit(run)
    (g,) = [f for f in rep.findings if f.code == "GE002"]
    assert g.facts["relative_drop_only"] is True and "OP003" not in _codes(rep)
    assert still_falling_at_pace(run, run.key_for(Role.TRAIN_LOSS)) is not None
    assert rep.verdict.outcome.value not in ("plateaued", "underfit"), rep.verdict.summary


# --- held-out numbers still improving at the end: a flat training loss is no plateau -------------------


@pytest.mark.parametrize(
    "rel",
    [
        # DeiT JSON log: smoothed train loss flat at ~4.75, test top-1 at its best at the last of 15 epochs
        "JER-ry--CF-ViT/output/log.txt",
        # QLoRA console: eval loss 1.382 -> 1.345, at its best at the last evaluation
        "Ariz-Mohammadi--finetuned-qwen3-medical-qlora/training.log",
        # a second Lightning run starting (0.33) where the first ended: val loss 0.316 -> 0.306, best at the end
        "Baucki1--NNjetTagger/lightning_logs/version_2",
    ],
)
def test_policy_heldout_still_improving_at_the_end_is_not_a_plateau(rel):
    from mlaudit_core.verdict.policy import heldout_still_improving

    run = _run(rel)
    assert heldout_still_improving(run) is not None
    v = audit(run).verdict
    assert v.outcome.value not in ("plateaued", "underfit"), v.summary


def test_policy_heldout_best_mid_run_keeps_the_plateau():
    """Lightning FT-Transformer: valid_loss best at evaluation 4 of 7, accuracy flat: a plateau."""
    from mlaudit_core.verdict.policy import heldout_still_improving

    run = _run("RaduTuodr--NN-Classification---Forest-Cover-Type/lightning_logs/version_0")
    assert heldout_still_improving(run) is None
    assert audit(run).verdict.outcome.value == "plateaued"


# --- a plateau under an accuracy that rose to 90% or more is learning done, not a stall ---------------


def test_policy_plateau_under_a_learned_accuracy_is_not_a_plateau():
    """Multi-node DDP console of a CNN: 'C.E. Loss' flat at ~0.95 from epoch 8 (OP003), accuracy 94.3%
    -> 98.5% over 47 epochs (own corpus f5b1-19, labelled healthy). Before: plateaued/model_convergence."""
    from mlaudit_core.verdict import build_context
    from mlaudit_core.verdict.policy import learned_its_task

    run = _run("davijoocho--convolutional-neural-network/train.out")
    rep = audit(run)
    (op3,) = [f for f in rep.findings if f.code == "OP003"]
    assert op3.severity.value == "warning"
    got = learned_its_task(build_context(run, rep.findings, rep.detectors), op3)
    assert got is not None and got[0] == "train/accuracy" and got[2] >= 0.98, got
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
