"""Write an audit back onto a ClearML task, visible in the web UI, in mlaudit's namespace only.

What is written (every item is replaced by the next audit, nothing accumulates):

* labels ``mlaudit:<outcome>`` and ``mlaudit:<cause>`` (earlier ``mlaudit:`` labels
  removed, the user's labels kept), in the same forced ``tasks.edit`` as the comment;
* user properties ``mlaudit.verdict``, ``mlaudit.cause``, ``mlaudit.confidence``,
  ``mlaudit.codes``, ``mlaudit.version`` and, for a task that has ended,
  ``mlaudit.ended``: the ``status_changed`` of the ending audited (the one the watcher
  loaded, ``run.cache[ENDED_CACHE]``; else the task's own), in the ``properties`` section
  (``tasks.edit_hyper_params``, merged by name, as ``Task.set_user_properties`` sends them);
  the server accepts properties on any status and they do not move ``last_update``.
  They are written **last**, in one call, once everything below is written, so they mark
  a complete write-back for that ending: ``mlaudit watch clearml`` skips a task whose
  ``mlaudit.ended`` is its current ``status_changed``, and audits again a task reset and
  run again (it keeps the labels and properties of its earlier audit);
* the task comment (INFO > description): one section between mlaudit's markers
  (:data:`mlaudit_core.writeback.BEGIN`/``END``), the user's text kept, with links to the
  report files. The comment and labels are read (``tasks.get_by_id``), merged and written
  (one forced ``tasks.edit``) after the uploads; the comment is read once more after the edit
  only when it changed since the audit loaded the task (a save from a page loaded before the
  edit would drop mlaudit's section; :func:`mlaudit_core.writeback.write_section`);
* a report panel under the title ``mlaudit``: the HTML report as the debug sample
  ``mlaudit/report`` (DEBUG SAMPLES), the key curves with the findings' step
  windows as plotly plots and the summary as a table (PLOTS). All are reported at
  iteration 0 with fixed names, so the server's event ids
  (md5 of task-iter-metric-variant-key) are the same each time and replace the
  previous panel;
* the report file ``report.html`` (plots inline, the JSON report embedded; ``report.json``,
  ``report.md`` and ``plots/*.svg`` too when ``MLAUDIT_REPORT_FILES`` asks for them,
  :func:`mlaudit_core.writeback.report_files`), uploaded with
  ``StorageManager`` to a fixed place in the task's folder on the file server
  (``<files>/<project>/<task name>.<task id>/mlaudit/``), overwritten each time;
  they are also registered as artifacts ``mlaudit/report.*`` where the server's
  status rules allow it. clearml-server registers artifacts only on ``created``
  tasks, or ``in_progress`` ones with ``force`` (``apiserver/bll/task/utils.py
  get_task_for_update``); the SDK sends the request with ``raise_on_errors=False``
  and drops the 400/110 it gets for a completed task, so the write-back checks
  the registration by re-reading the task and otherwise relies on the uploaded
  files, linked from the comment.

A published (or publishing) task is read-only: :class:`WriteBackRefused` is
raised before anything is written (a task published during the write-back: before the
comment, labels and properties).

Requests per ended task (``tests/test_writeback_requests_trackers.py``): the SDK's
``Task.get_task`` (``tasks.get_by_id``, ``projects.get_by_id``; its task document gives the
status, labels and comment checked first), one file-server upload per report file (one by
default), ``events.add_batch`` (the panel), ``tasks.get_by_id`` (the comment and labels as
they are after the uploads), one forced ``tasks.edit`` (comment and labels),
``tasks.edit_hyper_params`` (the properties, last): 7. One more ``tasks.get_by_id`` after the
edit when the comment changed since the audit loaded the task.

Claims: :func:`claim_task` / :func:`release_claim` manage the user property
``mlaudit.claim`` (``"<owner> <expiry epoch s>"``), a lease two watchers of one project use
so that only one of them audits, writes and notifies a task; it is deleted once the verdict
is written. It is set with ``tasks.edit_hyper_params`` on the ``properties`` section alone
(the server accepts that on any status and merges it by name: the user's other properties
are untouched) and read back with ``tasks.get_hyper_params``; clearml-server has no
conditional write, so the claim is compare-and-check like MLflow's ``mlaudit.claim`` tag.
"""

from __future__ import annotations

