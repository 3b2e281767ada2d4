"""In-process hooks: real training scripts (subprocesses) logging to a real mlflow server.

The scripts in tests/data/hooks/ are started together once per module (they spend most of
their time importing): the plain loop with ``audit_on_exit`` (context manager and atexit),
the same loop without a hook as the reference for stdout, stderr and exit status, a hook
whose audit raises (bad settings), a hook over its budget, a crashing script, and one
script training a tiny model with each installed framework (Hugging Face Trainer,
Lightning, Keras on the torch backend) with its mlaudit callback.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from webhook_receiver import Receiver  # noqa: E402

from mlaudit_core.render.html import report_json_from_html  # noqa: E402

SCRIPTS = Path(__file__).parent / "data" / "hooks"
FRAMEWORK_MODULES = {"hf": "transformers", "lightning": "lightning", "keras": "keras"}
INSTALLED = [
    f
    for f, m in FRAMEWORK_MODULES.items()
    if importlib.util.find_spec(m) is not None and importlib.util.find_spec("torch") is not None
]
PLAIN = {
    "regime": {"LOOP": "regime", "HOOK": "with"},
    "baseline": {"HOOK": "none"},
    "raises": {"HOOK": "with", "HOOK_CONFIG": "{bad}"},
    "budget": {"HOOK": "with", "HOOK_BUDGET": "0.001"},
    "crash_atexit": {"HOOK": "atexit", "CRASH": "1"},
}


@pytest.fixture(scope="module")
def scripts(mlflow_server, tmp_path_factory):
    """``{case: (exit status, stdout, stderr, run id)}`` for every plain case, plus
    ``"frameworks"``: the framework script's JSON (run ids and callback results) and the
    JSON documents the hook of the ``regime`` case posted to a receiver."""
    d = tmp_path_factory.mktemp("hooks")
    bad = d / "bad.toml"
    bad.write_text('select = ["ZZ9"]\n')  # no detector code starts with ZZ9: SettingsError
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MLAUDIT_", "MLFLOW_"))}
    base.update(MLFLOW_TRACKING_URI=mlflow_server["url"], PYTHONHASHSEED="0")
    # created here, not by whichever script comes first (its log line would differ between runs)
    client = mlflow.MlflowClient(mlflow_server["url"])
    for name in ("hooks-plain", "hooks-hf", "hooks-lightning", "hooks-keras"):
        if client.get_experiment_by_name(name) is None:
            client.create_experiment(name)
    t0 = int(time.time() * 1000)
    with Receiver() as rx:
        procs = {}
        for case, extra in PLAIN.items():
            env = dict(
                base,
                RUN_ID_FILE=str(d / f"{case}.id"),
                **{k: v.format(bad=bad) for k, v in extra.items()},
            )
            if case == "regime":
                env["HOOK_NOTIFY"] = f"{rx.url}/hook"
            procs[case] = subprocess.Popen(
                [sys.executable, str(SCRIPTS / "plain_loop.py")],
                cwd=d,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        if INSTALLED:
            fw = [f for f in ["hf", "lightning", "keras"] if f in INSTALLED]
            if "lightning" in fw:
                fw.append("lightning_fails")
            if "hf" in fw and importlib.util.find_spec("wandb") is not None:
                fw.append("hf_wandb")
            env = dict(base, FRAMEWORKS=",".join(fw), OUT_JSON=str(d / "fw.json"))
            procs["frameworks"] = subprocess.Popen(
                [sys.executable, str(SCRIPTS / "frameworks.py")],
                cwd=d,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        out = {}
        # one deadline for all of them against a hang (not a bound: at load 10-18 the framework
        # script alone took over 5 minutes), below the suite's 900 s per-test limit
        deadline = time.monotonic() + 840
        try:
            for case, p in procs.items():
                so, se = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
                rid = (d / f"{case}.id").read_text() if (d / f"{case}.id").exists() else None
                out[case] = (p.returncode, so, se, rid)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
        out["notified"] = [r.json() for r in rx.at("/hook")]
    out["window"] = (t0, int(time.time() * 1000))
    if "frameworks" in out:
        rc, so, se, _ = out["frameworks"]
        assert rc == 0, se[-3000:]
        out["frameworks"] = json.loads((d / "fw.json").read_text())
    return out


def _same(text: str) -> str:
    """``text`` with what differs between two runs of one script (run ids, log times) masked."""
    text = re.sub(r"\b[0-9a-f]{32}\b", "<id>", text)
    return re.sub(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d", "<time>", text)


def _norm(text: str) -> Counter:
    """The masked lines of ``text`` as a multiset (threads may interleave log lines)."""
    return Counter(_same(text).splitlines())


def _tags(url: str, run_id: str) -> dict[str, str]:
    client = mlflow.MlflowClient(url)
    return {k: v for k, v in client.get_run(run_id).data.tags.items() if k.startswith("mlaudit")}


def test_import_is_light():
    code = (
        "import sys, mlaudit, mlaudit.hooks; mlaudit.audit_on_exit; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'mlflow', 'wandb', 'clearml', "
        "'torch', 'transformers', 'lightning', 'keras', 'pandas', 'numpy', 'mlaudit_core', "
        "'requests', 'pydantic'}))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_plain_hook_writes_the_verdict_and_notifies(scripts, mlflow_server):
    rc, so, se, rid = scripts["regime"]
    assert rc == 0, se
    assert "high_lr: diverged at step" in so
    tags = _tags(mlflow_server["url"], rid)
    assert tags["mlaudit.verdict"] == "diverged" and tags["mlaudit.cause"] == "model_convergence"
    assert "mlaudit.handoff" not in tags
    assert not [
        line for line in se.splitlines() if line.startswith("mlaudit:")
    ]  # silent on success
    (doc,) = [d for d in scripts["notified"] if d["run"]["id"] == rid]
    assert doc["verdict"]["outcome"] == "diverged" and doc["run"]["url"].endswith(f"/runs/{rid}")


def test_failing_audit_leaves_the_job_untouched_but_one_warning(scripts, mlflow_server):
    rc0, so0, se0, _ = scripts["baseline"]
    rc, so, se, rid = scripts["raises"]
    assert rc == rc0 == 0 and _same(so) == _same(so0)
    extra, missing = _norm(se) - _norm(se0), _norm(se0) - _norm(se)
    assert not missing, missing
    (line,) = list(extra.elements())
    assert line.startswith("mlaudit: audit of mlflow run <id> failed: settings: ")
    assert "ZZ9" in line and line.endswith("the training job is unaffected")
    assert "mlaudit.verdict" not in _tags(mlflow_server["url"], rid)


def test_over_budget_hands_the_run_to_the_watcher(scripts, mlflow_server):
    rc0, so0, se0, _ = scripts["baseline"]
    rc, so, se, rid = scripts["budget"]
    assert rc == rc0 == 0 and _same(so) == _same(so0)
    extra, missing = _norm(se) - _norm(se0), _norm(se0) - _norm(se)
    assert not missing, missing
    (line,) = list(extra.elements())
    assert line == (
        "mlaudit: audit of mlflow run <id> not done within the 0.001 s budget; marked for "
        "the watcher (mlaudit.handoff=watcher on mlflow run <id>); the training job is "
        "unaffected"
    )
    tags = _tags(mlflow_server["url"], rid)
    # the worker may still have finished before the interpreter exited; then it removed the mark
    assert ("mlaudit.verdict" in tags) != ("mlaudit.handoff" in tags), tags
    if "mlaudit.handoff" in tags:  # the watcher's listing picks the run up
        from mlaudit_mlflow.plugin import MlflowPlugin

        plugin = MlflowPlugin(mlflow_server["url"])
        assert rid in plugin.list_finished(
            None, experiment_ids=plugin.experiment_ids(["hooks-plain"]), max_results=None
        )


def test_crashing_script_keeps_its_exit_status_and_traceback(scripts, mlflow_server):
    """The atexit hook audits a script that died of an uncaught exception as crashed."""
    rc, so, se, rid = scripts["crash_atexit"]
    assert rc == 1 and "training done" not in so
    assert se.rstrip().endswith("RuntimeError: evaluation failed after training")
    # mlaudit says nothing; traceback frame lines name files by path, and the checkout's
    # folder may well be called "mlaudit" (git clone .../mlaudit), so they are left out
    said = [line for line in se.splitlines() if not line.startswith('  File "')]
    assert not [line for line in said if "mlaudit" in line], said
    assert _tags(mlflow_server["url"], rid)["mlaudit.verdict"] == "crashed"


def test_no_ghost_run_is_left_running(scripts, mlflow_server):
    """Every hooked training (``with``, atexit, the HF/Lightning/Keras callbacks) leaves only the
    runs the scripts made: none RUNNING, none unnamed by a script (the old flush started one)."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    runs = _runs_started(client, *scripts["window"])  # every experiment, Default included
    assert runs
    running = [(r.info.run_id, r.info.run_name) for r in runs if r.info.status == "RUNNING"]
    assert not running, running
    made = {v[3] for k, v in scripts.items() if k in PLAIN and v[3]}
    if "frameworks" in scripts:
        made |= {v["run_id"] for v in scripts["frameworks"].values() if isinstance(v, dict)}
    assert {r.info.run_id for r in runs} <= made, [
        (r.info.run_name, r.info.experiment_id) for r in runs if r.info.run_id not in made
    ]


