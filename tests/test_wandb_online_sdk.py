"""The real wandb SDK logging ONLINE into the local W&B server, and the report panel end to end.

No real W&B server can run here (no network, no credentials; W&B Server is a licensed multi-GB
container), so the real SDK (wandb 0.31: ``wandb.init`` through its wandb-core service, and the
public ``wandb.Api``) talks to ``tests/wandb_fake_server.py`` on 127.0.0.1, which implements the
GraphQL operations, the ``file_stream`` endpoint and the file uploads with the real API's payload
shapes (its docstring lists them).

* The demo's regimes (``examples/regimes.py``) are trained once into MLflow; the same rows are
  logged by the SDK in a training process with ``WANDB_MODE=online`` (runs created by
  ``UpsertBucket``, history/summary/console through the file stream, files uploaded) and with
  ``WANDB_MODE=offline``. ``mlaudit wandb ENTITY/PROJECT/RUN``, ``mlaudit wandb --offline`` and the
  MLflow run must give the same verdict (outcome and cause).
* The report panel: ``mlaudit wandb`` resumes the run (``RunResumeStatus``), logs the HTML report
  as ``wandb.Html`` under ``mlaudit/report`` (a history row through the file stream, the HTML file
  uploaded under ``media/html/``) and finishes it; a second audit logs nothing again;
  ``--no-panel`` never resumes; the auto-triage loop guard skips the judged run, including a
  crashed run, which the resume leaves ``failed``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("wandb")
pytest.importorskip("mlflow")
pytest.importorskip("sklearn")

from wandb_fake_server import FakeWandbServer
from wandb_helpers import mlflow_run_as_rows

from mlaudit.cli import app
from mlaudit_core.writeback import BEGIN

REPO = Path(__file__).resolve().parents[1]
KEY = "f" * 40
ENTITY, PROJECT, GUARDED = "ent", "regimes-online", "regimes-guarded"
#: regime -> the outcomes the MLflow twin may get (a check that the trainings still mean
#: something); the underfit regime has no logged reference level, so plateaued is accepted as
#: ``mlaudit demo`` accepts it (integrations/mlaudit_demo/cli.py)
REGIMES = {
    "healthy": {"succeeded"},
    "high_lr": {"diverged"},
    "overfit": {"overfit"},
    "underfit": {"underfit", "plateaued"},
    "starved": {"slow"},
}
#: run id -> (regime, project): copies logged for the panel tests (each test has its own runs)
PANEL_RUNS = {
    "panelok1": ("high_lr", PROJECT),
    "panelcrash1": ("healthy", PROJECT),
    "nopanel1": ("healthy", PROJECT),
    "refused1": ("healthy", PROJECT),
    "panelhook1": ("overfit", PROJECT),
    "guard1": ("underfit", GUARDED),
    "guard2": ("high_lr", GUARDED),
}

_LOG = r"""
import json, sys
import wandb
spec = json.load(open(sys.argv[1]))
for run_id, run in spec.items():
    r = wandb.init(entity=run["entity"], project=run["project"], id=run_id, name=run["name"],
                   config=run["params"], tags=["regimes"], group="digits",
                   settings=wandb.Settings(x_disable_stats=True))
    for row in run["rows"]:
        row = dict(row)
        step = row.pop("_step")
        r.log(row, step=step)
    print(run["console"], end="", flush=True)
    r.finish(exit_code=0)
