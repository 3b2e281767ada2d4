"""Experiment triage on W&B (``mlaudit batch wandb --project E/P --triage [--report]``).

:func:`records` reads every ended run of the project in one ``Api.runs`` listing and joins
them with the batch's verdicts (:mod:`mlaudit_core.triage` records):

- params: the run config as every W&B read of mlaudit flattens it
  (:func:`mlaudit_wandb.mapping.params_of`: ``_wandb`` out, nested keys as ``a.b``, non-strings
  as JSON);
- tags: every W&B tag seen in the project is a yes/no factor ``tag:<name>`` on every run
  (``mlaudit:*`` tags, mlaudit's own output, left out); the run group and job type as
  ``tag:group`` / ``tag:job_type``;
- commit: the run's ``commit`` (the git commit W&B records at ``wandb.init``);
- start time: ``createdAt``; host: not read (W&B keeps it in each run's
  ``wandb-metadata.json``, one file download per run).

Where it is written, unless ``--no-write``: without ``--report``, mlaudit's section of the
**project's description** (:func:`write_project_summary`: between mlaudit's markers after the
user's text, which is kept; read and written with the project query and the ``upsertModel``
mutation, the one ``wandb``'s own ``upsert_project`` sends, through
:func:`mlaudit_core.sdk_private.wandb_graphql`; a description saved by someone meanwhile is merged
again by :func:`mlaudit_core.writeback.write_section`). With ``--report`` (:func:`save_report`): a W&B Report
``mlaudit triage: <project>`` in the project, through ``wandb_workspaces.reports.v2`` (as
``mlaudit wandb RUN --report``; ``Report.save()`` sends ``upsertView``): the statements, the
factors with their counts, the first bad / last good run and the seed-noise judgement, and a
run-set panel grid of the project with one parallel-coordinates panel over the significant
params.

The report is mlaudit's own, found again by its title through ``Api.reports``; the next triage
replaces it. Its description ends with the fingerprint (sha-256, 12 hex) of the blocks as the
server stored them: when the blocks read back do not match it, a person edited the report
since, and the triage is saved as a new report instead, leaving the edited one alone.
Importing this module imports no SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mlaudit_core.errors import InputError

from .mapping import params_of, time_of

#: Title prefix of the triage report (W&B's title limit is 128 characters).
TITLE_PREFIX = "mlaudit triage: "
#: The fingerprint at the end of the report's description.
_FINGERPRINT = re.compile(r"\[mlaudit blocks ([0-9a-f]{12})\]\s*$")
#: Factors listed in the report (significant first, then by q-value).
MAX_FACTORS_SHOWN = 15
#: W&B tags that are mlaudit's own output, not a factor.
OWN_TAG_PREFIX = "mlaudit:"


def _start(created_at: Any) -> float | None:
    t = time_of(created_at)
    return None if t is None else t.timestamp()


def record_of(run, verdict: dict[str, Any] | None, all_tags: Iterable[str]) -> dict[str, Any]:
    """One public-API ``Run`` as a triage record; ``all_tags``: every tag of the project (each
    becomes a yes/no factor on every run)."""
    own = set(getattr(run, "tags", None) or [])
    tags = {f"{t}": ("yes" if t in own else "no") for t in all_tags}
    for key, attr in (("group", "group"), ("job_type", "job_type")):
        value = getattr(run, attr, None)
        if value:
            tags[key] = str(value)
    verdict = verdict or {}
    summary = getattr(run, "summary_metrics", None) or {}
    metrics = {
        k: float(v)
        for k, v in summary.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not str(k).startswith("_")
    }
    return {
        "run_id": getattr(run, "id", ""),
        "name": getattr(run, "name", "") or "",
        "outcome": verdict.get("outcome") or "",
        "cause": verdict.get("cause"),
        "params": params_of(getattr(run, "config", None) or {}),  # mapping.params_of
        "tags": tags,
        "start_time": _start(getattr(run, "created_at", None)),
        "commit": getattr(run, "commit", None) or None,
        "host": None,
        "metrics": metrics,
    }


def records(api, project: str, results: Iterable) -> list[dict[str, Any]]:
    """Triage records of the runs the batch audited (``results``: RunResult list; refs
    ``ENTITY/PROJECT/RUN_ID``; runs that could not be audited take no part)."""
    from .online import sdk_errors
    from .plugin import FINISHED_STATES

    verdicts = {
        str(r.ref).rsplit("/", 1)[-1]: {"outcome": r.outcome, "cause": r.cause}
        for r in results
        if r.ok
    }
    with sdk_errors(project):
        runs = [
            r
            for r in api.runs(
                project,
                filters={"state": {"$in": list(FINISHED_STATES)}},
                order="+created_at",
                per_page=100,
                lazy=False,
            )
            if r.id in verdicts
        ]
    all_tags = sorted(
        {t for r in runs for t in (r.tags or []) if not str(t).startswith(OWN_TAG_PREFIX)}
    )
    return [record_of(r, verdicts[r.id], all_tags) for r in runs]


# ---------------------------------------------------------------- the report


@dataclass
class SavedTriageReport:
    """What :func:`save_report` did: the report's ``id`` and ``url``; ``created`` when it is
    new; ``kept_edited``: the id of an earlier triage report a person edited, left alone."""

    id: str
    url: str
    created: bool
    kept_edited: str | None = None


def report_markdown(doc: dict[str, Any]) -> list[str]:
    """The report's text blocks (Markdown) from :meth:`Triage.to_dict` (already redacted):
    statements, the factor table, first bad / last good, seed noise."""
    from mlaudit_core.render.markdown import md_escape

    out = []
    outcomes = ", ".join(f"{n} {o or 'no verdict'}" for o, n in doc.get("outcomes", {}).items())
    head = [f"**{doc.get('runs', 0)} runs** ({md_escape(outcomes)})."]
    head += [f"- {md_escape(s)}" for s in doc.get("statements") or []]
    out.append("\n".join(head))
    factors = (doc.get("factors") or [])[:MAX_FACTORS_SHOWN]
    if factors:
        rows = [
            "| factor | failing | effect | p | q | significant |",
            "|---|---|---|---|---|---|",
        ]
        for f in factors:
            rows.append(
                "| "
                + " | ".join(
                    md_escape(str(x)).replace("|", "\\|")
                    for x in (
                        f["name"],
                        f["target"],
                        f["effect"],
                        f"{f['p_value']:.3g}",
                        f"{f['q_value']:.3g}",
                        "yes" if f["significant"] else ("small group" if f.get("small") else "no"),
                    )
                )
                + " |"
            )
        out.append("\n".join(rows))
    for cp in (doc.get("change_point"), doc.get("commit_change_point")):
        if not cp:
            continue
        changed = "; ".join(
            f"{md_escape(k)}: {md_escape(str(v))}" for k, v in cp["changed"].items()
        )
        out.append(
            f"**First bad / last good** (ordered by {md_escape(cp['order'])}): "
            f"{md_escape(cp['direction'])} at {md_escape(str(cp['at']))}; last good run "
            f"`{md_escape(str(cp['last_good']))}`, first bad run `{md_escape(str(cp['first_bad']))}`"
            f" (q={cp['q_value']:.3g}, {'significant' if cp['significant'] else 'not significant'})"
            + (f"; changed there: {changed}" if changed else "")
        )
    sn = doc.get("seed_noise")
    if sn and sn.get("statement"):
        out.append(f"**Seed noise**: {md_escape(str(sn['statement']))}")
    return out


@contextlib.contextmanager
def quiet_sdk():
    """The library's "Saved report to" lines kept off the terminal."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        yield


