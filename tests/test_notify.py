"""Verdict notifications against a real HTTP receiver on 127.0.0.1: Slack-shaped and signed JSON
payloads, a retry after a first 500, filters, bounded failures, settings errors, and the
``--notify`` option of ``mlaudit mlflow`` and ``mlaudit watch mlflow`` on a real mlflow server."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time

import pytest
from webhook_receiver import Receiver

from mlaudit_core.notify import (
    SIGNATURE_HEADER,
    NotifyPolicy,
    notify_config,
    send_verdict,
    slack_escape,
    verify_signature,
)
from mlaudit_core.report import AuditReport, Cause, Finding, Outcome, RunRef, Severity, Verdict
from mlaudit_core.settings import Settings, SettingsError

SECRET = "s3cret-shared-with-the-receiver"
TOKEN = "ghp_" + "A" * 36  # a GitHub-token-shaped secret inside a run-controlled string
FAST = NotifyPolicy(timeout_s=2.0, attempts=3, total_s=10.0, backoff_s=0.05)


def report(
    severity: Severity = Severity.ERROR,
    cause: Cause = Cause.MODEL_CONVERGENCE,
    name: str = "<!channel> lr=3e-4 & <b>sweep</b>",
) -> AuditReport:
    findings = [
        Finding(
            code="OP002",
            name="loss-divergence",
            severity=severity,
            message=f"train loss climbed to 4.8 (12x its best) after step 1000; token {TOKEN}",
        ),
        Finding(
            code="GE001",
            name="generalization-gap",
            severity=Severity.WARNING,
            message="val loss 0.4 above train loss <from step 200>",
        ),
        Finding(
            code="MI001", name="missing-grad-norm", severity=Severity.INFO, message="no grad norm"
        ),
    ]
    return AuditReport(
        tool_version="0.1.0",
        run=RunRef(
            tracker="mlflow",
            id="0123abcd",
            name=name,
            project="it",
            url="http://127.0.0.1:5000/#/experiments/1/runs/0123abcd?a=1&b=2",
        ),
        verdict=Verdict(
            outcome=Outcome.DIVERGED,
            cause=cause,
            confidence=0.85,
            summary="Training diverged at step 1000 & never recovered.",
        ),
        findings=findings,
    )


def test_slack_and_signed_json_payloads_with_a_retry_after_500(monkeypatch):
    monkeypatch.setenv("MLAUDIT_WEBHOOK_SECRET", SECRET)
    with Receiver() as rx:
        rx.fail_first = {"/slack": [500], "/hook": [500]}
        targets, _ = notify_config({}, [f"slack+{rx.url}/slack", f"{rx.url}/hook"])
        got = send_verdict(report(), targets, FAST)

        assert [(d.sent, d.attempts, d.status) for d in got] == [(True, 2, 200), (True, 2, 200)]
        slack, hook = rx.at("/slack"), rx.at("/hook")
        assert [r.status for r in slack] == [500, 200] and [r.status for r in hook] == [500, 200]
        assert slack[0].body == slack[1].body and hook[0].body == hook[1].body  # same delivery

    # Slack: message payload, mrkdwn escaping of run-controlled strings, link to the run
    msg = slack[1].json()
    assert set(msg) == {"text", "blocks"}
    assert [b["type"] for b in msg["blocks"]] == ["section", "section", "section", "context"]
    head = msg["blocks"][0]["text"]["text"]
    assert "*mlaudit verdict: diverged* · cause *model_convergence* · confidence 0.85" in head
    assert (
        "<http://127.0.0.1:5000/#/experiments/1/runs/0123abcd?a=1&amp;b=2|"
        "&lt;!channel&gt; lr=3e-4 &amp; &lt;b&gt;sweep&lt;/b&gt;>"
    ) in head
    assert "<!channel>" not in slack[1].body.decode() and "<b>" not in slack[1].body.decode()
    findings = msg["blocks"][2]["text"]["text"].splitlines()
    assert findings[0].startswith("• `OP002` error: train loss climbed")
    assert findings[1] == "• `GE001` warning: val loss 0.4 above train loss &lt;from step 200&gt;"
    assert len(findings) == 2  # info findings are not "top findings"
    assert (
        "Training diverged at step 1000 &amp; never recovered." in msg["blocks"][1]["text"]["text"]
    )

    # JSON: HMAC-SHA256 over the raw body with the shared secret, stable headers
    raw = hook[1].body
    expected = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    assert hook[1].headers[SIGNATURE_HEADER] == expected
    assert verify_signature(raw, hook[1].headers[SIGNATURE_HEADER], SECRET)
    assert not verify_signature(raw, hook[1].headers[SIGNATURE_HEADER], "another secret")
    assert not verify_signature(raw + b" ", hook[1].headers[SIGNATURE_HEADER], SECRET)
    assert hook[1].headers["X-Mlaudit-Event"] == "verdict"
    assert hook[0].headers["X-Mlaudit-Delivery"] == hook[1].headers["X-Mlaudit-Delivery"]
    doc = hook[1].json()
    assert (
        doc["event"] == "mlaudit.verdict"
        and doc["delivery"] == hook[1].headers["X-Mlaudit-Delivery"]
    )
    assert doc["verdict"] == {
        "outcome": "diverged",
        "cause": "model_convergence",
        "confidence": 0.85,
        "summary": "Training diverged at step 1000 & never recovered.",
        "inconclusive": False,
    }
    assert doc["run"]["url"].endswith("/runs/0123abcd?a=1&b=2") and doc["run"]["name"].startswith(
        "<!channel>"
    )
    assert [f["code"] for f in doc["findings"]] == ["OP002", "GE001"]
    assert (
        doc["max_severity"] == "error"
        and doc["codes"] == ["GE001", "OP002"]
        and doc["n_findings"] == 3
    )

    # secrets redacted in every message
    for r in slack + hook:
        assert TOKEN not in r.body.decode() and "[REDACTED]" in r.body.decode()


def test_unsigned_without_a_secret(monkeypatch):
    monkeypatch.delenv("MLAUDIT_WEBHOOK_SECRET", raising=False)
    with Receiver() as rx:
        targets, _ = notify_config({}, [f"{rx.url}/hook"])
        assert send_verdict(report(), targets, FAST)[0].sent
        assert SIGNATURE_HEADER not in rx.at("/hook")[0].headers


def test_filters_by_severity_and_cause():
    with Receiver() as rx:
        table = {
            "min_severity": "error",
            "targets": [
                {"url": f"{rx.url}/infra", "causes": ["infra_runtime"]},
                {"url": f"{rx.url}/all", "min_severity": "none"},
            ],
        }
        targets, _ = notify_config(table, [f"{rx.url}/errors"])
        got = send_verdict(report(severity=Severity.WARNING), targets, FAST)
        by = {d.target: d for d in got}
        assert len(by) == 1  # labels name only kind, scheme, host and port
        skipped = [d.skipped for d in got]
        assert skipped[0] == "cause model_convergence not in ['infra_runtime']"
        assert skipped[1] is None and got[1].sent
        assert skipped[2] == "worst finding warning below error"
        assert [r.path for r in rx.requests] == ["/all"]

        send_verdict(report(severity=Severity.CRITICAL, cause=Cause.INFRA_RUNTIME), targets, FAST)
        assert sorted(r.path for r in rx.requests) == ["/all", "/all", "/errors", "/infra"]


def test_failures_are_bounded_logged_and_never_raise(caplog):
    with Receiver() as rx:
        rx.always = {"/down": 503, "/gone": 404}
        targets, _ = notify_config(
            {}, [f"{rx.url}/down", f"{rx.url}/gone", "http://127.0.0.1:9/closed"]
        )
        caplog.set_level(logging.WARNING, logger="mlaudit.notify")
        got = send_verdict(report(), targets, FAST)
    assert [d.sent for d in got] == [False, False, False]
    assert got[0].attempts == 3 and got[0].error == "HTTP 503"
    assert got[1].attempts == 1 and got[1].error == "HTTP 404"  # a 4xx is not retried
    assert got[2].attempts == 3 and "ConnectionError" in got[2].error
    assert "/closed" not in got[2].error  # a webhook's path can be its credential
    lines = [r.getMessage() for r in caplog.records if r.name == "mlaudit.notify"]
    assert len(lines) == 3 and all(
        "\n" not in x and x.startswith("mlaudit: notification to json http") for x in lines
    )


def test_total_time_bounds_a_slow_target():
    with Receiver() as rx:
        rx.always = {"/down": 500}
        targets, _ = notify_config({}, [f"{rx.url}/down"])
        policy = NotifyPolicy(timeout_s=1.0, attempts=10, total_s=1.5, backoff_s=0.4)
        (d,) = send_verdict(report(), targets, policy)
    # total_s stops the retries: without it the policy would make all 10 attempts
    assert not d.sent and 2 <= d.attempts < 10


@pytest.mark.parametrize(
    "table, urls, message",
    [
        (
            {"min_severity": "loud"},
            [],
            "[tool.mlaudit.notify] min_severity: Value error, must be one of none",
        ),
        ({"causes": ["bad_luck"]}, [], "unknown cause 'bad_luck'"),
        ({"channel": "#ml"}, [], "[tool.mlaudit.notify] channel: Extra inputs are not permitted"),
        (
            {},
            ["env:MLAUDIT_TEST_UNSET_URL"],
            "environment variable MLAUDIT_TEST_UNSET_URL (a notify URL) is not set",
        ),
        (
            {},
            ["hooks.slack.com/services/T0/B0/XYZSECRET"],
            "notify URL (a URL with no scheme) is not an http(s) URL",
        ),
        ({"urls": ["ftp://example.org/x"]}, [], "notify URL (a URL with scheme 'ftp')"),
    ],
)
def test_settings_errors_name_the_key_not_the_secret(table, urls, message, monkeypatch):
    monkeypatch.delenv("MLAUDIT_TEST_UNSET_URL", raising=False)
    with pytest.raises(SettingsError) as err:
        notify_config(table, urls, source="pyproject.toml")
    assert message in str(err.value) and str(err.value).startswith(
        "pyproject.toml: [tool.mlaudit.notify]"
    )
    assert "XYZSECRET" not in str(err.value)


def test_env_urls_kinds_and_secrets(monkeypatch):
    monkeypatch.setenv("SLACK_URL", "https://hooks.slack.com/services/T0/B0/XYZ")
    monkeypatch.setenv("TEAM_SECRET", "team")
    targets, policy = notify_config(
        {
            "urls": ["env:SLACK_URL", "https://ci.example.org/h"],
            "secret_env": "TEAM_SECRET",
            "total_s": 7,
            "targets": [{"url": "json+https://a.example.org/x", "secret": "own"}],
        },
        ["https://ci.example.org/h"],
    )
    assert [(t.kind, t.label, t.secret) for t in targets] == [
        ("json", "json https://a.example.org", "own"),
        ("slack", "slack https://hooks.slack.com", None),
        ("json", "json https://ci.example.org", "team"),
    ]
    assert policy.total_s == 7 and "XYZ" not in repr(targets[1].label)
    assert slack_escape("a & <b> > c") == "a &amp; &lt;b&gt; &gt; c"


# --------------------------------------------------------------------------- CLI and watcher


def _diverging_run(url: str, experiment: str) -> str:
    mlflow = pytest.importorskip("mlflow")
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(url)
    exp = client.get_experiment_by_name(experiment)
    exp_id = exp.experiment_id if exp else client.create_experiment(experiment)
    rid = client.create_run(exp_id, run_name="notify <me> & co").info.run_id
    ms = []
    for i in range(1, 301):
        loss = 2.0 * math.exp(-i / 50) + 0.2 if i <= 200 else 0.2 + (i - 200) * 0.3
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
    client.log_batch(rid, metrics=ms)
    client.set_terminated(rid, "FINISHED")
    return rid


def test_cli_notify_after_write_back(mlflow_server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mlaudit.cli import app

    monkeypatch.chdir(tmp_path)  # no project settings
    url = mlflow_server["url"]
    rid = _diverging_run(url, "notify-cli")
    env = {"MLAUDIT_WEBHOOK_SECRET": SECRET, "COLUMNS": "200"}
    with Receiver() as rx:
        rx.fail_first = {"/hook": [500]}
        res = CliRunner().invoke(
            app,
            [
                "mlflow",
                rid,
                "-u",
                url,
                "-f",
                "json",
                "--notify",
                f"{rx.url}/hook",
                "--notify",
                f"slack+{rx.url}/slack",
            ],
            env=env,
        )
        assert res.exit_code == 0, res.output
        assert [r.status for r in rx.at("/hook")] == [500, 200] and len(rx.at("/slack")) == 1
        doc = rx.at("/hook")[-1].json()
        assert verify_signature(
            rx.at("/hook")[-1].body, rx.at("/hook")[-1].headers[SIGNATURE_HEADER], SECRET
        )
        tags = __import__("mlflow").MlflowClient(url).get_run(rid).data.tags
        assert (
            doc["run"]["id"] == rid
            and doc["run"]["url"]
            == f"{url}/#/experiments/"
            f"{doc['run']['url'].split('/experiments/')[1].split('/')[0]}/runs/{rid}"
        )
        assert (doc["verdict"]["outcome"], doc["verdict"]["cause"]) == (
            tags["mlaudit.verdict"],
            tags["mlaudit.cause"],
        )
        assert "notified json http://127.0.0.1" in res.stderr

        # --dry-run sends nothing; a bad notify table is exit 2 before anything is written
        n = len(rx.requests)
        res = CliRunner().invoke(
            app, ["mlflow", rid, "-u", url, "--dry-run", "--notify", f"{rx.url}/hook"], env=env
        )
        assert res.exit_code == 0 and len(rx.requests) == n and "would notify json" in res.stderr
        (tmp_path / "mlaudit.toml").write_text('[notify]\nmin_severity = "loud"\n')
        res = CliRunner().invoke(
            app, ["mlflow", rid, "-u", url, "--notify", f"{rx.url}/hook"], env=env
        )
        assert res.exit_code == 2 and "min_severity" in res.stderr and len(rx.requests) == n


def test_watcher_notifies_each_written_verdict(mlflow_server, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mlaudit.cli import app

    monkeypatch.chdir(tmp_path)
    url = mlflow_server["url"]
    rid = _diverging_run(url, "notify-watch")
    with Receiver() as rx:
        res = CliRunner().invoke(
            app,
            [
                "watch",
                "mlflow",
                "-e",
                "notify-watch",
                "-u",
                url,
                "--once",
                "--since",
                "all",
                "--state",
                str(tmp_path / "w.sqlite"),
                "--notify",
                f"{rx.url}/hook",
            ],
        )
        assert res.exit_code == 0, res.output
        docs = [r.json() for r in rx.at("/hook")]
    assert [d["run"]["id"] for d in docs] == [rid]
    assert docs[0]["verdict"]["outcome"] == "diverged"


def test_settings_notify_table_is_used_by_the_notify_helper(monkeypatch):
    from mlaudit_core.notify import notify

    with Receiver() as rx:
        s = Settings(notify={"urls": [f"{rx.url}/hook"], "min_severity": "none", "total_s": 5})
        (d,) = notify(report(severity=Severity.INFO), s)
        assert d.sent and json.loads(rx.at("/hook")[0].body)["max_severity"] == "warning"
        assert notify(report(), Settings(notify={"min_severity": "loud"})) == []


# --------------------------------------------------------------------------- Standard Webhooks


@pytest.mark.parametrize("secret", [SECRET, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
def test_json_deliveries_are_signed_in_the_standard_webhooks_scheme(monkeypatch, secret):
    """Finding 7: the delivery carries webhook-id / webhook-timestamp / webhook-signature,
    verified by our helper and by the spec's reference library (``standardwebhooks``); a
    replay outside the tolerance, a changed body or a changed id are refused."""
    from standardwebhooks import Webhook

    from mlaudit_core.notify import WebhookVerificationError, verify_webhook

    monkeypatch.setenv("MLAUDIT_WEBHOOK_SECRET", secret)
    with Receiver() as rx:
        targets, _ = notify_config({}, [f"{rx.url}/hook"])
        before = time.time()
        assert send_verdict(report(), targets, FAST)[0].sent
        (got,) = rx.at("/hook")
    h = {k.lower(): v for k, v in got.headers.items()}
    assert h["webhook-id"] == h["x-mlaudit-delivery"] == got.json()["delivery"]
    assert abs(int(h["webhook-timestamp"]) - before) <= 5
    assert h["webhook-signature"].startswith("v1,")
    assert verify_webhook(got.body, got.headers, secret) == h["webhook-id"]
    key = secret if secret.startswith("whsec_") else secret.encode()
    assert Webhook(key).verify(got.body, h)["delivery"] == h["webhook-id"]  # the reference lib
    ts = int(h["webhook-timestamp"])
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(got.body, got.headers, secret, now=ts + 301)  # a replay 5 min later
    with pytest.raises(WebhookVerificationError, match="no matching"):
        verify_webhook(got.body.replace(b"diverged", b"succeeded"), got.headers, secret)
    with pytest.raises(WebhookVerificationError, match="no matching"):
        verify_webhook(got.body, {**h, "webhook-id": "other"}, secret)
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify_webhook(got.body, {"content-type": "application/json"}, secret)
    # the deprecated header is still sent for one release
    assert verify_signature(got.body, h["x-mlaudit-signature"], secret)


def test_standard_signature_matches_the_spec_reference_for_a_fixed_message():
    """A signature made by the reference library is accepted by verify_webhook, and ours equals
    it for the same id, timestamp and body."""
    from datetime import datetime, timezone

    from standardwebhooks import Webhook

    from mlaudit_core.notify import standard_signature, verify_webhook

    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body, ts = b'{"test": 2432232314}', 1614265330
    ref = Webhook(secret).sign(
        "msg_p5jXN8AQM9LWM0D4loKWxJek", datetime.fromtimestamp(ts, timezone.utc), body.decode()
    )
    assert standard_signature("msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body, secret) == ref
    headers = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": str(ts),
        "webhook-signature": f"v1,bm9ldHZhbGlk {ref}",
    }  # rotation: one of several matches
    assert verify_webhook(body, headers, secret, now=ts + 10) == "msg_p5jXN8AQM9LWM0D4loKWxJek"
