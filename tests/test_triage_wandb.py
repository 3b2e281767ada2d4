"""``mlaudit batch wandb --project E/P --triage [--report]``: the real wandb SDK (public
``wandb.Api``) and wandb-workspaces (``wandb_workspaces.reports.v2``: ``Report.save()`` sends
``upsertView``, ``Report.from_url`` reads ``view(id)``, ``Api.reports`` sends ``ProjectViews``
/ ``allViews``) against ``tests/wandb_fake_server.py`` on 127.0.0.1, which answers those
operations with the payload shapes of ``wandb/apis/public/{runs,reports}.py`` and
``wandb_workspaces/reports/v2/gql.py``, and ``project { description }`` / ``upsertModel`` (the
mutation wandb's own ``create_project``/``upsert_project`` send): no W&B server can run here.

The sweep is hand-made: 20 runs, 5 learning rates x 4 seeds, every run with lr >= 0.003 diverges
(its loss grows to NaN). The triage must find ``param:lr`` first with its counts, save the
report (and replace it next time), keep a report a person edited, write the project's
description without ``--report`` (``upsertModel``, a concurrent edit kept), and say what it cannot
conclude on bad input (one run, all healthy, no params, 500 params) without claiming a factor.
"""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

pytest.importorskip("wandb")
pytest.importorskip("wandb_workspaces")

from wandb_fake_server import FakeRun, FakeWandbServer  # noqa: E402
from wandb_helpers import sdk_pointed_at  # noqa: E402

from mlaudit.cli import app  # noqa: E402
from mlaudit_core.writeback import BEGIN, END  # noqa: E402

pytestmark = pytest.mark.e2e  # a local fake W&B server (socket) and wandb-core (process)

KEY = "t" * 40
ENTITY = "ent"
LRS = [0.0001, 0.0003, 0.001, 0.003, 0.01]


def rows(diverge: bool, n: int = 200) -> list[dict]:
    out = []
    for i in range(n):
        loss = 2.0 * math.exp(-i / 40) + 0.2
        if diverge and i > 120:
            loss = 0.2 + (i - 120) * 0.3
        out.append({"_step": i, "_timestamp": 1.7e9 + i, "_runtime": float(i), "train/loss": loss})
    return out


def add_sweep(srv, project: str, n: int = 20, params=None, diverge=None) -> None:
    for i in range(n):
        lr = LRS[i % 5]
        cfg = {"lr": lr, "seed": i // 5, "optim": {"name": "adam"}} if params is None else params(i)
        bad = lr >= 0.003 if diverge is None else diverge(i)
        srv.add_run(
            FakeRun(
                ENTITY,
                project,
                f"r{i:03d}",
                display_name=f"run-{i}",
                config=cfg,
                history=rows(bad),
                tags=["sweep-a"] if i % 2 else [],
                created_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}",
            )
        )


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    """One server for the module (each test its own project): the SDK's service is set up
    once and torn down at the end, as a user's process would."""
    mp = pytest.MonkeyPatch()
    mp.chdir(tmp_path_factory.mktemp("state"))  # the batch state files
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as s, sdk_pointed_at(s, KEY):
        yield s
    mp.undo()


def views_of(srv, project: str) -> list[dict]:
    return [v for v in srv.views.values() if v["projectName"] == project]


def batch(project: str, *extra: str):
    return CliRunner().invoke(
        app,
        [
            "batch",
            "wandb",
            "-p",
            f"{ENTITY}/{project}",
            "--triage",
            "-f",
            "json",
            "--fresh",
            *extra,
        ],
        env={"COLUMNS": "240"},
    )


def triage_of(res) -> dict:
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["triage"]


def test_batch_wandb_triage_finds_lr_and_saves_the_report(srv):
    add_sweep(srv, "sweep")
    tri = triage_of(batch("sweep", "--report"))
    top = tri["factors"][0]
    assert top["name"] == "param:lr" and top["significant"], tri["factors"][:2]
    assert top["counts"]["group"]["rule"] == "lr >= 0.003"
    assert top["counts"]["group"]["failing"] == 8 and top["counts"]["rest"]["failing"] == 0
    names = {f["name"] for f in tri["factors"]}
    assert "tag:sweep-a" in names  # a W&B tag is a yes/no factor, tested and not claimed
    assert not any(f["significant"] for f in tri["factors"] if f["name"] != "param:lr")
    [view] = views_of(srv, "sweep")
    assert view["displayName"] == "mlaudit triage: sweep" and view["type"] == "runs"
    spec = json.loads(view["spec"])
    text = json.dumps(spec)
    assert "lr &gt;= 0.003" in text or "lr >= 0.003" in text
    assert "ParallelCoordinates" in text or "parallel" in text.lower()
    assert view["description"].startswith("20 runs triaged by mlaudit [mlaudit blocks ")
    # the runs' own state and config are not touched by the triage
    assert all(r.config.get("lr") in LRS for r in srv.runs.values())

    # a second triage replaces the same report
    tri2 = triage_of(batch("sweep", "--report"))
    assert tri2["factors"][0]["name"] == "param:lr"
    [again] = views_of(srv, "sweep")
    assert again["id"] == view["id"] and again["saves"] >= 3


