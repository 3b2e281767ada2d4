"""``mlaudit batch mlflow --triage`` on a real ``mlflow server``: a generated sweep whose
failures are caused by lr >= 3e-3 (the factor is found first, with its counts, in the table,
in ``--format json`` and written back as an experiment tag + artifacts on a dedicated
``mlaudit-triage`` run), a noise-only sweep (no factor claimed), and ``--no-write``."""

from __future__ import annotations

import json
import math

import pytest

mlflow = pytest.importorskip("mlflow")
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402

ENV = {"COLUMNS": "240", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}
LRS = ["0.0001", "0.0003", "0.001", "0.003", "0.01"]


def log_run(client, exp_id: str, params: dict, tags: dict, diverge: bool) -> str:
    from mlflow.entities import Metric, Param

    rid = client.create_run(exp_id, tags=tags).info.run_id
    ms = []
    for i in range(1, 201):
        loss = 2.0 * math.exp(-i / 40) + 0.2
        if diverge and i > 120:
            loss = 0.2 + (i - 120) * 0.3
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
    client.log_batch(rid, metrics=ms, params=[Param(k, v) for k, v in params.items()])
    client.set_terminated(rid, "FINISHED")
    return rid


@pytest.fixture(scope="module")
def sweeps(mlflow_server):
    """``triage-lr``: 5 lrs x 4 seeds on two hosts, every run with lr >= 0.003 diverges (8 of
    20). ``triage-noise``: 4 lrs x 4 seeds, one diverged run per lr, per seed, balanced over
    the hosts: nothing separates them."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    lr_exp = client.create_experiment("triage-lr")
    for i, lr in enumerate(LRS * 4):
        log_run(
            client,
            lr_exp,
            {"lr": lr, "seed": str(i // 5), "batch_size": "32"},
            {"host": f"node-{i % 2}"},
            diverge=float(lr) >= 3e-3,
        )
    noise_exp = client.create_experiment("triage-noise")
    for i in range(16):
        log_run(
            client,
            noise_exp,
            {"lr": LRS[i % 4], "seed": str(i // 4)},
            {"host": f"node-{i % 2}"},
            diverge=(i // 4 == i % 4),
        )
    return {"lr": lr_exp, "noise": noise_exp}


def batch(url, exp, state, *extra):
    return CliRunner().invoke(
        app,
        [
            "batch",
            "mlflow",
            "-e",
            exp,
            "-u",
            url,
            "--state",
            str(state),
            "--jobs",
            "2",
            "--triage",
            *extra,
        ],
        env=ENV,
    )


def test_batch_mlflow_triage_finds_lr_and_writes_back(mlflow_server, sweeps, tmp_path):
    url = mlflow_server["url"]
    res = batch(url, "triage-lr", tmp_path / "s.sqlite", "--format", "json")
    assert res.exit_code == 0, res.output
    assert res.stdout.lstrip().startswith("{"), res.stdout[:300]
    doc = json.loads(res.stdout)
    tri = doc["triage"]
    assert tri["runs"] == 20 and tri["outcomes"] == {"diverged": 8, "succeeded": 12}
    top = tri["factors"][0]
    assert top["name"] == "param:lr" and top["kind"] == "numeric" and top["significant"]
    assert top["effect"].startswith("all 8 diverged runs have lr >= 0.003")
    assert "0 of 12 runs with lr < 0.003" in top["effect"]
    assert top["q_value"] <= 0.05 and top["counts"]["group"] == {
        "rule": "lr >= 0.003",
        "runs": 8,
        "failing": 8,
    }
    assert not any(f["significant"] for f in tri["factors"] if f["name"] in ("host", "param:seed"))

    client = mlflow.MlflowClient(url)
    exp = client.get_experiment(sweeps["lr"])
    assert exp.tags["mlaudit.triage"].startswith(
        "20 runs: param:lr [diverged]: all 8 diverged runs"
    )
    run_id = exp.tags["mlaudit.triage_run"]
    run = client.get_run(run_id)
    assert run.info.run_name == "mlaudit-triage" and run.data.tags["mlaudit.triage_run"] == "true"
    from pathlib import Path

    local = client.download_artifacts(run_id, "mlaudit/triage.json", str(tmp_path))
    stored = json.loads(Path(local).read_text())
    assert stored["factors"][0]["name"] == "param:lr"
    page = Path(client.download_artifacts(run_id, "mlaudit/triage.html", str(tmp_path))).read_text()
    assert page.count("<svg") == 1 and "param:lr [diverged]" in page  # one plot: the lr factor

    # a second batch reuses the triage run and neither audits nor triages it
    res = batch(url, "triage-lr", tmp_path / "s.sqlite")
    assert res.exit_code == 0, res.output
    assert (
        "20 runs" in res.output
        and "param:lr [diverged]: all 8 diverged runs have lr >= 0.003" in res.output
    )
    assert "triage written to experiment tag mlaudit.triage" in res.output
    triage_runs = client.search_runs([sweeps["lr"]], "tags.`mlaudit.triage_run` = 'true'")
    assert [r.info.run_id for r in triage_runs] == [run_id]


def test_batch_mlflow_triage_noise_only_claims_nothing(mlflow_server, sweeps, tmp_path):
    res = batch(mlflow_server["url"], "triage-noise", tmp_path / "n.sqlite", "--format", "json")
    assert res.exit_code == 0, res.output
    tri = json.loads(res.stdout)["triage"]
    assert tri["outcomes"] == {"diverged": 4, "succeeded": 12}
    assert tri["factors"] and not any(f["significant"] for f in tri["factors"])
    assert any("no factor separates the failing runs" in s for s in tri["statements"])
    tag = (
        mlflow.MlflowClient(mlflow_server["url"])
        .get_experiment(sweeps["noise"])
        .tags["mlaudit.triage"]
    )
    assert "no factor separates the failing runs" in tag


def test_batch_mlflow_triage_no_write_writes_nothing(mlflow_server, tmp_path):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("triage-nowrite")
    for i in range(4):
        log_run(client, exp, {"lr": LRS[i]}, {}, diverge=False)
    res = batch(mlflow_server["url"], "triage-nowrite", tmp_path / "w.sqlite", "--no-write")
    assert res.exit_code == 0, res.output
    assert "all 4 runs succeeded: no failure to explain; no factor tested" in res.output
    assert "mlaudit.triage" not in client.get_experiment(exp).tags
    assert not client.search_runs([exp], "tags.`mlaudit.triage_run` = 'true'")


def test_batch_mlflow_triage_redacts_credentials_everywhere(mlflow_server, tmp_path):
    """A factor whose value holds a credential (a URL with a password): the effect names it,
    and the terminal, the experiment tag and the artifacts show it redacted."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("triage-secret")
    for i in range(10):
        bad = i < 5
        url = "https://bob:hunter2pw@data.example/a" if bad else "https://data.example/b"
        log_run(client, exp, {"lr": "0.01" if bad else "0.0001", "data_url": url}, {}, diverge=bad)
    res = batch(mlflow_server["url"], "triage-secret", tmp_path / "x.sqlite")
    assert res.exit_code == 0, res.output
    assert "data_url" in res.output and "hunter2pw" not in res.output
    exp_tags = client.get_experiment(exp).tags
    assert "data_url" in exp_tags["mlaudit.triage"] and "[REDACTED]" in exp_tags["mlaudit.triage"]
    assert "hunter2pw" not in exp_tags["mlaudit.triage"]
    run_id = exp_tags["mlaudit.triage_run"]
    for name in ("triage.json", "triage.md", "triage.html"):
        from pathlib import Path

        local = client.download_artifacts(run_id, f"mlaudit/{name}", str(tmp_path))
        text = Path(local).read_text()
        assert "data_url" in text and "hunter2pw" not in text


