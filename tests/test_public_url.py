"""``mlaudit_core.redact.public_url``: no URL mlaudit writes carries user-info.

The registry gate (``RegistryAuditor.handle``) runs against a real ``mlflow server`` on
127.0.0.1 reached through a tracking URI with ``user:password@`` (MLflow's client sends it as
basic auth; the server, started without auth, ignores it): the ``mlaudit.report`` tag of the
model version, and the run link of the written-back report, hold the host only. Before the
fix the tag held ``http://alice:s3cr3t-pw@127.0.0.1:PORT/#/...``.
"""

from __future__ import annotations

import json

import pytest

from mlaudit_core.redact import public_url

PW = "s3cr3t-pw"


@pytest.mark.parametrize(
    "url,expected",
    [
        (
            "postgresql://u:pw@db:5432/mlflow?sslmode=require&password=x",
            "postgresql://db:5432/mlflow?sslmode=require",
        ),
        ("https://u:pa/ss@host/x", "https://host/x"),  # a '/' in the password
        ("https://u:p@ss@h/x", "https://h/x"),  # an '@' in the password
        ("https://u:a/b@c@host/db", "https://host/db"),  # both
        ("https://token@h/x", "https://h/x"),  # a user-only token
        (
            "http://127.0.0.1:5000/#/experiments/1/runs/abc",
            "http://127.0.0.1:5000/#/experiments/1/runs/abc",
        ),
        ("http://h:5000/a@b", "http://h:5000/a@b"),  # an '@' in the path, after a port
        ("https://host/path/user@example.com", "https://host/path/user@example.com"),
        ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db"),
        ("runs:/abc/mlaudit/report.html", "runs:/abc/mlaudit/report.html"),
    ],
)
def test_public_url_drops_userinfo_keeps_the_rest(url, expected):
    assert public_url(url) == expected


@pytest.mark.e2e
def test_registry_auditor_report_tag_and_run_link_have_no_userinfo(mlflow_server):
    mlflow = pytest.importorskip("mlflow")
    from mlaudit_mlflow.plugin import MlflowPlugin
    from mlaudit_mlflow.registry_webhook import TAG_REPORT, GateConfig, Registered, RegistryAuditor
    from test_batch_mlflow import log_run

    from mlaudit_core.settings import load_settings

    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp = client.create_experiment("public-url-gate")
    rid = log_run(client, exp, "diverge", "diverge")
    client.create_registered_model("public-url")
    v = client.create_model_version("public-url", f"runs:/{rid}/model", run_id=rid)

    secret_uri = url.replace("http://", f"http://alice:{PW}@")
    plugin = MlflowPlugin(tracking_uri=secret_uri)
    auditor = RegistryAuditor(
        plugin=plugin,
        settings=load_settings(),
        tracking_uri=secret_uri,
        gate=GateConfig(enabled=True),
    )
    auditor.handle(Registered("public-url", v.version, rid, "d-1"))

    tags = client.get_model_version("public-url", v.version).tags
    assert tags[TAG_REPORT].startswith(f"{url}/#/experiments/{exp}/runs/{rid}"), tags[TAG_REPORT]
    assert PW not in json.dumps(tags) and "alice" not in json.dumps(tags)
    run = client.get_run(rid)
    written = json.dumps(run.data.tags)
    from mlaudit_core.render.html import report_json_from_html

    local = client.download_artifacts(rid, "mlaudit/report.html")
    report = json.loads(report_json_from_html(open(local).read()) or "null")
    assert PW not in written and "alice" not in written
    assert report["run"]["url"].startswith(url) and "alice" not in json.dumps(report)
