"""The TensorBoard tracker plugin (entry point ``mlaudit.trackers: tensorboard``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult


class TensorBoardPlugin:
    """Load a log directory; write the verdict into mlaudit's own event file there."""

    name = "tensorboard"
    extra = "tensorboard"
    #: The plugin's commands (``mlaudit tensorboard ...``, ``watch tensorboard``...; :mod:`.cli`).
    cli = "mlaudit_tensorboard.cli:register"

    @staticmethod
    def local_live_source(paths: list[Path]):
        """``mlaudit watch PATH --live``: the paths that are TensorBoard log directories (event
        files in them or their sub-folders) and one live source following them, or ``([], None)``."""
        from .reader import event_files

        claimed = [p for p in paths if Path(p).is_dir() and event_files(Path(p))]
        if not claimed:
            return [], None
        from .live import TensorBoardLiveSource

        return claimed, TensorBoardLiveSource(claimed)

    def load(self, ref: str, **options) -> RunData:
        from .reader import load_logdir

        return load_logdir(ref)

    def write_back(
        self, run: RunData, report: AuditReport, *, dry_run: bool = False, **options
    ) -> WriteBackResult:
        from .writeback import write_verdict

        return write_verdict(run.identity.id, report, dry_run=dry_run)

    def list_finished(self, since: datetime | None = None, **options) -> list[str]:
        return []  # log directories have no completion state
