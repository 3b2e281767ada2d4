"""tests/sigterm_teardown.py: a pytest session ended by SIGTERM runs its fixtures' finalizers,
so a server a fixture started in a session of its own is stopped, not left orphaned."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.waiting import wait_until

INNER = """
import subprocess, sys, time
from pathlib import Path
import pytest

OUT = Path(__file__).parent

@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                            start_new_session=True)
    (OUT / "server.pid").write_text(str(proc.pid))
    yield proc
    proc.kill()
    proc.wait()

def test_waits(server):
    (OUT / "started").write_text("1")
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_teardown_stops_a_fixture_server_in_its_own_session(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    pytest_proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "sigterm_teardown", "-p", "no:cacheprovider"]
        + ["-p", "no:xdist", "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_until(lambda: (tmp_path / "started").exists(), 120, "the inner test to start")
        pid = int((tmp_path / "server.pid").read_text())
        assert _alive(pid)
        pytest_proc.send_signal(signal.SIGTERM)
        out = pytest_proc.communicate(timeout=120)[0].decode(errors="replace")
        wait_until(lambda: not _alive(pid), 60, "the fixture's server to stop", every=0.1)
        assert "KeyboardInterrupt" in out, out
    finally:
        if pytest_proc.poll() is None:
            os.killpg(pytest_proc.pid, signal.SIGKILL)
        if (tmp_path / "server.pid").exists():
            pid = int((tmp_path / "server.pid").read_text())
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
