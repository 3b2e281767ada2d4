"""``mlaudit wandb RUN --report``: the verdict saved as a W&B Report (issue 19, item 3).

No W&B server can run here (no network, no credentials), so the real libraries (wandb 0.31's
public ``wandb.Api`` and wandb-workspaces' ``wandb_workspaces.reports.v2``, whose
``Report.save()`` sends ``Viewer``, ``ProjectInternalId``, ``GetProjects`` and the
``upsertView`` mutation) talk to ``tests/wandb_fake_server.py`` on 127.0.0.1, which implements
those operations and ``view(id)`` (``Report.from_url``) with the payload shapes of
``wandb_workspaces/reports/v2/gql.py``. The report's spec is read back through the library
itself, so what is checked is what W&B's app would be given.

The run is a hand-made diverging history (loss falls, then grows geometrically to NaN): the
test is about the report surface, not about the diagnosis, which other tests measure on real
runs.
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

KEY = "r" * 40
ENTITY, PROJECT = "ent", "report-proj"


def _diverging_rows(n: int = 200, blow_up_at: int = 120) -> list[dict]:
    rows, loss = [], 2.0
    for step in range(n):
        if step < blow_up_at:
            loss = 0.3 + 1.7 * math.exp(-step / 40) + 0.01 * math.sin(step)
        else:
            loss = loss * 1.25 if math.isfinite(loss) and loss < 1e30 else float("nan")
        row = {
            "_step": step,
            "_timestamp": 1.7e9 + step,
            "_runtime": float(step),
            "train/loss": loss,
            "learning_rate": 0.5,
        }
        if step % 10 == 0:
            row["val/loss"] = loss * 1.05 if math.isfinite(loss) else float("nan")
        rows.append(row)
    return rows


@pytest.fixture()
def srv():
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as s:
        s.add_run(
            FakeRun(
                ENTITY,
                PROJECT,
                "div1",
                display_name="lr-0.5",
                state="crashed",
                config={"learning_rate": 0.5},
                notes="user notes",
                history=_diverging_rows(),
                tags=["keep-me"],
            )
        )
        with sdk_pointed_at(s, KEY):
            yield s


def _spec(view: dict) -> dict:
    return json.loads(view["spec"])


def _blocks(spec: dict, kind: str) -> list[dict]:
    return [b for b in spec["blocks"] if b["type"] == kind]


def test_report_is_saved_with_verdict_and_zoomed_panels_and_no_resume(srv):
    ref = f"{ENTITY}/{PROJECT}/div1"
    res = CliRunner().invoke(app, ["wandb", ref, "--report", "-f", "json"])
    assert res.exit_code in (0, 1), res.output  # 1: --fail-on default for a failed run
    report = json.loads(res.stdout)
    outcome = report["verdict"]["outcome"]
    assert outcome == "diverged"
    assert "upsertView" in srv.operations and len(srv.views) == 1
    [view] = srv.views.values()
    assert view["entityName"] == ENTITY and view["projectName"] == PROJECT
    assert view["type"] == "runs" and view["displayName"] == "mlaudit: diverged (lr-0.5)"
    assert view["description"].startswith(report["verdict"]["summary"][:40])

    spec = _spec(view)
    text = json.dumps(spec)
    assert "mlaudit verdict: diverged" in text  # the notes section's verdict line
    for f in report["findings"]:
        if f["severity"] in ("warning", "error"):
            assert f["code"] in text
    [grid] = _blocks(spec, "panel-grid")
    [runset] = grid["metadata"]["runSets"]
    assert runset["project"] == {"name": PROJECT, "entityName": ENTITY, "id": "1"}
    assert runset["filters"]["filters"] == [
        {"key": {"section": "run", "name": "name"}, "op": "=", "value": "div1", "disabled": False}
    ]
    panels = grid["metadata"]["panelBankSectionConfig"]["panels"]
    assert all(p["viewType"] == "Run History Line Plot" for p in panels)
    # a panel zoomed on each finding's series evidence (steps from the report itself)
    cited = {
        (e["metric"], e["step_start"])
        for f in report["findings"]
        if f["severity"] in ("warning", "error")
        for e in f["evidence"]
        if e["kind"] == "series" and e.get("step_start") is not None
    }
    assert cited
    zoomed = [p["config"] for p in panels if "xAxisMin" in p["config"]]
    for metric, start in cited:
        assert any(
            c["metrics"] == [metric] and c["xAxisMin"] <= start <= c["xAxisMax"] for c in zoomed
        ), (metric, start, zoomed)
    assert any("xAxisMin" not in p["config"] for p in panels)  # whole-run panels too

    run = srv.run(ENTITY, PROJECT, "div1")
    assert run.summary["mlaudit/report_id"] == view["id"]
    assert run.summary["mlaudit/report_url"].endswith(f"--{view['id']}")
    assert run.state_log == ["crashed"]  # never resumed: the state and automations left alone
    assert not [r for r in srv.requests if r[1].endswith("file_stream")]
    assert run.notes.startswith("user notes") and "keep-me" in run.tags


def test_second_audit_updates_the_same_report_and_the_library_reads_it_back(srv):
    import wandb_workspaces.reports.v2 as wr

    ref = f"{ENTITY}/{PROJECT}/div1"
    for _ in range(2):
        res = CliRunner().invoke(app, ["wandb", ref, "--report", "-f", "json"])
        assert res.exit_code in (0, 1), res.output
    assert len(srv.views) == 1
    [view] = srv.views.values()
    assert view["saves"] == 2
    url = srv.run(ENTITY, PROJECT, "div1").summary["mlaudit/report_url"]
    back = wr.Report.from_url(url)  # the real library parses what the server stored
    assert back.title == "mlaudit: diverged (lr-0.5)" and back.id == view["id"]
    assert any(isinstance(b, wr.PanelGrid) for b in back.blocks)

    # the user deleted the report: the next audit makes a new one and remembers it
    srv.views.clear()
    res = CliRunner().invoke(app, ["wandb", ref, "--report", "-f", "json"])
    assert res.exit_code in (0, 1), res.output
    [new] = srv.views.values()
    assert srv.run(ENTITY, PROJECT, "div1").summary["mlaudit/report_id"] == new["id"]


def test_dry_run_and_default_save_no_report(srv):
    ref = f"{ENTITY}/{PROJECT}/div1"
    res = CliRunner().invoke(app, ["wandb", ref, "--report", "--dry-run", "-f", "json"])
    assert res.exit_code in (0, 1), res.output
    assert "would save the W&B Report of the verdict" in res.stderr
    res = CliRunner().invoke(app, ["wandb", ref, "-f", "json"])
    assert res.exit_code in (0, 1), res.output
    assert srv.views == {} and "upsertView" not in srv.operations
    assert "mlaudit/report_id" not in srv.run(ENTITY, PROJECT, "div1").summary


def test_report_without_the_library_is_one_line_before_any_audit(srv, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "wandb_workspaces", None)  # import fails as when missing
    monkeypatch.setitem(sys.modules, "wandb_workspaces.reports", None)
    monkeypatch.setitem(sys.modules, "wandb_workspaces.reports.v2", None)
    res = CliRunner().invoke(app, ["wandb", f"{ENTITY}/{PROJECT}/div1", "--report"])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "mlaudit: error: --report needs wandb-workspaces: pip install 'mlaudit[wandb]' (wandb-workspaces)"
    ]
    assert srv.run(ENTITY, PROJECT, "div1").tags == ["keep-me"]  # nothing written


def test_watch_once_with_report_saves_a_report_per_audited_run(srv, tmp_path):
    """Auto-triage (``mlaudit watch wandb --once --report``) writes the same Report surface."""
    res = CliRunner().invoke(
        app,
        [
            "watch",
            "wandb",
            "-p",
            f"{ENTITY}/{PROJECT}",
            "--once",
            "--since",
            "all",
            "--report",
            "--state",
            str(tmp_path / "w.sqlite"),
        ],
    )
    assert res.exit_code == 0, res.output
    run = srv.run(ENTITY, PROJECT, "div1")
    assert run.summary.get("mlaudit/verdict") == "diverged"
    [view] = srv.views.values()
    assert run.summary["mlaudit/report_id"] == view["id"]
    assert view["displayName"] == "mlaudit: diverged (lr-0.5)"
    assert run.state_log == ["crashed"]


def test_a_refused_report_is_one_line_after_the_verdict_is_written(srv):
    srv.refuse_views = "permission denied: this API key cannot create reports"
    res = CliRunner().invoke(app, ["wandb", f"{ENTITY}/{PROJECT}/div1", "--report", "-f", "json"])
    assert res.exit_code == 2
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("mlaudit: error:")]
    assert "W&B refused the report" in line and "the verdict itself was written" in line
    run = srv.run(ENTITY, PROJECT, "div1")
    assert run.summary["mlaudit/verdict"] == "diverged" and "mlaudit/report_id" not in run.summary
    assert srv.views == {}
