"""Session-6 diagnosis rules, each on real input: artifacts of the own corpus (tests/data/realworld),
reports of the report corpus (tests/data/reports) or a message produced by the real package; each
test fails on the code before the change.

- A distributed rendezvous that cannot open its socket (torch's TCPStore on a master port already
  taken: ``EADDRINUSE``, ``DistNetworkError``) is the launch environment (``infra_runtime``), not a
  bug in the training code (f6b3-07).
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
