"""Every output channel, every credential shape (issue 33, finding 3).

Each shape of the catalogue (``tests/test_redact.py``'s positive case for every
:data:`mlaudit_core.redact.SHAPES` entry) and each shape the issue's break-it pass found missing
is planted in the message of the exception that ends a run, the way a crash in a notify call
quotes its URL. Five shapes a run (``PLANT_nn`` markers before each, so a test proves the
message reached the channel), one console log a run. Then every channel that prints, writes,
sends or stores run text is read back and must hold no secret (nor the first 12 characters of
one: a channel that clips text must not clip a secret into a fragment):

* ``mlaudit logs``: stdout in terminal, Markdown and JSON form; ``--out`` report artifacts
  (HTML, Markdown, JSON); ``--evidence``;
* notifications: the Slack message and the signed JSON document, received by a real HTTP
  receiver on 127.0.0.1;
* MCP: ``audit_logs`` and ``collect_evidence`` results through the official SDK's client;
* the in-process hook's write-back to a real ``mlflow server`` (the run's Description, tags and
  ``mlaudit/`` report artifacts) when the script dies with the planted exception;
* ``mlaudit watch PATH --live``: the alerts it posts, its ``live.json`` and its log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_redact import CASES
from webhook_receiver import Receiver

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")
HEX40 = "0123456789abcdef0123456789abcdef01234567"

#: (text planted, the secret that must not come out); the issue's break-it shapes first
ISSUE_SHAPES: list[tuple[str, str]] = [
    (
        "POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/sendMessage",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    ),
    ("deepseek key sk-" + "0a1b2c3d4e5f" * 3, "0a1b2c3d4e5f0a1b2c3d"),
    ("openrouter sk-or-v1-" + "9f8e7d6c5b4a" * 5 + "9f8e", "9f8e7d6c5b4a9f8e7d6c"),
    ("xai-" + "Q1w2E3r4T5y6" * 4, "Q1w2E3r4T5y6Q1w2"),
    ("KAGGLE_KEY=6f1c0e2d9b8a7f6e5d4c3b2a1f0e9d8c", "6f1c0e2d9b8a7f6e5d4c"),
    ("AZURE_OPENAI_KEY: 'c0ffee00c0ffee00c0ffee00c0ffee00'", "c0ffee00c0ffee00c0ffee"),
    ("DB_PW=Tr0ub4dor-and-3 gcp_creds=zzCredsValue77", "Tr0ub4dor-and-3"),
    ("could not connect to postgresql://ml:pa/ss@w0rdX9@db.internal:5432/mlflow", "pa/ss@w0rdX9"),
    ("+ docker login -u ci -p Dk3rPassw0rdZ registry.example.com", "Dk3rPassw0rdZ"),
    ("+ mysql -u root -pMyS3cretPwQ -h db", "MyS3cretPwQ"),
    ("+ sshpass -p Ssh9assWordR ssh gpu01", "Ssh9assWordR"),
    ("wandb login " + HEX40, HEX40),
]
#: shapes that are a whole console line (a PEM body printed line by line) are planted as a line
#: of their own before the traceback, the others inside the exception message
LINE_SHAPES = ("pem_body_line",)
CATALOGUE: list[tuple[str, str]] = [
    (text.replace("\n", " "), secret)
    for name, ((text, secret, _), _) in sorted(CASES.items())
    if name not in LINE_SHAPES
]
OWN_LINES: list[tuple[str, str]] = [CASES[n][0][:2] for n in LINE_SHAPES]
PLANTS = ISSUE_SHAPES + CATALOGUE
PER_RUN = 5
CHUNKS = [PLANTS[i : i + PER_RUN] for i in range(0, len(PLANTS), PER_RUN)]


def marker(i: int) -> str:
    return f"PLANT_{i:02d}"


def crash_message(chunk_no: int) -> str:
    """The planted exception message of run ``chunk_no``: a marker before each shape."""
    parts = []
    for j, (text, _) in enumerate(CHUNKS[chunk_no]):
        parts.append(f"{marker(chunk_no * PER_RUN + j)} {text}")
    return "notify failed: " + " ; ".join(parts)


def console_log(chunk_no: int) -> str:
    lines = [f"step {i} | loss {2.0 / (i + 1):.4f} | lr 0.0003" for i in range(1, 121)]
    lines += [text for text, _ in OWN_LINES]
    lines += [
        "Traceback (most recent call last):",
        '  File "train.py", line 88, in <module>',
        "    notify(msg)",
        f"RuntimeError: {crash_message(chunk_no)}",
    ]
    return "\n".join(lines) + "\n"


def assert_no_secret(text: str, where: str, chunks: range | list[int] = range(len(CHUNKS))) -> None:
    """No planted secret (nor its first 12 characters) in ``text``."""
    for c in chunks:
        for _, secret in CHUNKS[c] + OWN_LINES:
            assert secret not in text, (where, secret)
            assert secret[:12] not in text, (where, secret[:12])


def assert_reached(text: str, where: str, chunks) -> None:
    """The first marker of each chunk is in ``text``: the planted message reached ``where``."""
    missing = [marker(c * PER_RUN) for c in chunks if marker(c * PER_RUN) not in text]
    assert not missing, (where, missing)


def test_every_shape_is_planted():
    assert len(CATALOGUE) + len(OWN_LINES) == len(CASES)
    assert len(PLANTS) == sum(len(c) for c in CHUNKS)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("planted")
    paths = []
    for c in range(len(CHUNKS)):
        p = d / f"run{c:02d}" / "train.log"
        p.parent.mkdir()
        p.write_text(console_log(c))
        paths.append(p)
    return paths


def _cli(log: Path, o: Path, rx_url: str, env: dict) -> dict[str, str]:
    """The three ``mlaudit logs`` invocations of one planted run, their outputs by channel."""
    o.mkdir()
    a = subprocess.run(
        [
            MLAUDIT,
            "logs",
            str(log),
            "-f",
            "json",
            "--out",
            str(o / "r.html"),
            "--evidence",
            str(o / "ev.json"),
            "--notify",
            f"{rx_url}/hook",
            "--notify",
            f"slack+{rx_url}/slack",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=o,
    )
    b = subprocess.run(
        [MLAUDIT, "logs", str(log), "-f", "markdown", "--out", str(o / "r.md")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=o,
    )
    t = subprocess.run(
        [MLAUDIT, "logs", str(log), "--out", str(o / "r.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=o,
    )
    for p in (a, b, t):
        assert p.returncode in (0, 1), p.stderr
    return {
        "json stdout": a.stdout,
        "stderr": a.stderr + b.stderr + t.stderr,
        "markdown stdout": b.stdout,
        "terminal stdout": t.stdout,
        "html artifact": (o / "r.html").read_text(),
        "markdown artifact": (o / "r.md").read_text(),
        "json artifact": (o / "r.json").read_text(),
        "evidence": (o / "ev.json").read_text(),
    }


@pytest.mark.e2e
def test_cli_stdout_artifacts_evidence_and_notifications(logs, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    env = {**os.environ, "MLAUDIT_WEBHOOK_SECRET": "whsec_dGVzdHNlY3JldA==", "COLUMNS": "200"}
    with Receiver() as rx, ThreadPoolExecutor(3) as pool:
        outs = list(
            pool.map(lambda c: _cli(logs[c], tmp_path / f"c{c:02d}", rx.url, env), range(len(logs)))
        )
        slack = [json.dumps(r.json()) for r in rx.at("/slack")]
        hook = [r.body.decode() for r in rx.at("/hook")]
    assert len(slack) == len(logs) and len(hook) == len(logs)
    for where, texts in (("slack", slack), ("json notification", hook)):
        assert_no_secret("\n".join(texts), where)
        assert_reached("\n".join(texts), where, range(len(CHUNKS)))
    for c, out in enumerate(outs):
        for where, text in out.items():
            assert_no_secret(text, f"{where} (run {c})")
            if where != "stderr":
                assert_reached(text, f"{where} (run {c})", [c])


@pytest.mark.e2e
def test_mcp_audit_logs_and_collect_evidence_results(logs):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    root = logs[0].parent.parent

    async def main():
        params = StdioServerParameters(
            command=MLAUDIT, args=["mcp", "--root", str(root)], cwd=str(root), env=dict(os.environ)
        )
        out = []
        async with Client(params) as client:
            for log in logs:
                for name, args in (
                    ("audit_logs", {"paths": [str(log)]}),
                    ("collect_evidence", {"logs": [str(log)]}),
                ):
                    res = await client.call_tool(name, args)
                    out.append(
                        json.dumps(res.structured_content)
                        + "".join(getattr(x, "text", "") for x in res.content)
                    )
        return out

    texts = anyio.run(main)
    for i, text in enumerate(texts):
        assert_no_secret(text, f"mcp result {i}")
        assert_reached(text, f"mcp result {i}", [i // 2])


HOOK_SCRIPT = r"""
import json, sys
import mlflow
from mlaudit.hooks import audit_on_exit

