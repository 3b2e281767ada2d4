"""Catalog entries of ``mlaudit_core.signatures`` on real failure reports, through the CLI.

Each case is a public report of ``tests/data/reports`` (or an artifact of ``tests/data/realworld``) run
as ``benchmarks/diagnosis_eval.py`` runs it: ``mlaudit logs FILE... --config TXT...``. The rules:

* a failure inside torch.save (``File ... cannot be opened.``, ``write(): fd N failed with ...``) is
  storage, infra_runtime, not a bug in the user's code (``checkpoint-write-failed``);
* the shell's ``Killed`` in another locale (``已杀死``) is a SIGKILL (``sigkill``, ``KILLED_LOCALISED``);
* Slurm's ``CANCELLED AT ...`` with no reason is a termination from outside (``slurm-cancelled``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).resolve().parent / "data"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def _report(prefix: str) -> dict:
    (case,) = (DATA / "reports").glob(prefix + "*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    return _verdict(*args, "--name", case.name)


@pytest.mark.parametrize("prefix", ["b1-03-", "b1-05-"])
def test_checkpoint_write_failed_inside_torch_save_is_infra(prefix):
    v = _report(prefix)
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")
    assert "storage" in v["summary"] and "torch.save" in v["summary"]


def test_localised_killed_line_is_a_sigkill():
    v = _report("b3-06-")
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")
    assert "SIGKILL" in v["summary"]


def test_slurm_cancelled_without_reason_is_a_termination():
    log = (
        DATA
        / "realworld"
        / "runs"
        / "owencqueen--PolymerGNN"
        / "formal"
        / "model_comparisons"
        / "SOAP"
        / "out_tg"
        / "SOAP.e"
    )
    v = _verdict("logs", str(log))
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")
    assert "slurm-cancelled" in v["summary"]


def test_a_word_of_the_localised_list_inside_a_sentence_is_not_a_kill(tmp_path):
    from mlaudit_core.signatures import match_line

    assert not match_line("epoch 3: Morto = 0.5, loss 0.2")
    assert not match_line("le processus Tué par erreur a redémarré")
    assert [s.id for s, _ in match_line("  Getötet  ")] == ["sigkill"]


def test_caffe_cuda_check_with_error_2_is_out_of_memory():
    """Real report b13-14 (HF-FCN on Caffe, Quadro K2200 4 GB: 'Check failed: error == cudaSuccess (2 vs. 0)
    out of memory' after 'Aborted (core dumped)'; fixed by a larger GPU): Caffe's CUDA_CHECK prints the CUDA
    error's number, 2 = cudaErrorMemoryAllocation; before, only the abort was read (crashed/inconclusive)."""
    v = _report("b13-14-")
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v["summary"]
    assert "out of memory" in v["summary"]


def test_a_traceback_the_paste_cut_before_its_exception_line_is_the_runs_exception():
    """Real report b19-08 (SimpleTuner: 'Traceback (most recent call last):', five frames down to
    torch's DataLoader ``_next_data``, then the reporter's ``[...]``; a latent-shape bug fixed by a code
    patch): the run raised, class and message cut from the paste, so it crashed on an error of the code
    (was crashed/inconclusive from the epoch count, 'stopped without a crash signature'). The scanner keeps
    the frames, and a traceback whose exception line follows the mark is read as before."""
    from mlaudit_core.rundata import ConsoleLine
    from mlaudit_core.signatures import scan

    v = _report("b19-08-")
    assert (v["outcome"], v["cause"]) == ("crashed", "correctness_bug"), v["summary"]
    assert "exception line the paste cut ([...] after 5 frames)" in v["summary"]
    whole = [
        "Traceback (most recent call last):",
        '  File "train.py", line 49, in <module>',
        "[...]",
        '  File "model.py", line 7, in forward',
        "ValueError: shapes differ",
    ]
    _, tbs = scan([ConsoleLine("a.log", i, t) for i, t in enumerate(whole, 1)])
    assert [(t.exception_type, len(t.frames)) for t in tbs] == [("ValueError", 2)]