def _runs_started(client, t0: int, t1: int | None = None) -> list:
    """Runs of every experiment (the Default one included) started at or after ``t0`` ms."""
    exps = [e.experiment_id for e in client.search_experiments()]
    flt = f"attributes.start_time >= {t0}"
    if t1 is not None:
        flt += f" and attributes.start_time <= {t1}"
    return client.search_runs(exps, filter_string=flt, max_results=1000)


@pytest.mark.parametrize("framework", ["hf", "lightning", "keras"])
def test_framework_callback_writes_the_verdict(scripts, mlflow_server, framework):
    if framework not in INSTALLED:
        pytest.skip(
            f"{FRAMEWORK_MODULES[framework]} (with torch) is not installed: "
            f"pip install 'mlaudit[frameworks]'"
        )
    got = scripts["frameworks"][framework]
    (res,) = got["results"]
    assert res["status"] == "written" and res["ref"] == got["run_id"] and res["error"] is None
    tags = _tags(mlflow_server["url"], got["run_id"])
    assert tags["mlaudit.verdict"] == res["outcome"] == "succeeded"
    assert tags["mlaudit.cause"] == res["cause"] == "healthy"
    client = mlflow.MlflowClient(mlflow_server["url"])
    assert client.get_run(got["run_id"]).info.status == "FINISHED"
    report = json.loads(
        report_json_from_html(
            Path(client.download_artifacts(got["run_id"], "mlaudit/report.html")).read_text()
        )
        or "null"
    )
    hook_note = [w for w in report["warnings"] if "in-process hook saw training end" in w]
    # Keras and Lightning audit while the tracker still has the run open; HF's MLflowCallback
    # ends its run in its own on_train_end, before mlaudit's callback runs
    assert bool(hook_note) == (framework in ("keras", "lightning")), report["warnings"]


