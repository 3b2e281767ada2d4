"""Requests per run of the W&B and ClearML write-backs (issue 30), counted on the wire.

No W&B or ClearML server here: the real SDKs (``wandb.Api``, ``clearml.Task``) talk to the
fake servers of ``tests/wandb_fake_server.py`` and ``tests/clearml_fake_server.py``, which speak
the trackers' wire protocols and record every request they receive (W&B: GraphQL operation
names and file ``PUT``s; ClearML: API endpoints, and the file server's uploads).
"""

from __future__ import annotations

import math
import os

import pytest

from mlaudit_core import audit
from mlaudit_core.writeback import BEGIN

pytestmark = pytest.mark.e2e  # the fake servers listen on sockets

wandb_fake_server = pytest.importorskip("wandb_fake_server")
clearml_fake_server = pytest.importorskip("clearml_fake_server")

KEY = "w" * 40
ENTITY, PROJECT = "ent", "wb-requests"


def _rows() -> list[dict]:
    return [
        {
            "_step": i,
            "_timestamp": 1_700_000_000 + i,
            "_runtime": i,
            "train/loss": 2.0 * math.exp(-i / 50) + 0.2 + (0.3 * (i - 200) if i > 200 else 0.0),
        }
        for i in range(1, 301)
    ]


@pytest.fixture(scope="module")
def wandb_srv():
    pytest.importorskip("wandb")
    from wandb_helpers import sdk_pointed_at

    srv_cls = wandb_fake_server.FakeWandbServer
    with srv_cls(api_key=KEY, entity=ENTITY) as srv:
        for name in ("fresh", "edited"):
            srv.add_run(
                wandb_fake_server.FakeRun(
                    ENTITY, PROJECT, name, tags=["keep-me"], notes="user notes", history=_rows()
                )
            )
        with sdk_pointed_at(srv, KEY):
            yield srv


def _wandb_write(srv, name: str, *, edit: str | None = None):
    from mlaudit_wandb import writeback as wb
    from mlaudit_wandb.online import load_online, make_api, parse_ref

    ref = f"{ENTITY}/{PROJECT}/{name}"
    api = make_api(30)
    data = load_online(ref, api=api)
    report = audit(data)
    if edit is not None:  # the user saves notes after the audit loaded the run
        srv.run(ENTITY, PROJECT, name).notes = edit
    ops, reqs = len(srv.operations), len(srv.requests)
    res = wb.write_back(api, parse_ref(ref), report, run_data=data)
    puts = [p for m, p in srv.requests[reqs:] if m == "PUT"]
    # ServerFeaturesQuery: the SDK asks it once per process (wandb-core caches the answer)
    ops_now = [o for o in srv.operations[ops:] if o != "ServerFeaturesQuery"]
    return report, res, ops_now, puts


def test_wandb_write_back_makes_five_requests_per_fresh_run(wandb_srv):
    """The SDK's ``Run.upload_file`` for report.html (CreateRunFiles, the PUT, RunFiles), one
    read of tags, notes and summary, one upsertBucket with all three."""
    os.environ.pop("MLAUDIT_REPORT_FILES", None)
    report, res, ops, puts = _wandb_write(wandb_srv, "fresh")
    assert ops == ["CreateRunFiles", "RunFiles", "RunWriteBack", "UpsertBucket"], ops
    assert len(puts) == 1 and puts[0].endswith("mlaudit/report.html"), puts
    assert res.artifacts == ["mlaudit/report.html"] and res.section_state == "written"
    run = wandb_srv.run(ENTITY, PROJECT, "fresh")
    assert run.summary["mlaudit/verdict"] == report.verdict.outcome.value
    assert "keep-me" in run.tags and f"mlaudit:{report.verdict.outcome.value}" in run.tags
    assert run.notes.startswith("user notes") and run.notes.count(BEGIN) == 1


