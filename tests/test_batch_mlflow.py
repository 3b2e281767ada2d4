"""``mlaudit batch mlflow`` on a real ``mlflow server``: summary, unreadable runs listed with the
reason and exit 0, resume from the state file, and the Ray executor."""

from __future__ import annotations

import math
import sqlite3

import pytest

mlflow = pytest.importorskip("mlflow")
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402

WIDE = {"COLUMNS": "240", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}


def log_run(client, exp_id: str, name: str, shape: str, finish: bool = True) -> str:
    from mlflow.entities import Metric

    rid = client.create_run(exp_id, run_name=name).info.run_id
    ms = []
    for i in range(1, 301):
        loss = 2.0 * math.exp(-i / 50) + 0.2
        if shape == "diverge" and i > 200:
            loss = 0.2 + (i - 200) * 0.3
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
        if i % 30 == 0:
            val = loss + 0.1 + (max(0, i - 90) * 0.02 if shape == "overfit" else 0.0)
            ms.append(Metric("val/loss", val, 1_700_000_000_000 + i * 1000, i))
    client.log_batch(rid, metrics=ms)
    if finish:
        client.set_terminated(rid, "FINISHED")
    return rid


@pytest.fixture(scope="module")
def experiment(mlflow_server):
    """Four finished runs (healthy, diverging, overfitting, and one whose metric history the
    server cannot read) and one still running."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment("batch-it")
    runs = {s: log_run(client, exp_id, s, s) for s in ("healthy", "diverge", "overfit")}
    runs["corrupt"] = log_run(client, exp_id, "corrupt", "healthy")
    runs["running"] = log_run(client, exp_id, "running", "healthy", finish=False)
    # A damaged row in the server's own store: get-history answers HTTP 500 for this run only.
    db = sqlite3.connect(mlflow_server["root"] / "mlflow.db")
    with db:
        db.execute(
            "UPDATE metrics SET value='not a number' WHERE run_uuid=? AND step=7",
            (runs["corrupt"],),
        )
    db.close()
    return runs


def batch(url: str, state, *extra: str):
    return CliRunner().invoke(
        app,
        ["batch", "mlflow", "-e", "batch-it", "-u", url, "--state", str(state), *extra],
        env=WIDE,
    )


def test_batch_summary_lists_unreadable_runs_and_exits_4(mlflow_server, experiment, tmp_path):
    """A batch with a run that failed is not a clean batch: exit 4 (EXIT_INCOMPLETE) and a
    line saying how to resume (issue 16, finding 8: an outage exited 0 with 75 of 80 failed)."""
    url, state = mlflow_server["url"], tmp_path / "b.sqlite"
    res = batch(url, state, "--jobs", "2")
    out = res.output
    assert res.exit_code == 4, out
    assert "1 of 4 run(s) could not be audited; run the same command again to retry them" in out
    assert "mlflow experiment batch-it: 4 runs, 3 audited, 1 unreadable or failed" in out
    assert "Unreadable or failed runs (1)" in out
    bad = next(line for line in out.splitlines() if experiment["corrupt"] in line)
    assert "load: MlflowException" in bad and "500" in out
    assert "diverged" in out and "overfit" in out and "Worst runs" in out
    worst = out[out.index("Worst runs") :]
    assert worst.index(experiment["diverge"]) < worst.index(experiment["overfit"])  # worst first

    client = mlflow.MlflowClient(url)
    assert client.get_run(experiment["diverge"]).data.tags["mlaudit.verdict"] == "diverged"
    assert client.get_run(experiment["overfit"]).data.tags["mlaudit.verdict"] == "overfit"
    assert client.get_run(experiment["healthy"]).data.tags["mlaudit.verdict"] == "succeeded"
    assert "mlaudit.verdict" not in client.get_run(experiment["corrupt"]).data.tags
    assert "mlaudit.verdict" not in client.get_run(experiment["running"]).data.tags  # not finished

    # Resumed: the three settled runs come from the state file, only the failed one is retried.
    again = batch(url, state)
    assert again.exit_code == 4, again.output
    assert "3 settled in an earlier session" in again.output
    assert "this session: 1 runs" in again.output
    assert "Unreadable or failed runs (1)" in again.output


def test_batch_bad_input_is_one_line_exit_2(mlflow_server, tmp_path):
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "mlflow",
            "-e",
            "batch-it",
            "-u",
            mlflow_server["url"],
            "--since",
            "last tuesday",
            "--state",
            str(tmp_path / "s.sqlite"),
        ],
    )
    assert res.exit_code == 2 and "--since 'last tuesday': not a date" in res.output
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "mlflow",
            "-e",
            "nope",
            "-u",
            mlflow_server["url"],
            "--state",
            str(tmp_path / "s.sqlite"),
        ],
    )
    assert res.exit_code == 2 and "no mlflow experiment named 'nope'" in res.output
    assert not (tmp_path / "s.sqlite").exists()  # nothing written for bad input


def test_batch_non_sqlite_state_file_leaves_no_lock_behind(mlflow_server, experiment, tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"GARBAGE" * 1000)
    res = batch(mlflow_server["url"], garbage)
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and f"{garbage}: not an mlaudit state file" in lines[0], res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.db"]
    assert garbage.read_bytes() == b"GARBAGE" * 1000


def test_state_store_refuses_a_bad_file_before_making_a_lock(tmp_path):
    from mlaudit_core.errors import InputError
    from mlaudit_core.service import StateStore

    garbage = tmp_path / "g.sqlite"
    garbage.write_text("hello")
    with pytest.raises(InputError, match="not an SQLite database"):
        StateStore(garbage, "scope")
    with pytest.raises(InputError, match="is a directory"):
        StateStore(tmp_path, "scope")
    # passes the header check but is damaged past it: the lock file made is removed again
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)
    with pytest.raises(InputError, match="not an mlaudit state file"):
        StateStore(broken, "scope")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.sqlite", "g.sqlite"]
    with StateStore(tmp_path / "ok.sqlite", "scope") as store:  # a new file still works
        assert store.scope == "scope"


def test_batch_on_ray_gives_the_same_summary(mlflow_server, experiment, tmp_path, ray_exclusive):
    pytest.importorskip("ray")
    res = batch(
        mlflow_server["url"],
        tmp_path / "r.sqlite",
        "--executor",
        "ray",
        "--jobs",
        "2",
        "--no-write",
    )
    assert res.exit_code == 4, res.output  # the unreadable run: not a clean batch
    assert "mlflow experiment batch-it: 4 runs, 3 audited, 1 unreadable or failed" in res.output
    assert experiment["corrupt"] in res.output and "load: MlflowException" in res.output
    for shape in ("diverged", "overfit", "succeeded"):
        assert shape in res.output


@pytest.mark.parametrize("form", ["{}", "ray://{}"])
def test_batch_on_an_unreachable_ray_address_is_one_line_exit_2(
    mlflow_server, experiment, tmp_path, monkeypatch, form
):
    """A closed port: ray.init would retry its GCS connection for minutes; the address is
    checked (TCP connect) before the listing and before any state file or directory."""
    from conftest import free_port

    address = form.format(f"127.0.0.1:{free_port()}")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "mlflow",
            "-e",
            "batch-it",
            "-u",
            mlflow_server["url"],
            "--executor",
            "ray",
            "--ray-address",
            address,
        ],
        env=WIDE,
    )
    assert res.exit_code == 2, res.output
    assert res.output == (
        f"mlaudit: error: --ray-address {address}: cannot connect (Connection refused)\n"
    )
    assert list(tmp_path.iterdir()) == []  # no ./.mlaudit/ state directory


def test_batch_state_in_an_unusable_place_is_one_line_exit_2(mlflow_server, experiment, tmp_path):
    """A parent that is a regular file, a device, and (as root, where chmod does not bind)
    /proc, where no file can be created: one line naming the path, nothing created."""
    import os

    (tmp_path / "afile").write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    ro_state = (
        ro / "s.sqlite" if not os.access(ro, os.W_OK) else f"/proc/mlaudit-{os.getpid()}.sqlite"
    )
    try:
        for state, text in (
            (tmp_path / "afile" / "s.sqlite", "a parent of the state file is not a directory"),
            ("/dev/null", "not a regular file"),
            (ro_state, ""),
        ):
            res = batch(mlflow_server["url"], state, "--no-write")
            assert res.exit_code == 2, res.output
            lines = res.output.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"mlaudit: error: {state}: {text}")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "ro"]
        assert list(ro.iterdir()) == [] and not os.path.exists("/dev/null-journal")
    finally:
        ro.chmod(0o755)