def _blocks_fingerprint(spec: Any) -> str:
    blocks = spec.get("blocks") if isinstance(spec, dict) else None
    return hashlib.sha256(json.dumps(blocks, sort_keys=True).encode()).hexdigest()[:12]


def _find(api, entity: str, project: str) -> list[Any]:
    """The project's saved reports titled like the triage report (newest first)."""
    title = TITLE_PREFIX + project
    api.flush()
    found = [r for r in api.reports(f"{entity}/{project}") if (r.display_name or "") == title]
    return sorted(found, key=lambda r: str(r.updated_at or ""), reverse=True)


def _stored_fingerprint(url: str) -> str:
    """The fingerprint of a saved report's blocks, read back through the library (its model
    of the stored spec), so a save and a later read compare the same normal form."""
    import wandb_workspaces.reports.v2 as wr

    stored = wr.Report.from_url(url, as_model=True)
    return _blocks_fingerprint(
        json.loads(stored.spec.model_dump_json(by_alias=True, exclude_none=True))
    )


def save_report(api, project: str, doc: dict[str, Any]) -> SavedTriageReport:
    """Save ``doc`` (the redacted :meth:`Triage.to_dict`) as the project's triage report.

    ``api``: a logged-in ``wandb.Api``; ``project``: ``ENTITY/PROJECT``. The earlier triage
    report is replaced unless a person edited it (its blocks no longer match the fingerprint
    in its description): then a new one is made and the edited one kept.

    Raises:
        InputError: wandb-workspaces is missing, or W&B refused the listing or the report.
    """
    from .online import _first_line, sdk_errors

    try:
        import wandb_workspaces.reports.v2 as wr
    except ImportError:
        from .report_view import INSTALL_HINT

        raise InputError(f"{project}: --report needs wandb-workspaces: {INSTALL_HINT}") from None
    entity, _, name = project.partition("/")
    with sdk_errors(project):
        earlier = _find(api, entity, name)
    reuse = kept = None
    for view in earlier[:1]:
        m = _FINGERPRINT.search(view.description or "")
        with quiet_sdk():
            same = bool(m) and m.group(1) == _stored_fingerprint(view.url)
        if same:
            reuse = view.id
        else:
            kept = view.id
    blocks: list[Any] = [wr.MarkdownBlock(text=t) for t in report_markdown(doc)]
    sig = [
        f["name"].partition(":")[2]
        for f in doc.get("factors") or []
        if f.get("significant") and f["name"].startswith("param:")
    ]
    if sig:
        blocks.append(wr.H2(text="Significant params over the runs"))
        blocks.append(
            wr.PanelGrid(
                runsets=[wr.Runset(entity=entity, project=name, name="all runs")],
                panels=[
                    wr.ParallelCoordinatesPlot(
                        title="significant params",
                        columns=[
                            wr.ParallelCoordinatesPlotColumn(metric=wr.Config(p)) for p in sig[:8]
                        ],
                    )
                ],
            )
        )
    description = f"{doc.get('runs', 0)} runs triaged by mlaudit"
    rep = wr.Report(
        entity=entity,
        project=name,
        title=TITLE_PREFIX + name,
        description=description,
        blocks=blocks,
    )
    try:
        with quiet_sdk():
            if reuse:
                rep.id = reuse
            rep.save()
            rep.description = f"{description} [mlaudit blocks {_stored_fingerprint(rep.url)}]"
            rep.save()
    except Exception as exc:  # noqa: BLE001 - SDK and server errors have no common type
        raise InputError(f"{project}: W&B refused the triage report: {_first_line(exc)}") from None
    return SavedTriageReport(rep.id, rep.url, created=reuse is None, kept_edited=kept)


