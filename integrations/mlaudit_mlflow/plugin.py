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
    #: The plugin's commands (``mlaudit mlflow ...``, ``watch mlflow``...; :mod:`.cli`).
    cli = "mlaudit_mlflow.cli:register"
    #: Seconds between setting ``mlaudit.claim`` and reading it back (see ``claim_run``).
    claim_settle_s = 0.5

    def __init__(self, tracking_uri: str | None = None) -> None:
        self.tracking_uri = tracking_uri

    def load(self, ref: str, **options) -> RunData:
        from .loader import load_run

        return self._checked(load_run(ref, self.tracking_uri))

    @staticmethod
    def _checked(run: RunData) -> RunData:
        from mlaudit_core.rundata import RunStatus

        if run.end_time is None and run.status in (
            RunStatus.FINISHED,
            RunStatus.FAILED,
            RunStatus.KILLED,
        ):
            run.warnings.append(
                f"the run ended ({run.status.value}) without an end time (MLflow records none "
                "when a run is ended with update_run(status=...)); its duration is taken "
                "from its last logged point"
            )
        return run

    def load_many(self, refs: list[str]) -> dict[str, RunData | Exception]:
        """Several runs in fewer requests (a batch's read-ahead): ``{ref: RunData or the
        exception load would raise}``; see :func:`mlaudit_mlflow.loader.load_runs`."""
        from .loader import load_runs

        got = load_runs(refs, self.tracking_uri)
        return {
            ref: (self._checked(run) if isinstance(run, RunData) else run)
            for ref, run in got.items()
        }

    def claim(self, run: RunData, owner: str, *, lease_s: float = 900.0) -> str | None:
        """Claim ``run`` for a watcher (tag ``mlaudit.claim``); see
        :func:`mlaudit_mlflow.writeback.claim_run`."""
        from .loader import client_for
        from .writeback import claim_run

        return claim_run(
            client_for(self.tracking_uri),
            run.identity.id,
            owner,
            lease_s=lease_s,
            settle_s=self.claim_settle_s,
        )

    def release_claim(self, run: RunData, owner: str) -> None:
        from .loader import client_for
        from .writeback import release_claim

        release_claim(client_for(self.tracking_uri), run.identity.id, owner)

    def write_back(
        self, run: RunData, report: AuditReport, *, dry_run: bool = False, **options
    ) -> WriteBackResult:
        from .loader import client_for
        from .writeback import write_verdict

        return write_verdict(client_for(self.tracking_uri), run, report, dry_run=dry_run)

    def find_baselines(self, run: RunData, policy=None) -> list[RunData]:
        """Baseline *candidates* for :func:`mlaudit_core.baseline.select_baselines`, without metrics.

        Candidates: the explicit ids of ``policy``; runs of the same experiment tagged
        ``mlaudit.baseline``; the parent run; and the most recent FINISHED runs of the same
        experiment (``4 x policy.max_runs``). Only run metadata is read here (params, tags,
        status, times); load the chosen ones with :meth:`load`.

        Raises:
            InputError: an explicit baseline id does not exist.
        """
        from mlaudit_core.baseline.selection import BASELINE_TAG, BaselinePolicy

        from .loader import client_for, light_run

        policy = policy or BaselinePolicy()
        client = client_for(self.tracking_uri)
        out: list[RunData] = []
        if policy.explicit:
            from mlflow.exceptions import MlflowException

            from mlaudit_core.errors import InputError

            for rid in policy.explicit:
                try:
                    out.append(light_run(client.get_run(rid)))
                except MlflowException:
                    raise InputError(f"baseline mlflow run {rid!r} not found") from None
            return out
        exp_id = client.get_run(run.identity.id).info.experiment_id
        if policy.use_tagged:
            out += [
                light_run(r)
                for r in client.search_runs(
                    [exp_id], filter_string=f"tags.`{BASELINE_TAG}` = 'true'", max_results=50
                )
            ]
        if policy.use_parent and run.parent_id:
            try:
                out.append(light_run(client.get_run(run.parent_id)))
            except Exception:  # a deleted parent is no baseline; selection goes on
                pass
        if policy.use_same_config:
            out += [
                light_run(r)
                for r in client.search_runs(
                    [exp_id],
                    filter_string="attributes.status = 'FINISHED'",
                    order_by=["attributes.end_time DESC"],
                    max_results=4 * policy.max_runs,
                )
            ]
        for c in out:  # same experiment: name it the way the audited run does
            if c.identity.project == exp_id:
                c.identity.project = run.identity.project
        return out

    def list_finished(
        self,
        since: datetime | None = None,
        *,
        experiment_ids: list[str] | None = None,
        include_audited: bool = False,
        max_results: int | None = 1000,
        no_end_time_since: datetime | None = None,
        **options,
    ) -> list[str]:
        """Runs no longer RUNNING that ended after ``since`` and have no ``mlaudit.verdict`` tag.

        Oldest end first. ``include_audited=True`` drops the tag condition (batch audits of a
        whole experiment); ``max_results=None`` pages through every match (MLflow pages by
        1,000), otherwise at most ``max_results`` ids come back.

        ``no_end_time_since``: also list runs with a terminal status but no end time (ended
        with ``update_run(status=...)``, which sets none, so no end-time filter finds them)
        that started after it. MLflow's search cannot filter on a missing end time
        ("IS NULL is only supported for tags and params"), so these are searched by start
        time and status and picked out here; they come after the others.
        """
        from .loader import client_for

        client = client_for(self.tracking_uri)
        if experiment_ids is None:
            experiment_ids = [e.experiment_id for e in client.search_experiments()]
        flt = "attributes.status != 'RUNNING'"
        if since is not None:
            flt += f" and attributes.end_time > {int(since.timestamp() * 1000)}"
        out = [
            r.info.run_id
            for r in _search_unaudited(
                client, experiment_ids, flt, "attributes.end_time ASC", max_results, include_audited
            )
        ]
        if no_end_time_since is not None:
            flt = (
                "attributes.status != 'RUNNING' and attributes.start_time > "
                f"{int(no_end_time_since.timestamp() * 1000)}"
            )
            for r in _search_unaudited(
                client, experiment_ids, flt, "attributes.start_time ASC", None, include_audited
            ):
                if (
                    r.info.end_time is None
                    and r.info.status in ("FINISHED", "FAILED", "KILLED")
                    and r.info.run_id not in out
                ):
                    out.append(r.info.run_id)
        return out

    def triage_store(self):
        """The experiment-triage capability (``experiment_triage`` MCP tool): an object with
        ``runs(experiment_ids)`` (the finished runs, the dedicated triage runs left out),
        ``record(run, verdict)`` (:func:`mlaudit_mlflow.triage.record_of`) and
        ``write(experiment_id, doc, markdown, html)`` (:func:`mlaudit_mlflow.triage.write_triage`,
        returns the dedicated run's id), on this plugin's tracking URI. MLflow errors propagate."""
        from .loader import client_for
        from .triage import TriageStore

        return TriageStore(client_for(self.tracking_uri))

    def experiment_ids(self, names: list[str]) -> list[str]:
        """The ids of the experiments called ``names``, in the same order.

        Raises:
            InputError: an experiment of that name does not exist or is deleted.
            Connection errors of the MLflow client propagate (a watcher retries them).
        """
        from mlaudit_core.errors import InputError

        from .loader import client_for, resolve_uri

        client = client_for(self.tracking_uri)
        ids = []
        for name in names:
            exp = client.get_experiment_by_name(name)
            if exp is None or exp.lifecycle_stage == "deleted":
                raise InputError(
                    f"no mlflow experiment named {name!r} at {resolve_uri(self.tracking_uri)}"
                )
            ids.append(exp.experiment_id)
        return ids


