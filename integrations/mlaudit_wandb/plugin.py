"""The W&B tracker plugin (entry point ``wandb`` in the ``mlaudit.trackers`` group).

Importing this module does not import wandb; the SDK is imported on first use
(``pip install 'mlaudit[wandb]'`` otherwise).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult

from .mapping import params_of
from .mapping import time_of as _time

#: Config keys that differ between repeats of one experiment (ignored when matching baselines).
SEED_KEYS = ("seed", "*_seed", "seed_*", "random_state", "*.seed")
FINISHED_STATES = ("finished", "failed", "crashed", "killed")


@dataclass(frozen=True)
class Baseline:
    """A run to compare against, and why it was picked (``group``, ``sweep``, ``tags``, ``config``)."""

    path: str
    reason: str


class WandbPlugin:
    """Load W&B runs (online or offline), find baselines, list finished runs, write verdicts back."""

    name = "wandb"
    extra = "wandb"
    #: The plugin's commands (``mlaudit wandb ...``, ``watch wandb``...; :mod:`.cli`).
    cli = "mlaudit_wandb.cli:register"

    @staticmethod
    def local_live_source(paths: list):
        """``mlaudit watch PATH --live``: the paths that are W&B run folders being written
        offline (a ``run-<id>.wandb`` in them) and one live source following them."""
        from .live_offline import WandbOfflineLiveSource, run_dirs

        claimed = run_dirs(paths)
        if not claimed:
            return [], None
        return claimed, WandbOfflineLiveSource(claimed)

    def __init__(
        self, api=None, timeout: int | None = None, panel: bool = False, report: bool = False
    ) -> None:
        self._api = api
        self.timeout = timeout
        # write_back's default. Off unless asked (--panel): logging the panel resumes the run,
        # which changes a crashed run's state and re-fires run-state automations.
        self.panel = panel
        # write_back's default for the W&B Report (--report; needs wandb-workspaces)
        self.report = report

    @property
    def api(self):
        if self._api is None:
            from .online import make_api

            self._api = make_api(self.timeout)
        return self._api

    def load(self, ref: str, *, offline: bool = False, **options) -> RunData:
        """``ENTITY/PROJECT/RUN_ID`` (or URL) online; with ``offline=True`` a run directory."""
        if offline:
            from .offline import load_offline

            run = load_offline(ref)
        else:
            from .online import load_online, parse_ref

            parse_ref(ref)  # a malformed ref is one line before any login / network
            run = load_online(ref, api=self.api)
        return _enrich(run)

    def write_back(
        self,
        run: RunData,
        report: AuditReport,
        *,
        dry_run: bool = False,
        panel: bool | None = None,
        report_view: bool | None = None,
        **options,
    ) -> WriteBackResult:
        """Tags, ``mlaudit/`` summary keys, notes section, report files, optional panel
        (``panel`` None: the plugin's ``panel`` setting) and W&B Report (``report_view`` None:
        the plugin's ``report`` setting).

        An offline run has no server copy to write to: nothing is written and the
        result says so (sync it, then audit it online).
        """
        if run.environment.get("wandb_source") == "offline":
            return _offline_result(run, dry_run)
        from .online import parse_ref
        from .writeback import write_back

        path = parse_ref(f"{run.identity.project}/{run.identity.id}")
        return write_back(
            self.api,
            path,
            report,
            run_data=run,
            dry_run=dry_run,
            panel=self.panel if panel is None else panel,
            wandb_report=self.report if report_view is None else report_view,
        )

    def list_finished(
        self, since: datetime | None = None, *, project: str = "", endings: bool = False, **options
    ) -> list:
        """``ENTITY/PROJECT/RUN_ID`` of runs in ``project`` that ended and carry no verdict for
        their current state (the auto-triage loop guard), oldest first.

        Args:
            since: only runs whose last heartbeat is at or after this time.
            project: ``ENTITY/PROJECT``.
            endings: return ``(ref, "<state>@<heartbeatAt>")`` pairs, so the watcher's state
                file audits a run again when it is resumed and ends again.
        """
        from .online import sdk_errors
        from .writeback import already_judged

        entity, _, proj = project.partition("/")
        out = []
        with sdk_errors(project):
            self.api.flush()  # wandb.Api caches run listings; a watcher needs fresh states
            runs = self.api.runs(
                project,
                filters={"state": {"$in": list(FINISHED_STATES)}},
                order="+created_at",
                per_page=100,
                lazy=False,
            )
            for r in runs:
                if since is not None:
                    hb = _time(getattr(r, "heartbeat_at", None))
                    if hb is not None and hb < since:
                        continue
                summary = dict(r.summary_metrics or {})
                if not already_judged(summary, r.state):
                    ref = f"{entity}/{proj}/{r.id}"
                    out.append(
                        (ref, f"{r.state}@{getattr(r, 'heartbeat_at', None)}") if endings else ref
                    )
        return out

    def list_runs(self, project: str, since: datetime | None = None) -> list[str]:
        """``ENTITY/PROJECT/RUN_ID`` of every run of ``project`` that ended (finished, failed,
        crashed, killed), verdict or not, oldest first: what ``mlaudit batch wandb`` audits.

        Args:
            project: ``ENTITY/PROJECT``.
            since: only runs whose last heartbeat is at or after this time.

        Raises:
            InputError: ``project`` is not ``ENTITY/PROJECT``, or W&B refused the listing.
        """
        from mlaudit_core.errors import InputError

        from .online import sdk_errors

        entity, _, proj = project.partition("/")
        if not entity or not proj or "/" in proj:
            raise InputError(f"--project {project!r}: expected ENTITY/PROJECT")
        out = []
        with sdk_errors(project):
            self.api.flush()
            runs = self.api.runs(
                project,
                filters={"state": {"$in": list(FINISHED_STATES)}},
                order="+created_at",
                per_page=100,
                lazy=False,
            )
            for r in runs:
                hb = _time(getattr(r, "heartbeat_at", None)) if since is not None else None
                if hb is not None and hb < since:
                    continue
                out.append(f"{entity}/{proj}/{r.id}")
        return out

    def run_state(self, ref: str) -> tuple[str, dict]:
        """(state, summary) of an online run, for the auto-triage guard."""
        from .online import fetch_run, parse_ref, sdk_errors

        path = parse_ref(ref)
        r = fetch_run(self.api, path)
        with sdk_errors(str(path)):
            summary = dict(r.summary_metrics or {})
            return r.state, summary

    def find_baselines(self, ref: str, limit: int = 20) -> list[Baseline]:
        """Runs to compare ``ref`` against, most specific reason first.

        Same group, same sweep, a shared user tag (``mlaudit:*`` tags do not count),
        or the same config except seed-like keys (``SEED_KEYS``). Only finished runs,
        never the run itself; at most ``limit``.
        """
        from .online import fetch_run, parse_ref, sdk_errors

        path = parse_ref(ref)
        me = fetch_run(self.api, path)
        project = f"{path.entity}/{path.project}"
        found: dict[str, Baseline] = {}
        with sdk_errors(str(path)):
            queries = []
            if me.group:
                queries.append(("group", {"group": me.group}))
            if me.sweep_name:
                queries.append(("sweep", {"sweep": me.sweep_name}))
            user_tags = [t for t in (me.tags or []) if not t.startswith("mlaudit:")]
            if user_tags:
                queries.append(("tags", {"tags": {"$in": user_tags}}))
            for reason, flt in queries:
                flt = {"$and": [flt, {"state": "finished"}]}
                for r in self.api.runs(project, filters=flt, per_page=limit):
                    if r.id != path.run_id and r.id not in found:
                        found[r.id] = Baseline(f"{project}/{r.id}", reason)
                    if len(found) >= limit:
                        break
            if len(found) < limit:
                mine = _without_seed(params_of(dict(me.config)))
                for r in self.api.runs(
                    project, filters={"state": "finished"}, per_page=50, lazy=False
                ):
                    if r.id == path.run_id or r.id in found:
                        continue
                    if mine and _without_seed(params_of(dict(r.config))) == mine:
                        found[r.id] = Baseline(f"{project}/{r.id}", "config")
                    if len(found) >= limit:
                        break
        return list(found.values())


def _without_seed(params: dict[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in params.items()
        if not any(fnmatch.fnmatchcase(k.lower(), p) for p in SEED_KEYS)
    }


def _offline_result(run: RunData, dry_run: bool) -> WriteBackResult:
    res = WriteBackResult(tracker="wandb", run_id=run.identity.id, dry_run=dry_run)
    res.notes.append(
        "offline run: nothing written back (run `wandb sync` on the run directory, "
        "then audit it online to write the verdict)"
    )
    return res


def _enrich(run: RunData) -> RunData:
    """Series derived from console text, when the console enrichment (another module) exists."""
    try:
        from mlaudit_core.formats.consolelog import enrich_from_console
    except ImportError:
        return run
    return enrich_from_console(run) or run
