"""signatures.CATALOG host-oom-killer on the kubelet's eviction message (kubernetes
pkg/kubelet/eviction/helpers.go, nodeLowMessageFmt = "The node was low on resource: %v. "), as a real report
pastes it from ``kubectl get events`` (tests/data/reports b17-11: a Keras run in a Kubeflow notebook pod
on GKE, 'Killed' after 'Epoch 1/100')."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.signatures import match_line

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_pod_evicted_for_node_memory_is_a_host_out_of_memory_crash():
    """Before: crashed/inconclusive (V17: stopped at epoch 1 of 100 with no crash signature). Another
    resource (the node's disk) is not read as memory."""
    (case,) = REPORTS.glob("b17-11-*")
    line = (case / "events.log").read_text().splitlines()[0]
    assert "host-oom-killer" in {sig.id for sig, _ in match_line(line)}
    assert not match_line("The node was low on resource: ephemeral-storage. ")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v["summary"]