def test_hf_trainer_wandb_run_keeps_logging_after_train(scripts):
    """HF ``Trainer`` reporting to W&B (offline): ``trainer.train(); trainer.evaluate()`` keeps the
    evaluation in the run (the hook did not finish it at train end), and the run is audited once
    W&B finishes it."""
    if "hf" not in INSTALLED or importlib.util.find_spec("wandb") is None:
        pytest.skip(
            "transformers, torch and wandb are needed: pip install 'mlaudit[frameworks,wandb]'"
        )
    got = scripts["frameworks"]["hf_wandb"]
    assert got["open_after_train"], got
    assert [r["status"] for r in got["at_train_end"]] == ["deferred"], got["at_train_end"]
    assert any(k.startswith("eval/") for k in got["keys"]), got["keys"]  # evaluate() logged
    (res,) = got["results"]
    assert res["status"] == "audited" and res["tracker"] == "wandb" and res["outcome"], res


def test_lightning_on_exception_audits_a_failed_fit(scripts, mlflow_server):
    if "lightning" not in INSTALLED:
        pytest.skip("lightning (with torch) is not installed: pip install 'mlaudit[frameworks]'")
    got = scripts["frameworks"]["lightning_fails"]
    (res,) = got["results"]
    assert res["status"] == "written" and res["outcome"] == "crashed"
    assert _tags(mlflow_server["url"], got["run_id"])["mlaudit.verdict"] == "crashed"


# --------------------------------------------------------------------------- in-process contract


def test_options_are_checked_at_the_call():
    from mlaudit.hooks import audit_on_exit

    with pytest.raises(ValueError, match="budget_s"):
        audit_on_exit(budget_s=-1)
    with pytest.raises(ValueError, match="unknown tracker"):
        audit_on_exit(trackers=["neptune"])


def test_no_run_is_one_warning_and_disabled_is_silent(caplog, monkeypatch):
    from mlaudit.hooks import _Options, run_hook

    caplog.set_level(logging.INFO, logger="mlaudit.hooks")
    (res,) = run_hook(_Options.of(trackers=["clearml"]))  # no ClearML task in this process
    assert res.status == "no_run"
    assert [r.getMessage() for r in caplog.records] == [
        "mlaudit: no MLflow, W&B or ClearML run found in this process; nothing audited"
    ]
    caplog.clear()
    monkeypatch.setenv("MLAUDIT_HOOKS", "off")
    assert [r.status for r in run_hook(_Options.of())] == ["disabled"] and not caplog.records


