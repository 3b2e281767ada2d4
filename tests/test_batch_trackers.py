"""``mlaudit batch wandb`` and ``mlaudit batch clearml``: the shared batch runner on the real SDKs
against the local fake servers (``wandb_fake_server``, ``clearml_fake_server``).

Each project holds a healthy, a diverging and an overfitting run, one run the server cannot
read, and one still running. The batch lists the ended ones, audits them, writes each readable
run's verdict back once, lists the unreadable one with its reason, exits 0; a second
invocation takes the settled runs from the state file and writes nothing again. With
``--executor ray`` the same holds on a Ray cluster whose workers share neither the caller's
environment nor its credential files (``ray_head``).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner
from wandb_helpers import reset_sdk_state, sdk_pointed_at

from mlaudit.cli import app
from mlaudit_core.writeback import BEGIN

WIDE = {"COLUMNS": "240"}
SHAPES = ("healthy", "diverge", "overfit")
OUTCOMES = {"healthy": "succeeded", "diverge": "diverged", "overfit": "overfit"}


def curve(shape: str) -> list[tuple[int, float, float | None]]:
    """(step, train loss, val loss or None) for 300 steps of one shape."""
    out = []
    for i in range(1, 301):
        loss = 2.0 * math.exp(-i / 50) + 0.2
        if shape == "diverge" and i > 200:
            loss = 0.2 + (i - 200) * 0.3
        val = None
        if i % 30 == 0:
            val = loss + 0.1 + (max(0, i - 90) * 0.02 if shape == "overfit" else 0.0)
        out.append((i, loss, val))
    return out


# --------------------------------------------------------------------------- W&B

wandb_fake_server = pytest.importorskip("wandb_fake_server")
KEY = "k" * 40
ENTITY, PROJECT = "ent", "batch-it"


def wandb_rows(shape: str) -> list[dict]:
    rows = []
    for i, loss, val in curve(shape):
        row = {"_step": i, "_timestamp": 1_700_000_000 + i, "_runtime": i, "train/loss": loss}
        if val is not None:
            row["val/loss"] = val
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def wandb_server():
    """The fake W&B server with the project's runs; writes (upserts) counted per run; the run
    ``broken`` answers every history query with a server error."""
    pytest.importorskip("wandb")
    FakeRun, FakeWandbServer = wandb_fake_server.FakeRun, wandb_fake_server.FakeWandbServer
    failure = wandb_fake_server.GraphQLFailure
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as srv:
        for shape in (*SHAPES, "broken"):
            srv.add_run(
                FakeRun(
                    ENTITY,
                    PROJECT,
                    shape,
                    display_name=shape,
                    tags=["keep-me"],
                    notes="user notes",
                    history=wandb_rows("healthy" if shape == "broken" else shape),
                )
            )
        srv.add_run(
            FakeRun(ENTITY, PROJECT, "live", state="running", history=wandb_rows("healthy")[:50])
        )
        srv.writes, srv.verdicts = {}, {}
        run_view, upsert = srv._run_view, srv._upsert_bucket

        def broken_view(r):
            view = run_view(r)
            if view is not None and r.name == "broken":

                def fail(**_):
                    raise failure("internal error: history storage unavailable")

                view.update(history=fail, sampledHistory=fail, parquetHistory=fail)
            return view

        def counting_upsert(input=None, **kw):
            res = upsert(input=input, **kw)
            name = res["bucket"]["name"]
            srv.writes[name] = srv.writes.get(name, 0) + 1
            if "mlaudit/verdict" in str((input or {}).get("summaryMetrics") or ""):
                srv.verdicts[name] = srv.verdicts.get(name, 0) + 1  # the write-back's last step
            return res

        srv._run_view, srv._upsert_bucket = broken_view, counting_upsert
        with sdk_pointed_at(srv, KEY):
            yield srv


def test_batch_wandb_summary_write_back_once_and_resume(wandb_server, tmp_path):
    state = tmp_path / "w.sqlite"
    args = ["batch", "wandb", "--project", f"{ENTITY}/{PROJECT}", "--state", str(state)]
    res = CliRunner().invoke(app, [*args, "--jobs", "2"], env=WIDE)
    out = res.output
    assert res.exit_code == 4, out  # a run failed: EXIT_INCOMPLETE
    assert f"wandb project {ENTITY}/{PROJECT}: 4 runs, 3 audited, 1 unreadable or failed" in out
    bad = next(line for line in out.splitlines() if f"{ENTITY}/{PROJECT}/broken" in line)
    assert "load:" in bad and "history storage unavailable" in bad
    assert "live" not in wandb_server.writes  # still running: not listed
    for shape in SHAPES:
        run = wandb_server.run(ENTITY, PROJECT, shape)
        assert run.summary["mlaudit/verdict"] == OUTCOMES[shape], shape
        assert [t for t in run.tags if t.startswith("mlaudit:")] == [f"mlaudit:{OUTCOMES[shape]}"]
        assert "keep-me" in run.tags and run.notes.count(BEGIN) == 1
        assert "mlaudit/report.html" in run.files
    broken = wandb_server.run(ENTITY, PROJECT, "broken")
    assert "mlaudit/verdict" not in broken.summary and "broken" not in wandb_server.writes
    writes = dict(wandb_server.writes)
    assert set(writes) == set(SHAPES) and len(set(writes.values())) == 1  # one write-back each

    again = CliRunner().invoke(app, args, env=WIDE)
    assert again.exit_code == 4, again.output  # a run failed: EXIT_INCOMPLETE
    assert "3 settled in an earlier session" in again.output
    assert "this session: 1 runs" in again.output  # only the unreadable run is tried again
    assert wandb_server.writes == writes  # nothing written twice


def test_batch_wandb_since_filters_by_last_heartbeat(wandb_server, tmp_path):
    from datetime import datetime, timezone

    from mlaudit_wandb.plugin import WandbPlugin

    plugin = WandbPlugin()  # the runs' last heartbeat: 2026-01-01 00:10 UTC
    listed = plugin.list_runs(f"{ENTITY}/{PROJECT}", datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert sorted(listed) == sorted(f"{ENTITY}/{PROJECT}/{n}" for n in (*SHAPES, "broken"))
    assert plugin.list_runs(f"{ENTITY}/{PROJECT}", datetime(2026, 1, 2, tzinfo=timezone.utc)) == []
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "wandb",
            "--project",
            f"{ENTITY}/{PROJECT}",
            "--since",
            "2026-01-02T00:00+00:00",
            "--no-write",
            "--state",
            str(tmp_path / "s.sqlite"),
        ],
        env=WIDE,
    )
    assert res.exit_code == 0 and f"wandb project {ENTITY}/{PROJECT}: 0 runs" in res.output


@pytest.mark.e2e  # the wandb-core service process of the SDK
def test_batch_wandb_after_sdk_teardown_in_the_same_process(wandb_server, tmp_path):
    """Two batches in one process with ``wandb.teardown()`` between them (a script that ended
    its W&B session, or an earlier test module): the second batch builds its own client. A
    ``wandb.Api`` kept from the first batch holds the connection the teardown closed, and
    every load of the second failed with 'Cannot schedule tasks after join()'."""
    import wandb

    def run(state: str):
        args = ["batch", "wandb", "--project", f"{ENTITY}/{PROJECT}", "--no-write"]
        return CliRunner().invoke(app, [*args, "--state", str(tmp_path / state)], env=WIDE)

    summary = f"wandb project {ENTITY}/{PROJECT}: 4 runs, 3 audited, 1 unreadable or failed"
    first = run("a.sqlite")
    assert first.exit_code == 4 and summary in first.output, first.output
    wandb.teardown()
    second = run("b.sqlite")
    assert second.exit_code == 4 and summary in second.output, second.output
    assert "join()" not in second.output


def test_batch_wandb_bad_project_is_one_line_exit_2(wandb_server, tmp_path):
    res = CliRunner().invoke(
        app, ["batch", "wandb", "--project", "no-entity", "--state", str(tmp_path / "s.sqlite")]
    )
    assert res.exit_code == 2 and "--project 'no-entity': expected ENTITY/PROJECT" in res.output
    assert not (tmp_path / "s.sqlite").exists()


# --------------------------------------------------------------------------- ClearML

clearml_fake_server = pytest.importorskip("clearml_fake_server")
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
CL_PROJECT = "batch-it"


def new_task(name: str, shape: str, status: str = "completed") -> str:
    """A task recorded through the SDK: created, started, the curve's scalars, then ``status``."""
    from clearml import Task

    t = Task.create(project_name=CL_PROJECT, task_name=name)
    t.mark_started(force=True)
    lg = t.get_logger()
    for i, loss, val in curve(shape):
        lg.report_scalar("train", "loss", loss, iteration=i)
        if val is not None:
            lg.report_scalar("val", "loss", val, iteration=i)
    t.flush(wait_for_uploads=True)
    if status == "completed":
        t.mark_completed(force=True)
    return t.id


