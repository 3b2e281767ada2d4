"""The TensorBoard tracker plugin (entry point ``mlaudit.trackers: tensorboard``)."""

from __future__ import annotations

from datetime import datetime

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult


class TensorBoardPlugin:
    """Load a log directory; write the verdict into mlaudit's own event file there."""

    name = "tensorboard"
    extra = "tensorboard"
    #: The plugin's commands (``mlaudit tensorboard ...``, ``watch tensorboard``...; :mod:`.cli`).
    cli = "mlaudit_tensorboard.cli:register"

    def load(self, ref: str, **options) -> RunData:
        from .reader import load_logdir

        return load_logdir(ref)

    def write_back(self, run: RunData, report: AuditReport, *, dry_run: bool = False,
                   **options) -> WriteBackResult:
        from .writeback import write_verdict

        return write_verdict(run.identity.id, report, dry_run=dry_run)

    def list_finished(self, since: datetime | None = None, **options) -> list[str]:
        return []  # log directories have no completion state