@pytest.mark.parametrize(
    ("case", "n", "params", "diverge", "statement"),
    [
        (
            "one-run",
            1,
            lambda i: {"lr": "0.01"},
            lambda i: True,
            "1 run(s) with a verdict: nothing to compare",
        ),
        (
            "all-healthy",
            6,
            lambda i: {"lr": LRS[i % 5]},
            lambda i: False,
            "all 6 runs succeeded: no failure to explain",
        ),
        ("no-params", 8, lambda i: {}, lambda i: i % 4 < 2, "no run carries params"),
        (
            "500-params",
            10,
            lambda i: {f"p{k}": str((k * 7 + i) % 13) for k in range(500)},
            lambda i: i % 3 == 0,
            "over the limit of 200: too many to separate",
        ),
    ],
)
def test_batch_mlflow_triage_bad_input_claims_nothing(
    mlflow_server, tmp_path, case, n, params, diverge, statement
):
    """One run, every run healthy, no params, 500 params: the statement in the JSON and in the
    experiment tag, no factor claimed anywhere."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment(f"triage-bad-{case}")
    for i in range(n):
        p = params(i)
        rid = log_run(client, exp, dict(list(p.items())[:100]), {}, diverge=diverge(i))
        for k in range(100, len(p), 100):  # MLflow takes at most 100 params a batch
            from mlflow.entities import Param

            client.log_batch(rid, params=[Param(a, b) for a, b in list(p.items())[k : k + 100]])
    res = batch(mlflow_server["url"], f"triage-bad-{case}", tmp_path / "b.sqlite", "-f", "json")
    assert res.exit_code == 0, res.output
    tri = json.loads(res.stdout)["triage"]
    assert not any(f["significant"] for f in tri["factors"])
    assert statement in " ".join(tri["statements"])
    tag = client.get_experiment(exp).tags["mlaudit.triage"]
    assert statement in tag


def test_batch_mlflow_triage_first_bad_commit(mlflow_server, tmp_path):
    """Runs carrying ``mlflow.source.git.commit``: 16 runs made one after the other on 4
    commits; from the third commit on every run diverges (and ``grad_clip`` was dropped there).
    The commit-ordered change point names the last good and the first bad commit, the runs either
    side and what changed, in the JSON and the terminal."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("triage-commits")
    commits = ["1111aaa", "2222bbb", "3333ccc", "4444ddd"]
    for i in range(16):
        k = i // 4
        log_run(
            client,
            exp,
            {"lr": LRS[i % 3], "seed": str(i % 4), "grad_clip": "1.0" if k < 2 else "none"},
            {"mlflow.source.git.commit": commits[k]},
            diverge=k >= 2,
        )
    res = batch(mlflow_server["url"], "triage-commits", tmp_path / "c.sqlite", "-f", "json")
    assert res.exit_code == 0, res.output
    cc = json.loads(res.stdout)["triage"]["commit_change_point"]
    assert cc["commits"] == commits and cc["significant"]
    assert (cc["last_good_commit"], cc["first_bad_commit"]) == ("2222bbb", "3333ccc")
    assert cc["changed"]["commit"] == ["2222bbb", "3333ccc"]
    assert cc["changed"]["param:grad_clip"] == ["1.0", "none"]
    assert cc["before"] == {"commits": 2, "runs": 8, "failing": 0}
    assert cc["after"] == {"commits": 2, "runs": 8, "failing": 8}
    tag = client.get_experiment(exp).tags["mlaudit.triage"]
    assert "first bad commit 3333ccc (last good 2222bbb" in tag
    run_id = client.get_experiment(exp).tags["mlaudit.triage_run"]
    from pathlib import Path

    page = Path(client.download_artifacts(run_id, "mlaudit/triage.html", str(tmp_path))).read_text()
    assert "First bad / last good" in page and "first bad commit 3333ccc" in page
    assert "param:grad_clip: &#x27;1.0&#x27; -&gt; &#x27;none&#x27;" in page  # escaped
    res = batch(mlflow_server["url"], "triage-commits", tmp_path / "c.sqlite", "--no-write")
    assert "last good commit 2222bbb" in res.output and "first bad commit 3333ccc" in res.output
