"""``mlaudit batch clearml --project NAME --triage``: the real ClearML SDK against
``tests/clearml_fake_server.py`` on 127.0.0.1 (no ClearML server can run here: it is four
services shipped as Docker images), which speaks clearml-server's API including
``projects.update`` (the project's description).

The sweep is recorded through the SDK: 16 tasks, 4 learning rates x 4 seeds as hyper-parameters
(``General/lr``, ``General/seed``), every task with lr >= 0.003 diverges (its loss grows after
step 100). The triage must find ``param:General/lr`` first with its counts, write one mlaudit
section into the project's description after the user's text, keep a user's edit saved while it
writes, and say what it cannot conclude on bad input (one task, all healthy, no params, 500
params) without claiming a factor.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("clearml")
clearml_fake_server = pytest.importorskip("clearml_fake_server")
from wandb_helpers import reset_sdk_state  # noqa: E402

from mlaudit_core.writeback import BEGIN, END  # noqa: E402

pytestmark = pytest.mark.e2e  # a local fake ClearML server and mlaudit in its own process

MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
LRS = [0.0003, 0.001, 0.003, 0.01]


def new_task(project: str, name: str, params: dict, diverge: bool, tags=()) -> str:
    from clearml import Task

    t = Task.create(project_name=project, task_name=name)
    if params:
        t.set_parameters(params)
    if tags:
        t.add_tags(list(tags))
    t.mark_started(force=True)
    lg = t.get_logger()
    for i in range(1, 151):
        loss = 2.0 * math.exp(-i / 30) + 0.2
        if diverge and i > 100:
            loss = 0.2 + (i - 100) * 0.3
        lg.report_scalar("train", "loss", loss, iteration=i)
    t.flush(wait_for_uploads=True)
    t.mark_completed(force=True)
    return t.id


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    root = tmp_path_factory.mktemp("clearml-triage")
    s = clearml_fake_server.FakeClearMLServer().start()
    mp = pytest.MonkeyPatch()
    mp.setenv("CLEARML_CONFIG_FILE", str(s.write_config(root / "clearml.conf")))
    mp.setenv("CLEARML_CACHE_DIR", str(root / "cache"))
    mp.setenv("CLEARML_LOG_LEVEL", "WARNING")
    reset_sdk_state()
    s.root = root
    try:
        yield s
    finally:
        mp.undo()
        s.stop()
        reset_sdk_state()


def add_sweep(project: str, n: int, params=None, diverge=None) -> list[str]:
    ids = []
    for i in range(n):
        lr = LRS[i % 4]
        p = {"General/lr": lr, "General/seed": i // 4} if params is None else params(i)
        bad = lr >= 0.003 if diverge is None else diverge(i)
        ids.append(new_task(project, f"t{i}", p, bad, tags=["grid"] if i % 2 else ()))
    return ids


def batch(srv, project: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            MLAUDIT,
            "batch",
            "clearml",
            "--project",
            project,
            "--triage",
            "-f",
            "json",
            "--state",
            str(srv.root / f"{project}.sqlite"),
            *extra,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COLUMNS="240"),
    )


def project_of(srv, name: str) -> dict:
    return next(p for p in srv.projects.values() if p["name"] == name)


def test_batch_clearml_triage_finds_lr_and_writes_the_project_description(srv):
    add_sweep("cl-sweep", 16)
    proj = project_of(srv, "cl-sweep")
    with srv.lock:
        proj["description"] = "Our lr sweep. Owner: team A."
    res = batch(srv, "cl-sweep")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    tri = json.loads(res.stdout)["triage"]
    top = tri["factors"][0]
    assert top["name"] == "param:General/lr" and top["significant"], tri["factors"][:2]
    assert top["counts"]["group"]["rule"] == "General/lr >= 0.003"
    assert (top["counts"]["group"]["failing"], top["counts"]["rest"]["failing"]) == (8, 0)
    assert not any(f["significant"] for f in tri["factors"][1:])
    desc = proj["description"]
    assert desc.startswith("Our lr sweep. Owner: team A.")
    assert desc.count(BEGIN) == 1 and desc.count(END) == 1
    assert "General/lr >= 0.003" in desc and "**significant**" in desc
    assert "description of ClearML project 'cl-sweep'" in res.stderr
    # a second triage replaces the section, the user's text stays
    res = batch(srv, "cl-sweep")
    assert res.returncode == 0
    assert proj["description"].count(BEGIN) == 1
    assert proj["description"].startswith("Our lr sweep. Owner: team A.")
    # --no-write: the description is not touched
    before = len(srv.project_updates)
    assert batch(srv, "cl-sweep", "--no-write").returncode == 0
    assert len(srv.project_updates) == before


def test_batch_clearml_triage_keeps_an_edit_saved_while_it_writes(srv):
    add_sweep("cl-edit", 16)
    proj = project_of(srv, "cl-edit")
    real_update = srv.ep_projects__update
    edits = []

    def update_then_user_saves(d):
        out = real_update(d)
        if not edits and BEGIN in (d.get("description") or ""):
            # the user saves from a page loaded before mlaudit's write: their text, no section
            proj["description"] = "Edited by the user meanwhile."
            edits.append(1)
        return out

    srv.ep_projects__update = update_then_user_saves
    try:
        res = batch(srv, "cl-edit")
    finally:
        srv.ep_projects__update = real_update
    assert res.returncode == 0, res.stderr[-2000:]
    desc = proj["description"]
    assert edits and desc.startswith("Edited by the user meanwhile.")
    assert desc.count(BEGIN) == 1 and "General/lr" in desc


@pytest.mark.parametrize(
    ("case", "n", "params", "diverge", "statement"),
    [
        ("cl-one", 1, None, lambda i: True, "1 run(s) with a verdict: nothing to compare"),
        ("cl-healthy", 6, None, lambda i: False, "all 6 runs succeeded: no failure to explain"),
        ("cl-noparams", 8, lambda i: {}, lambda i: i % 4 < 2, "no run carries params"),
        (
            "cl-wide",
            10,
            lambda i: {f"General/p{k}": (k * 7 + i) % 13 for k in range(500)},
            lambda i: i % 3 == 0,
            "over the limit of 200: too many to separate",
        ),
    ],
)
def test_batch_clearml_triage_bad_input_claims_nothing(srv, case, n, params, diverge, statement):
    add_sweep(case, n, params=params, diverge=diverge)
    res = batch(srv, case)
    assert res.returncode == 0, res.stderr[-2000:]
    tri = json.loads(res.stdout)["triage"]
    assert not any(f["significant"] for f in tri["factors"])
    assert statement in " ".join(tri["statements"])
    desc = project_of(srv, case)["description"]
    assert statement in desc and "**significant**" not in desc
