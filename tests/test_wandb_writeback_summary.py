"""A user's W&B summary edit made while mlaudit audits and writes back is kept.

W&B's ``upsertBucket(summaryMetrics)`` replaces a run's summary whole, and ``wandb.Api``
caches ``Run`` objects: mlaudit's last write-back step, ``wrun.summary.update(verdict keys)``,
sent the summary as the run object held it when the audit *loaded* the run, plus the
verdict keys. A key the user (an eval script, a sweep agent, ``run.summary[...] = ...`` in
a notebook) set on the finished run during the audit and the write-back's uploads was
dropped: the user's ``test/accuracy`` vanished from the run. Fixed: the verdict keys are
merged into the summary as the server has it right before the write (one request apart).

The real wandb SDK (``wandb.Api``) against the local fake server (tests/wandb_fake_server.py:
no W&B server can run here), whose ``upsertBucket`` replaces the summary whole as W&B does;
the user's edit is applied on the server when mlaudit writes the run's notes, i.e. in the
middle of its write-back.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

pytest.importorskip("wandb")

from test_batch_trackers import wandb_rows  # noqa: E402
from wandb_fake_server import FakeRun, FakeWandbServer  # noqa: E402
from wandb_helpers import sdk_pointed_at  # noqa: E402

from mlaudit.cli import app  # noqa: E402

KEY, ENT, PROJ = "s" * 40, "ent", "sumedit"


@pytest.mark.parametrize("extra", [[], ["--report"]])
def test_user_summary_key_set_during_the_write_back_is_kept(extra):
    if extra:
        pytest.importorskip("wandb_workspaces")
    with FakeWandbServer(api_key=KEY, entity=ENT) as srv:
        srv.add_run(
            FakeRun(
                ENT,
                PROJ,
                "r1",
                display_name="r1",
                notes="user notes",
                summary={"train/loss": 0.5},
                history=wandb_rows("diverge"),
            )
        )
        upsert = srv._upsert_bucket
        edits = []

        def user_edits_while_mlaudit_writes_notes(input=None, **kw):
            res = upsert(input=input, **kw)
            if (input or {}).get("notes") is not None and not edits:
                run = srv.run(ENT, PROJ, "r1")  # the user's own write lands now
                run.summary = {**run.summary, "test/accuracy": 0.93}
                edits.append(1)
            return res

        srv._upsert_bucket = user_edits_while_mlaudit_writes_notes
        with sdk_pointed_at(srv, KEY):
            res = CliRunner().invoke(app, ["wandb", f"{ENT}/{PROJ}/r1", "-f", "json", *extra])
        assert res.exit_code in (0, 1), res.output
        assert edits, "the notes were never written"
        summary = srv.run(ENT, PROJ, "r1").summary
        assert summary.get("test/accuracy") == 0.93, summary
        assert summary["train/loss"] == 0.5
        assert summary["mlaudit/verdict"] == "diverged"
        if extra:
            assert summary.get("mlaudit/report_id")
