"""The step and epoch counters of a run (mlaudit_core/detectors/_counters.py) and the detectors
that read them, LI002 (step counter reset) and LI003 (epoch/step mismatch), on real input: artifacts
of the own corpus (tests/data/realworld), reports of the report corpus (tests/data/reports).

- A step counter that goes back is a resumed run only on a counter known to be the optimizer step,
  within one launch: W&B's ``_step`` counts ``wandb.log`` calls (f6b2-03, f5b3-01: an epoch every 4
  log calls called a reset), a trainer's ``global_step`` logged in the same W&B row is the step and
  restarts with the epoch at each ``trainer.train()`` of a notebook (f6b2-02), the console reader's
  own record count is not a step (f6b3-10: TRL dicts on progress-bar positions; b4-09: Lightning bar
  lines with no step, numbered 1..4 by the reader, next to "epoch 10 of 20000 steps per epoch").
- LI003 does not call a reset when every record holds one steps-per-epoch ratio, whatever the
  steps-per-epoch figure says (log15: a progress-bar total over 3 epochs read as per epoch), nor when
  no record fits the reader's figure (log20).
- A relaunch resumed from an earlier checkpoint restores weights and counter together (log12).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.roles import Role

OWN = Path(__file__).parents[1] / "data" / "realworld" / "runs"
REPORTS = Path(__file__).parents[1] / "data" / "reports"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def _codes(rep, code: str, severity: str = "error") -> list[str]:
    return [f.message for f in rep.findings if f.code == code and f.severity.value == severity]


@pytest.mark.parametrize(
    "path",
    [
        "xyxdegithub--cwt_swinTransformer/wandb/run-20230704_135049-j1d3x7ry",  # f6b2-03
        "satishparaddi--Fine-Tuning-LLaMA-for-Medical-QA/wandb/run-20250422_232745-0bbap5k6",  # f6b2-02
    ],
)
def test_wandb_log_calls_and_trainer_relaunches_are_not_a_step_reset(path):
    rep = audit(_run(OWN / path))
    assert not _codes(rep, "LI003") and not _codes(rep, "LI002"), [f.message for f in rep.findings]
    assert rep.verdict.cause is not Cause.CORRECTNESS_BUG, rep.verdict.summary


def test_wandb_epoch_every_few_log_calls_leaves_the_overfit_visible():
    from mlaudit_core.detectors._counters import on_optimizer_step

    run = _run(OWN / "11291996--naver-bert-sentiment/wandb/run-20231005_002244-r8pcsnil")  # f5b3-01
    assert run.identity.tracker == "wandb"
    assert (
        on_optimizer_step(run, run.series(run.key_for(Role.EPOCH))) is None
    )  # no global_step logged
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.OVERFIT, rep.verdict.summary


def test_a_console_record_count_that_starts_over_is_a_warning_not_a_reset():
    run = _run(OWN / "Ariz-Mohammadi--finetuned-qwen3-medical-qlora/training.log")  # f6b3-10
    assert run.params["log.step_axis"] == "train_log_dict"
    rep = audit(run)
    assert not _codes(rep, "LI002"), _codes(rep, "LI002")
    assert [f for f in rep.findings if f.code == "LI002" and f.facts.get("reader_axis")]
    assert rep.verdict.outcome is not Outcome.UNSTABLE, rep.verdict.summary


def test_report_with_bar_lines_and_no_step_is_the_scheduler_stop_not_a_reset():
    from mlaudit_core.evidence import collect

    case = next(REPORTS.glob("b4-09-*"))
    run = collect(
        None,
        sorted(case.glob("*.log")),
        config=sorted(case.glob("*.txt")),
        name=case.name,
        value_files=False,
    ).run
    assert run.params.get("log.step_source") == "record_count"
    rep = audit(run)
    assert not _codes(rep, "LI003"), _codes(rep, "LI003")
    assert (rep.verdict.outcome, rep.verdict.cause) == (Outcome.CRASHED, Cause.INFRA_RUNTIME), (
        rep.verdict.summary
    )


@pytest.mark.parametrize(
    "params",
    [
        {"log.steps_per_epoch": "1677"},
        {"log.step_axis": "train_log_dict", "log.steps_per_epoch": "1677"},
    ],
)
def test_li003_no_reset_when_step_and_epoch_advance_together(params):
    run = _run(OWN / "Ishihara-Masabumi--Llama_SFT/train_log.txt")
    run.params.update(
        params
    )  # what a console reader reported for this log (the tqdm total, 3 epochs)
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI003"], [f.message for f in rep.findings]
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary


def test_li003_does_not_trust_a_bar_total_that_no_record_fits():
    """own log20: an HF console whose only epoch record with a step is (8716, epoch 10); the reader's
    steps per epoch (4358) came from a datasets 'Map' progress bar. No record fits that figure, so it
    is the figure that is wrong, not a counter that restarted."""
    run = _run(OWN / "EshaUbale--Language-Modeling-with-Huggiingface/train_log.txt")
    run.params["log.steps_per_epoch"] = "4358"  # what the console reader reported at 2e6c134
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI003"], [f.message for f in rep.findings]
    assert rep.verdict.cause.value != "correctness_bug", rep.verdict.summary


def test_a_relaunch_resumed_from_an_earlier_checkpoint_is_not_a_correctness_bug():
    """own log12: a console log whose second launch resumes from the epoch-70 checkpoint (epoch counter
    100 -> 71, loss 1.49 where the first launch had 1.66 at epoch 71): weights and counter restored
    together. Reported (LI002 warning, rewound), not 'the resume did not restore the training state'."""
    run = _run(OWN / "CloneNOX--Bi-LSTM-CN-Language-model/train_log.txt")
    rep = audit(run)
    li = [f for f in rep.findings if f.code == "LI002"]
    assert li and li[0].facts.get("rewound") and li[0].severity.value == "warning", [
        f.message for f in li
    ]
    assert rep.verdict.cause.value != "correctness_bug", rep.verdict.summary
    assert rep.verdict.outcome in (Outcome.SUCCEEDED, Outcome.PLATEAUED), rep.verdict.summary


def test_li003_no_reset_without_a_break_in_the_records():
    """own f14b1-04: a Lightning CSVLogger file of a BYOL-3D smoke test (hparams.yaml: max_steps 4,
    num_epochs 2, steps_per_epoch 2) whose four rows are steps 0-3, all in epoch 0. The step runs ahead
    of epoch x steps_per_epoch, but neither counter goes back and the first record fits: the loop
    stopped at max_steps inside its first epoch, no counter restarted."""
    run = _run(OWN / "Arshya-Guru--deepmind-research/lightning_logs/version_0/metrics.csv")
    rep = audit(run)
    assert not [f for f in rep.findings if f.code == "LI003"], [f.message for f in rep.findings]
    assert rep.verdict.cause is not Cause.CORRECTNESS_BUG, rep.verdict.summary


def test_a_zero_based_step_counter_reaches_its_max_steps_plan():
    """The same file: a 0-based step counter's last record at step 3 is the fourth of ``max_steps`` 4,
    so the run reached its plan (not 'stopped at step 3 of the 4 planned')."""
    from mlaudit_core.verdict.evidence import ending

    run = _run(OWN / "Arshya-Guru--deepmind-research/lightning_logs/version_0/metrics.csv")
    rep = audit(run)
    e = ending(run, rep.findings)
    assert (e.planned, e.reached) == (4.0, 4.0), e
    assert not e.stopped, e
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary
