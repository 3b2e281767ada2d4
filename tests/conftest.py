"""Shared fixtures: a real ``mlflow server`` on 127.0.0.1 with a sqlite backend, and helpers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

# The tests talk to 127.0.0.1 only: MLflow's usage telemetry (HTTPS to
# config.mlflow-telemetry.io, on by default since MLflow 3.2) is off for this process and every
# process it starts (mlflow server, training scripts, mlaudit), before mlflow is imported.
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

REPO = Path(__file__).resolve().parents[1]
SHARED_CASES = REPO.parent / "shared" / "cases"


@pytest.fixture(scope="module")
def ray_exclusive(tmp_path_factory):
    """Hold a lock shared by every pytest-xdist worker of this session while a test starts Ray.

    ``ray.init()`` without an address joins a Ray it finds running on the machine (its GCS
    process, ``/tmp/ray/ray_current_cluster``) instead of starting its own, so the local Ray of
    test_batch_mlflow's ``--executor ray`` must not start while test_batch_trackers' ``ray
    start --head`` cluster runs on another worker (``-n 2 --dist loadfile``). An ``fcntl``
    lock on a file in the session's base temp dir, which the workers' temp dirs share; in a
    serial run it is always free."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(root / "ray.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """Start ``mlflow server`` (sqlite backend, local artifact store) and yield its URL and db URI.

    Yields a dict with ``url`` (http://127.0.0.1:PORT) and ``db_uri`` (sqlite:///...). The
    server is stopped at the end of the session.
    """
    pytest.importorskip("mlflow")
    root = tmp_path_factory.mktemp("mlflow-server")
    db = root / "mlflow.db"
    port = free_port()
    mlflow_bin = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or "mlflow"
    env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    proc = subprocess.Popen(
        [mlflow_bin, "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{db}", "--artifacts-destination", str(root / "artifacts"),
         "--workers", "1"],
        stdout=open(root / "server.log", "wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("mlflow server exited:\n" + (root / "server.log").read_text()[-3000:])
        try:
            if requests.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except requests.RequestException:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("mlflow server did not start in 90 s:\n" + (root / "server.log").read_text()[-3000:])
    yield {"url": url, "db_uri": f"sqlite:///{db}", "root": root}
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
