"""Session-6 diagnosis rules, each on real input: artifacts of the own corpus (tests/data/realworld),
reports of the report corpus (tests/data/reports) or a message produced by the real package; each
test fails on the code before the change.

- A distributed rendezvous that cannot open its socket (torch's TCPStore on a master port already
  taken: ``EADDRINUSE``, ``DistNetworkError``) is the launch environment (``infra_runtime``), not a
  bug in the training code (f6b3-07).
- A step counter that goes back is a resumed run only on a counter known to be the optimizer step,
  within one launch (detectors/_counters.py): W&B's ``_step`` counts ``wandb.log`` calls (f6b2-03,
  f5b3-01: an epoch every 4 log calls called a reset), a trainer's ``global_step`` logged in the same
  W&B row is the step and restarts with the epoch at each ``trainer.train()`` of a notebook (f6b2-02),
  the console reader's own record count is not a step (f6b3-10: TRL dicts on progress-bar positions;
  b4-09: Lightning bar lines with no step, numbered 1..4 by the reader, next to "epoch 10 of 20000
  steps per epoch"). A resumed run whose logged step restarted while its epoch did not still fires
  (shared case resume-counter-reset).
- A loss non-finite from its first logged point is "broken before any update" only when that point is
  the start of the run (b6-04: a window starting at step 1655 of a per-step log; tb05 stays).
- An exception raised in a thread other than the main one (``Exception in thread NAME:``) ends that
  thread only; when the console goes on after it, it is not how the run ended (f6b3-06).
"""

from __future__ import annotations

import datetime
import socket
from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.exception_causes import classify
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.roles import Role

OWN = Path(__file__).parent / "data" / "realworld" / "runs"
REPORTS = Path(__file__).parent / "data" / "reports"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


@pytest.mark.e2e
def test_rendezvous_on_a_taken_port_as_torch_and_python_raise_it():
    dist = pytest.importorskip("torch.distributed")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            dist.TCPStore("127.0.0.1", port, 1, True, timeout=datetime.timedelta(seconds=5))
        except RuntimeError as e:
            t = type(e)
            got = classify(f"{t.__module__}.{t.__qualname__}", str(e))
            assert got is not None and got.id == "rendezvous-socket", e
        else:
            raise AssertionError("TCPStore listened on a taken port")
        with socket.socket() as second:
            try:
                second.bind(("127.0.0.1", port))
            except OSError as e:
                got = classify("OSError", str(e))
                assert got is not None and got.id == "rendezvous-socket", e
            else:
                raise AssertionError("bound a taken port")


def test_torchrun_ranks_that_could_not_listen_on_the_master_port_are_the_environment():
    rep = audit(_run(OWN / "JVrabel--LLM_KD/logs/training.log"))  # f6b3-07
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert rep.verdict.cause is Cause.INFRA_RUNTIME, rep.verdict.summary


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
    run = _run(OWN / "Debajyoti2004--Brain_tumor_disease/lightning_logs/version_3")
    rep = audit(run)
    assert (rep.verdict.outcome, rep.verdict.cause) == (Outcome.DIVERGED, Cause.DATA_CONFIG), (
        rep.verdict.summary
    )


def test_an_exception_in_a_reader_thread_is_not_the_crash_when_the_console_goes_on():
    """f6b3-06: subprocess's _readerthread fails to decode a tool's output on a Windows console; the
    LoRA training then prints its banners and progress bars up to step 2 of 30 and the file ends."""
    rep = audit(_run(OWN / "Jeff555max--Fine-tuning-LoRA/train_log.txt"))
    assert rep.verdict.cause is not Cause.CORRECTNESS_BUG, rep.verdict.summary
    assert "raised in thread Thread-2 (_readerthread), not the main thread" in rep.verdict.summary


def test_an_exception_in_the_main_thread_of_a_real_script_is_still_the_crash(tmp_path):
    """The same UnicodeDecodeError raised in the main thread by a real Python script, captured as
    users capture it (python train.py > log 2>&1), then nothing: the crash."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(
        "import threading\n"
        "def reader():\n"
        "    b'\\xad'.decode('utf-8')\n"
        "t = threading.Thread(target=reader); t.start(); t.join()\n"
        "for s in range(1, 6):\n"
        "    print(f'step {s} loss {2.0 / s:.3f}', flush=True)\n"
        "b'\\xad'.decode('utf-8')\n"
    )
    log = tmp_path / "train.log"
    with log.open("wb") as out:
        subprocess.run(
            [sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT, check=False
        )
    text = log.read_text()
    assert text.startswith("Exception in thread") and text.rstrip().endswith(
        "invalid start byte"
    ), text
    rep = audit(_run(log))
    assert rep.verdict.outcome is Outcome.CRASHED, rep.verdict.summary
    assert (
        "UnicodeDecodeError" in rep.verdict.summary
        and "not the main thread" not in rep.verdict.summary
    )


@pytest.mark.parametrize(
    "path",
    [
        "BiaoLiu2017--BERT-NER/train.log",  # f6b1-04: TF1 Estimator 'Running training', then prediction
        "Jadeeeey--ColossalAI-Dreambooth/log/train.log",  # f6b3-05: the banner, checkpoints, a final save
    ],
)
def test_a_training_banner_without_any_training_record_is_no_evidence_of_a_stop(path):
    rep = audit(_run(OWN / path))
    assert rep.verdict.outcome is not Outcome.CRASHED, rep.verdict.summary
    assert "end-of-training line" not in rep.verdict.summary