"""


def _reset_sdk() -> None:
    """Forget wandb's in-process setup (settings read from the environment, the service
    connection), so no later test module is sent to this module's stopped server."""
    import wandb

    try:
        wandb.teardown()
    except Exception:  # nothing was set up
        pass


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The regimes trained into a sqlite MLflow store; their MLflow runs as replayable rows.

    MLflow's usage telemetry (HTTPS to config.mlflow-telemetry.io) is off for the module:
    no test here talks to anything but 127.0.0.1.
    """
    import mlflow
    from mlflow.telemetry.client import set_telemetry_client
    from mlflow.tracking import MlflowClient

    sys.path.insert(0, str(REPO / "examples"))
    import regimes

    mp = pytest.MonkeyPatch()
    mp.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    set_telemetry_client()  # re-reads the setting (the client is made when mlflow is imported)
    root = tmp_path_factory.mktemp("regimes")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("regimes")
    client = MlflowClient(uri)
    out = {}
    try:
        for name in REGIMES:
            run_id = regimes.train(name, seed=0, verbose=False)["run_id"]
            out[name] = {"mlflow_id": run_id, **mlflow_run_as_rows(client, run_id, root)}
    finally:
        mlflow.set_tracking_uri(None)
    try:
        yield {"uri": uri, "runs": out}
    finally:
        mp.undo()
        set_telemetry_client()


def _sdk_env(root: Path, mode: str, base_url: str | None = None) -> dict[str, str]:
    env = dict(
        os.environ,
        WANDB_MODE=mode,
        WANDB_DIR=str(root),
        WANDB_SILENT="true",
        WANDB_CONFIG_DIR=str(root / "config"),
        WANDB_CACHE_DIR=str(root / "cache"),
        WANDB_DATA_DIR=str(root / "data"),
        WANDB_ERROR_REPORTING="false",
    )
    env.pop("WANDB_BASE_URL", None)
    env.pop("WANDB_API_KEY", None)
    if base_url is not None:
        env.update(WANDB_BASE_URL=base_url, WANDB_API_KEY=KEY)
    return env


@pytest.fixture(scope="module")
def server(trained, tmp_path_factory):
    """The local W&B server; the regimes (and the panel tests' copies) logged into it ONLINE by
    the real SDK in a training process, and offline by the same script into run directories.

    Yields the server with ``offline_dirs`` (regime -> offline run directory) and ``ids``
    (regime -> online run id) attached; this process's SDK points at the server meanwhile.
    """
    root = tmp_path_factory.mktemp("wandb-online")
    _reset_sdk()
    mp = pytest.MonkeyPatch()
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as srv:

        def spec(runs: dict[str, tuple[str, str]]) -> Path:
            body = {
                run_id: {
                    "entity": ENTITY,
                    "project": project,
                    "name": regime,
                    **{k: trained["runs"][regime][k] for k in ("params", "rows", "console")},
                }
                for run_id, (regime, project) in runs.items()
            }
            path = root / f"spec-{len(runs)}.json"
            path.write_text(json.dumps(body))
            return path

        ids = {name: f"{name.replace('_', '')}0" for name in REGIMES}
        twins = {run_id: (regime, PROJECT) for regime, run_id in ids.items()}
        online, offline = spec({**twins, **PANEL_RUNS}), spec(twins)
        (root / "off").mkdir()
        (root / "train").mkdir()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _LOG, str(online)],
                cwd=root / "train",
                env=_sdk_env(root / "train", "online", srv.base_url),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            ),
            subprocess.Popen(
                [sys.executable, "-c", _LOG, str(offline)],
                cwd=root / "off",
                env=_sdk_env(root / "off", "offline"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            ),
        ]
        for p in procs:
            _out, err = p.communicate(timeout=180)
            assert p.returncode == 0, err.decode()[-3000:]
        srv.offline_dirs = {
            name: next((root / "off" / "wandb").glob(f"offline-run-*-{ids[name]}"))
            for name in REGIMES
        }
        srv.ids = ids
        srv.root = root / "audit"  # this process's working directory
        srv.root.mkdir()
        mp.setenv("WANDB_BASE_URL", srv.base_url)
        mp.setenv("WANDB_API_KEY", KEY)
        mp.setenv("WANDB_SILENT", "true")
        mp.setenv("WANDB_ERROR_REPORTING", "false")
        mp.setenv("WANDB_CONFIG_DIR", str(root / "config"))
        mp.setenv("WANDB_CACHE_DIR", str(root / "cache"))
        mp.setenv("WANDB_DATA_DIR", str(root / "data"))
        mp.delenv("WANDB_MODE", raising=False)
        mp.chdir(srv.root)  # anything the SDK might leave in the working directory stays here
        try:
            yield srv
        finally:
            mp.undo()
            _reset_sdk()


def _cli(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _ops_for(srv, run_id: str, since: int = 0) -> list[str]:
    """GraphQL operations at or after index ``since`` whose variables name ``run_id``."""
    return [
        name
        for name, v in srv.calls[since:]
        if run_id in (v.get("name"), v.get("run"), v.get("runName"))
    ]


# --------------------------------------------------------------------------- online logging


def test_sdk_run_lands_on_the_server_as_logged(trained, server):
    """What the SDK sent (UpsertBucket, file stream, uploads) is what the server holds."""
    r, run = trained["runs"]["healthy"], server.run(ENTITY, PROJECT, server.ids["healthy"])
    assert run.state_log == ["running", "finished"] and run.exitcode == 0
    assert [row["_step"] for row in run.history] == [row["_step"] for row in r["rows"]]
    assert [row.get("train/loss") for row in run.history] == [
        row.get("train/loss") for row in r["rows"]
    ]
    assert run.config["lr"] == r["params"]["lr"] and run.wandb_config["t"]  # the SDK's telemetry
    assert run.tags == ["regimes"] and run.group == "digits" and run.display_name == "healthy"
    assert run.summary["train/loss"] == r["rows"][-1]["train/loss"]
    assert run.summary["_step"] == r["rows"][-1]["_step"]
    # console: streamed line by line (timestamped) and uploaded as output.log at the end
    streamed = [line.split(" ", 1)[1] for line in run.console]
    assert streamed == r["console"].splitlines()
    assert run.files["output.log"].decode().splitlines() == r["console"].splitlines()
    assert {"wandb-summary.json", "config.yaml", "requirements.txt"} <= set(run.files)
    for op in ("UpsertBucket", "CreateRunFiles"):
        assert op in _ops_for(server, server.ids["healthy"])
    assert server.unknown == []  # every operation and field the SDK sent is implemented


def test_system_metrics_stream_reaches_the_audit(server, tmp_path):
    """System stats sampled by the SDK (every 0.2 s here) go through the file stream's
    ``wandb-events.jsonl`` chunks; mlaudit reads them back as ``system.*`` series."""
    import time

    import wandb

    from mlaudit_core.plugins import get_plugin

    run = wandb.init(
        entity=ENTITY,
        project=PROJECT,
        id="sysstats1",
        mode="online",
        dir=str(tmp_path),
        settings=wandb.Settings(console="off", silent=True, x_stats_sampling_interval=0.2),
    )
    try:
        for step in range(5):
            run.log({"train/loss": 1.0 / (step + 1)}, step=step)
            time.sleep(0.3)
    finally:
        run.finish()
    events = server.run(ENTITY, PROJECT, "sysstats1").events
    with_memory = [e for e in events if "system.proc.memory.rssMB" in e]
    assert len(with_memory) >= 3 and all("_timestamp" in e for e in events)
    data = get_plugin("wandb").load(f"{ENTITY}/{PROJECT}/sysstats1")
    assert len(data.metrics.series("system.proc.memory.rssMB")) == len(with_memory)
    assert len(data.metrics.series("train/loss")) == 5


@pytest.mark.parametrize("regime", list(REGIMES))
def test_same_verdict_online_sdk_offline_mlflow(trained, server, regime):
    from mlaudit_core.audit import audit
    from mlaudit_core.plugins import get_plugin

    r = trained["runs"][regime]
    v_mlflow = audit(get_plugin("mlflow", tracking_uri=trained["uri"]).load(r["mlflow_id"])).verdict
    on = _cli("wandb", f"{ENTITY}/{PROJECT}/{server.ids[regime]}", "--no-write")["verdict"]
    off = _cli("wandb", "--offline", str(server.offline_dirs[regime]), "--no-write")["verdict"]
    got = {
        (v_mlflow.outcome.value, v_mlflow.cause.value),
        (on["outcome"], on["cause"]),
        (off["outcome"], off["cause"]),
    }
    assert len(got) == 1, f"{regime}: mlflow {v_mlflow}, online {on}, offline {off}"
    assert v_mlflow.outcome.value in REGIMES[regime]


# --------------------------------------------------------------------------- the report panel


def _panel_rows(ref: str) -> list[dict]:
    import wandb

    rows = wandb.Api().run(ref).scan_history()
    return [row for row in rows if row.get("mlaudit/report") is not None]


def test_panel_resumes_logs_html_and_is_not_logged_twice(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_id = "panelok1"
    ref = f"{ENTITY}/{PROJECT}/{run_id}"
    run = server.run(ENTITY, PROJECT, run_id)
    n_rows, config, mark = len(run.history), dict(run.config), len(server.calls)
    files = dict(run.files)
    last_step = run.history[-1]["_step"]

    report = _cli("wandb", ref, "--panel")
    assert report["verdict"]["outcome"] == "diverged"
    # the resumed run's directory was a temporary one: nothing in the working directory, nor
    # where the SDK's process-wide setup put run directories (its first working directory)
    assert list(tmp_path.iterdir()) == [] and not list(server.root.glob(f"**/run-*-{run_id}"))
    assert "RunResumeStatus" in _ops_for(server, run_id, mark)
    assert run.state_log == ["running", "finished", "running", "finished"] and run.exitcode == 0

    (row,) = _panel_rows(ref)
    media = row["mlaudit/report"]
    assert media["_type"] == "html-file" and media["path"].startswith("media/html/mlaudit/report_")
    assert row["_step"] == last_step + 1  # the row after the last training step
    html = run.files[media["path"]]
    assert hashlib.sha256(html).hexdigest() == media["sha256"] and media["size"] == len(html)
    text = html.decode()
    assert "<html" in text.lower() and "diverged" in text and run_id in text
    assert text.count('<svg xmlns="http://www.w3.org/2000/svg"') >= 1  # the plots, inline SVG
    assert "<polyline points=" in text and "<script" not in text.lower()
    assert len(run.history) == n_rows + 1

    # the resume kept everything else: config, tags, notes, the verdict summary
    assert run.config == config
    assert "mlaudit:diverged" in run.tags and "regimes" in run.tags
    assert run.notes.count(BEGIN) == 1
    assert run.summary["mlaudit/verdict"] == "diverged"
    assert run.summary["mlaudit/run_state"] == "finished" and run.summary["mlaudit/report_sha"]
    assert run.summary["mlaudit/report"]["path"] == media["path"]
    changed = {n for n, b in run.files.items() if files.get(n) != b}
    assert changed == {
        "config.yaml",
        "wandb-summary.json",
        media["path"],
        "mlaudit/report.html",
    }  # not requirements.txt

    # a second audit: the same report is not logged again, the run is not resumed
    mark = len(server.calls)
    streams = len(server.requests)
    res = CliRunner().invoke(app, ["wandb", ref, "-f", "json", "--panel"])
    assert res.exit_code == 0, res.output
    assert "RunResumeStatus" not in _ops_for(server, run_id, mark)
    assert not [p for _m, p in server.requests[streams:] if p.endswith("file_stream")]
    assert len(run.history) == n_rows + 1 and len(_panel_rows(ref)) == 1
    assert run.state_log == ["running", "finished", "running", "finished"]
    assert server.unknown == []


def test_panel_leaves_the_callers_active_run_alone(server, tmp_path):
    """mlaudit called inside a training process with its own active run (a hook, a notebook):
    the panel goes to the audited run, the caller's run keeps logging and is not finished."""
    import wandb

    active = wandb.init(
        entity=ENTITY,
        project=PROJECT,
        id="active1",
        mode="online",
        dir=str(tmp_path),
        settings=wandb.Settings(console="off", silent=True, x_disable_stats=True),
    )
    try:
        active.log({"x": 1.0}, step=0)
        report = _cli("wandb", f"{ENTITY}/{PROJECT}/panelhook1", "--panel")
        active.log({"x": 2.0}, step=1)
    finally:
        active.finish()
    assert report["verdict"]["outcome"] == "overfit"
    mine = server.run(ENTITY, PROJECT, "active1")
    assert [row.get("x") for row in mine.history] == [1.0, 2.0]
    assert not any("mlaudit/report" in row for row in mine.history)
    assert mine.state_log == ["running", "finished"]
    assert len(_panel_rows(f"{ENTITY}/{PROJECT}/panelhook1")) == 1


def test_default_write_back_never_resumes(server):
    """Issue 19: the panel is opt-in; by default the verdict goes through the API only (tags,
    summary keys, notes, files), the run's state log and history are untouched, and no
    run-state automation can fire again."""
    run_id = "nopanel1"
    ref = f"{ENTITY}/{PROJECT}/{run_id}"
    run = server.run(ENTITY, PROJECT, run_id)
    n_rows, mark, reqs = len(run.history), len(server.calls), len(server.requests)
    _cli("wandb", ref)
    assert "RunResumeStatus" not in server.operations[mark:]
    assert "CreateRunFiles" in server.operations[mark:]  # the report files still go up
    assert not [p for _m, p in server.requests[reqs:] if p.endswith("file_stream")]
    assert [n for n, v in server.calls[mark:] if n == "UpsertBucket" and v.get("name")] == []
    assert run.state_log == ["running", "finished"] and len(run.history) == n_rows
    assert run.summary["mlaudit/verdict"] and "mlaudit/report_sha" not in run.summary
    assert not any(name.startswith("media/") for name in run.files)
    assert run.notes.count(BEGIN) == 1 and f"mlaudit:{run.summary['mlaudit/verdict']}" in run.tags
    assert "mlaudit/report.html" in run.files


def test_crashed_run_panel_leaves_it_failed_and_the_loop_guard_holds(server, monkeypatch):
    """W&B marks a run crashed when its heartbeats stop (the fake server is told so directly).
    The panel's resume ends with exit code 1: the run is *failed* afterwards; mlaudit records
    that state for the loop guard, so the automation the resume re-fires audits nothing.
    (``WANDB_MODE=offline`` in the environment does not divert the panel into a local
    offline run.)"""
    from mlaudit_wandb.triage import WandbWatchSource

    from mlaudit_core.plugins import get_plugin

    run_id = "panelcrash1"
    ref = f"{ENTITY}/{PROJECT}/{run_id}"
    run = server.run(ENTITY, PROJECT, run_id)
    with server.lock:
        run.set_state("crashed")
    monkeypatch.setenv("WANDB_MODE", "offline")
    report = _cli("wandb", ref, "--panel")
    monkeypatch.delenv("WANDB_MODE")
    assert report["verdict"]["outcome"] != "succeeded"  # a crashed run is never called healthy
    assert run.state_log == ["running", "finished", "crashed", "running", "failed"]
    assert run.exitcode == 1 and len(_panel_rows(ref)) == 1
    assert run.summary["mlaudit/run_state"] == "failed"

    plugin = get_plugin("wandb")
    assert ref not in plugin.list_finished(project=f"{ENTITY}/{PROJECT}")
    source = WandbWatchSource(plugin, "test")  # a webhook for the re-fired "failed" event
    assert source.skip_reason(plugin.load(ref)) == "verdict already present"


def test_watcher_loop_guard_after_the_panel_resume(server, tmp_path):
    """``mlaudit watch wandb`` with the panel: the resume ends each run again (new heartbeat: a
    new ending for the state file, like the automation it re-fires), yet the next poll audits
    nothing: the listing leaves judged runs out, and a pushed run is skipped by the source."""
    from mlaudit_wandb.triage import WandbWatchSource

    from mlaudit_core.plugins import get_plugin

    args = [
        "watch",
        "wandb",
        "--project",
        f"{ENTITY}/{GUARDED}",
        "--once",
        "--since",
        "all",
        "--state",
        str(tmp_path / "w.sqlite"),
        "--panel",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    runs = {rid: server.run(ENTITY, GUARDED, rid) for rid in ("guard1", "guard2")}
    for rid, run in runs.items():
        assert run.state_log == ["running", "finished", "running", "finished"], rid
        assert len(_panel_rows(f"{ENTITY}/{GUARDED}/{rid}")) == 1
    assert runs["guard1"].summary["mlaudit/verdict"] in REGIMES["underfit"]
    assert runs["guard2"].summary["mlaudit/verdict"] == "diverged"

    mark, reqs = len(server.calls), len(server.requests)
    res = CliRunner().invoke(app, args)  # the same state file: the runs' endings changed
    assert res.exit_code == 0, res.output
    assert not {"RunParquetHistory", "RunResumeStatus", "UpsertBucket"} & set(
        server.operations[mark:]
    )
    assert server.requests[reqs:] == []
    assert all(run.state_log[-1] == "finished" and len(run.state_log) == 4 for run in runs.values())

    plugin = get_plugin("wandb")
    assert plugin.list_finished(project=f"{ENTITY}/{GUARDED}") == []
    source = WandbWatchSource(plugin, "test")
    assert (
        source.skip_reason(plugin.load(f"{ENTITY}/{GUARDED}/guard1")) == "verdict already present"
    )


def test_refused_resume_is_one_line_and_the_verdict_stays(server, tmp_path, monkeypatch):
    """The server refuses the resume (RunResumeStatus fails): one error line naming the run and
    the panel, exit 2, no traceback; the verdict written before stays, no panel hash is
    recorded (a later audit tries again), the run is not resumed, no run directory is left."""
    from wandb_fake_server import GraphQLFailure

    run_id = "refused1"
    ref = f"{ENTITY}/{PROJECT}/{run_id}"
    view = server._model_view

    def refuse(name=None, **kw):
        model = view(name=name, **kw)

        def bucket(name=None, **_):
            if name == run_id:
                raise GraphQLFailure("internal error: resume unavailable")
            return model["bucket"](name=name)

        return dict(model, bucket=bucket) if model else model

    monkeypatch.setattr(server, "_model_view", refuse)
    monkeypatch.chdir(tmp_path)
    run = server.run(ENTITY, PROJECT, run_id)
    res = CliRunner().invoke(app, ["wandb", ref, "-f", "json", "--timeout", "10", "--panel"])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error:"), res.stderr
    assert ref in lines[0] and "report panel" in lines[0] and "Traceback" not in res.output
    assert KEY not in res.output
    assert run.summary["mlaudit/verdict"] and "mlaudit/report_sha" not in run.summary
    assert run.state_log == ["running", "finished"]
    assert list(tmp_path.iterdir()) == []


def test_notes_edited_during_the_write_back_are_kept(server, monkeypatch):
    """Issue 16.1 on W&B: the user saves a note (real SDK, public API ``Run.update``) while
    mlaudit uploads the report files; mlaudit reads the notes only after the upload and reads
    them back after writing, so the note is kept next to exactly one mlaudit section. (The
    old write-back merged the notes it read before the upload and wrote that stale copy.)"""
    import wandb
    from mlaudit_wandb import writeback as wb
    from mlaudit_wandb.online import load_online, make_api, parse_ref

    from mlaudit_core import audit

    run_id = server.ids["healthy"]
    ref = f"{ENTITY}/{PROJECT}/{run_id}"
    real_upload, real_fetch = wb._upload, wb.fetch_run

    def user_edits(line: str) -> None:
        mine = wandb.Api().run(ref)
        mine.notes = (mine.notes or "") + "\n" + line
        mine.update()

    def fetch_then_user_edits(api, path):  # the user saves just after mlaudit loaded the run
        wrun = real_fetch(api, path)
        user_edits("user edit after mlaudit loaded the run")
        return wrun

    def upload_then_user_edits(wrun, files):
        real_upload(wrun, files)
        user_edits("user edit during the upload")

    monkeypatch.setattr(wb, "fetch_run", fetch_then_user_edits)
    monkeypatch.setattr(wb, "_upload", upload_then_user_edits)
    data = load_online(ref)
    res = wb.write_back(make_api(30), parse_ref(ref), audit(data), run_data=data, panel=False)
    notes = server.run(ENTITY, PROJECT, run_id).notes
    assert "user edit after mlaudit loaded the run" in notes, notes
    assert "user edit during the upload" in notes and notes.count(BEGIN) == 1, notes
    assert res.section_state == "written"