@pytest.fixture(scope="module")
def clearml_server(tmp_path_factory):
    """The fake ClearML server with the project's tasks; ``broken`` is a damaged document in the
    server's store (its hyper-parameters are not a mapping), so reading it fails."""
    pytest.importorskip("clearml")
    with clearml_fake_server.serving(tmp_path_factory.mktemp("clearml")) as srv:
        reset_sdk_state()  # an earlier module's server may be cached in the SDK
        try:
            ids = {shape: new_task(shape, shape) for shape in SHAPES}
            ids["broken"] = new_task("broken", "healthy")
            ids["running"] = new_task("running", "healthy", status="in_progress")
            with srv.lock:
                srv.tasks[ids["broken"]]["hyperparams"] = "damaged"
            srv.ids = ids
            yield srv
        finally:
            reset_sdk_state()


def clearml_writes(srv, task_id: str) -> int:
    """Write-backs seen by the server: user-property edits, which only mlaudit makes here."""
    return sum(1 for e, tid in srv.calls if e == "tasks.edit_hyper_params" and tid == task_id)


def batch_clearml(state: Path, *extra: str) -> subprocess.CompletedProcess:
    """``mlaudit batch clearml`` in its own process, as a user runs it (the SDK binds its log
    handlers to the streams it first sees)."""
    return subprocess.run(
        [MLAUDIT, "batch", "clearml", "--project", CL_PROJECT, "--state", str(state), *extra],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **WIDE),
    )


