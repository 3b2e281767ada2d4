"""``mlaudit serve wandb-webhook --install-automation ENTITY/PROJECT`` and the receiver's
handling of the payload it installs (issue 19, item 3).

The real wandb 0.31 SDK (``wandb.Api``, ``wandb.automations``: ``OnRunState``,
``SendWebhook``, ``Api.create_automation``) talks to the local fake W&B server
(``tests/wandb_fake_server.py``), which implements the GraphQL the SDK sends for this:
``GetProject``, ``IntegrationsByEntity``, ``ServerFeaturesQuery`` and the
``CreateAutomation`` mutation (``createFilterTrigger``), with the shapes of the SDK's
generated operations. No W&B server can run here; these shapes were not checked against
W&B's own servers. The fake server does not deliver webhooks: the receiver test posts the
body W&B renders from the installed template (documented variables substituted).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

wandb_fake_server = pytest.importorskip("wandb_fake_server")
from test_batch_trackers import wandb_rows  # noqa: E402
from wandb_helpers import sdk_pointed_at  # noqa: E402

KEY = "k" * 40
SECRET = "hook-secret-0123456789"
ENTITY, PROJECT = "ent", "auto"
HOOK = {
    "__typename": "GenericWebhookIntegration",
    "id": "SW50ZWdyYXRpb246MQ==",
    "name": "mlaudit",
    "urlEndpoint": "https://audit.example.com/webhook",
}
#: W&B docs, "Create a webhook automation" -> "Payload variables" (wandb/docs
#: models/automations/create-automations/webhook.mdx).
DOCUMENTED = {
    "project_name",
    "entity_name",
    "event_type",
    "event_author",
    "alias",
    "tag",
    "artifact_collection_name",
    "artifact_version",
    "artifact_version_string",
    "ACCESS_TOKEN",
}


@pytest.fixture
def server():
    pytest.importorskip("wandb")
    FakeRun, FakeWandbServer = wandb_fake_server.FakeRun, wandb_fake_server.FakeWandbServer
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as srv:
        for shape in ("healthy", "diverge"):
            srv.add_run(
                FakeRun(
                    ENTITY,
                    PROJECT,
                    shape,
                    display_name=shape,
                    history=wandb_rows(shape),
                    heartbeat_at="2026-03-01T00:00:00",
                )
            )
        srv.add_run(
            FakeRun(ENTITY, PROJECT, "live", state="running", history=wandb_rows("healthy")[:50])
        )
        with sdk_pointed_at(srv, KEY):
            yield srv


def install(*extra: str):
    return CliRunner().invoke(
        app, ["serve", "wandb-webhook", "--install-automation", f"{ENTITY}/{PROJECT}", *extra]
    )


def test_install_creates_a_run_state_automation_with_documented_variables_only(server):
    server.integrations = [dict(HOOK)]
    res = install()
    assert res.exit_code == 0, res.output
    assert "automation 'mlaudit-triage' in ent/auto created" in res.output
    [auto] = server.automations
    assert auto["triggeringEventType"] == "RUN_STATE" and auto["scopeType"] == "PROJECT"
    assert auto["triggeredActionType"] == "GENERIC_WEBHOOK"
    states = json.loads(auto["eventFilter"])["run_state_filter"]["states"]
    assert sorted(states) == ["FAILED", "FINISHED"]
    action = auto["triggeredActionConfig"]["genericWebhookActionInput"]
    assert action["integrationID"] == HOOK["id"]
    payload = json.loads(action["requestPayload"])
    used = set(re.findall(r"\$\{([^}]+)\}", json.dumps(payload)))
    assert used and used <= DOCUMENTED, used - DOCUMENTED
    assert "run_id" not in used
    assert payload["entity"] == "${entity_name}" and payload["project"] == "${project_name}"

    again = install()  # the same name: left alone, exit 0
    assert again.exit_code == 0 and "exists already" in again.output
    assert len(server.automations) == 1


def test_install_refusals_are_one_line_exit_2(server):
    res = install()  # no webhook in the team
    assert res.exit_code == 2 and "the team has no webhook" in res.output
    server.integrations = [dict(HOOK), dict(HOOK, id="SW50ZWdyYXRpb246Mg==", name="other")]
    res = install()
    assert res.exit_code == 2 and "several webhooks (mlaudit, other)" in res.output
    res = install("--webhook", "nope")
    assert res.exit_code == 2 and "--webhook 'nope': no such webhook" in res.output
    assert install("--webhook", "other").exit_code == 0
    assert (
        server.automations[-1]["triggeredActionConfig"]["genericWebhookActionInput"][
            "integrationID"
        ]
        == "SW50ZWdyYXRpb246Mg=="
    )
    assert len(server.automations) == 1
    res = install("--install-automation", "not a project")
    assert res.exit_code == 2


def test_the_installed_payload_queues_the_projects_ended_runs(server, tmp_path):
    """W&B renders the template with the documented variables: entity and project, no run.
    The receiver lists the project's ended runs without a verdict and queues them (not the
    running one); a second delivery while they wait adds nothing."""
    from mlaudit_wandb.automation import PAYLOAD
    from mlaudit_wandb.triage import WandbWatchSource, make_app
    from starlette.testclient import TestClient

    from mlaudit_core.plugins import get_plugin
    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    rendered = json.loads(
        json.dumps(PAYLOAD)
        .replace("${entity_name}", ENTITY)
        .replace("${project_name}", PROJECT)
        .replace("${event_type}", "RUN_STATE")
        .replace("${event_author}", "tester")
    )
    ok = {"Authorization": f"Bearer {SECRET}"}
    with StateStore(tmp_path / "q.sqlite", "wandb webhook") as store:
        w = Watcher(
            WandbWatchSource(get_plugin("wandb"), "wandb webhook"),
            store,
            Settings(),
            WatchConfig(max_pending=10),
        )
        client = TestClient(make_app(w, SECRET))
        res = client.post("/webhook", json=rendered, headers=ok)
        assert res.status_code == 202, res.text
        assert res.json() == {
            "project": f"{ENTITY}/{PROJECT}",
            "queued": 2,
            "ended_without_verdict": 2,
        }
        assert sorted(r["ref"] for r in store.rows()) == [
            f"{ENTITY}/{PROJECT}/diverge",
            f"{ENTITY}/{PROJECT}/healthy",
        ]
        again = client.post("/webhook", json=rendered, headers=ok)
        assert again.status_code == 200 and again.json()["queued"] == 0
        # a payload naming an invalid run is refused, never widened to the whole project
        bad = client.post("/webhook", json=dict(rendered, run_id=".."), headers=ok)
        assert bad.status_code == 400
        gone = client.post("/webhook", json=dict(rendered, project="missing"), headers=ok)
        assert gone.status_code in (200, 503)
        assert len(store.rows()) == 2
