"""The fake tracker: a folder of runs, one JSON file each.

``<store>/<id>.json``: ``{"name": str, "status": "finished" | "running" | "failed",
"ended": ISO time or null, "metrics": {key: [value per step, ...]}, "tags": {...}}``.
The store is the ``store`` option, else ``$MLAUDIT_FAKE_STORE``. Write-back sets the
``mlaudit.*`` tags in the file (mlaudit's namespace only) and writes ``<id>.report.md``.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from mlaudit_core.errors import InputError
from mlaudit_core.render import render_markdown
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity, RunStatus
from mlaudit_core.writeback import WriteBackResult


class FakePlugin:
    name = "fake"
    extra = "fake"
    cli = "mlaudit_fake.cli:register"  # the plugin's commands (mlaudit_core.plugins)

    def __init__(self, store: str | None = None) -> None:
        where = store or os.environ.get("MLAUDIT_FAKE_STORE")
        if not where:
            raise InputError("fake: give --store or set MLAUDIT_FAKE_STORE")
        self.store = Path(where)
        if not self.store.is_dir():
            raise InputError(f"{self.store}: no such fake store")

    def _file(self, ref: str) -> Path:
        path = self.store / f"{ref}.json"
        if "/" in ref or not path.is_file():
            raise InputError(f"fake run {ref!r}: not found in {self.store}")
        return path

    def load(self, ref: str, **options) -> RunData:
        doc = json.loads(self._file(ref).read_text())
        keys, steps, values = [], [], []
        for key, series in doc.get("metrics", {}).items():
            keys += [key] * len(series)
            steps += list(range(len(series)))
            values += [float(v) for v in series]
        ended = doc.get("ended")
        return RunData(
            RunIdentity("fake", ref, doc.get("name", ref), project=str(self.store)),
            status=RunStatus(doc.get("status", "finished")),
            end_time=datetime.fromisoformat(ended) if ended else None,
            tags=dict(doc.get("tags", {})),
            metrics=MetricTable(keys, steps, values),
        )

    def write_back(
        self, run: RunData, report, *, dry_run: bool = False, **options
    ) -> WriteBackResult:
        v = report.verdict
        tags = {
            "mlaudit.verdict": v.outcome.value,
            "mlaudit.cause": v.cause.value,
            "mlaudit.confidence": f"{v.confidence:.2f}",
        }
        res = WriteBackResult(
            tracker="fake",
            run_id=run.identity.id,
            dry_run=dry_run,
            tags=tags,
            artifacts=[f"{run.identity.id}.report.md"],
        )
        if not dry_run:
            path = self._file(run.identity.id)
            doc = json.loads(path.read_text())
            doc.setdefault("tags", {}).update(tags)
            path.write_text(json.dumps(doc))
            (self.store / f"{run.identity.id}.report.md").write_text(render_markdown(report))
        return res

    def _docs(self):
        for path in sorted(self.store.glob("*.json")):
            yield path.stem, json.loads(path.read_text())

    def list_runs(self, since: datetime | None = None) -> list[str]:
        """Every ended run (what ``mlaudit batch fake`` audits)."""
        return [
            ref
            for ref, doc in self._docs()
            if doc.get("status") != "running"
            and (since is None or datetime.fromisoformat(doc["ended"]) > since)
        ]

    def list_finished(self, since: datetime | None = None, **options) -> list[str]:
        """Ended runs without a verdict (what ``mlaudit watch fake`` audits)."""
        return [
            ref
            for ref in self.list_runs(since)
            if "mlaudit.verdict" not in dict(self._docs()).get(ref, {}).get("tags", {})
        ]