def check_clearml_batch(srv, res, before: dict[str, int]) -> str:
    """The batch's summary and the unreadable task's reason in its output; one write-back
    (labels, properties, one comment section) per readable task beyond ``before``, none for
    the broken and the running task. Returns stdout."""
    from clearml import Task

    ids, out = srv.ids, res.stdout
    assert res.returncode == 4, out + res.stderr[-3000:]  # a run failed: EXIT_INCOMPLETE
    assert f"clearml project {CL_PROJECT}: 4 runs, 3 audited, 1 unreadable or failed" in out
    bad = next(line for line in out.splitlines() if ids["broken"] in line)
    assert "load: AttributeError" in bad
    for shape in SHAPES:
        props = Task.get_task(task_id=ids[shape]).get_user_properties(value_only=True)
        assert props["mlaudit.verdict"] == OUTCOMES[shape], shape
        assert clearml_writes(srv, ids[shape]) == before.get(shape, 0) + 1, shape
        assert srv.tasks[ids[shape]]["comment"].count(BEGIN) == 1
    for other in ("broken", "running"):
        assert clearml_writes(srv, ids[other]) == before.get(other, 0)
    return out


def test_batch_clearml_summary_write_back_once_and_resume(clearml_server, tmp_path):
    ids, state = clearml_server.ids, tmp_path / "c.sqlite"
    check_clearml_batch(clearml_server, batch_clearml(state, "--jobs", "2"), before={})

    again = batch_clearml(state)
    assert again.returncode == 4, (
        again.stdout + again.stderr[-3000:]
    )  # a run failed: EXIT_INCOMPLETE
    assert "3 settled in an earlier session" in again.stdout
    assert "this session: 1 runs" in again.stdout
    assert all(clearml_writes(clearml_server, ids[s]) == 1 for s in SHAPES)  # not written twice


def test_clearml_list_runs_since_and_statuses(clearml_server):
    from datetime import datetime, timedelta, timezone

    from mlaudit_clearml.plugin import ClearMLPlugin

    ids = clearml_server.ids
    plugin = ClearMLPlugin(attempts=1)
    listed = plugin.list_runs(CL_PROJECT, datetime(2000, 1, 1, tzinfo=timezone.utc))
    assert sorted(listed) == sorted(ids[n] for n in (*SHAPES, "broken"))  # not the running one
    later = datetime.now(timezone.utc) + timedelta(minutes=1)
    assert plugin.list_runs(CL_PROJECT, later) == []


def test_batch_clearml_unknown_project_is_one_line_exit_2(clearml_server, tmp_path):
    res = subprocess.run(
        [MLAUDIT, "batch", "clearml", "--project", "nope", "--state", str(tmp_path / "s.sqlite")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, **WIDE),
    )
    assert res.returncode == 2 and "no ClearML project named 'nope'" in res.stdout + res.stderr
    assert not (tmp_path / "s.sqlite").exists()


# --------------------------------------------------------------------------- Ray