def test_context_manager_never_swallows_the_exception(mlflow_server, tmp_path, monkeypatch, caplog):
    """In-process: the block's exception propagates, and the run is audited as crashed."""
    import mlaudit

    monkeypatch.chdir(tmp_path)
    exp_id = mlflow.MlflowClient(mlflow_server["url"]).create_experiment("hooks-inprocess")
    t0 = int(time.time() * 1000)
    prev = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(mlflow_server["url"])
    try:
        hook = mlaudit.audit_on_exit(budget_s=30)
        with pytest.raises(KeyError), hook, mlflow.start_run(experiment_id=exp_id) as run:
            for step in range(1, 40):
                mlflow.log_metric("train/loss", 1.0 / step, step=step)
            raise KeyError("labels")
    finally:
        mlflow.set_tracking_uri(prev)
    (res,) = hook.results
    assert res.status == "written" and res.ref == run.info.run_id and res.outcome == "crashed"
    assert _tags(mlflow_server["url"], run.info.run_id)["mlaudit.verdict"] == "crashed"
    assert not [
        r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("mlaudit")
    ]
    # the hook left the user's run as it was: no second run, in any experiment
    client = mlflow.MlflowClient(mlflow_server["url"])
    assert [r.info.run_id for r in _runs_started(client, t0)] == [run.info.run_id]


def test_caught_exception_is_console_evidence(mlflow_server, tmp_path, monkeypatch):
    """A CUDA out-of-memory RuntimeError ending the block is diagnosed from the exception the
    hook caught (the run's own console has nothing): crashed, infra_runtime, the OOM finding."""
    import mlaudit

    monkeypatch.chdir(tmp_path)
    url = mlflow_server["url"]
    exp_id = mlflow.MlflowClient(url).create_experiment("hooks-oom")
    prev = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(url)
    msg = (
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; "
        "13.12 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)"
    )
    try:
        hook = mlaudit.audit_on_exit(budget_s=30)
        with pytest.raises(RuntimeError), hook, mlflow.start_run(experiment_id=exp_id) as run:
            for step in range(1, 40):
                mlflow.log_metric("train/loss", 1.0 / step, step=step)
            raise RuntimeError(msg)
    finally:
        mlflow.set_tracking_uri(prev)
    (res,) = hook.results
    assert (res.status, res.outcome, res.cause) == ("written", "crashed", "infra_runtime"), res
    client = mlflow.MlflowClient(url)
    report = json.loads(
        report_json_from_html(
            Path(
                client.download_artifacts(run.info.run_id, "mlaudit/report.html", str(tmp_path))
            ).read_text()
        )
        or "null"
    )
    assert any("out of memory" in f["message"].lower() for f in report["findings"]), report
    assert [r.info.run_id for r in client.search_runs([exp_id])] == [run.info.run_id]


def test_wandb_run_is_not_finished_by_the_hook(tmp_path, monkeypatch):
    """The current ``wandb.run`` (offline, real SDK): the hook leaves it open (the user logs an
    evaluation after it, as ``trainer.train(); trainer.evaluate()`` does), and audits it when the
    user finishes it, from its run directory; an offline run has no server copy: nothing is
    written, the result says so."""
    wandb = pytest.importorskip("wandb")
    import mlaudit

    monkeypatch.chdir(tmp_path)
    # an earlier test in this worker may have pointed the SDK at a fake server that is gone now:
    # the SDK's process-wide settings singleton is torn down and the server URL dropped
    wandb.teardown()
    for k in ("WANDB_BASE_URL", "WANDB_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    for k, v in {
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path),
        "WANDB_SILENT": "true",
    }.items():
        monkeypatch.setenv(k, v)
    hook = mlaudit.audit_on_exit(trackers=["wandb"], budget_s=30)
    try:
        with hook:
            run = wandb.init(project="hooks", config={"lr": 0.1})
            for step in range(1, 300):
                loss = 2.0 * 2.718 ** (-step / 50) + 0.2 if step < 200 else 0.2 + (step - 200) * 0.3
                wandb.log({"train/loss": loss}, step=step)
        (res,) = hook.results
        assert res.status == "deferred" and wandb.run is run  # still the user's open run
        wandb.log({"eval/loss": 9.5}, step=300)  # the evaluation after training
        run.finish()
    finally:
        wandb.teardown()
    assert hook.results[0] is res  # updated in place once W&B finished the run
    assert res.status == "audited" and res.tracker == "wandb" and res.outcome == "diverged"
    assert (
        res.ref == str(Path(run.dir).parent) and "offline run: nothing written back" in res.notes[0]
    )
    from mlaudit_wandb.offline import load_offline

    assert "eval/loss" in load_offline(res.ref).metrics.keys  # the evaluation was not lost