import html
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from mlaudit_core.errors import WriteBackRefused
from mlaudit_core.render import render_markdown
from mlaudit_core.report import AuditReport, SeriesEvidence
from mlaudit_core.roles import Role
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import (
    WriteBackResult,
    merge,
    parse_claim,
    report_files,
    summary_section,
    verdict_tags,
    write_section,
)

from . import mapping
from .loader import get_task

TITLE = "mlaudit"
ARTIFACT_PREFIX = "mlaudit/"
#: The user property naming the ending (``status_changed``) whose verdict the task carries.
ENDED_PROPERTY = "mlaudit.ended"
#: ``RunData.cache`` key: the ``status_changed`` of the task as loaded for the audit.
ENDED_CACHE = "clearml.status_changed"
#: The user property holding a watcher's lease on the task (``"<owner> <expiry epoch s>"``).
CLAIM_PROPERTY = "mlaudit.claim"
#: Points per plotted curve (min/max decimation): a display limit, not an analysis one.
PLOT_POINTS = 2_000
_PLOTS = (  # (series name, roles drawn in one figure)
    ("loss", (Role.TRAIN_LOSS, Role.VAL_LOSS)),
    ("accuracy", (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY)),
    ("learning rate", (Role.LEARNING_RATE,)),
    ("grad norm", (Role.GRAD_NORM,)),
    ("step and data time", (Role.STEP_TIME, Role.DATA_TIME)),
    ("throughput", (Role.THROUGHPUT,)),
    ("utilisation", (Role.GPU_UTIL, Role.CPU_UTIL)),
)


def new_labels(current: list[str] | None, report: AuditReport) -> list[str]:
    """The user's labels plus ``mlaudit:<outcome>`` and ``mlaudit:<cause>`` (earlier ones dropped)."""
    keep = [t for t in current or [] if not str(t).startswith(mapping.LABEL_PREFIX)]
    ours = [
        f"{mapping.LABEL_PREFIX}{report.verdict.outcome.value}",
        f"{mapping.LABEL_PREFIX}{report.verdict.cause.value}",
    ]
    return keep + [t for i, t in enumerate(ours) if t not in ours[:i]]


def report_html(report: AuditReport, run: RunData | None, notes: list[str] | None = None) -> str:
    """The HTML report (``mlaudit_core.render.html`` when installed, else the Markdown in a page).

    A failing HTML renderer costs the styled page, never the write-back: the
    Markdown page is used and ``notes`` says why.
    """
    try:
        from mlaudit_core.render.html import render_html
    except ImportError:
        render_html = None
    if render_html is not None:
        try:
            return render_html(report, run)
        except Exception as exc:
            if notes is not None:
                notes.append(
                    f"HTML renderer failed ({type(exc).__name__}: {exc}); the panel shows the "
                    "Markdown report"
                )
    title = html.escape(f"mlaudit report: {report.run.name or report.run.id}")
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8"><title>' + title + "</title></head>"
        '<body><pre style="white-space: pre-wrap; font-family: monospace">'
        + html.escape(render_markdown(report))
        + "</pre></body></html>\n"
    )


