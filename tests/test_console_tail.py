"""Console artifacts are read from their tail (issue 16, finding 10): from the real
``mlflow server`` of conftest (artifacts proxied, ``mlflow-artifacts:/``) with one ranged GET,
and from a local artifact folder in place; never the whole file to keep its last 50 MB."""

from __future__ import annotations

import pytest

mlflow = pytest.importorskip("mlflow")

from mlaudit_mlflow import loader  # noqa: E402
from mlaudit_mlflow.console_tail import read_tail  # noqa: E402

LINES = [f"step {i} loss {1.0 / i:.6f} lr 3e-4\n" for i in range(1, 20001)]
TEXT = "".join(LINES).encode()


def _run_with_console(client, exp_name: str, tmp_path) -> str:
    exp = client.create_experiment(exp_name)
    rid = client.create_run(exp, run_name="long-console").info.run_id
    f = tmp_path / "console.log"
    f.write_bytes(TEXT)
    client.log_artifact(rid, str(f))
    client.set_terminated(rid, "FINISHED")
    return rid


def test_server_artifacts_are_read_with_a_range_request(mlflow_server, tmp_path):
    # The server is the session's: other tests break runs on purpose (test_batch_formats stores a
    # non-numeric metric, a 500 with a traceback), so only this test's part of its log is checked.
    server_log = mlflow_server["root"] / "server.log"
    start = server_log.stat().st_size
    client = mlflow.MlflowClient(mlflow_server["url"])
    rid = _run_with_console(client, "console-tail-http", tmp_path)
    assert client.get_run(rid).info.artifact_uri.startswith("mlflow-artifacts:")
    data, how = read_tail(client, rid, "console.log", 100_000)
    assert how == "range" and data == TEXT[-100_000:]
    with server_log.open("rb") as f:
        f.seek(start)
        log = f.read()
    assert b"Traceback" not in log


def test_local_artifacts_are_read_in_place_and_the_loader_keeps_the_tail(tmp_path, monkeypatch):
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = mlflow.MlflowClient(uri)
    rid = _run_with_console(client, "console-tail-local", tmp_path)
    data, how = read_tail(client, rid, "console.log", 50_000)
    assert how == "local" and data == TEXT[-50_000:]
    monkeypatch.setattr(loader, "CONSOLE_MAX_BYTES", 50_000)
    warnings: list[str] = []
    arts = loader._list_artifacts(client, rid)
    assert [(a.path, a.size) for a in arts] == [("console.log", len(TEXT))]
    lines = loader.read_console(client, rid, arts, warnings)
    assert lines[-1].text == LINES[-1].rstrip("\n")
    assert all(ln.text != LINES[0].rstrip("\n") for ln in lines)
    assert any("read the last 50000" in w for w in warnings)