SCRUBBED = ("WANDB_", "CLEARML_", "TRAINS_", "RAY_ADDRESS")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(ray_exclusive):
    """A Ray cluster started apart from the batch (``ray start --head --block``, 2 CPUs), whose
    processes have no ``WANDB_*``/``CLEARML_*`` variable and an empty home directory (no
    ``~/.netrc``, no ``clearml.conf``): its workers reach the fake servers only with what the
    batch ships in ``TaskSpec.env``, as workers on another machine would. One cluster serves
    both trackers' tests (each batch connects with ``--ray-address``). Yields ``(address,
    temp dir)``; Ray's logs are under the temp dir. Stopped by signalling the ``ray start``
    process this fixture started (never ``ray stop``, which stops every Ray on the machine)."""
    import signal
    import tempfile
    import time

    pytest.importorskip("ray")
    root = Path(tempfile.mkdtemp(prefix="mlray-"))  # short: Ray's socket paths live under it
    (root / "home").mkdir()
    # RAY_*: an earlier ray.init in this process (test_batch_mlflow) leaves RAY_AUTH_MODE=token
    # in os.environ, and `ray start` then refuses to run without a token
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(SCRUBBED) and not k.startswith("RAY_") and k != "PYTHONBREAKPOINT"
    }
    env.update(HOME=str(root / "home"), RAY_USAGE_STATS_ENABLED="0")
    port = _free_port()
    ports = {
        flag: _free_port()
        for flag in (
            "--ray-client-server-port",
            "--dashboard-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
            "--metrics-export-port",
        )
    }
    # Ray's head builds shell commands from its interpreter's path without quoting (its client
    # server and jemalloc LD_PRELOAD): under a checkout whose path holds a space, `ray start`
    # dies (exit 127, '/tmp/ci1/my: No such file or directory'). The venv is reached through a
    # space-free symlink instead; `python -m ray.scripts.scripts` is the `ray` command.
    venv = Path(sys.prefix)
    if any(c.isspace() for c in str(venv)):
        (root / "venv").symlink_to(venv, target_is_directory=True)
        venv = root / "venv"
    log = root / "head.log"
    proc = subprocess.Popen(
        [
            str(venv / "bin" / "python"),
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            "--num-cpus",
            "2",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--include-dashboard",
            "false",
            "--temp-dir",
            str(root / "ray"),
            *[x for flag, p in ports.items() for x in (flag, str(p))],
        ],
        cwd=root,
        env=env,
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 90
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail("ray start --head failed:\n" + log.read_text(errors="replace")[-3000:])
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", root
    finally:
        proc.send_signal(signal.SIGTERM)  # ray start --block stops its own processes
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def ray_logs_contain(root: Path, secret: str) -> list[str]:
    """The files under the Ray temp dir (every Ray process's logs) whose bytes hold ``secret``."""
    needle = secret.encode()
    return [
        str(f)
        for f in (root / "ray").rglob("*")
        if f.is_file() and not f.is_socket() and needle in f.read_bytes()
    ]


def test_batch_wandb_on_ray_writes_once_and_lists_the_unreadable_run(
    wandb_server, ray_head, tmp_path
):
    """``batch wandb --executor ray`` on a cluster that does not share the caller's environment:
    the same summary, one verdict write-back per readable run, the unreadable run listed with its
    reason; the API key is neither printed nor in any Ray log."""
    address, root = ray_head
    for shape in (*SHAPES, "broken"):  # forget earlier tests' write-backs
        run = wandb_server.run(ENTITY, PROJECT, shape)
        run.summary, run.tags, run.notes, run.files = {}, ["keep-me"], "user notes", {}
    wandb_server.writes.clear()
    wandb_server.verdicts.clear()
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "wandb",
            "--project",
            f"{ENTITY}/{PROJECT}",
            "--state",
            str(tmp_path / "r.sqlite"),
            "--executor",
            "ray",
            "--ray-address",
            address,
        ],
        env=WIDE,
    )
    out = res.output
    assert res.exit_code == 4, out  # a run failed: EXIT_INCOMPLETE
    assert f"wandb project {ENTITY}/{PROJECT}: 4 runs, 3 audited, 1 unreadable or failed" in out
    bad = next(line for line in out.splitlines() if f"{ENTITY}/{PROJECT}/broken" in line)
    assert "load:" in bad and "history storage unavailable" in bad
    for shape in SHAPES:
        run = wandb_server.run(ENTITY, PROJECT, shape)
        assert run.summary["mlaudit/verdict"] == OUTCOMES[shape], shape
        assert run.notes.count(BEGIN) == 1 and "mlaudit/report.html" in run.files
    assert wandb_server.verdicts == {shape: 1 for shape in SHAPES}  # one write-back per run
    assert "broken" not in wandb_server.writes and "live" not in wandb_server.writes
    assert KEY not in out
    assert ray_logs_contain(root, KEY) == []


def test_batch_clearml_on_ray_writes_once_and_lists_the_unreadable_task(
    clearml_server, ray_head, tmp_path
):
    """``batch clearml --executor ray`` on a cluster without the caller's ``CLEARML_*``
    variables and ``clearml.conf``: the same summary, one write-back per readable task, the
    unreadable task listed with its reason; the secret key is neither printed nor in a Ray log."""
    address, root = ray_head
    before = {name: clearml_writes(clearml_server, tid) for name, tid in clearml_server.ids.items()}
    res = batch_clearml(tmp_path / "r.sqlite", "--executor", "ray", "--ray-address", address)
    out = check_clearml_batch(clearml_server, res, before)
    secret = clearml_server.secret_key
    assert secret not in out + res.stderr
    assert ray_logs_contain(root, secret) == []