def _decimate(steps: np.ndarray, values: np.ndarray, n: int = PLOT_POINTS) -> tuple[list, list]:
    m = np.isfinite(values)
    steps, values = steps[m], values[m]
    if len(values) > n:
        chunks = np.array_split(np.arange(len(values)), n // 2)
        idx = np.unique(
            np.concatenate(
                [[c[np.argmin(values[c])], c[np.argmax(values[c])]] for c in chunks if len(c)]
            )
        )
        steps, values = steps[idx], values[idx]
    return steps.tolist(), values.tolist()


def key_plots(run: RunData, report: AuditReport) -> dict[str, dict]:
    """Plotly figures (dicts) of the key curves, with each finding's step window shaded."""
    figures: dict[str, dict] = {}
    for name, roles in _PLOTS:
        keys = [k for k in dict.fromkeys(run.key_for(r) for r in roles) if k]
        if not keys:
            continue
        data = []
        for key in keys:
            s = run.series(key).by_step()
            x, y = _decimate(s.steps, s.values)
            if x:
                data.append({"type": "scatter", "mode": "lines", "name": key, "x": x, "y": y})
        if not data:
            continue
        shapes, notes = [], []
        for f in report.findings:
            for ev in f.evidence:
                if (
                    isinstance(ev, SeriesEvidence)
                    and ev.metric in keys
                    and ev.step_start is not None
                ):
                    x1 = ev.step_end if ev.step_end is not None else ev.step_start
                    shapes.append(
                        {
                            "type": "rect",
                            "xref": "x",
                            "yref": "paper",
                            "x0": ev.step_start,
                            "x1": x1,
                            "y0": 0,
                            "y1": 1,
                            "fillcolor": "rgba(214,39,40,0.15)",
                            "line": {"width": 0},
                        }
                    )
                    notes.append(
                        {
                            "x": ev.step_start,
                            "y": 1,
                            "xref": "x",
                            "yref": "paper",
                            "showarrow": False,
                            "xanchor": "left",
                            "yanchor": "top",
                            "text": f.code,
                        }
                    )
        figures[name] = {
            "data": data,
            "layout": {
                "title": f"{name} ({report.verdict.outcome.value})",
                "xaxis": {"title": "iteration"},
                "yaxis": {"title": name},
                "shapes": shapes,
                "annotations": notes,
            },
        }
    return figures


def summary_table(report: AuditReport) -> list[list[str]]:
    v = report.verdict
    rows = [
        ["item", "value"],
        ["verdict", v.outcome.value],
        ["cause", v.cause.value],
        ["confidence", f"{v.confidence:.2f}"],
        ["summary", v.summary],
    ]
    rows += [
        [f"{f.code} ({f.severity.value})", f.message]
        for f in report.findings
        if f.severity.rank >= 1
    ][:10]
    if report.next_actions:
        rows.append(["next action", report.next_actions[0].action])
    return rows


def task_folder(task) -> str:
    """``<files>/<project>/<task name>.<task id>``: where the SDK itself puts a task's files."""
    base = (task.get_logger().get_default_upload_destination() or "").rstrip("/")
    if not base:
        raise WriteBackRefused(
            "no ClearML files server configured (api.files_server): the report panel "
            "cannot be uploaded"
        )
    return f"{base}/{task.get_project_name() or 'project'}/{task.name}.{task.id}".replace(" ", "_")


def write_verdict(
    session, run: RunData, report: AuditReport, *, dry_run: bool = False, panel: bool = True
) -> WriteBackResult:
    """Write the verdict onto the task (see the module docstring for what and where).

    Raises:
        WriteBackRefused: the task is published; nothing was written.
        InputError: the task disappeared, or a server call failed.
    """
    task: Any = None
    if dry_run:
        doc = get_task(session, run.identity.id)
    else:  # the SDK's own read of the task gives its status, labels and comment
        from clearml import Task

        try:
            task = Task.get_task(task_id=run.identity.id)
        except ValueError as exc:  # the SDK's "could not find task id=..."
            from mlaudit_core.errors import InputError

            raise InputError(f"ClearML task {run.identity.id}: {exc}") from None
        doc = _task_doc(task)
    status = doc.get("status") or "unknown"
    if status in mapping.LOCKED_STATUSES:
        raise WriteBackRefused(
            f"ClearML task {run.identity.id} is {status}: published tasks are read-only, "
            "so nothing was written back (clone it to record a verdict)"
        )
    labels = new_labels(doc.get("tags"), report)
    props = verdict_tags(report)
    ended = run.cache.get(ENDED_CACHE) or (
        doc.get("status_changed") if status in mapping.FINISHED_STATUSES else None
    )
    result = WriteBackResult(
        tracker="clearml", run_id=run.identity.id, dry_run=dry_run, tags=dict(props)
    )
    if ended:
        result.tags[ENDED_PROPERTY] = str(ended)
    result.notes.append(
        "labels: " + ", ".join(t for t in labels if t.startswith(mapping.LABEL_PREFIX))
    )
    files = report_files(report, run, notes=result.notes)
    if "report.html" not in files:  # the renderer failed: the panel shows the Markdown page
        files = {"report.html": report_html(report, run, result.notes), **files}
    if dry_run:
        result.artifacts = [ARTIFACT_PREFIX + n for n in files]
        merged = merge(doc.get("comment"), summary_section(report))
        result.description, result.section_state = merged.text, "written"
        if panel:
            result.notes.append(
                f"report panel: debug sample {TITLE}/report, plots "
                + ", ".join(f"{TITLE}/{n}" for n in key_plots(run, report))
            )
        return result

    from clearml import StorageManager

    assert task is not None  # read above when not a dry run
    folder = f"{task_folder(task)}/mlaudit"
    urls: dict[str, str] = {}
    from mlaudit_core.render.html import write_files

    with tempfile.TemporaryDirectory(prefix="mlaudit-clearml-") as tmp:
        for name in write_files(files, Path(tmp)):
            local = Path(tmp) / name
            urls[name] = StorageManager.upload_file(
                str(local), f"{folder}/{name}", wait_for_upload=True
            )
        registered = _register_artifacts(task, Path(tmp), files, status)
    if panel:
        logger = task.get_logger()
        logger.report_media(TITLE, "report", iteration=0, url=urls["report.html"])
        plots = key_plots(run, report)
        for name, fig in plots.items():
            logger.report_plotly(TITLE, name, figure=fig, iteration=0)
        logger.report_table(TITLE, "summary", iteration=0, table_plot=summary_table(report))
        task.flush(wait_for_uploads=True)
        result.notes.append(
            f"report panel: debug sample {TITLE}/report, plots "
            + ", ".join(f"{TITLE}/{n}" for n in [*plots, "summary"])
        )
    result.artifacts = [ARTIFACT_PREFIX + n for n in (registered or files)]
    if not registered:
        result.notes.append(
            f"the task is {status}: ClearML accepts new artifacts only on created or running "
            f"tasks, so the report files were uploaded to {folder}/ and linked from the comment"
        )
    links = " · ".join(f"[{n}]({u})" for n, u in urls.items())
    from .connection import call

    # the comment and the labels in one forced tasks.edit, merged with the user's as they are
    # now (one tasks.get_by_id read after the slow uploads; the re-read that verifies the
    # comment gives the labels for a re-merge): read, edit, read
    now: dict = {}

    def edit(**fields) -> None:  # forced: a completed task takes a comment and labels
        call(
            session, "tasks.edit", what=run.identity.id, task=run.identity.id, force=True, **fields
        )

    def read_comment() -> str | None:
        now["doc"] = get_task(session, run.identity.id)
        locked = now["doc"].get("status")
        if locked in mapping.LOCKED_STATUSES:
            raise WriteBackRefused(
                f"ClearML task {run.identity.id} became {locked} during the write-back: the "
                f"report files are in {folder}/, the comment, labels and properties were not "
                "written"
            )
        return now["doc"].get("comment")

    def write_comment_and_labels(text: str) -> None:
        if now.get("labelled"):  # a re-merge after a save from an old page: the comment alone
            edit(comment=text)
            return
        edit(comment=text, tags=new_labels(now["doc"].get("tags"), report))
        now["labelled"] = True

    loaded = run.cache.get("clearml.comment_loaded")

    def recheck(comment: str | None) -> bool:  # edited since the audit loaded the task
        return loaded is None or (comment or "") != loaded

    done = write_section(
        read_comment,
        write_comment_and_labels,
        summary_section(report) + f"\n\nReport files: {links}",
        recheck=recheck,
    )
    result.description = done.merged.text
    result.section_state = "written" if done.verified else "unverified"
    labels_now = new_labels(now["doc"].get("tags"), report)
    if not now.get("labelled") and labels_now != list(now["doc"].get("tags") or []):
        edit(tags=labels_now)  # the comment held this section already: the labels alone
    # last, in one call: the properties mark the write-back for this ending complete. Sent
    # as the claim is (the properties section merged by name); ``Task.set_user_properties``
    # sends the same request and then reads the whole task again
    call(
        session,
        "tasks.edit_hyper_params",
        what=run.identity.id,
        task=run.identity.id,
        replace_hyperparams="none",
        hyperparams=[
            {
                "section": "properties",
                "name": k,
                "type": "str",
                "value": v,
                "description": "written by mlaudit",
            }
            for k, v in result.tags.items()
        ],
    )
    return result


def _task_doc(task) -> dict:
    """The fields of a task document the write-back checks first (status, labels, comment,
    ``status_changed``), from the SDK ``Task``'s data as ``Task.get_task`` read it."""
    data = task.data
    status = getattr(data, "status", None)
    changed = getattr(data, "status_changed", None)
    return {
        "status": str(getattr(status, "value", status) or "unknown"),
        "tags": list(getattr(data, "tags", None) or []),
        "comment": getattr(data, "comment", None),
        "status_changed": changed.isoformat() if isinstance(changed, datetime) else changed,
    }


def _register_artifacts(task, folder: Path, files: dict[str, str], status: str) -> list[str]:
    """Register the report files as artifacts where the server allows it; the names registered."""
    if status not in ("created", "in_progress"):
        return []  # the server refuses (400/110) and the SDK would hide it: do not try
    for name in files:
        task.upload_artifact(
            ARTIFACT_PREFIX + name, artifact_object=str(folder / name), wait_on_upload=True
        )
    task.reload()
    have = set(task.artifacts)
    # the status may have changed meanwhile, in which case the SDK swallowed the refusal: check
    return [n for n in files if ARTIFACT_PREFIX + n in have]


def _properties(session, task_id: str) -> dict[str, str]:
    """The task's user properties (section ``properties``) as the server has them now."""
    from .connection import call

    data = call(session, "tasks.get_hyper_params", what=task_id, tasks=[task_id])
    out: dict[str, str] = {}
    for entry in data.get("params") or []:
        for p in entry.get("hyperparams") or []:
            if (p.get("section") or "").lower() == "properties" and p.get("name"):
                out[p["name"]] = p.get("value")
    return out


def _claim_holder(props: dict[str, str]) -> tuple[str, float] | None:
    return parse_claim(props.get(CLAIM_PROPERTY))


def claim_task(
    session,
    task_id: str,
    owner: str,
    *,
    lease_s: float = 900.0,
    settle_s: float = 0.5,
    ended: str | None = None,
) -> str | None:
    """Claim the task for ``owner`` with the user property ``mlaudit.claim``; None when taken,
    else why not (one line).

    A claim of another owner that has not expired is refused. Otherwise the property is set
    to ``"<owner> <expiry>"`` and read back after ``settle_s`` seconds: two watchers setting
    it at the same moment both read the last value written, so only one sees its own
    (compare-and-check; clearml-server has no conditional write). ``ended``: the
    ``status_changed`` of the ending being audited; a task whose ``mlaudit.ended`` became
    that ending meanwhile (another watcher wrote its verdict) is refused too. The lease covers
    one audit and write-back (default 15 min); a watcher killed mid-way leaves a claim that
    expires and the task is then taken over.

    Raises:
        InputError: the task is gone, or the server refused the call.
        TrackerUnavailable: the server could not be reached or failed (5xx).
    """
    import time

    from .connection import call

    now = time.time()
    held = _claim_holder(_properties(session, task_id))
    if held is not None and held[0] != owner and held[1] > now:
        return f"claimed by another mlaudit watcher ({held[0]}) until {time.ctime(held[1])}"
    call(
        session,
        "tasks.edit_hyper_params",
        what=task_id,
        task=task_id,
        replace_hyperparams="none",
        hyperparams=[
            {
                "section": "properties",
                "name": CLAIM_PROPERTY,
                "type": "str",
                "value": f"{owner} {now + lease_s:.0f}",
                "description": "written by mlaudit: a watcher's lease on this task",
            }
        ],
    )
    time.sleep(settle_s)
    props = _properties(session, task_id)
    held = _claim_holder(props)
    if held is None or held[0] != owner:
        return f"claimed by another mlaudit watcher ({held[0] if held else 'unknown'})"
    written = props.get(ENDED_PROPERTY)
    if ended and written and _same_time(written, ended) and "mlaudit.verdict" in props:
        release_claim(session, task_id, owner)
        return "a verdict was written meanwhile (another mlaudit watcher)"
    return None


def _same_time(a: str, b: str) -> bool:
    x, y = mapping.parse_time(a), mapping.parse_time(b)
    return x == y if x is not None and y is not None else str(a) == str(b)


def release_claim(session, task_id: str, owner: str) -> None:
    """Delete the task's ``mlaudit.claim`` when it is ``owner``'s (best effort, never raises)."""
    from .connection import call

    try:
        held = _claim_holder(_properties(session, task_id))
        if held is not None and held[0] == owner:
            call(
                session,
                "tasks.delete_hyper_params",
                what=task_id,
                task=task_id,
                hyperparams=[{"section": "properties", "name": CLAIM_PROPERTY}],
            )
    except Exception:  # an expired claim is harmless; the verdict is written
        pass