_READ_PROJECT = """
query MlauditProjectDescription($name: String!, $entity: String) {
  project(name: $name, entityName: $entity) { id description }
}
"""
_WRITE_PROJECT = """
mutation MlauditProjectDescription($input: UpsertModelInput!) {
  upsertModel(input: $input) { project { id description } }
}
"""


def write_project_summary(api, project: str, doc: dict[str, Any]):
    """Merge :func:`mlaudit_core.writeback.triage_section` of ``doc`` (the redacted
    :meth:`Triage.to_dict`) into the description of ``project`` (``ENTITY/PROJECT``), the
    user's text kept, a concurrent edit merged again; returns the
    :class:`~mlaudit_core.writeback.SectionWrite`.

    Raises:
        InputError: W&B refused the read or the write, or the SDK has no GraphQL client.
    """
    from mlaudit_core.sdk_private import wandb_graphql
    from mlaudit_core.writeback import triage_section, write_section

    from .online import sdk_errors

    entity, _, name = project.partition("/")

    def call(query: str, variables: dict[str, Any]) -> dict[str, Any]:
        with sdk_errors(project):
            data = wandb_graphql(api, query, variables)
        if data is None:
            raise InputError(
                f"{project}: this wandb SDK has no GraphQL client to write the project"
            )
        return data

    def read() -> str | None:
        return (call(_READ_PROJECT, {"name": name, "entity": entity}).get("project") or {}).get(
            "description"
        )

    def write(text: str) -> None:
        call(_WRITE_PROJECT, {"input": {"name": name, "entityName": entity, "description": text}})

    return write_section(
        read, write, triage_section(doc), full_report="`mlaudit batch wandb --triage`"
    )
