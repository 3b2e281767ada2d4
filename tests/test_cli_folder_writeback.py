"""`mlaudit FOLDER` with several runs says which run folders got mlaudit's *.mlaudit event file.

Found as a new user (session 4): `mlaudit lightning_logs/` with a CSVLogger and a TensorBoardLogger
version audited both runs and silently added an events.*.mlaudit file to the TensorBoard version's
folder; `--dry-run` did not say it would (a single-run audit prints "would write artifacts: ...").
The event files are written by the real tensorboardX SummaryWriter.
"""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from mlaudit.cli import _route_path, app


def _runs(root):
    tbx = pytest.importorskip("tensorboardX")
    for name in ("version_0", "version_1"):
        w = tbx.SummaryWriter(str(root / "lightning_logs" / name))
        for step in range(60):
            w.add_scalar("train_loss", 2.0 * math.exp(-step / 15) + 0.05, step)
            if step % 10 == 0:
                w.add_scalar("val_loss", 2.0 * math.exp(-step / 15) + 0.1, step)
        w.close()
    csv = root / "lightning_logs" / "version_2"
    csv.mkdir()
    (csv / "metrics.csv").write_text(
        "epoch,step,train_loss\n"
        + "".join(f"{s // 10},{s},{2.0 * math.exp(-s / 15) + 0.05}\n" for s in range(60))
    )


def _mlaudit_files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.mlaudit"))


def test_folder_audit_names_the_run_folders_it_writes_into(tmp_path):
    _runs(tmp_path)
    run = CliRunner().invoke
    res = run(app, _route_path([str(tmp_path), "--dry-run"]))
    assert res.exit_code in (0, 1), res.output
    assert "3 runs found" in res.output
    assert (
        "would write the verdict into 2 TensorBoard log directories (an events.*.mlaudit file each"
        in res.output
    ), res.output
    assert "lightning_logs/version_0, lightning_logs/version_1" in res.output
    assert _mlaudit_files(tmp_path) == []  # a dry run writes nothing

    res = run(app, _route_path([str(tmp_path)]))
    assert res.exit_code in (0, 1), res.output
    assert "wrote the verdict into 2 TensorBoard log directories" in res.output
    files = _mlaudit_files(tmp_path)
    assert [f.split("/")[1] for f in files] == ["version_0", "version_1"], files

    res = run(app, _route_path([str(tmp_path), "--no-write"]))
    assert "the verdict into" not in res.output  # nothing written, nothing said
