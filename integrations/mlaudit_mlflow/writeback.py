"""Write an audit back onto an MLflow run, in mlaudit's namespace only.

* tags ``mlaudit.verdict``, ``mlaudit.cause``, ``mlaudit.confidence``, ``mlaudit.codes``,
  ``mlaudit.version`` (set_tag replaces: a second audit leaves one set);
* artifacts ``mlaudit/report.json``, ``mlaudit/report.md`` (and ``mlaudit/report.html``
  with its plots when the HTML renderer is installed), overwritten in place;
* the run Description (tag ``mlflow.note.content``): one section between the
  ``<!-- mlaudit:begin -->`` / ``<!-- mlaudit:end -->`` markers, the user's text kept.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mlaudit_core.render import render_json, render_markdown
from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult, merge_section, summary_section, verdict_tags

NOTE_TAG = "mlflow.note.content"
ARTIFACT_DIR = "mlaudit"


def report_files(report: AuditReport, run: RunData | None, out_dir: Path) -> list[str]:
    """Render the report files into ``out_dir``; returns their names."""
    files = {"report.json": render_json(report), "report.md": render_markdown(report)}
    try:
        from mlaudit_core.render.html import render_html_files
    except ImportError:
        render_html_files = None
    for name, text in files.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    names = list(files)
    if render_html_files is not None:
        try:
            names += render_html_files(report, run, out_dir)
        except Exception as exc:  # the JSON/Markdown report still lands; say what is missing
            import warnings

            warnings.warn(f"HTML report not written: {type(exc).__name__}: {exc}", stacklevel=2)
    return names


def write_verdict(client, run: RunData, report: AuditReport, *, dry_run: bool = False) -> WriteBackResult:
    """Tag the run, upload the report under ``mlaudit/`` and update the Description section."""
    run_id = run.identity.id
    tags = verdict_tags(report)
    current = client.get_run(run_id).data.tags.get(NOTE_TAG)
    description = merge_section(current, summary_section(report))
    result = WriteBackResult(tracker="mlflow", run_id=run_id, dry_run=dry_run, tags=tags,
                             description=description)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ARTIFACT_DIR
        out.mkdir()
        names = report_files(report, run, out)
        result.artifacts = [f"{ARTIFACT_DIR}/{n}" for n in names]
        if dry_run:
            return result
        from mlflow.entities import RunTag

        # artifacts first, then the Description, then the tags with mlaudit.verdict last: the
        # verdict tag alone marks a complete write-back (watchers rely on it after a crash)
        client.log_artifacts(run_id, str(out), artifact_path=ARTIFACT_DIR)
        client.log_batch(run_id, tags=[RunTag(NOTE_TAG, description)]
                         + [RunTag(k, v) for k, v in tags.items() if k != "mlaudit.verdict"])
        client.set_tag(run_id, "mlaudit.verdict", tags["mlaudit.verdict"])
    return result
