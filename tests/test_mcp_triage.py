"""The ``experiment_triage`` agent tool (mlaudit_core/agent/triage_tool.py) on a real
``mlflow server``: runs already carrying an ``mlaudit.verdict`` keep it, the others are audited
(bounded by max_audits), the lr factor is found with its counts; nothing is written back unless
write_back is true; an unknown experiment is one error line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from mlaudit_core.agent.tools import Roots, Toolbox, ToolFailure  # noqa: E402

LRS = ["0.0001", "0.0003", "0.001", "0.003", "0.01"]


def _log(client, exp, lr: str, seed: int, verdict: str | None) -> str:
    from mlflow.entities import Metric, Param, RunTag

    rid = client.create_run(exp).info.run_id
    diverge = float(lr) >= 3e-3
    ms = [
        Metric(
            "train/loss",
            (0.2 + (i - 80) * 0.3) if diverge and i > 80 else 2 * math.exp(-i / 30) + 0.2,
            1_700_000_000_000 + i * 1000,
            i,
        )
        for i in range(1, 141)
    ]
    tags = [RunTag("mlaudit.verdict", verdict)] if verdict else []
    client.log_batch(rid, metrics=ms, params=[Param("lr", lr), Param("seed", str(seed))], tags=tags)
    client.update_run(rid, status="FINISHED")
    return rid


def test_experiment_triage_tool(mlflow_server):
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp = client.create_experiment("mcp-triage")
    for seed in range(3):
        for lr in LRS:
            # seeds 0-1: verdict tags from an earlier batch; seed 2: audited by the tool
            verdict = None if seed == 2 else ("diverged" if float(lr) >= 3e-3 else "succeeded")
            _log(client, exp, lr, seed, verdict)
    tools = Toolbox(Roots((Path.cwd(),)), tracking_uris=[url])
    res = tools.call("experiment_triage", {"experiment": "mcp-triage", "max_audits": 3})
    d = res.data
    assert d["runs_read"] == 15 and d["audited_now"] == 3 and d["not_audited"] == 2
    tri = d["triage"]
    assert tri["runs"] == 13 and sum(tri["outcomes"].values()) == 13
    assert 4 <= tri["outcomes"]["diverged"] <= 6  # 4 tagged, plus those of the 3 audited now
    top = tri["factors"][0]
    assert top["name"] == "param:lr" and top["significant"]
    assert "diverged runs have lr >= 0.003" in top["effect"]
    assert any("were not audited (max_audits 3)" in line for line in res.lines)
    assert "mlaudit.triage" not in client.get_experiment(exp).tags

    res = tools.call(
        "experiment_triage", {"experiment": "mcp-triage", "max_audits": 5, "write_back": True}
    )
    assert res.data["written_to"].startswith("experiment tag mlaudit.triage and run ")
    assert client.get_experiment(exp).tags["mlaudit.triage"].startswith("15 runs: param:lr")

    with pytest.raises(ToolFailure, match="no mlflow experiment named 'nope'"):
        tools.call("experiment_triage", {"experiment": "nope"})
