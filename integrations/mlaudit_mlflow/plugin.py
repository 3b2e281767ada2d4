"""The MLflow tracker plugin (entry point ``mlaudit.trackers: mlflow``)."""

from __future__ import annotations

from datetime import datetime

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult


class MlflowPlugin:
    """Load MLflow runs, write verdicts back, list newly finished runs."""

    name = "mlflow"
    extra = "mlflow"

    def __init__(self, tracking_uri: str | None = None) -> None:
        self.tracking_uri = tracking_uri

    def load(self, ref: str, **options) -> RunData:
        from .loader import load_run

        return load_run(ref, self.tracking_uri)

    def write_back(self, run: RunData, report: AuditReport, *, dry_run: bool = False,
                   **options) -> WriteBackResult:
        from .loader import client_for
        from .writeback import write_verdict

        return write_verdict(client_for(self.tracking_uri), run, report, dry_run=dry_run)

    def list_finished(self, since: datetime | None = None, *, experiment_ids: list[str] | None = None,
                      **options) -> list[str]:
        """Runs no longer RUNNING that ended after ``since`` and have no ``mlaudit.verdict`` tag."""
        from .loader import client_for

        client = client_for(self.tracking_uri)
        if experiment_ids is None:
            experiment_ids = [e.experiment_id for e in client.search_experiments()]
        flt = "attributes.status != 'RUNNING' and tags.`mlaudit.verdict` IS NULL"
        if since is not None:
            flt += f" and attributes.end_time > {int(since.timestamp() * 1000)}"
        runs = client.search_runs(experiment_ids, filter_string=flt, order_by=["attributes.end_time ASC"],
                                  max_results=1000)
        return [r.info.run_id for r in runs]
