"""Write a verdict back onto a W&B run, inside mlaudit's own namespace only.

What is written (a second audit replaces each item, never adds a second one):

* tags: one ``mlaudit:<outcome>`` tag; earlier ``mlaudit:*`` tags are removed,
  the user's tags kept;
* summary keys under ``mlaudit/``: ``verdict``, ``cause``, ``confidence``,
  ``codes``, ``version``, and ``run_state`` (the loop guard of auto-triage: the
  state the run is in once mlaudit is done with it: the state judged, or the
  state the panel's resume left it in, see below);
* the run notes: an mlaudit section between the markers of
  :func:`mlaudit_core.writeback.merge`, the user's text kept. Notes, tags and summary are
  read in one query after the report file is uploaded, merged, and written in **one**
  ``upsertBucket`` (notes, tags and the summary with the ``mlaudit/*`` keys); the notes are
  read once more after it only when they changed since the audit loaded the run (a save
  from a page loaded before the write would drop mlaudit's section; see
  :func:`mlaudit_core.writeback.write_section`);
* the file ``mlaudit/report.html`` (plots inline, the JSON report embedded), overwritten in
  place; ``report.json``, ``report.md`` and ``plots/*.svg`` too when ``MLAUDIT_REPORT_FILES``
  asks for them (:func:`mlaudit_core.writeback.report_files`). Requests per fresh run: the
  SDK's ``Run.upload_file`` per file (``CreateRunFiles``, the ``PUT``, ``RunFiles``), one
  ``RunWriteBack`` read, one ``UpsertBucket``: 5 (docs/automation.md);
* only when asked (``panel=True``, CLI ``--panel``; off by default: logging resumes the run) a
  report panel: the HTML report logged as ``wandb.Html`` under the
  history key ``mlaudit/report`` (one history row after the last step; the page
  is uploaded as ``media/html/mlaudit/report_<step>_<hash>.html``). Logging needs
  ``wandb.init(id=..., resume="must")``: W&B **marks the run running** while the
  resumed process streams and ends it again when it exits, ``finished`` for exit
  code 0, ``failed`` otherwise. mlaudit exits with 0 for a finished run and 1 for
  any other end state, so a finished run stays finished and a failed one failed,
  but a **crashed, killed or preempted run ends up failed**. A run-state
  automation fires again, the run's heartbeat moves, and the resumed process
  re-uploads ``config.yaml`` (same config). The resumed run's summary gets
  ``mlaudit/report_sha`` (see below) and ``mlaudit/run_state`` = the state it ends
  in, so the loop guard holds for the re-fired automation; a re-audit whose report
  says the same does not resume again. Without ``--panel`` nothing resumes the run.

* only when asked (``wandb_report=True``, CLI ``--report``) a W&B Report of the verdict with
  metric panels at the findings' steps, saved in the run's project through wandb-workspaces
  (:mod:`.report_view`); no resume. Its id and address go into ``mlaudit/report_id`` and
  ``mlaudit/report_url``; a second audit updates the same report.

Order: files, then notes, tags and the ``mlaudit/*`` summary keys in one ``upsertBucket``, so
a summary verdict (what the watcher and auto-triage check) means the write-back is complete.

Claims: :func:`claim_run` / :func:`release_claim` manage the summary key ``mlaudit/claim``
(``"<owner> <expiry epoch s>"``), a lease two watchers (or receivers) of one project use so
that only one of them audits, writes and notifies a run; the key is deleted once the verdict
is written. The summary is mlaudit's place on a W&B run that the user does not edit (tags and
notes are the user's); W&B has no conditional write, so the claim is compare-and-check like
MLflow's ``mlaudit.claim`` tag.

``mlaudit/report_sha`` is :func:`report_fingerprint`: a hash of what the page
says (verdict, findings, the run's status and point counts, mlaudit's version), not
of the page's bytes, which carry the run's duration and end time: the resume itself
moves those (W&B rewrites ``_runtime`` and the heartbeat), so a byte hash would make
every second audit log the panel again. The page also leaves mlaudit's own
``mlaudit:*`` tag out of its tag table (it is mlaudit's output, not run data).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from pathlib import Path

from mlaudit_core import __version__
from mlaudit_core.errors import InputError
from mlaudit_core.report import AuditReport
from mlaudit_core.sdk_private import wandb_graphql
from mlaudit_core.writeback import (
    WriteBackResult,
    merge,
    parse_claim,
    summary_section,
    write_section,
)

from .online import RunPath, _first_line, fetch_run, sdk_errors

TAG_PREFIX = "mlaudit:"
SUMMARY_PREFIX = "mlaudit/"
PANEL_KEY = "mlaudit/report"
#: Summary key of a watcher's lease on the run (``"<owner> <expiry epoch seconds>"``).
CLAIM_KEY = "mlaudit/claim"

_UPDATE_TAGS = """
mutation UpsertBucket($id: String!, $tags: [String!]) {
    upsertBucket(input: {id: $id, tags: $tags}) {
        bucket { id }
    }
}
"""
_UPDATE_NOTES_TAGS = """
mutation UpsertBucket($id: String!, $notes: String, $tags: [String!]) {
    upsertBucket(input: {id: $id, notes: $notes, tags: $tags}) {
        bucket { id }
    }
}
"""
_READ_SUMMARY = """
query RunSummary($project: String!, $entity: String!, $name: String!) {
    project(name: $project, entityName: $entity) {
        run(name: $name) { state summaryMetrics }
    }
}
"""
_UPDATE_SUMMARY = """
mutation UpsertBucket($id: String!, $summaryMetrics: JSONString) {
    upsertBucket(input: {id: $id, summaryMetrics: $summaryMetrics}) {
        bucket { id }
    }
}
"""
_UPDATE_ALL = """
mutation UpsertBucket($id: String!, $notes: String, $tags: [String!], $summaryMetrics: JSONString) {
    upsertBucket(input: {id: $id, notes: $notes, tags: $tags, summaryMetrics: $summaryMetrics}) {
        bucket { id }
    }
}
"""
_UPDATE_TAGS_SUMMARY = """
mutation UpsertBucket($id: String!, $tags: [String!], $summaryMetrics: JSONString) {
    upsertBucket(input: {id: $id, tags: $tags, summaryMetrics: $summaryMetrics}) {
        bucket { id }
    }
}
"""
_UPDATE_NOTES = """
mutation UpsertBucket($id: String!, $notes: String) {
    upsertBucket(input: {id: $id, notes: $notes}) {
        bucket { id }
    }
}
"""
_READ_WRITE_BACK = """
query RunWriteBack($project: String!, $entity: String!, $name: String!) {
    project(name: $project, entityName: $entity) {
        run(name: $name) { tags notes summaryMetrics }
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
    return [t for t in existing if not t.startswith(TAG_PREFIX)] + [
        f"{TAG_PREFIX}{report.verdict.outcome.value}"
    ]


def report_files(report: AuditReport, run=None, notes: list[str] | None = None) -> dict:
    """Report file name -> content (:func:`mlaudit_core.writeback.report_files`): ``report.html``
    with its plots and the JSON report, plus what ``MLAUDIT_REPORT_FILES`` asks for."""
    from mlaudit_core.writeback import report_files as shared

    return shared(report, run, notes=notes)


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


def report_fingerprint(report: AuditReport) -> str:
    """16 hex digits identifying what the report panel says, stable across re-audits of an
    unchanged run (``mlaudit/report_sha``).

    Covers mlaudit's version and report schema, the verdict (outcome, cause, confidence to
    4 places, inconclusive), each finding's code and severity, and the run's status and
    metric/point counts (new data changes it). Leaves out wall-clock values (duration, end
    time, timeline seconds, detector timings) that a resume or the audit itself moves.
    """
    v, run = report.verdict, report.run
    body = {
        "version": [report.tool_version or __version__, report.schema_version],
        "verdict": [
            v.outcome.value,
            v.cause.value,
            round(float(v.confidence), 4),
            bool(v.inconclusive),
        ],
        "findings": sorted([f.code, f.severity.value] for f in report.findings),
        "run": [run.status, run.n_metrics, run.n_points],
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def panel_end_state(state: str) -> tuple[int, str]:
    """(exit code the panel's resumed run finishes with, state W&B leaves the run in).

    W&B ends a run ``finished`` when its process exits with 0 and ``failed`` otherwise
    (a resumed run included), so only a finished run can stay what it was.
    """
    return (0, "finished") if state == "finished" else (1, "failed")


def already_judged(summary: dict, state: str) -> bool:
    """True when mlaudit already wrote a verdict for this run in this state (the auto-triage loop guard)."""
    return (
        bool(summary.get(f"{SUMMARY_PREFIX}verdict"))
        and summary.get(f"{SUMMARY_PREFIX}run_state") == state
    )


def write_back(
    api,
    path: RunPath,
    report: AuditReport,
    *,
    run_data=None,
    dry_run: bool = False,
    panel: bool = False,
    wandb_report: bool = False,
) -> WriteBackResult:
    """Write the verdict onto the run ``path``; see the module docstring for what and why.

    Args:
        api: a ``wandb.Api``.
        path: the run.
        report: the audit report.
        run_data: the RunData the report came from (used by the HTML renderer's plots).
        dry_run: compute and return everything, write nothing.
        panel: also log the HTML report panel (resumes the run; see module docstring). Off
            by default (``--panel`` opts in).
        wandb_report: also save the verdict as a W&B Report in the run's project (no resume;
            :mod:`.report_view`), after the summary keys; a re-audit updates the same report
            (``mlaudit/report_id``). ``--report`` opts in.

    Returns:
        What was (or would be) written.

    Raises:
        InputError: the run vanished, or the server refused a write.
    """
    what = str(path)
    if run_data is not None and any(t.startswith(TAG_PREFIX) for t in run_data.tags):
        # an earlier verdict tag is mlaudit's output, not run data: leave it off the page
        run_data = dataclasses.replace(
            run_data, tags={k: v for k, v in run_data.tags.items() if not k.startswith(TAG_PREFIX)}
        )
    from mlaudit_core.service.timing import timed

    with timed("render"):  # the batch summary's time split (service/timing.py)
        files = report_files(report, run_data)
    notes_section = summary_section(report)
    wrun = fetch_run(api, path)
    with sdk_errors(what):
        state = wrun.state
        tags = merged_tags(list(wrun.tags or []), report)
        summary = verdict_summary(report, state)
        result = WriteBackResult(
            tracker="wandb",
            run_id=path.run_id,
            dry_run=dry_run,
            tags={t: "" for t in tags if t.startswith(TAG_PREFIX)},
            artifacts=[f"mlaudit/{n}" for n in files],
        )
        result.tags.update({k: str(v) for k, v in summary.items()})
        page = files.get("report.html")
        html = page if isinstance(page, str) else None
        if html is None:
            result.notes.append("HTML report not written: report.json and report.md instead")
        sha = report_fingerprint(report)
        current = dict(wrun.summary_metrics or {})
        do_panel = panel and html is not None and current.get(f"{SUMMARY_PREFIX}report_sha") != sha
        if panel and html is None:
            result.notes.append("report panel skipped: no HTML report (renderer missing or failed)")
        elif panel and not do_panel:
            result.notes.append("report panel unchanged: not logged again")
        if dry_run:
            _describe(result, merge(wrun.notes, notes_section))
            if do_panel:
                result.notes.append(
                    f"would resume the run to log {PANEL_KEY} (state {state} -> "
                    f"running -> {panel_end_state(state)[1]}; run-state "
                    "automations fire again)"
                )
            if wandb_report:
                from .report_view import REPORT_ID_KEY

                verb = "update" if current.get(REPORT_ID_KEY) else "save"
                result.notes.append(
                    f"would {verb} the W&B Report of the verdict in {path.entity}/{path.project}"
                )
            return result
        # the slow part first; notes, tags and summary are read and written only after it
        _upload(wrun, files)
        # notes, tags and the summary read in one query as they are now, merged, and written in
        # one upsertBucket (the summary verdict in it marks the write-back complete)
        now: dict = {}

        def read_notes() -> str | None:
            now["tags"], notes, now["summary"] = _read_write_back(wrun)
            return notes

        def write_all(text: str) -> None:
            if now.get("written"):  # a re-merge after a save from an old page: the notes alone
                _write(wrun, _UPDATE_NOTES, notes=text)
                return
            _write_all(wrun, now, report, summary, notes=text)

        loaded = run_data.cache.get("wandb.notes_loaded") if run_data is not None else None

        def recheck(notes: str | None) -> bool:  # edited since the audit loaded the run
            return loaded is None or (notes or "") != loaded

        done = write_section(read_notes, write_all, notes_section, recheck=recheck)
        _describe(result, done.merged, verified=done.verified)
        if not now.get("written"):  # the notes held this section already: tags and summary
            _write_all(wrun, now, report, summary, notes=None)
    if wandb_report:
        _save_report(wrun, path, report, run_data, current, result)
    if do_panel and html is not None:
        end_state = _log_panel(path, html, state, sha)
        result.tags[f"{SUMMARY_PREFIX}run_state"] = end_state
        result.tags[f"{SUMMARY_PREFIX}report_sha"] = sha
        result.notes.append(
            f"logged the report panel {PANEL_KEY} (the run was resumed: "
            f"{state} -> running -> {end_state})"
        )
    return result


def _save_report(
    wrun, path: RunPath, report: AuditReport, run_data, current: dict, result: WriteBackResult
) -> None:
    """Save (or update) the W&B Report and remember it in ``mlaudit/report_id``/``_url``.

    Raises:
        InputError: the report was not saved (the verdict itself is written; the line says so).
    """
    from .report_view import REPORT_ID_KEY, REPORT_URL_KEY, save_report

    try:
        saved = save_report(
            report, path, run_data=run_data, existing_id=current.get(REPORT_ID_KEY) or None
        )
    except InputError as exc:
        raise InputError(f"{exc} (the verdict itself was written)") from None
    with sdk_errors(str(path)):
        _merge_summary(wrun, {REPORT_ID_KEY: saved.id, REPORT_URL_KEY: saved.url})
    result.tags[REPORT_URL_KEY] = saved.url
    result.notes.append(f"{'saved' if saved.created else 'updated'} the W&B Report {saved.url}")


def _describe(result: WriteBackResult, merged, *, verified: bool = True) -> None:
    result.description = merged.text if merged.section is not None else None
    result.section_state = (
        "left_out"
        if merged.section is None
        else "unverified"
        if not verified
        else "shortened"
        if merged.shortened
        else "written"
    )


def _read_write_back(wrun) -> tuple[list[str], str | None, dict]:
    """The run's tags, notes and summary as the server has them now, in one query."""
    from mlaudit_core.safeparse import loads_json

    data = wandb_graphql(
        wrun, _READ_WRITE_BACK, {"project": wrun.project, "entity": wrun.entity, "name": wrun.id}
    )
    if data is None:  # an SDK without the run's API client: reload the public object
        wrun.load(force=True)
        return list(wrun.tags or []), wrun.notes, dict(wrun.summary_metrics or {})
    run = ((data or {}).get("project") or {}).get("run") or {}
    raw = run.get("summaryMetrics") or "{}"
    summary = loads_json(raw) if isinstance(raw, (str, bytes)) else dict(raw)
    return (
        list(run.get("tags") or []),
        run.get("notes"),
        summary if isinstance(summary, dict) else {},
    )


def _write_all(wrun, now: dict, report: AuditReport, summary: dict, *, notes: str | None) -> None:
    """One ``upsertBucket``: ``notes`` (None: unchanged), the user's tags plus mlaudit's, and
    the summary as read (``now``) with the ``mlaudit/*`` keys; skipped when nothing would
    change (a re-audit with the same result)."""
    tags = merged_tags(now["tags"], report)
    merged_summary = {**now["summary"], **summary}
    now["written"] = True
    if notes is None and tags == now["tags"] and merged_summary == now["summary"]:
        return
    fields: dict = {"tags": tags, "summaryMetrics": json.dumps(merged_summary)}
    mutation = _UPDATE_TAGS_SUMMARY  # a mutation names only the fields it sends
    if notes is not None:
        fields["notes"], mutation = notes, _UPDATE_ALL
    if wandb_graphql(wrun, mutation, {"id": wrun.storage_id, **fields}) is None:
        # an SDK without the run's API client: the public, broader calls
        _write(
            wrun, _UPDATE_NOTES_TAGS, **{k: v for k, v in fields.items() if k != "summaryMetrics"}
        )
        wrun.summary.update(summary)


def _read_tags_notes(wrun) -> tuple[list[str], str | None]:
    """The run's tags and notes as the server has them now (not the cached ``Run``)."""
    tags, notes, _ = _read_write_back(wrun)
    return tags, notes


def _write(wrun, mutation: str, **fields) -> None:
    """Only tags or notes: ``Run.update()`` would also re-send the user's config. A field
    given as None is left as it is."""
    fields = {k: v for k, v in fields.items() if v is not None}
    for k, v in fields.items():
        setattr(wrun, k, v)
    if wandb_graphql(wrun, mutation, {"id": wrun.storage_id, **fields}) is None:
        wrun.update()  # an SDK without the run's API client: the public, broader call


def _upload(wrun, files: dict) -> None:
    from mlaudit_core.render.html import write_files

    with tempfile.TemporaryDirectory(prefix="mlaudit-wandb-") as tmp:
        root = Path(tmp)
        for name in write_files(files, root / "mlaudit"):
            wrun.upload_file(str(root / "mlaudit" / name), root=str(root))


def _log_panel(path: RunPath, html: str, state: str, sha: str) -> str:
    """Resume the run, log the HTML report under ``mlaudit/report`` and finish it again.

    The resumed run's summary gets ``mlaudit/report_sha`` = ``sha`` and
    ``mlaudit/run_state`` = the state the run ends in (see :func:`panel_end_state`),
    in the same file-stream session that ends the run, so a run-state automation
    the resume re-fires already sees the loop guard. The SDK's run directory is a
    temporary one (nothing is left in the working directory); the process's pip
    list is not uploaded over the training's ``requirements.txt``; an active run of
    the calling process is left alone (``reinit="create_new"``); ``mode="online"``
    whatever ``WANDB_MODE`` says, since the panel is only useful on the server.

    Returns:
        The state the run is left in.

    Raises:
        InputError: the run cannot be resumed or the server refused (the verdict,
            tags, notes and files are written already; the line says so).
    """
    import wandb

    exit_code, end_state = panel_end_state(state)
    what = f"{path} (report panel; the verdict itself was written)"
    with tempfile.TemporaryDirectory(
        prefix="mlaudit-wandb-panel-", ignore_cleanup_errors=True
    ) as tmp:
        try:
            with sdk_errors(what):
                run = wandb.init(
                    entity=path.entity,
                    project=path.project,
                    id=path.run_id,
                    resume="must",
                    mode="online",
                    dir=tmp,
                    reinit="create_new",
                    settings=wandb.Settings(
                        console="off",
                        x_disable_stats=True,
                        x_disable_meta=True,
                        x_save_requirements=False,
                        save_code=False,
                        silent=True,
                    ),
                )
                try:
                    run.log({PANEL_KEY: wandb.Html(html, inject=False)})
                    run.summary[f"{SUMMARY_PREFIX}report_sha"] = sha
                    run.summary[f"{SUMMARY_PREFIX}run_state"] = end_state
                finally:
                    run.finish(exit_code=exit_code)
        except wandb.errors.Error as exc:  # e.g. "Error initializing run": no sdk_errors type
            raise InputError(f"{what}: W&B refused the resume: {_first_line(exc)}") from None
    return end_state


def _merge_summary(wrun, keys: dict) -> None:
    """Set ``keys`` in the run's summary as the server has it now. ``wrun.summary.update``
    would send the summary the (cached) ``Run`` object held when the audit loaded it, and
    W&B replaces the summary whole: a key the user set during the audit was dropped."""
    summary, _ = _read_summary(wrun)
    summary.update(keys)
    _write_summary(wrun, summary)


def _read_summary(wrun) -> tuple[dict, str]:
    """The run's summary and state as the server has them now (the SDK caches ``Run`` objects)."""
    from mlaudit_core.safeparse import loads_json

    data = wandb_graphql(
        wrun, _READ_SUMMARY, {"project": wrun.project, "entity": wrun.entity, "name": wrun.id}
    )
    if data is None:  # an SDK without the run's API client: reload the public object
        wrun.load(force=True)
        return dict(wrun.summary_metrics or {}), wrun.state
    run = ((data or {}).get("project") or {}).get("run") or {}
    raw = run.get("summaryMetrics") or "{}"
    summary = loads_json(raw) if isinstance(raw, (str, bytes)) else dict(raw)
    return (summary if isinstance(summary, dict) else {}), run.get("state") or wrun.state


def _write_summary(wrun, summary: dict) -> None:
    """Replace the run's summary with ``summary`` (W&B's ``upsertBucket`` replaces it whole:
    the SDK's own ``del run.summary[key]`` relies on that)."""
    if (
        wandb_graphql(
            wrun, _UPDATE_SUMMARY, {"id": wrun.storage_id, "summaryMetrics": json.dumps(summary)}
        )
        is None
    ):
        wrun.summary.update(summary)  # an SDK without the run's API client: public, adds keys


def _claim_holder(summary: dict) -> tuple[str, float] | None:
    return parse_claim(summary.get(CLAIM_KEY))


def claim_run(
    api, path: RunPath, owner: str, *, lease_s: float = 900.0, settle_s: float = 0.5
) -> str | None:
    """Claim the run for ``owner`` with the summary key ``mlaudit/claim``; None when taken,
    else why not (one line).

    A claim of another owner that has not expired is refused. Otherwise the key is set to
    ``"<owner> <expiry>"`` and read back after ``settle_s`` seconds: two watchers setting it
    at the same moment both read the last value written, so only one sees its own
    (compare-and-check; W&B has no conditional write). A run whose summary gained a verdict
    for its current state meanwhile (another watcher wrote it) is refused too. The lease
    covers one audit and write-back (default 15 min); a watcher killed mid-way leaves a claim
    that expires and the run is then taken over.

    Raises:
        InputError: the run vanished, or the server refused the call.
        TrackerUnavailable: the server could not be reached.
    """
    import time

    wrun = fetch_run(api, path)
    with sdk_errors(str(path)):
        now = time.time()
        summary, _ = _read_summary(wrun)
        held = _claim_holder(summary)
        if held is not None and held[0] != owner and held[1] > now:
            return f"claimed by another mlaudit watcher ({held[0]}) until {time.ctime(held[1])}"
        summary[CLAIM_KEY] = f"{owner} {now + lease_s:.0f}"
        _write_summary(wrun, summary)
        time.sleep(settle_s)
        summary, state = _read_summary(wrun)
        held = _claim_holder(summary)
        if held is None or held[0] != owner:
            return f"claimed by another mlaudit watcher ({held[0] if held else 'unknown'})"
        if already_judged(summary, state):
            _release(wrun, owner)
            return "a verdict was written meanwhile (another mlaudit watcher)"
    return None


def _release(wrun, owner: str) -> None:
    summary, _ = _read_summary(wrun)
    held = _claim_holder(summary)
    if held is not None and held[0] == owner:
        del summary[CLAIM_KEY]
        _write_summary(wrun, summary)


def release_claim(api, path: RunPath, owner: str) -> None:
    """Delete the run's ``mlaudit/claim`` when it is ``owner``'s (best effort, never raises)."""
    try:
        _release(fetch_run(api, path), owner)
    except Exception:  # an expired claim is harmless; the verdict is written
        pass