@pytest.fixture(scope="module")
def hf_diverging(mlflow_server, tmp_path_factory):
    """The diverging HF ``Trainer`` run (tests/data/hooks/frameworks.py ``hf_diverging``) trained
    alone, as a user would run it: ``python train.py > train.log 2>&1``. Returns the script's JSON
    (run id, the callback's results, the Trainer's logged steps) with ``log``, the console file."""
    if "hf" not in INSTALLED:
        pytest.skip("transformers and torch are needed: pip install 'mlaudit[frameworks]'")
    d = tmp_path_factory.mktemp("hf-diverging")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLAUDIT_", "MLFLOW_"))}
    env.update(
        MLFLOW_TRACKING_URI=mlflow_server["url"],
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        FRAMEWORKS="hf_diverging",
        OUT_JSON=str(d / "out.json"),
    )
    client = mlflow.MlflowClient(mlflow_server["url"])
    if client.get_experiment_by_name("hooks-hf") is None:
        client.create_experiment("hooks-hf")
    log = d / "train.log"
    with open(log, "w") as f:
        rc = subprocess.run(
            [sys.executable, str(SCRIPTS / "frameworks.py")],
            cwd=d,
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=600,
        ).returncode
    assert rc == 0, log.read_text()[-3000:]
    got = json.loads((d / "out.json").read_text())["hf_diverging"]
    got["log"] = log
    return got


def test_hf_callback_cli_and_console_agree_on_a_diverging_run(hf_diverging, mlflow_server):
    """Issue 14 "Done when": a real HF Trainer run logged to MLflow that diverges (lr 2, the loss
    falls and then climbs as the warmup raises the LR) is called diverged by the in-process
    callback (its result and the tags it wrote), by ``mlaudit mlflow RUN`` on the same run, and
    the run's transformers 5 console log (quoted values) is parsed: the training loss series has
    one point per Trainer logging step, and the verdict is not ``succeeded``."""
    got = hf_diverging
    losses = got["losses"]
    assert max(losses[len(losses) // 2 :]) > 3 * min(losses), losses  # the recipe still diverges
    (res,) = got["results"]
    assert res["status"] == "written" and res["ref"] == got["run_id"] and res["error"] is None
    assert res["outcome"] == "diverged", res
    tags = _tags(mlflow_server["url"], got["run_id"])
    assert tags["mlaudit.verdict"] == "diverged", tags

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLAUDIT_", "MLFLOW_"))}
    exe = Path(sys.executable).parent / "mlaudit"
    cli = subprocess.run(
        [
            str(exe),
            "mlflow",
            got["run_id"],
            "--tracking-uri",
            mlflow_server["url"],
            "--format",
            "json",
            "--no-write",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert cli.returncode in (0, 1), cli.stderr
    rep = json.loads(cli.stdout)
    assert rep["verdict"]["outcome"] == "diverged" == res["outcome"], rep["verdict"]
    assert rep["verdict"]["cause"] == res["cause"], (rep["verdict"], res)

    text = got["log"].read_text()
    assert "'loss': '" in text  # transformers 5 prints its log dicts with quoted values
    from mlaudit_core.formats.consolelog import load_logs
    from mlaudit_core.roles import Role

    run = load_logs([got["log"]])
    key = run.key_for(Role.TRAIN_LOSS)
    assert key is not None and key.rsplit("/", 1)[-1] == "loss", sorted(
        run.metrics.keys
    )  # not train_loss
    series = run.metrics.series(key)
    steps, values = series.steps, series.values
    assert len(steps) == len(got["logged_steps"]), (list(steps), got["logged_steps"])
    # the console's log dicts carry no step: the parser numbers the dicts in order (eval ones too)
    assert all(a < b for a, b in zip(steps, steps[1:])), list(steps)
    # transformers 5 prints 4 significant digits ('1.063' for 1.0634)
    assert [float(v) for v in values] == pytest.approx(losses, rel=1e-3)
    logs = subprocess.run(
        [str(exe), "logs", str(got["log"]), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert logs.returncode in (0, 1), logs.stderr
    lrep = json.loads(logs.stdout)
    assert lrep["verdict"]["outcome"] != "succeeded", lrep["verdict"]
    assert lrep["verdict"]["outcome"] in ("diverged", "unstable"), lrep["verdict"]
