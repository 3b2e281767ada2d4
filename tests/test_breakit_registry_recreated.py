"""Break-it: a registered model deleted and created again got no gate on its new versions.

MLflow numbers a registered model's versions from 1 again when the model is deleted and
created anew (a routine clean-up in a team's dev registry, or a model renamed back). The
registry receiver acknowledged ``model_version.created`` for the new ``churn`` version 1,
made from another run, as "model version queued or audited already" (its duplicate check
was name + version for a day): the new version was never audited and carried no
``mlaudit.gate``, while the promotion rule in docs/mlflow.md reads that tag. Fixed: a
duplicate is the same version *of the same source run*.

Real webhook-enabled ``mlflow server`` and a real ``mlaudit serve mlflow-webhook --gate``
process (the ``stack`` fixture of tests/test_mlflow_registry_webhook.py); MLflow makes the
deliveries itself.
"""

from __future__ import annotations

import pytest

mlflow = pytest.importorskip("mlflow")

from test_batch_mlflow import log_run  # noqa: E402
from test_mlflow_registry_webhook import SECRET, _wait_tag, stack  # noqa: E402,F401


def test_a_recreated_model_is_gated_again(stack):  # noqa: F811 - the imported fixture
    client = mlflow.MlflowClient(stack["url"])
    client.create_webhook(name="mlaudit-recreated", url=f"{stack['hook']}/webhook",
                          events=["model_version.created"], secret=SECRET)
    exp = client.create_experiment("registry-recreated")
    good, bad = log_run(client, exp, "healthy", "healthy"), log_run(client, exp, "diverge", "diverge")
    client.create_registered_model("recreated")
    first = client.create_model_version("recreated", f"runs:/{good}/model", run_id=good)
    assert _wait_tag(client, "recreated", first.version, stack["log"])["mlaudit.gate"] == "passed"

    client.delete_registered_model("recreated")
    client.create_registered_model("recreated")
    again = client.create_model_version("recreated", f"runs:/{bad}/model", run_id=bad)
    assert again.version == first.version  # MLflow numbers from 1 again
    tags = _wait_tag(client, "recreated", again.version, stack["log"], timeout=90)
    assert tags["mlaudit.verdict"] == "diverged" and tags["mlaudit.gate"] == "blocked"
