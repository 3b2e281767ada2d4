"""Experiment triage on MLflow (``mlaudit batch mlflow --triage``; :mod:`mlaudit_core.triage`).

:func:`records` reads every run of the experiments (one ``search_runs`` page per 1,000 runs)
and joins them with the batch's verdicts; :func:`write_triage` writes the result where the
team looks, inside mlaudit's namespace only:

- experiment tag ``mlaudit.triage``: the headline (the significant factors, or the statement
  that none separates the failing runs), at most :data:`TAG_CHARS` characters;
- experiment tag ``mlaudit.triage_run``: the id of the dedicated run holding the artifacts;
- a dedicated run named ``mlaudit-triage`` (tags ``mlaudit.triage_run=true`` and
  ``mlaudit.verdict=triage``, so ``watch mlflow`` never audits it and ``batch`` skips it),
  reused on every triage, with the artifacts ``mlaudit/triage.json`` (the ``triage`` object of
  ``--format json``), ``mlaudit/triage.md`` and ``mlaudit/triage.html`` (one failure-rate-by-bin
  plot per significant factor).

Nothing else of the experiment or of any user's run is touched. Importing this module
imports no SDK.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterable
from typing import Any

#: Tag marking the dedicated triage run.
TRIAGE_RUN_TAG = "mlaudit.triage_run"
#: Experiment tag with the headline.
TRIAGE_TAG = "mlaudit.triage"
#: Most characters of the experiment tag (MLflow caps tag values at 5,000 on older servers
#: and 8,000 on newer ones).
TAG_CHARS = 4000
#: Run tags read as the host the run ran on, and as the code version (taken out of the tag
#: factors): the core's, so every reader's runs are read the same way.
from mlaudit_core.triage import COMMIT_KEYS as COMMIT_TAGS  # noqa: E402
from mlaudit_core.triage import HOST_KEYS as HOST_TAGS  # noqa: E402


def search_all(client, experiment_ids: list[str], flt: str = "") -> list:
    got: list = []
    token = None
    while True:
        page = client.search_runs(
            experiment_ids, filter_string=flt, max_results=1000, page_token=token
        )
        got += list(page)
        token = page.token
        if not token:
            return got


def triage_run_ids(client, experiment_ids: list[str]) -> set[str]:
    """Ids of the dedicated triage runs of these experiments (never audited nor triaged)."""
    return {
        r.info.run_id
        for r in search_all(client, experiment_ids, f"tags.`{TRIAGE_RUN_TAG}` = 'true'")
    }


def record_of(run, verdict: dict[str, Any] | None) -> dict[str, Any]:
    """One MLflow run (a ``mlflow.entities.Run``) as a triage record (see
    :mod:`mlaudit_core.triage`); ``verdict``: ``{outcome, cause}`` from the batch."""
    tags = dict(run.data.tags)
    commit = next((tags.pop(k) for k in COMMIT_TAGS if tags.get(k)), None)
    host = next((tags.pop(k) for k in HOST_TAGS if tags.get(k)), None)
    verdict = verdict or {}
    return {
        "run_id": run.info.run_id,
        "outcome": verdict.get("outcome") or tags.get("mlaudit.verdict") or "",
        "cause": verdict.get("cause"),
        "params": dict(run.data.params),
        "tags": {k: v for k, v in tags.items() if not k.startswith(("mlflow.", "mlaudit."))},
        "start_time": None if run.info.start_time is None else run.info.start_time / 1000.0,
        "commit": commit,
        "host": host,
        "metrics": dict(run.data.metrics),
    }


def records(client, experiment_ids: list[str], results: Iterable) -> list[dict[str, Any]]:
    """Triage records of the runs the batch audited (``results``: RunResult list; runs that
    could not be audited take no part)."""
    verdicts = {r.ref: {"outcome": r.outcome, "cause": r.cause} for r in results if r.ok}
    runs = search_all(client, experiment_ids, "attributes.status != 'RUNNING'")
    return [record_of(r, verdicts[r.info.run_id]) for r in runs if r.info.run_id in verdicts]


def headline(doc: dict[str, Any]) -> str:
    """The experiment tag's text: significant factors with counts, or the statements; the first
    bad commit when the commit-ordered change point is significant."""
    sig = [f for f in doc.get("factors", []) if f.get("significant")]
    if sig:
        text = "; ".join(
            f"{f['name']} [{f['target']}]: {f['effect']} (q={f['q_value']:.3g})" for f in sig[:5]
        )
    else:
        text = " ".join(doc.get("statements") or ["no factor separates the failing runs"])
    cc = doc.get("commit_change_point")
    if cc and cc.get("significant"):
        text += (
            f"; first bad commit {cc['first_bad_commit']} (last good {cc['last_good_commit']}, "
            f"q={cc['q_value']:.3g})"
        )
    text = f"{doc.get('runs', 0)} runs: " + text
    return text if len(text) <= TAG_CHARS else text[: TAG_CHARS - 3] + "..."


def write_triage(
    client, experiment_id: str, doc: dict[str, Any], markdown: str, html: str | None = None
) -> str:
    """Write the triage (``doc``: :meth:`Triage.to_dict`; ``markdown``: the text report;
    ``html``: :func:`mlaudit_core.triage.render_html`, one failure-rate plot per significant
    factor) onto the experiment and its dedicated run; returns the run id. MLflow errors
    propagate."""
    from mlflow.entities import RunTag

    existing = sorted(triage_run_ids(client, [experiment_id]))
    if existing:
        run_id = existing[0]
    else:
        run = client.create_run(
            experiment_id,
            run_name="mlaudit-triage",
            tags={TRIAGE_RUN_TAG: "true", "mlaudit.verdict": "triage"},
        )
        run_id = run.info.run_id
        with contextlib.redirect_stdout(io.StringIO()):  # MLflow 3 prints "View run" links
            client.set_terminated(run_id, "FINISHED")
    client.log_text(run_id, json.dumps(doc, indent=2), "mlaudit/triage.json")
    client.log_text(run_id, markdown, "mlaudit/triage.md")
    if html is not None:
        client.log_text(run_id, html, "mlaudit/triage.html")
    client.log_batch(run_id, tags=[RunTag("mlaudit.triage_summary", headline(doc)[:TAG_CHARS])])
    client.set_experiment_tag(experiment_id, TRIAGE_TAG, headline(doc))
    client.set_experiment_tag(experiment_id, "mlaudit.triage_run", run_id)
    return run_id


class TriageStore:
    """The triage reads and the write-back on one MLflow client (``MlflowPlugin.triage_store``)."""

    def __init__(self, client) -> None:
        self.client = client

    def runs(self, experiment_ids: list[str]) -> list:
        """The experiments' runs that are not running, without the dedicated triage runs."""
        skip = triage_run_ids(self.client, experiment_ids)
        return [
            r
            for r in search_all(self.client, experiment_ids, "attributes.status != 'RUNNING'")
            if r.info.run_id not in skip
        ]

    def record(self, run, verdict: dict[str, Any] | None) -> dict[str, Any]:
        return record_of(run, verdict)

    def write(
        self, experiment_id: str, doc: dict[str, Any], markdown: str, html: str | None
    ) -> str:
        return write_triage(self.client, experiment_id, doc, markdown, html)
