"""``mlaudit serve mlflow-webhook`` against a real ``mlflow server`` (issue 19, item 1).

The server (SQL backend, webhooks allowed to reach 127.0.0.1 over http via
``MLFLOW_WEBHOOK_ALLOWED_SCHEMES`` / ``MLFLOW_WEBHOOK_ALLOW_PRIVATE_IPS``) gets a webhook for
``model_version.created`` created through ``MlflowClient.create_webhook`` with a secret; a
model is registered from a diverged run and from a healthy run, MLflow delivers the signed
events to a real ``mlaudit`` receiver process, which tags each model version. Deliveries
with a wrong signature, a stale timestamp or a repeated delivery id are refused or ignored;
the valid-signature case uses MLflow's own signing function, so the receiver follows
MLflow's scheme, not a copy of it.

Persistence (``--state``): a delivery MLflow made to a receiver that accepted it (202) and
stopped before auditing is audited by the next receiver on the same state file; a delivery id
seen before a restart is still refused after it; a delivery a killed receiver left half done is
not audited again when its model version already carries the verdict.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

mlflow = pytest.importorskip("mlflow")
from conftest import free_port  # noqa: E402
from test_batch_mlflow import log_run  # noqa: E402

SECRET = "mlflow-hook-secret-0123"
BIN = Path(sys.executable).parent


def _wait_http(url: str, proc, log: Path, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited\n" + log.read_text()[-3000:])
        try:
            if requests.get(url, timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer in {timeout} s\n" + log.read_text()[-3000:])


def _stop(proc) -> int | None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        return proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        return None


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """A webhook-enabled ``mlflow server`` and an ``mlaudit serve mlflow-webhook --gate``."""
    root = tmp_path_factory.mktemp("mlflow-hooks")
    port, hook_port = free_port(), free_port()
    env = dict(
        os.environ,
        MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false",
        MLFLOW_WEBHOOK_ALLOWED_SCHEMES="http,https",
        MLFLOW_WEBHOOK_ALLOW_PRIVATE_IPS="true",
        MLFLOW_WEBHOOK_REQUEST_MAX_RETRIES="1",
        MLFLOW_WEBHOOK_CACHE_TTL="1",
    )  # webhooks changed in a test apply after 1 s
    mlflow_bin = shutil.which("mlflow", path=str(BIN)) or "mlflow"
    server = subprocess.Popen(
        [
            mlflow_bin,
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{root / 'mlflow.db'}",
            "--artifacts-destination",
            str(root / "artifacts"),
            "--workers",
            "1",
        ],
        stdout=open(root / "server.log", "wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    hook_log = root / "hook.log"
    receiver = None
    try:
        _wait_http(f"{url}/health", server, root / "server.log")
        receiver = subprocess.Popen(
            [
                str(BIN / "mlaudit"),
                "serve",
                "mlflow-webhook",
                "--port",
                str(hook_port),
                "-u",
                url,
                "--gate",
                "--state",
                str(root / "hook.sqlite"),
            ],
            stdout=open(hook_log, "wb"),
            stderr=subprocess.STDOUT,
            env=dict(
                os.environ,
                MLAUDIT_MLFLOW_WEBHOOK_SECRET=SECRET,
                MLFLOW_HTTP_REQUEST_MAX_RETRIES="0",
            ),
            start_new_session=True,
        )
        hook = f"http://127.0.0.1:{hook_port}"
        _wait_http(f"{hook}/healthz", receiver, hook_log)
        yield {"url": url, "hook": hook, "log": hook_log, "receiver": receiver, "root": root}
    finally:
        if receiver is not None:
            _stop(receiver)
        _stop(server)


def _wait_tag(client, name: str, version: str, log: Path, timeout: float = 120) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        tags = client.get_model_version(name, version).tags
        if "mlaudit.verdict" in tags:
            return tags
        time.sleep(0.5)
    raise AssertionError(f"{name}/{version} got no verdict\n" + log.read_text()[-3000:])


def test_registering_a_diverged_run_tags_the_version_blocked(stack):
    client = mlflow.MlflowClient(stack["url"])
    client.create_webhook(
        name="mlaudit",
        url=f"{stack['hook']}/webhook",
        events=["model_version.created"],
        secret=SECRET,
    )
    exp = client.create_experiment("registry-gate")
    bad, good = (
        log_run(client, exp, "diverge", "diverge"),
        log_run(client, exp, "healthy", "healthy"),
    )
    client.create_registered_model("churn")
    v_bad = client.create_model_version("churn", f"runs:/{bad}/model", run_id=bad)
    v_good = client.create_model_version("churn", f"runs:/{good}/model", run_id=good)

    tags = _wait_tag(client, "churn", v_bad.version, stack["log"])
    assert tags["mlaudit.verdict"] == "diverged" and tags["mlaudit.gate"] == "blocked"
    assert tags["mlaudit.cause"] and 0 < float(tags["mlaudit.confidence"]) <= 1
    assert tags["mlaudit.report"] == (
        f"{stack['url']}/#/experiments/{exp}/runs/{bad}/artifacts/mlaudit/report.html"
    )
    assert "OP001" in tags["mlaudit.codes"]
    assert client.get_run(bad).data.tags["mlaudit.verdict"] == "diverged"  # the run too
    good_tags = _wait_tag(client, "churn", v_good.version, stack["log"])
    assert good_tags["mlaudit.verdict"] == "succeeded" and good_tags["mlaudit.gate"] == "passed"

    # the promotion rule docs/mlflow.md shows: only a passed version gets the alias
    for v in (v_bad, v_good):
        if client.get_model_version("churn", v.version).tags.get("mlaudit.gate") == "passed":
            client.set_registered_model_alias("churn", "champion", v.version)
    assert client.get_model_version_by_alias("churn", "champion").version == v_good.version
    health = requests.get(f"{stack['hook']}/healthz", timeout=60).json()
    assert health["audited"] == 2 and health["failed"] == 0


def _post(hook: str, body: bytes, *, delivery: str, stamp: int, secret: str = SECRET):
    from mlflow.webhooks.delivery import _generate_hmac_signature  # MLflow's own signer

    sig = _generate_hmac_signature(secret, delivery, str(stamp), body.decode())
    return requests.post(
        f"{hook}/webhook",
        data=body,
        timeout=60,
        headers={
            "Content-Type": "application/json",
            "X-MLflow-Delivery-Id": delivery,
            "X-MLflow-Timestamp": str(stamp),
            "X-MLflow-Signature": sig,
        },
    )


def test_signature_timestamp_and_replay_are_checked(stack):
    body = json.dumps(
        {
            "entity": "model_version",
            "action": "created",
            "timestamp": "x",
            "data": {
                "name": "nothing",
                "version": "1",
                "run_id": None,
                "source": "s3://b/m",
                "tags": {},
                "description": None,
            },
        }
    ).encode()
    now = int(time.time())
    ok = _post(stack["hook"], body, delivery=str(uuid.uuid4()), stamp=now)
    assert ok.status_code == 200 and ok.json() == {"ignored": "model version has no source run"}
    wrong = _post(stack["hook"], body, delivery=str(uuid.uuid4()), stamp=now, secret="other")
    assert wrong.status_code == 401 and wrong.json()["error"] == "signature does not match"
    stale = _post(stack["hook"], body, delivery=str(uuid.uuid4()), stamp=now - 3600)
    assert stale.status_code == 401 and "from now (limit 300 s)" in stale.json()["error"]
    unsigned = requests.post(f"{stack['hook']}/webhook", data=body, timeout=60)
    assert unsigned.status_code == 401
    other = json.dumps({"entity": "registered_model", "action": "created", "data": {}}).encode()
    res = _post(stack["hook"], other, delivery=str(uuid.uuid4()), stamp=now)
    assert res.status_code == 200 and "ignored" in res.json()

    # a replayed delivery (same id, still signed and fresh) is acknowledged, not audited again
    client = mlflow.MlflowClient(stack["url"])
    exp = client.create_experiment("registry-replay")
    rid = log_run(client, exp, "overfit", "overfit")
    client.create_registered_model("replayed")
    mv = client.create_model_version("replayed", f"runs:/{rid}/model", run_id=rid)
    first = _wait_tag(client, "replayed", mv.version, stack["log"])
    assert first["mlaudit.gate"] == "blocked"
    again = json.dumps(
        {
            "entity": "model_version",
            "action": "created",
            "data": {"name": "replayed", "version": mv.version, "run_id": rid},
        }
    ).encode()
    # another delivery id for an audited model version is not audited again either (the
    # replay of MLflow's own delivery id, across a restart, is checked in the last test)
    delivery = str(uuid.uuid4())
    for _ in range(2):
        res = _post(stack["hook"], again, delivery=delivery, stamp=now)
        assert res.status_code == 200 and res.json() == {
            "ignored": "model version queued or audited already"
        }
    assert "Traceback" not in stack["log"].read_text()


def test_a_recreated_model_is_gated_again(stack):
    """Break-it: MLflow numbers a registered model's versions from 1 again when the model is
    deleted and created anew. The receiver acknowledged the new ``version 1`` (another run) as
    "model version queued or audited already" (its duplicate check was name + version for a
    day): never audited, no ``mlaudit.gate``, which the promotion rule reads. A duplicate is
    now the same version of the same source run. Uses the module's webhook (first test)."""
    client = mlflow.MlflowClient(stack["url"])
    exp = client.create_experiment("registry-recreated")
    good, bad = (
        log_run(client, exp, "healthy", "healthy"),
        log_run(client, exp, "diverge", "diverge"),
    )
    client.create_registered_model("recreated")
    first = client.create_model_version("recreated", f"runs:/{good}/model", run_id=good)
    assert _wait_tag(client, "recreated", first.version, stack["log"])["mlaudit.gate"] == "passed"

    client.delete_registered_model("recreated")
    client.create_registered_model("recreated")
    again = client.create_model_version("recreated", f"runs:/{bad}/model", run_id=bad)
    assert again.version == first.version  # MLflow numbers from 1 again
    tags = _wait_tag(client, "recreated", again.version, stack["log"], timeout=90)
    assert tags["mlaudit.verdict"] == "diverged" and tags["mlaudit.gate"] == "blocked"


