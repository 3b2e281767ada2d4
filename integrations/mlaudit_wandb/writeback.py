"""Write a verdict back onto a W&B run, inside mlaudit's own namespace only.

What is written (a second audit replaces each item, never adds a second one):

* tags: one ``mlaudit:<outcome>`` tag; earlier ``mlaudit:*`` tags are removed,
  the user's tags kept;
* summary keys under ``mlaudit/``: ``verdict``, ``cause``, ``confidence``,
  ``codes``, ``version``, and ``run_state`` (the run state that was judged: the
  loop guard of auto-triage);
* the run notes: an mlaudit section between the markers of
  :func:`mlaudit_core.writeback.merge_section`, the user's text kept;
* files ``mlaudit/report.json``, ``mlaudit/report.md`` (and ``mlaudit/report.html``
  when the HTML renderer is installed), overwritten in place;
* optionally a report panel: the HTML report logged as ``wandb.Html`` under the
  history key ``mlaudit/report``. Logging needs ``wandb.init(id=..., resume="must")``,
  which **sets the run's state to running and back** when it finishes: a
  run-state automation fires again, the run's heartbeat and runtime move, and a
  failed/crashed run is finished with exit code 1 so it stays ``failed``. The
  panel is skipped when the same report is already logged (``mlaudit/report_sha``),
  and ``--no-panel`` avoids the resume altogether.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from mlaudit_core import __version__
from mlaudit_core.report import AuditReport
from mlaudit_core.writeback import WriteBackResult, merge_section, summary_section

from .online import RunPath, fetch_run, sdk_errors

TAG_PREFIX = "mlaudit:"
SUMMARY_PREFIX = "mlaudit/"
PANEL_KEY = "mlaudit/report"

_UPDATE_TAGS_NOTES = """
mutation UpsertBucket($id: String!, $tags: [String!], $notes: String) {
    upsertBucket(input: {id: $id, tags: $tags, notes: $notes}) {
        bucket { id }
    }
}
"""


def verdict_summary(report: AuditReport, run_state: str) -> dict[str, object]:
    """The ``mlaudit/*`` summary keys for a report."""
    v = report.verdict
    return {
        f"{SUMMARY_PREFIX}verdict": v.outcome.value,
        f"{SUMMARY_PREFIX}cause": v.cause.value,
        f"{SUMMARY_PREFIX}confidence": round(float(v.confidence), 4),
        f"{SUMMARY_PREFIX}codes": ",".join(report.codes) or "none",
        f"{SUMMARY_PREFIX}version": __version__,
        f"{SUMMARY_PREFIX}run_state": run_state,
    }


def merged_tags(existing: list[str], report: AuditReport) -> list[str]:
    """The user's tags, in order, plus exactly one ``mlaudit:<outcome>`` tag."""
    return [t for t in existing if not t.startswith(TAG_PREFIX)] + \
        [f"{TAG_PREFIX}{report.verdict.outcome.value}"]


def report_files(report: AuditReport, run=None) -> dict[str, str]:
    """Report file name -> text: JSON, Markdown, and HTML when ``mlaudit_core.render.html`` exists."""
    from mlaudit_core.render import render_json, render_markdown

    files = {"report.json": render_json(report), "report.md": render_markdown(report)}
    html = render_html(report, run)
    if html is not None:
        files["report.html"] = html
    return files


def render_html(report: AuditReport, run=None) -> str | None:
    """The HTML report, or None when the renderer is missing or fails (the other files still go)."""
    try:
        from mlaudit_core.render.html import render_html as _render  # being added by the HTML work
    except ImportError:
        return None
    try:
        return _render(report, run)
    except Exception:  # a broken optional renderer must not block the verdict write-back
        return None


def already_judged(summary: dict, state: str) -> bool:
    """True when mlaudit already wrote a verdict for this run in this state (the auto-triage loop guard)."""
    return bool(summary.get(f"{SUMMARY_PREFIX}verdict")) and \
        summary.get(f"{SUMMARY_PREFIX}run_state") == state


def write_back(api, path: RunPath, report: AuditReport, *, run_data=None, dry_run: bool = False,
               panel: bool = True) -> WriteBackResult:
    """Write the verdict onto the run ``path``; see the module docstring for what and why.

    Args:
        api: a ``wandb.Api``.
        path: the run.
        report: the audit report.
        run_data: the RunData the report came from (used by the HTML renderer's plots).
        dry_run: compute and return everything, write nothing.
        panel: also log the HTML report panel (resumes the run; see module docstring).

    Returns:
        What was (or would be) written.

    Raises:
        InputError: the run vanished, or the server refused a write.
    """
    what = str(path)
    files = report_files(report, run_data)
    notes_section = summary_section(report)
    wrun = fetch_run(api, path)
    with sdk_errors(what):
        state = wrun.state
        tags = merged_tags(list(wrun.tags or []), report)
        notes = merge_section(wrun.notes, notes_section)
        summary = verdict_summary(report, state)
        result = WriteBackResult(tracker="wandb", run_id=path.run_id, dry_run=dry_run,
                                 tags={t: "" for t in tags if t.startswith(TAG_PREFIX)},
                                 artifacts=[f"mlaudit/{n}" for n in files], description=notes)
        result.tags.update({k: str(v) for k, v in summary.items()})
        html = files.get("report.html")
        sha = hashlib.sha256((html or files["report.md"]).encode()).hexdigest()[:16]
        current = dict(wrun.summary._json_dict) if hasattr(wrun.summary, "_json_dict") else {}
        do_panel = panel and html is not None and current.get(f"{SUMMARY_PREFIX}report_sha") != sha
        if panel and html is None:
            result.notes.append("report panel skipped: no HTML report (renderer missing or failed)")
        elif panel and not do_panel:
            result.notes.append("report panel unchanged: not logged again")
        if dry_run:
            if do_panel:
                result.notes.append(f"would resume the run to log {PANEL_KEY} (state {state} -> "
                                    f"running -> {state}; run-state automations fire again)")
            return result
        _update_tags_notes(wrun, tags, notes)
        _upload(wrun, files)
        if do_panel:
            summary[f"{SUMMARY_PREFIX}report_sha"] = sha
        wrun.summary.update(summary)
    if do_panel:
        _log_panel(path, html, state)
        result.notes.append(f"logged the report panel {PANEL_KEY} (the run was resumed)")
    return result


def _update_tags_notes(wrun, tags: list[str], notes: str) -> None:
    """Only tags and notes: ``Run.update()`` would also re-send the user's config."""
    service = getattr(wrun, "_service_api", None)
    if service is None:  # another SDK layout: the public, broader call
        wrun.tags, wrun.notes = tags, notes
        wrun.update()
        return
    service.execute_graphql(_UPDATE_TAGS_NOTES,
                            {"id": wrun.storage_id, "tags": tags, "notes": notes})
    wrun.tags, wrun.notes = tags, notes


def _upload(wrun, files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="mlaudit-wandb-") as tmp:
        root = Path(tmp)
        (root / "mlaudit").mkdir()
        for name, text in files.items():
            p = root / "mlaudit" / name
            p.write_text(text, encoding="utf-8")
            wrun.upload_file(str(p), root=str(root))


def _log_panel(path: RunPath, html: str, state: str) -> None:
    """Resume the run and log the HTML report under ``mlaudit/report`` (see module docstring)."""
    import wandb

    with sdk_errors(str(path)):
        run = wandb.init(entity=path.entity, project=path.project, id=path.run_id, resume="must",
                         settings=wandb.Settings(console="off", x_disable_stats=True,
                                                 x_disable_meta=True, silent=True))
        try:
            run.log({PANEL_KEY: wandb.Html(html, inject=False)})
        finally:
            run.finish(exit_code=0 if state == "finished" else 1)