def test_batch_wandb_triage_keeps_a_report_someone_edited(srv):
    add_sweep(srv, "edited")
    triage_of(batch("edited", "--report"))
    [vid] = [v["id"] for v in views_of(srv, "edited")]
    spec = json.loads(srv.views[vid]["spec"])
    spec["blocks"].append({"type": "paragraph", "children": [{"text": "my notes"}]})
    srv.views[vid]["spec"] = json.dumps(spec)  # a person's edit in the UI
    res = batch("edited", "--report")
    triage_of(res)
    assert len(views_of(srv, "edited")) == 2
    assert "my notes" in srv.views[vid]["spec"]  # the edited report is left as it was
    assert "edited by someone" in res.stderr


def test_batch_wandb_triage_without_report_writes_the_project_description(srv):
    """Without --report: mlaudit's section of the project's description (upsertModel), after the
    user's text; a description saved by someone during the write is merged again, not lost."""
    add_sweep(srv, "noreport")
    srv.project_descriptions[(ENTITY, "noreport")] = "LR sweep for the Q3 model."
    real = srv._upsert_model
    edits = []

    def upsert_then_user_saves(input=None, **kw):
        out = real(input=input, **kw)
        if not edits and BEGIN in ((input or {}).get("description") or ""):
            # saved from a page loaded before mlaudit's write: the user's new text, no section
            srv.project_descriptions[(ENTITY, "noreport")] = (
                "LR sweep for the Q3 model. Owner: ana."
            )
            edits.append(1)
        return out

    srv._upsert_model = upsert_then_user_saves
    try:
        res = batch("noreport")
    finally:
        srv._upsert_model = real
    tri = triage_of(res)
    assert tri["factors"][0]["name"] == "param:lr"
    assert views_of(srv, "noreport") == []
    desc = srv.project_descriptions[(ENTITY, "noreport")]
    assert edits and desc.startswith("LR sweep for the Q3 model. Owner: ana.")
    assert desc.count(BEGIN) == 1 and desc.count(END) == 1
    assert "`param:lr` [diverged]: all 8 diverged runs have lr >= 0.003" in desc
    assert "**significant**" in desc
    assert "description of W&B project ent/noreport" in res.stderr
    # a second triage replaces the section; --no-write (with --report too) writes nothing
    triage_of(batch("noreport"))
    assert srv.project_descriptions[(ENTITY, "noreport")].count(BEGIN) == 1
    before = len(srv.project_updates)
    res = CliRunner().invoke(
        app,
        [
            "batch",
            "wandb",
            "-p",
            f"{ENTITY}/noreport",
            "--triage",
            "--report",
            "--no-write",
            "--fresh",
        ],
        env={"COLUMNS": "240"},
    )
    assert res.exit_code == 0, res.output
    assert "param:lr [diverged]: all 8 diverged runs have lr >= 0.003" in res.stdout
    assert "triage written to" not in res.output
    assert views_of(srv, "noreport") == [] and len(srv.project_updates) == before
    res = CliRunner().invoke(app, ["batch", "wandb", "-p", f"{ENTITY}/noreport", "--report"])
    assert res.exit_code == 2 and "--report goes with --triage" in res.output


@pytest.mark.parametrize(
    ("case", "n", "params", "diverge", "statement"),
    [
        ("one-run", 1, None, lambda i: True, "1 run(s) with a verdict: nothing to compare"),
        ("all-healthy", 8, None, lambda i: False, "all 8 runs succeeded: no failure to explain"),
        ("no-params", 10, lambda i: {}, lambda i: i % 4 < 2, "no run carries params"),
        (
            "500-params",
            12,
            lambda i: {f"p{k}": (k * 7 + i) % 13 for k in range(500)},
            lambda i: i % 3 == 0,
            "over the limit of 200: too many to separate",
        ),
    ],
)
def test_batch_wandb_triage_bad_input_claims_nothing(srv, case, n, params, diverge, statement):
    add_sweep(srv, case, n=n, params=params, diverge=diverge)
    tri = triage_of(batch(case, "--report"))
    assert not any(f["significant"] for f in tri["factors"])
    text = " ".join(tri["statements"])
    assert statement in text, text
    if case == "no-params":  # only the start time and the tag vary: tested, nothing claimed
        assert {f["name"] for f in tri["factors"]} <= {"start_time", "tag:sweep-a"}
        assert "no factor separates the failing runs" in text
    [view] = views_of(srv, case)  # the report says the same, and claims nothing
    assert " | yes |" not in view["spec"]
    assert statement in view["spec"]
