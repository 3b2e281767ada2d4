"""The registry gate's trust findings of issue 33, on a real webhook-enabled ``mlflow server``
delivering to a real ``mlaudit serve mlflow-webhook --gate`` (the stack of
tests/test_mlflow_registry_webhook.py):

* a model deleted and created again **from the same run** (same name, version 1, same run) was
  acknowledged as "audited already" and never audited: its version had no gate tag;
* a ``mlaudit.gate = passed`` set at registration stayed on a version mlaudit did not audit
  (every attempt failed): it is ``pending`` once queued, ``unaudited`` when given up.
"""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.e2e  # real processes and servers throughout

mlflow = pytest.importorskip("mlflow")
from test_batch_mlflow import log_run  # noqa: E402
from test_mlflow_registry_webhook import SECRET, _wait_tag, stack  # noqa: E402,F401


def test_registry_webhook_audits_a_model_recreated_from_the_same_run(stack):  # noqa: F811
    client = mlflow.MlflowClient(stack["url"])
    client.create_webhook(
        name="mlaudit-same-run",
        url=f"{stack['hook']}/webhook",
        events=["model_version.created"],
        secret=SECRET,
    )
    exp = client.create_experiment("registry-same-run")
    good = log_run(client, exp, "healthy", "healthy")
    client.create_registered_model("same-run")
    first = client.create_model_version("same-run", f"runs:/{good}/model", run_id=good)
    assert _wait_tag(client, "same-run", first.version, stack["log"])["mlaudit.gate"] == "passed"
    client.delete_registered_model("same-run")
    client.create_registered_model("same-run")
    again = client.create_model_version("same-run", f"runs:/{good}/model", run_id=good)
    assert again.version == first.version
    tags = _wait_tag(client, "same-run", again.version, stack["log"], timeout=90)
    assert tags["mlaudit.verdict"] == "succeeded" and tags["mlaudit.gate"] == "passed"


def test_registry_webhook_gate_set_at_registration_never_stands(stack):  # noqa: F811
    """A version registered with ``mlaudit.gate = passed`` from a run the tracker does not
    have (MLflow accepts any run id): every audit attempt fails. Before, the ``passed`` stayed;
    now the gate reads ``pending`` from the moment the delivery is queued, then ``unaudited``
    when the attempts are used up, never ``passed``."""
    client = mlflow.MlflowClient(stack["url"])
    client.create_registered_model("preset")
    ghost = "f" * 32
    v = client.create_model_version(
        "preset", f"runs:/{ghost}/model", run_id=ghost, tags={"mlaudit.gate": "passed"}
    )
    seen = []
    deadline = time.time() + 90
    while time.time() < deadline and (not seen or seen[-1] == "passed" or len(seen) < 20):
        seen.append(client.get_model_version("preset", v.version).tags.get("mlaudit.gate"))
        time.sleep(0.5)
    after = [g for g in seen[seen.index("pending") :]] if "pending" in seen else []
    assert after, (seen, stack["log"].read_text()[-2000:])
    assert set(after) <= {"pending", "unaudited"}, seen