def test_deliveries_survive_a_restart_and_are_not_audited_twice(stack, tmp_path):
    """Receiver A (in this process, its worker never started: 'killed before auditing')
    accepts MLflow's own delivery into the state file; receiver B (the CLI) on the same file
    audits it. Runs last in this module: the module's webhook is disabled meanwhile (restored
    at the end) so that only A gets this registration."""
    import sqlite3
    import threading

    from mlaudit_mlflow.plugin import MlflowPlugin
    from mlaudit_mlflow.registry_state import DeliveryQueue
    from mlaudit_mlflow.registry_webhook import Receiver, RegistryAuditor, make_app

    from mlaudit.cli.cmd_serve import make_server
    from mlaudit_core.service import StateStore
    from mlaudit_core.settings import Settings

    client = mlflow.MlflowClient(stack["url"])
    others = [w for w in client.list_webhooks() if w.status.value == "ACTIVE"]
    for w in others:
        client.update_webhook(w.webhook_id, status="DISABLED")
    state = tmp_path / "deliveries.sqlite"
    scope = f"mlflow registry webhook {stack['url']}"
    port_a, port_b = free_port(), free_port()
    store = StateStore(state, scope)
    queue_a = DeliveryQueue(store)
    receiver_a = Receiver(
        RegistryAuditor(MlflowPlugin(tracking_uri=stack["url"]), Settings(), stack["url"]),
        SECRET,
        queue_a,
    )  # never started
    server_a = make_server(make_app(receiver_a), "127.0.0.1", port_a)
    thread_a = threading.Thread(target=server_a.run, daemon=True)
    thread_a.start()
    hook_b = None
    try:
        while not server_a.started:
            time.sleep(0.05)
        hook = client.create_webhook(
            name="restart",
            url=f"http://127.0.0.1:{port_a}/webhook",
            events=["model_version.created"],
            secret=SECRET,
        )
        time.sleep(2.5)  # MLflow's webhook cache (MLFLOW_WEBHOOK_CACHE_TTL=1 above)
        exp = client.create_experiment("registry-restart")
        rid = log_run(client, exp, "diverge", "diverge")
        client.create_registered_model("restarted")
        mv = client.create_model_version("restarted", f"runs:/{rid}/model", run_id=rid)
        deadline = time.time() + 60
        while not queue_a.rows() and time.time() < deadline:
            time.sleep(0.2)
        [row] = queue_a.rows()  # MLflow's delivery, on disk, not audited
        assert (row["name"], row["version"], row["run_id"], row["state"]) == (
            "restarted",
            mv.version,
            rid,
            "queued",
        )
        assert "mlaudit.verdict" not in client.get_model_version("restarted", mv.version).tags
        client.update_webhook(hook.webhook_id, status="DISABLED")
    finally:
        server_a.should_exit = True
        thread_a.join(10)
        store.close()

    # a second delivery a killed receiver left 'running' after it had tagged the version:
    # the model version from the module's first test, whose tags we mark to see a re-audit
    client.set_model_version_tag("churn", "1", "mlaudit.confidence", "from-the-first-audit")
    db = sqlite3.connect(state)
    db.execute(
        "INSERT INTO registry_deliveries (delivery, name, version, run_id, state, attempts, "
        "received_at, updated_at) VALUES ('half-done', 'churn', '1', ?, 'running', 1, ?, ?)",
        (client.get_model_version("churn", "1").run_id, time.time(), time.time()),
    )
    db.commit()
    db.close()

    log_b = tmp_path / "b.log"
    receiver_b = subprocess.Popen(
        [
            str(BIN / "mlaudit"),
            "serve",
            "mlflow-webhook",
            "--port",
            str(port_b),
            "-u",
            stack["url"],
            "--state",
            str(state),
        ],
        stdout=open(log_b, "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(
            os.environ, MLAUDIT_MLFLOW_WEBHOOK_SECRET=SECRET, MLFLOW_HTTP_REQUEST_MAX_RETRIES="0"
        ),
    )
    try:
        hook_b = f"http://127.0.0.1:{port_b}"
        _wait_http(f"{hook_b}/healthz", receiver_b, log_b)
        tags = _wait_tag(client, "restarted", mv.version, log_b)
        assert tags["mlaudit.verdict"] == "diverged"
        deadline = time.time() + 60
        while time.time() < deadline:
            health = requests.get(f"{hook_b}/healthz", timeout=60).json()
            if health["state"]["done"] == 2:
                break
            time.sleep(0.5)
        assert health["state"] == {"queued": 0, "running": 0, "done": 2, "failed": 0}, health
        # the half-done one was settled from its tag, not audited again
        assert (
            client.get_model_version("churn", "1").tags["mlaudit.confidence"]
            == "from-the-first-audit"
        )
        assert "queued again" in log_b.read_text()
        # MLflow's delivery id, known before the restart, is still refused after it
        body = json.dumps(
            {
                "entity": "model_version",
                "action": "created",
                "data": {"name": "restarted", "version": mv.version, "run_id": rid},
            }
        ).encode()
        again = _post(hook_b, body, delivery=row["delivery"], stamp=int(time.time()))
        assert again.json() == {"ignored": "delivery seen already"}
        other_id = _post(hook_b, body, delivery=str(uuid.uuid4()), stamp=int(time.time()))
        assert other_id.json() == {"ignored": "model version queued or audited already"}
        assert SECRET not in state.read_bytes().decode("latin-1")
    finally:
        _stop(receiver_b)
        for w in others:
            client.update_webhook(w.webhook_id, status="ACTIVE")
