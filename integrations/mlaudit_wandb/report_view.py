"""The verdict as a W&B Report (``mlaudit wandb RUN --report``), through ``wandb-workspaces``.

A W&B Report is a saved page ("view") in the run's project: it needs no resume of the run, so
unlike the HTML panel (``--panel``) it leaves the run's state, heartbeat and run-state
automations alone. It is built with the ``wandb_workspaces.reports.v2`` API (the library W&B
publishes for Reports and workspaces; installed with ``mlaudit[wandb]``) and saved with
``Report.save()``, which sends the ``upsertView`` GraphQL mutation.

What the report holds (``build_report``):

* title ``mlaudit: <outcome> (<run name>)`` (W&B's limit: 128 characters), description the
  verdict's summary (cut at :data:`MAX_DESCRIPTION` characters);
* the verdict section mlaudit writes into the run notes (verdict, cause, confidence, the top
  findings, the next action: :func:`mlaudit_core.render.render_summary_markdown`, so both
  say the same, escaped the same way), then every warning/error finding with its message and the
  next actions;
* one panel grid whose run set is this run only (filter ``ID = <run id>``) with, for each
  finding whose evidence is a metric series (at most :data:`MAX_FINDING_PANELS`), a line plot of
  that metric zoomed on the finding's steps (the span plus :func:`zoom` padding either side),
  then line plots of the run's key metrics (training/validation loss and accuracy, learning
  rate... as the report's ``key_metrics`` name them) over the whole run (at most
  :data:`MAX_OVERVIEW_PANELS`);
* a link back to the run page.

A second audit updates the same report: its id is kept in the run summary as
``mlaudit/report_id`` (and its address as ``mlaudit/report_url``) and passed back to
``upsertView``; a report the user deleted meanwhile is created again.

Tests: ``tests/test_wandb_report.py`` drives the real library (wandb-workspaces 0.4.13, wandb
0.31) against ``tests/wandb_fake_server.py``, which implements the operations ``Report.save()``
sends (``Viewer``, ``ProjectInternalId``, ``GetProjects``, ``upsertView``) and ``view(id)``
for ``Report.from_url``, with the payload shapes of ``wandb_workspaces/reports/v2/gql.py``; no
real W&B server can run here.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from mlaudit_core.errors import InputError
from mlaudit_core.report import AuditReport, SeriesEvidence

from .online import RunPath, _first_line

#: Summary keys that remember the report between audits.
REPORT_ID_KEY = "mlaudit/report_id"
REPORT_URL_KEY = "mlaudit/report_url"
#: W&B's report title limit (``Report.title`` max_length in wandb-workspaces).
MAX_TITLE = 128
#: Characters of the verdict summary kept as the report's description (shown under the title).
MAX_DESCRIPTION = 400
#: Panels zoomed on findings, and whole-run panels of key metrics: a report one screen tall.
MAX_FINDING_PANELS = 6
MAX_OVERVIEW_PANELS = 4
#: The extra that installs the library.
INSTALL_HINT = "pip install 'mlaudit[wandb]' (wandb-workspaces)"


@dataclass
class SavedReport:
    """What :func:`save_report` did: the report's ``id`` and ``url``, and whether it was new."""

    id: str
    url: str
    created: bool


def available() -> bool:
    """True when ``wandb_workspaces.reports.v2`` imports."""
    try:
        import wandb_workspaces.reports.v2  # noqa: F401
    except ImportError:
        return False
    return True


