"""Write the verdict into a TensorBoard log directory as a text summary in mlaudit's own event file.

The user's event files are never opened for writing. mlaudit's file has the
suffix ``.mlaudit``; a new audit deletes the previous ``*.mlaudit`` files (and only
those) before writing, so the Text tab shows exactly one verdict.
"""

from __future__ import annotations

import time
from pathlib import Path

from mlaudit_core.plugins import require
from mlaudit_core.render import render_markdown
from mlaudit_core.report import AuditReport
from mlaudit_core.writeback import WriteBackResult

from .reader import MLAUDIT_SUFFIX

TEXT_TAG = "mlaudit/verdict"


def write_verdict(
    logdir: str | Path, report: AuditReport, *, dry_run: bool = False
) -> WriteBackResult:
    """Write ``report`` as Markdown text summaries (``mlaudit/verdict``, ``mlaudit/report``).

    Returns what was (or, with ``dry_run``, would be) written.
    """
    root = Path(logdir)
    # TensorBoard has no tags: the verdict is the text summary itself
    result = WriteBackResult(tracker="tensorboard", run_id=str(root), dry_run=dry_run)
    old = sorted(root.glob(f"*tfevents*{MLAUDIT_SUFFIX}"))
    result.artifacts = [f"{root}/events.out.tfevents.*{MLAUDIT_SUFFIX} (Text tab: {TEXT_TAG})"]
    if dry_run:
        if old:
            result.notes.append(f"would replace {len(old)} earlier mlaudit event file(s)")
        return result
    import os

    from mlaudit_core.errors import WriteBackRefused

    if not os.access(root, os.W_OK):
        raise WriteBackRefused(
            f"{root}: the log directory is not writable; nothing was written "
            "(use --no-write to audit only)"
        )
    efw = require("tensorboard.summary.writer.event_file_writer", "tensorboard", "tensorboard")
    text = require("tensorboard.plugins.text.summary_v2", "tensorboard", "tensorboard")
    event_pb2 = require("tensorboard.compat.proto.event_pb2", "tensorboard", "tensorboard")
    for f in old:
        f.unlink()
    writer = efw.EventFileWriter(str(root), filename_suffix=MLAUDIT_SUFFIX)
    from mlaudit_core.writeback import summary_section

    now = time.time()
    for tag, body in (
        (TEXT_TAG, summary_section(report)),
        ("mlaudit/report", render_markdown(report)),
    ):
        writer.add_event(event_pb2.Event(wall_time=now, step=0, summary=text.text_pb(tag, body)))
    writer.close()
    return result