#: The verdict tag value of a run audited while it was still running (an interim verdict).
RUNNING_VERDICT = "running"


def _search_unaudited(
    client,
    experiment_ids: list[str],
    flt: str,
    order: str,
    max_results: int | None,
    include_audited: bool,
) -> list:
    """Runs matching ``flt`` (and, unless ``include_audited``, without ``mlaudit.verdict``),
    ordered by ``order``; at most ``max_results`` (None: every page).

    The tag condition is ``tags.`mlaudit.verdict` IS NULL`` on the server. MLflow servers
    before 3.x refuse ``IS NULL`` on tags ("Invalid clause(s) in filter string"): then every
    page of the other conditions is read and the tag is checked here (the ``since`` cursor
    keeps those pages few), and the result is cut to ``max_results`` afterwards, so a full page
    still means "more may follow".
    """
    from mlflow.exceptions import MlflowException

    def pages(f: str, limit: int | None) -> list:
        got: list = []
        token = None
        while True:
            page = client.search_runs(
                experiment_ids,
                filter_string=f,
                order_by=[order],
                max_results=1000 if limit is None else limit,
                page_token=token,
            )
            got += list(page)
            token = page.token
            if limit is not None or not token:
                return got

    if include_audited:
        return pages(flt, max_results)
    # A run audited by hand while it was still RUNNING carries the interim verdict 'running';
    # it must be audited again once it has ended (else the watcher would never judge it).
    field = order.split()[0].split(".", 1)[1]
    desc = order.split()[-1].upper() == "DESC"

    def when(r) -> int:
        return getattr(r.info, field, None) or 0

    try:
        runs = pages(flt + " and tags.`mlaudit.verdict` IS NULL", max_results)
        runs += pages(flt + " and tags.`mlaudit.verdict` = 'running'", max_results)
    except MlflowException as exc:
        if "IS" not in str(exc) and "clause" not in str(exc):
            raise
        runs = [
            r
            for r in pages(flt, None)
            if r.data.tags.get("mlaudit.verdict") in (None, RUNNING_VERDICT)
        ]
    runs.sort(key=when, reverse=desc)
    return runs if max_results is None else runs[:max_results]