def zoom(start: int, end: int, last_step: int | None) -> tuple[int, int]:
    """The x range of a panel zoomed on steps ``start..end``: the span plus, either side, half
    the span or 5% of the run's length (``last_step``), whichever is larger, at least 5 steps;
    never below step 0. The 5%/5-step figures are chosen so a one-step spike shows the curve
    around it, not a single point."""
    span = max(0, end - start)
    pad = max(span // 2, int(0.05 * last_step) if last_step else 0, 5)
    return max(0, start - pad), end + pad


def _last_step(report: AuditReport, run_data) -> int | None:
    if run_data is not None:
        steps = [
            int(run_data.metrics.series(k).steps.max())
            for k in run_data.metrics.keys
            if run_data.metrics.count(k)
        ]
        if steps:
            return max(steps)
    ends = [
        e.step_end
        for f in report.findings
        for e in f.evidence
        if isinstance(e, SeriesEvidence) and e.step_end is not None
    ]
    return max(ends) if ends else None


def _finding_panels(report: AuditReport, last_step: int | None, logged: set[str] | None):
    """(title, metric, (x_min, x_max)) per series evidence of the warning/error findings,
    most severe first, one per metric and range."""
    out, seen = [], set()
    for f in sorted(report.findings, key=lambda f: -f.severity.rank):
        if f.severity.rank < 1:
            continue
        for ev in f.evidence:
            if not isinstance(ev, SeriesEvidence) or ev.step_start is None:
                continue
            if logged is not None and ev.metric not in logged:
                continue  # derived in mlaudit (e.g. parsed from the console): no W&B series
            end = ev.step_end if ev.step_end is not None else ev.step_start
            rng = zoom(ev.step_start, end, last_step)
            if (ev.metric, rng) in seen:
                continue
            seen.add((ev.metric, rng))
            where = f"step {end}" if end == ev.step_start else f"steps {ev.step_start}-{end}"
            out.append((f"{f.code} {ev.metric}: {where}", ev.metric, rng))
            if len(out) >= MAX_FINDING_PANELS:
                return out
    return out


def build_report(report: AuditReport, path: RunPath, run_data=None):
    """The ``wandb_workspaces.reports.v2.Report`` for ``report`` (not saved).

    Raises:
        ImportError: wandb-workspaces is not installed.
    """
    import wandb_workspaces.reports.v2 as wr

    from mlaudit_core.render import render_summary_markdown
    from mlaudit_core.render.markdown import md_escape

    v = report.verdict
    name = report.run.name or path.run_id
    title = f"mlaudit: {v.outcome.value} ({name})"
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 2] + "…)"
    summary = " ".join(v.summary.split())
    description = (
        summary if len(summary) <= MAX_DESCRIPTION else summary[: MAX_DESCRIPTION - 1] + "…"
    )
    logged = set(run_data.metrics.keys) - set(run_data.derived) if run_data is not None else None
    last = _last_step(report, run_data)

    blocks: list = [wr.MarkdownBlock(text=render_summary_markdown(report))]
    findings = [f for f in report.findings if f.severity.rank >= 1]
    if findings:
        blocks.append(wr.H2(text="Findings"))
        blocks.append(
            wr.MarkdownBlock(
                text="\n".join(
                    f"- `{f.code}` **{f.severity.value}** {md_escape(f.name)}: {md_escape(f.message)}"
                    for f in findings
                )
            )
        )
    panels = [
        wr.LinePlot(title=t, x="Step", y=[m], range_x=rng)
        for t, m, rng in _finding_panels(report, last, logged)
    ]
    overview = [
        m["key"]
        for m in report.key_metrics.values()
        if isinstance(m.get("key"), str) and (logged is None or m["key"] in logged)
    ]
    panels += [
        wr.LinePlot(title=f"{k} (whole run)", x="Step", y=[k])
        for k in list(dict.fromkeys(overview))[:MAX_OVERVIEW_PANELS]
    ]
    if panels:
        blocks.append(wr.H2(text="Metrics at the findings"))
        blocks.append(
            wr.PanelGrid(
                runsets=[
                    wr.Runset(
                        entity=path.entity,
                        project=path.project,
                        name="this run",
                        filters=f"ID = '{path.run_id}'",
                    )
                ],
                panels=panels,
            )
        )
    if report.next_actions:
        blocks.append(wr.H2(text="Next actions"))
        blocks.append(
            wr.MarkdownBlock(
                text="\n".join(
                    f"{i}. {md_escape(a.action)} ({md_escape(a.why)})"
                    for i, a in enumerate(report.next_actions, 1)
                )
            )
        )
    if report.run.url:
        blocks.append(wr.P(text=[wr.Link(text="The run in W&B", url=report.run.url)]))
    return wr.Report(
        entity=path.entity,
        project=path.project,
        title=title,
        description=description,
        blocks=blocks,
    )


def save_report(
    report: AuditReport, path: RunPath, *, run_data=None, existing_id: str | None = None
) -> SavedReport:
    """Build and save the W&B Report; update ``existing_id`` when given and still there.

    Credentials are the SDK's (``WANDB_API_KEY``/``WANDB_BASE_URL``/``~/.netrc``), as for
    every other W&B call of mlaudit. The library's own "Saved report to" line is not printed.

    Raises:
        InputError: wandb-workspaces is missing, or the server refused the report.
    """
    try:
        rep = build_report(report, path, run_data)
    except ImportError:
        raise InputError(f"{path}: --report needs wandb-workspaces: {INSTALL_HINT}") from None
    except ValueError as exc:  # the library's validation, e.g. a project it cannot see
        raise InputError(f"{path}: W&B report not built: {_first_line(exc)}") from None
    created = True
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        if existing_id:
            rep.id = existing_id
            try:
                rep.save()
                created = False
            except Exception:  # noqa: BLE001 - deleted or not ours any more: a new one below
                rep.id = ""
        if created:
            try:
                rep.save()
            except Exception as exc:  # noqa: BLE001 - SDK and server errors have no common type
                raise InputError(f"{path}: W&B refused the report: {_first_line(exc)}") from None
    return SavedReport(rep.id, rep.url, created)
