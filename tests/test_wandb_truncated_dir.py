"""W&B run folders whose ``.wandb`` stops early (integrations/mlaudit_wandb/local_format.py).

The shape of the realworld corpus's wb01/wb02 (aorvieto/VerySimpleTransformer: the
committed ``.wandb`` stops at step ~3,900 of 62,509 with no exit record, while
``files/wandb-summary.json``, ``files/output.log`` and ``logs/debug.log`` were written
to the end), made here with the real wandb SDK in offline mode (a subprocess) and cut to
a prefix of its bytes. And the opposite case: a live offline run, read while its
process is still logging, must stay ``running``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.waiting import wait_until

pytest.importorskip("wandb")

_TRAIN = r"""
import sys, time, wandb
n, hold = int(sys.argv[1]), sys.argv[2]
r = wandb.init(project="trunc", config={"lr": 3e-4, "epochs": 4})
for i in range(n):
    r.log({"train_loss": 0.7 - 0.00001 * i, "lr": 3e-4})
    if i % (n // 4) == n // 4 - 1:
        ep = i // (n // 4)
        acc = [0.74, 0.82, 0.84, 0.54][ep]
        print(f"epoch: {ep} test_acc: {acc}", flush=True)
        r.log({"test_acc": acc})
if hold != "-":
    open(hold, "w").write("logged")
    time.sleep(120)
r.finish()
"""


def _flushed(root: Path, n: int):
    """The run of the one offline run under ``root`` once the SDK has written all ``n`` logged
    train_loss points and the four test_acc points to its .wandb file (the process still runs)."""
    from mlaudit_wandb import local_format as wandb_dir

    def read():
        try:
            run = wandb_dir.load(_run_dir(root))
        except Exception:  # noqa: BLE001 - the folder or its .wandb file is not written yet
            return None
        done = run.metrics.count("train_loss") == n and run.metrics.count("test_acc") == 4
        return run if done else None

    return wait_until(read, 120, f"the SDK to write the {n} logged points")


def _spawn(root: Path, n: int, hold: str = "-") -> subprocess.Popen:
    env = dict(
        os.environ,
        WANDB_MODE="offline",
        WANDB_DIR=str(root),
        WANDB_SILENT="true",
        WANDB_CONSOLE="wrap",
    )
    return subprocess.Popen(
        [sys.executable, "-c", _TRAIN, str(n), hold],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _run_dir(root: Path) -> Path:
    (d,) = (root / "wandb").glob("offline-run-*")
    return d


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wandb-trunc")
    p = _spawn(root, 4000)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()[-2000:]
    d = _run_dir(root)
    # Offline runs of SDK 0.31 leave files/wandb-summary.json to `wandb sync`; write it as the
    # synced wb01/wb02 folders have it, from the SDK's own summary records in the full .wandb.
    import json

    from mlaudit_wandb.offline import load_offline

    full = load_offline(d)
    summ = json.loads(full.environment["summary"])
    summ.update(
        _step=int(full.metrics.series("train_loss").steps.max()),
        _runtime=(full.end_time - full.start_time).total_seconds(),
    )
    (d / "files" / "wandb-summary.json").write_text(json.dumps(summ))
    return d


def _cut(src: Path, dst: Path, share: float) -> Path:
    """A copy of the run folder whose ``.wandb`` keeps only the first ``share`` of its bytes."""
    shutil.copytree(src, dst)
    (log,) = dst.glob("*.wandb")
    data = log.read_bytes()
    log.write_bytes(data[: int(len(data) * share)])
    return dst


def test_full_run_is_finished_with_no_truncation_warning(finished):
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.rundata import RunStatus

    run = wandb_dir.load(finished)
    assert run.status == RunStatus.FINISHED
    assert not any("truncated" in w or "no exit record" in w for w in run.warnings)


def test_truncated_wandb_with_debug_log_exit_is_finished_and_warns(finished, tmp_path):
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.rundata import RunStatus

    d = _cut(finished, tmp_path / finished.name, 0.1)
    # the offline reader alone (the .wandb) can only say running
    from mlaudit_wandb.offline import load_offline

    assert load_offline(d).status == RunStatus.RUNNING
    run = wandb_dir.load(d)
    assert run.status == RunStatus.FINISHED
    assert run.environment.get("exit_code") == "0"
    (wname,) = [p.name for p in d.glob("*.wandb")]
    assert any(wname in w and "no exit record" in w and "logs/debug.log" in w for w in run.warnings)
    assert not any("audited as running" in w for w in run.warnings)
    steps = run.metrics.series("train_loss").steps
    assert 0 < steps.max() < 3000  # the prefix, not the 4000 steps the summary reached
    assert float(run.params["summary._step"]) >= 4000
    # the console covers the whole run: its per-epoch test_acc lines (the last, the collapse,
    # is beyond the .wandb prefix) are in the history the detectors see
    console_acc = [k for k in run.metrics.keys if "acc" in k]
    assert console_acc, run.metrics.keys
    vals = run.metrics.series(console_acc[0]).values
    assert len(vals) >= 4 and vals[-1] == pytest.approx(0.54)


def test_truncated_wandb_without_debug_log_has_status_from_summary(finished, tmp_path):
    """No exit code anywhere, an old folder, a summary far ahead of the .wandb: ended, exit
    unknown (not running); with a fresh mtime and nothing else, it stays running."""
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.rundata import RunStatus

    d = _cut(finished, tmp_path / finished.name, 0.1)
    (d / "logs" / "debug.log").unlink()
    out = d / "files" / "output.log"
    out.write_text(
        "".join(
            line
            for line in out.read_text().splitlines(keepends=True)
            if not line.startswith("wandb:")
        )
    )
    run = wandb_dir.load(d)
    assert run.status == RunStatus.RUNNING  # just written: could be live
    old = time.time() - 3 * wandb_dir.RECENT_S
    for p in d.rglob("*"):
        os.utime(p, (old, old))
    run = wandb_dir.load(d)
    assert run.status == RunStatus.UNKNOWN
    assert any("no exit record" in w and "wandb-summary.json" in w for w in run.warnings)


def test_live_offline_run_stays_running(tmp_path):
    """A real offline run read while its process still runs (it sleeps after logging)."""

    from mlaudit_core.rundata import RunStatus

    flag = tmp_path / "logged"
    p = _spawn(tmp_path, 400, str(flag))
    try:
        for _ in range(600):
            if flag.exists() or p.poll() is not None:
                break
            time.sleep(0.2)
        assert flag.exists(), (
            p.stderr.read().decode()[-2000:] if p.poll() is not None else "no flag"
        )
        run = _flushed(tmp_path, 400)
        assert run.status == RunStatus.RUNNING
        assert not any("the run ended" in w for w in run.warnings)
    finally:
        p.kill()
        p.wait(timeout=30)


def test_truncated_wandb_with_footer_is_finished(finished, tmp_path):
    """No debug.log, a fresh folder, but output.log ends with the footer ``wandb.finish()`` prints
    (the line of wandb_run.py's ``_footer_sync_info``, appended here: WANDB_SILENT runs omit it)."""
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.rundata import RunStatus

    d = _cut(finished, tmp_path / finished.name, 0.1)
    (d / "logs" / "debug.log").unlink()
    with open(d / "files" / "output.log", "a") as fh:
        fh.write(
            "wandb: Synced 5 W&B file(s), 0 media file(s), 0 artifact file(s) and 0 other file(s)\n"
        )
    run = wandb_dir.load(d)
    assert run.status == RunStatus.FINISHED
    assert "exit_code" not in run.environment
    assert any("footer" in w and "no exit record" in w for w in run.warnings)


def test_killed_offline_run_silent_for_hours_is_crashed_not_running(tmp_path, monkeypatch):
    """A real offline run SIGKILLed while it logs (no exit record, no footer, no exit code):
    read at once it may still be live (running); read when its last record is 3 h old
    (the clock moved forward, the files' mtimes set back) it is what W&B's server calls
    crashed: status failed, a verdict that is neither succeeded nor running, and the warning says how long it was silent.
    Before, it stayed 'running' forever (break-it, session 4)."""
    import signal

    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.audit import audit
    from mlaudit_core.rundata import RunStatus

    flag = tmp_path / "logged"
    p = _spawn(tmp_path, 400, str(flag))
    try:
        for _ in range(600):
            if flag.exists() or p.poll() is not None:
                break
            time.sleep(0.2)
        assert flag.exists(), (
            p.stderr.read().decode()[-2000:] if p.poll() is not None else "no flag"
        )
        _flushed(tmp_path, 400)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    d = _run_dir(tmp_path)
    assert wandb_dir.load(d).status == RunStatus.RUNNING  # silent for seconds: could be live

    later = time.time() + 3 * 3600
    monkeypatch.setattr(wandb_dir, "_now", lambda: later)
    for f in d.rglob("*"):
        os.utime(f, (later - 3 * 3600, later - 3 * 3600))
    run = wandb_dir.load(d)
    assert run.status == RunStatus.FAILED
    assert any("no exit record" in w and "3.0 h ago" in w for w in run.warnings), run.warnings
    # the curve here barely moves (0.7 -> 0.696), so what it shows may come before the end;
    # what must not happen is a verdict that the run succeeded or is still running
    assert audit(run).verdict.outcome.value not in ("succeeded", "running")


def test_finished_run_read_hours_later_stays_finished(finished, monkeypatch):
    """The silence rule only applies to a run with no end mark: a finished run read 3 h later
    is finished, with no warning about silence."""
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.rundata import RunStatus

    monkeypatch.setattr(wandb_dir, "_now", lambda: time.time() + 3 * 3600)
    run = wandb_dir.load(finished)
    assert run.status == RunStatus.FINISHED
    assert not any("silent" in w or "h ago" in w for w in run.warnings)


def test_notebook_run_never_closed_is_unknown_not_crashed():
    """A W&B run started from a Colab notebook (own corpus f6b2-02: ``program`` ``Untitled1%20(1).ipynb``
    and a ``colab`` URL in wandb-metadata.json), nine ``trainer.train()`` calls in one kernel, never
    closed with ``wandb.finish()``: the ``.wandb`` has no exit record and its last record is months old.
    A notebook's run stays open until ``wandb.finish()`` or the kernel stops, so the missing end is not a
    crash: status unknown with a warning naming the notebook, and a verdict other than crashed. A script's
    run silent for hours stays failed (test above)."""
    from mlaudit_wandb import local_format as wandb_dir

    from mlaudit_core.audit import audit
    from mlaudit_core.rundata import RunStatus

    d = (
        Path(__file__).parent
        / "data/realworld/runs/satishparaddi--Fine-Tuning-LLaMA-for-Medical-QA/wandb"
        / "run-20250422_232745-0bbap5k6"
    )
    assert wandb_dir._notebook(d).startswith("program")
    run = wandb_dir.load(d)
    assert run.status == RunStatus.UNKNOWN
    assert any("notebook" in w and "no exit record" in w for w in run.warnings), run.warnings
    assert audit(run).verdict.outcome.value != "crashed"
