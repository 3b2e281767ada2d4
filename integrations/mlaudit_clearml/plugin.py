"""The ClearML tracker plugin (entry point ``mlaudit.trackers: clearml``)."""

from __future__ import annotations

from datetime import datetime, timezone

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import WriteBackResult

from . import mapping

#: Candidate tasks loaded per baseline query (each is loaded in full, so keep it small).
MAX_CANDIDATES = 8
#: A label marking a task as a baseline (the baseline policy's ``mlaudit.baseline`` tag).
BASELINE_LABEL = "mlaudit.baseline"
#: Tasks per ``tasks.get_all`` page when listing a project for a batch (clearml-server's
#: own page sizes are in the hundreds; the value only bounds one answer's size).
LIST_PAGE = 500


class ClearMLPlugin:
    """Load ClearML tasks (server or offline session), find baselines, write verdicts back.

    Args:
        offline: an offline session folder or zip; ``load`` then reads it and
            nothing is ever written back.
        attempts, backoff: connection attempts and first back-off (s), see
            :func:`~.connection.connect`.
    """

    name = "clearml"
    extra = "clearml"
    #: The plugin's commands (``mlaudit clearml ...``, ``watch clearml``...; :mod:`.cli`).
    cli = "mlaudit_clearml.cli:register"

    def __init__(
        self,
        offline: str | None = None,
        *,
        attempts: int | None = None,
        backoff: float | None = None,
    ) -> None:
        self.offline = offline
        self.attempts, self.backoff = attempts, backoff
        self._session = None

    @property
    def session(self):
        """The logged-in SDK session, opened on first use."""
        if self._session is None:
            from .connection import ATTEMPTS, BACKOFF, connect

            self._session = connect(
                attempts=self.attempts or ATTEMPTS,
                backoff=BACKOFF if self.backoff is None else self.backoff,
            )
        return self._session

    def load(self, ref: str | None, **options) -> RunData:
        """Load a task by id (or the offline session given at construction).

        Raises:
            InputError: unknown task, bad offline path, credentials or server problems.
            MissingDependency: the clearml SDK is not installed (server mode only).
        """
        if self.offline:
            from .offline import load_offline

            return load_offline(self.offline, expected_id=ref or None)
        from .loader import load_task

        return load_task(self.session, ref or "")

    def load_with_baselines(self, ref: str | None, policy=None) -> RunData:
        """``load``, then attach the baselines chosen by ``mlaudit_core.baseline`` (when installed)."""
        run = self.load(ref)
        if self.offline:
            return run
        try:
            from mlaudit_core.baseline import BaselinePolicy, attach_baselines, select_baselines
        except ImportError:
            return run
        policy = policy or BaselinePolicy()
        sel = select_baselines(run, self.find_baselines(run, policy), policy)
        run.warnings.extend(sel.warnings)
        if sel.runs:
            attach_baselines(run, sel.runs)
            run.notes.append(
                f"baselines ({sel.rule}): " + ", ".join(r.identity.id for r in sel.runs)
            )
        return run

    def find_baselines(self, run: RunData, policy=None) -> list[RunData]:
        """Candidate baselines: explicit ids, the parent task, and completed tasks of the same
        project with the same name, labelled ``mlaudit.baseline`` or sharing a label (most
        recent first, at most ``MAX_CANDIDATES`` a query). The policy in
        ``mlaudit_core.baseline`` picks among them."""
        from .connection import call
        from .loader import get_task, load_task

        if self.offline:
            return []
        explicit = list(getattr(policy, "explicit", None) or [])
        ids: list[str] = list(explicit)
        if run.parent_id:
            ids.append(run.parent_id)
        doc = get_task(self.session, run.identity.id)
        labels = [t for t in doc.get("tags") or [] if not t.startswith(mapping.LABEL_PREFIX)]
        if doc.get("project"):
            base = {
                "project": [doc["project"]],
                "status": ["completed", "published"],
                "only_fields": ["id", "name", "tags", "completed"],
                "order_by": ["-completed"],
                "page": 0,
                "page_size": MAX_CANDIDATES,
            }
            import re

            queries = [
                dict(base, name=f"^{re.escape(doc.get('name') or '')}$"),
                dict(base, tags=[BASELINE_LABEL]),
            ]
            if labels:
                queries.append(dict(base, tags=labels))
            for q in queries:
                ids += [
                    t["id"] for t in call(self.session, "tasks.get_all", **q).get("tasks") or []
                ]
        out: list[RunData] = []
        for tid in dict.fromkeys(ids):
            if tid == run.identity.id or len(out) >= MAX_CANDIDATES + len(explicit):
                continue
            try:
                out.append(load_task(self.session, tid))
            except Exception as exc:  # a vanished candidate is a warning, not a failed audit
                run.warnings.append(f"baseline candidate {tid} could not be loaded: {exc}")
        return out

    def write_back(
        self,
        run: RunData,
        report: AuditReport,
        *,
        dry_run: bool = False,
        panel: bool = True,
        **options,
    ) -> WriteBackResult:
        """Write the verdict onto the task (see :mod:`.writeback`); offline sessions get nothing."""
        if self.offline:
            return WriteBackResult(
                tracker="clearml",
                run_id=run.identity.id,
                dry_run=dry_run,
                notes=[
                    (
                        "offline session: nothing written back (import it with "
                        "Task.import_offline_session and audit the imported task)"
                    )
                ],
            )
        from .writeback import write_verdict

        return write_verdict(self.session, run, report, dry_run=dry_run, panel=panel)

    def list_finished(
        self,
        since: datetime | None = None,
        *,
        project: str | None = None,
        project_id: str | None = None,
        statuses: tuple[str, ...] = mapping.FINISHED_STATUSES,
        include_audited: bool = False,
        endings: bool = False,
        **options,
    ) -> list[str] | list[tuple[str, str]]:
        """Tasks that ended (``statuses``, by default completed, failed, stopped) after
        ``since`` (their ``status_changed``), archived ones left out, oldest first, paged by
        ``LIST_PAGE`` tasks a call.

        Args:
            project, project_id: only this project (its name, or its id).
            include_audited: also tasks that carry an ``mlaudit:`` label (a task reset and
                run again keeps the labels of its earlier audit).
            endings: return ``(task id, status_changed)`` pairs (the ending the watcher's
                state file keys an audit by) instead of ids.

        Raises:
            InputError: no project of that name, or a server call failed.
        """
        from .connection import call

        q: dict = {
            "status": list(statuses),
            "only_fields": ["id", "tags", "status_changed"],
            "order_by": ["status_changed"],
            "system_tags": ["-archived"],
            "page_size": LIST_PAGE,
        }
        if project_id or project:
            q["project"] = [project_id or self.project_id(project)]
        if since is not None:
            q["status_changed"] = ">" + since.astimezone(timezone.utc).isoformat()
        tasks: list[dict] = []
        page = 0
        while True:
            got = call(self.session, "tasks.get_all", **q, page=page).get("tasks") or []
            tasks += got
            if len(got) < LIST_PAGE:
                break
            page += 1
        if not include_audited:
            tasks = [
                t
                for t in tasks
                if not any(str(x).startswith(mapping.LABEL_PREFIX) for x in t.get("tags") or [])
            ]
        seen: dict[str, str] = {}
        for t in tasks:
            seen.setdefault(t["id"], str(t.get("status_changed") or ""))
        return list(seen.items()) if endings else list(seen)

    def list_runs(
        self,
        project: str,
        since: datetime | None = None,
        *,
        statuses: tuple[str, ...] = mapping.FINISHED_STATUSES,
    ) -> list[str]:
        """Ids of every task of the project named ``project`` that ended (completed, failed,
        stopped) after ``since``, labelled by mlaudit or not, archived ones left out, oldest
        first: what ``mlaudit batch clearml`` audits. Paged by ``LIST_PAGE`` tasks a call.

        Raises:
            InputError: no project of that name, or a server call failed.
        """
        from .connection import call

        q: dict = {
            "project": [self.project_id(project)],
            "status": list(statuses),
            "only_fields": ["id"],
            "order_by": ["status_changed"],
            "system_tags": ["-archived"],
            "page_size": LIST_PAGE,
        }
        if since is not None:
            q["status_changed"] = ">" + since.astimezone(timezone.utc).isoformat()
        ids: list[str] = []
        page = 0
        while True:
            tasks = call(self.session, "tasks.get_all", **q, page=page).get("tasks") or []
            ids += [t["id"] for t in tasks]
            if len(tasks) < LIST_PAGE:
                return list(dict.fromkeys(ids))
            page += 1

    def project_id(self, name: str) -> str:
        """The id of the project called ``name``. Raises InputError when there is none."""
        import re

        from mlaudit_core.errors import InputError

        from .connection import call

        found = (
            call(
                self.session,
                "projects.get_all",
                name=f"^{re.escape(name)}$",
                only_fields=["id", "name"],
            ).get("projects")
            or []
        )
        exact = [p for p in found if p.get("name") == name]
        if not exact:
            raise InputError(f"no ClearML project named {name!r}")
        return exact[0]["id"]
