"""verdict.evidence.open_bar: a console that ends inside a progress bar with time still to go was
captured while the run was going (a log pasted from a running job) or its process was killed without
a word: it is not evidence of a stop, nor of health (the cause is not in the file).

Inputs: report b3-08 (tests/data/reports: one tqdm line at 417/586 with its loss, the reporter asking
about a negative NLL) and bars written by the installed tqdm itself into a file, stopped mid-way as a
paste of a running job is.
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.evidence import open_bar

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _audit(*args: str) -> dict:
    res = CliRunner().invoke(app, ["logs", *args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def _steady_clock(bar: tqdm, epoch: int, step_s: float = 0.01) -> None:
    """Give ``bar`` a clock that moves ``step_s`` seconds per reading from ``epoch`` * 100 s, so the
    rates it prints are the same on a loaded machine as on an idle one (tqdm reads its clock through
    the bar's ``_time`` attribute)."""
    ticks = iter(range(10**9))
    bar._time = lambda: epoch * 100.0 + next(ticks) * step_s  # type: ignore[attr-defined]
    bar.start_t = bar.last_print_t = bar._time()  # type: ignore[attr-defined]


def _tqdm_log(path: Path, epochs: int, stop_at: int, total: int = 200) -> Path:
    """Per-epoch tqdm bars with a loss postfix, as tqdm writes them to a file; the last stops at
    ``stop_at`` of ``total``."""
    with path.open("w") as fh:
        for epoch in range(epochs):
            last = epoch == epochs - 1
            bar = tqdm(total=total, desc=f"Epoch {epoch}", file=fh, mininterval=0, ascii=False)
            _steady_clock(bar, epoch)
            for i in range(stop_at if last else total):
                bar.set_postfix(loss=f"{2.3 / (1 + epoch + i / total):.4f}", refresh=False)
                bar.update(1)
            if not last:
                bar.close()
            else:
                fh.write("\n")
    return path


def test_a_paste_that_ends_mid_bar_is_running_not_crashed():
    (case,) = REPORTS.glob("b3-08-*")
    v = _audit(str(case / "train.log"))
    assert v["outcome"] == "running", v["summary"]


def test_open_bar_reads_tqdm_as_it_writes_itself(tmp_path):
    log = _tqdm_log(tmp_path / "train.log", epochs=1, stop_at=120)
    text = log.read_text().replace("\r", "\n").splitlines()
    assert open_bar(text) is not None
    done = _tqdm_log(tmp_path / "done.log", epochs=2, stop_at=200)
    assert open_bar(done.read_text().replace("\r", "\n").splitlines()) is None


def test_an_interrupt_after_the_bar_is_still_a_stop(tmp_path):
    log = _tqdm_log(tmp_path / "train.log", epochs=4, stop_at=90)
    with log.open("a") as fh:
        fh.write(
            'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\nKeyboardInterrupt\n'
        )
    v = _audit(str(log))
    assert v["outcome"] == "crashed", v["summary"]


def test_open_bar_quotes_only_the_bars_last_redraw(tmp_path):
    """tqdm writes every redraw of a bar to a file on one line, each after a carriage return: the
    verdict quotes the last redraw alone (newuser11: ``timeout 20 python train.py > log 2>&1``
    quoted three redraws joined by ``\\x0d``)."""
    log = _tqdm_log(tmp_path / "train.log", epochs=4, stop_at=90)
    v = _audit(str(log))
    assert v["summary"].count("Epoch 3") == 1 and "\\x0d" not in v["summary"], v["summary"]
    assert "90/200" in v["summary"] and "\r" not in v["summary"], v["summary"]


def test_healthy_unended_open_bar_is_running_with_the_cause_not_in_the_file(tmp_path):
    """A falling loss whose log ends inside a bar with time to go: a run still going and a process
    killed without a word leave the same file, so the cause is inconclusive, not healthy (own
    f6b1-02, f13b2-06, f13b2-16 are labelled so)."""
    log = _tqdm_log(tmp_path / "train.log", epochs=4, stop_at=90)
    v = _audit(str(log))
    assert (v["outcome"], v["cause"]) == ("running", "inconclusive"), v["summary"]
    assert "90/200" in v["summary"], v["summary"]