messages = json.loads(sys.argv[1])
ids = []
for i, msg in enumerate(messages):
    with mlflow.start_run(run_name=f"planted-{i}") as run:
        ids.append(run.info.run_id)
        for step in range(1, 61):
            mlflow.log_metric("train/loss", 2.0 / step, step=step)
        try:
            with audit_on_exit(budget_s=120, notify=sys.argv[2]):
                raise RuntimeError(msg)
        except RuntimeError:
            pass
print(json.dumps(ids))
"""


@pytest.mark.e2e
def test_hook_write_back_description_tags_artifacts_and_notification(mlflow_server, tmp_path):
    """The in-process hook (``audit_on_exit``) in a real script logging to a real ``mlflow
    server``: the training block raises the planted exception; the hook audits, writes the
    verdict back (Description, tags, ``mlaudit/`` artifacts) and posts the notification."""
    mlflow = pytest.importorskip("mlflow")
    messages = [crash_message(c) for c in range(len(CHUNKS))]
    # an experiment or run id another test of this worker left in the environment is not the
    # server's: the script starts its run in the server's default experiment
    leaked = ("MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID")
    env = {k: v for k, v in os.environ.items() if k not in leaked}
    env["MLFLOW_TRACKING_URI"] = mlflow_server["url"]
    with Receiver() as rx:
        p = subprocess.run(
            [sys.executable, "-c", HOOK_SCRIPT, json.dumps(messages), f"{rx.url}/hook"],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=tmp_path,
        )
        assert p.returncode == 0, p.stderr[-3000:]
        hook = "\n".join(r.body.decode() for r in rx.at("/hook"))
    ids = json.loads(p.stdout.strip().splitlines()[-1])
    assert_no_secret(p.stdout + p.stderr, "script output")
    assert_no_secret(hook, "hook notification")
    assert_reached(hook, "hook notification", range(len(CHUNKS)))
    client = mlflow.MlflowClient(mlflow_server["url"])
    for c, rid in enumerate(ids):
        tags = client.get_run(rid).data.tags
        description = tags.get("mlflow.note.content", "")
        arts = ""
        for name in ("report.html",):  # the page carries the JSON report too
            local = client.download_artifacts(rid, f"mlaudit/{name}", str(tmp_path / f"a{c}"))
            arts += Path(local).read_text()
        assert_no_secret(json.dumps(tags), f"run {c} tags")
        assert_no_secret(arts, f"run {c} report artifacts")
        assert_reached(description, f"run {c} Description", [c])
        assert_reached(arts, f"run {c} report artifacts", [c])


OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "


@pytest.mark.e2e
def test_live_watcher_alerts_live_json_log_and_state(tmp_path):
    """``mlaudit watch PATH --live`` follows one console log per planted run; each log gets an
    out-of-memory line carrying the run's shapes (LV007 alerts quote it). The alerts posted to
    a real receiver, each run's ``live.json``, the watcher's log and its state file are read."""
    import signal

    from waiting import wait_live_polls
    from webhook_receiver import live_alerts, wait_for

    runs = []
    for c in range(len(CHUNKS)):
        d = tmp_path / f"live{c:02d}"
        d.mkdir()
        (d / "train.log").write_text("")
        runs.append(d)
    state, log = tmp_path / "s.sqlite", tmp_path / "watch.log"
    with Receiver() as rx:
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                *[str(d / "train.log") for d in runs],
                "--live",
                "--poll-interval",
                "0.3",
                "--state",
                str(state),
                "--stall-floor",
                "600",
                "--cooldown",
                "0",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=open(tmp_path / "watch.out", "wb"),
            stderr=open(log, "wb"),
        )
        try:
            wait_for(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            for c, d in enumerate(runs):
                lines = [
                    f"{{'loss': {2.0 / i:.4f}, 'learning_rate': 0.0003, 'epoch': {i / 100}}}"
                    for i in range(1, 30)
                ]
                with open(d / "train.log", "a") as f:
                    f.write("\n".join(lines + [OOM + crash_message(c)]) + "\n")
            wait_for(lambda: len(live_alerts(rx)) >= len(runs), 120, "one alert per run")
            try:
                wait_for(
                    lambda: all((d / "mlaudit" / "live-train.log.json").exists() for d in runs),
                    60,
                    "every run's live.json",
                )
            except AssertionError:
                got = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.json"))
                raise AssertionError(f"{got}\n{log.read_text()[-3000:]}") from None
            wait_live_polls(state)  # anything more the watcher would send is sent
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        alerts = [json.dumps(a) for a in live_alerts(rx)]
    assert_no_secret("\n".join(alerts), "live alerts")
    assert_reached("\n".join(alerts), "live alerts", range(len(CHUNKS)))
    for c, d in enumerate(runs):
        doc = (d / "mlaudit" / "live-train.log.json").read_text()
        assert_no_secret(doc, f"live.json {c}")
        assert_reached(doc, f"live.json {c}", [c])
    assert_no_secret(log.read_text() + (tmp_path / "watch.out").read_text(), "watcher output")
    assert_no_secret(state.read_bytes().decode("utf-8", "replace"), "state file")


@pytest.mark.parametrize("text,secret", ISSUE_SHAPES)
def test_redact_text_removes_the_issue_shapes(text, secret):
    from mlaudit_core.redact import REDACTED, redact_text

    out = redact_text(text)
    assert secret not in out and REDACTED in out, out


@pytest.mark.parametrize(
    "text",
    [
        "{'loss': 0.41, 'tokens_per_sec': 18234.5, 'num_input_tokens_seen': 40960}",
        "pad_token: <pad> eos_token: </s> max_tokens=512 max_new_tokens: 256",
        "metric_key=val/loss sort_key: step keypoint_ap=0.61 hotkey=ctrl+c",
        "python -m torch.distributed.run -p 29500 --nproc-per-node 8 train.py",
        "global_step=1200 train_loss_epoch_average=0.3123 learning_rate=0.0003",
        "ssh -p 2222 gpu01 'nvidia-smi'",
    ],
)
def test_redact_text_keeps_metric_lines(text):
    from mlaudit_core.redact import redact_text

    assert redact_text(text) == text
