"""A run audited by hand while still RUNNING is audited again by the watcher once it has ended.

A manual ``mlaudit mlflow RUN`` on a running run writes the interim verdict ``running``; the
watcher's listing used to skip every run carrying any ``mlaudit.verdict``, so such a run was
never judged after it finished (found by the new-user pass). Real ``mlflow server`` on
127.0.0.1 (tests/conftest.py).
"""

from __future__ import annotations

import pytest

pytest.importorskip("mlflow")


def test_interim_running_verdict_is_listed_again_after_the_run_ends(mlflow_server):
    from mlaudit_mlflow.plugin import MlflowPlugin
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("interim-verdict")
    interim = client.create_run(exp, run_name="audited-while-running").info.run_id
    client.set_tag(interim, "mlaudit.verdict", "running")
    client.set_terminated(interim, "FINISHED")
    judged = client.create_run(exp, run_name="judged").info.run_id
    client.set_terminated(judged, "FINISHED")
    client.set_tag(judged, "mlaudit.verdict", "diverged")
    fresh = client.create_run(exp, run_name="fresh").info.run_id
    client.set_terminated(fresh, "FINISHED")
    still = client.create_run(exp, run_name="still-running").info.run_id
    client.set_tag(still, "mlaudit.verdict", "running")

    listed = MlflowPlugin(tracking_uri=mlflow_server["url"]).list_finished(experiment_ids=[exp])
    assert listed == [interim, fresh]  # oldest end first; judged and still-running runs left out