def test_wandb_write_back_rechecks_notes_edited_since_the_load(wandb_srv):
    """Notes saved after the audit loaded the run: kept, and read once more after the write."""
    _, res, ops, _ = _wandb_write(wandb_srv, "edited", edit="edited notes")
    assert ops == ["CreateRunFiles", "RunFiles", "RunWriteBack", "UpsertBucket", "RunWriteBack"]
    notes = wandb_srv.run(ENTITY, PROJECT, "edited").notes
    assert notes.startswith("edited notes") and notes.count(BEGIN) == 1
    assert res.section_state == "written"


# --------------------------------------------------------------------------- ClearML


@pytest.fixture(scope="module")
def clearml_srv(tmp_path_factory):
    pytest.importorskip("clearml")
    from wandb_helpers import reset_sdk_state

    with clearml_fake_server.serving(tmp_path_factory.mktemp("clearml")) as srv:
        reset_sdk_state()  # an earlier module's server may be cached in the SDK
        try:
            yield srv
        finally:
            reset_sdk_state()


def _clearml_task(name: str) -> str:
    """A completed task recorded through the SDK, with a user comment."""
    from clearml import Task

    t = Task.create(project_name="wb-requests", task_name=name)
    t.mark_started(force=True)
    lg = t.get_logger()
    for i, row in enumerate(_rows(), 1):
        lg.report_scalar("train", "loss", row["train/loss"], iteration=i)
    t.flush(wait_for_uploads=True)
    t.set_comment("user notes")
    t.mark_completed(force=True)
    return t.id


def _clearml_write(srv, name: str, *, edit: str | None = None):
    from mlaudit_clearml.connection import connect
    from mlaudit_clearml.loader import load_task
    from mlaudit_clearml.writeback import write_verdict

    task_id = _clearml_task(name)
    session = connect()
    run = load_task(session, task_id)
    report = audit(run)
    if edit is not None:  # the user saves a comment after the audit loaded the task
        with srv.lock:
            srv.tasks[task_id]["comment"] = edit
    calls = len(srv.calls)
    files_before = dict(srv.files)
    res = write_verdict(session, run, report)
    mine = [e for e, tid in srv.calls[calls:] if e != "auth.login"]
    uploads = sorted(k for k, v in srv.files.items() if files_before.get(k) != v)
    return task_id, report, res, mine, uploads


def test_clearml_write_back_requests_per_ended_task(clearml_srv):
    """The SDK's Task.get_task (tasks.get_by_id, projects.get_by_id), one upload (report.html),
    events.add_batch (the panel), tasks.get_by_id (the comment and labels as they are now), one
    tasks.edit, tasks.edit_hyper_params (the properties): 7 (was 12)."""
    os.environ.pop("MLAUDIT_REPORT_FILES", None)
    task_id, report, res, calls, uploads = _clearml_write(clearml_srv, "fresh")
    assert calls == [
        "tasks.get_by_id",
        "projects.get_by_id",
        "events.add_batch",
        "tasks.get_by_id",
        "tasks.edit",
        "tasks.edit_hyper_params",
    ], calls
    assert len(uploads) == 1 and uploads[0].endswith("mlaudit/report.html"), uploads
    doc = clearml_srv.tasks[task_id]
    assert doc["comment"].startswith("user notes") and doc["comment"].count(BEGIN) == 1
    assert f"mlaudit:{report.verdict.outcome.value}" in doc["tags"]
    assert res.section_state == "written"
    from clearml import Task

    props = Task.get_task(task_id=task_id).get_user_properties(value_only=True)
    assert props["mlaudit.verdict"] == report.verdict.outcome.value


def test_clearml_write_back_rechecks_a_comment_edited_since_the_load(clearml_srv):
    task_id, _, res, calls, _ = _clearml_write(clearml_srv, "edited", edit="edited notes")
    assert calls[-4:] == [
        "tasks.get_by_id",
        "tasks.edit",
        "tasks.get_by_id",
        "tasks.edit_hyper_params",
    ], calls
    comment = clearml_srv.tasks[task_id]["comment"]
    assert comment.startswith("edited notes") and comment.count(BEGIN) == 1
    assert res.section_state == "written"
