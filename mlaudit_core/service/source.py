"""What the watcher needs from one tracker: list newly finished runs, load, write back, and
"is this run's verdict already there".

:class:`PluginSource` adapts any :class:`~mlaudit_core.plugins.TrackerPlugin`. A tracker
binds its own listing filter (experiments, project, queue...) by subclassing and
overriding :meth:`PluginSource.list_finished`, and says what a complete write-back
looks like with ``audited_tag`` / ``audited_artifacts``. See ``docs/automation.md``.
"""

from __future__ import annotations

from datetime import datetime

from ..report import AuditReport
from ..rundata import RunData, RunStatus
from ..writeback import WriteBackResult

#: The verdict an audit of a run that is still running writes (``Outcome.RUNNING``).
INTERIM_VERDICT = "running"


class PluginSource:
    """One tracker, as seen by the watcher.

    Args:
        plugin: the tracker plugin (its ``load``, ``write_back``, ``list_finished``).
        scope: one line naming what is watched (tracker, store, experiments); stored in
            the state file so one file never mixes two scopes.

    Class attributes a tracker may override:
        page_limit: the most run ids one ``list_finished`` call returns; a listing that
            long may be cut, so the watcher keeps its cursor where it was. None: never cut.
        audited_tag: the tag whose presence in ``RunData.tags`` means a verdict was written.
        audited_artifacts: artifact paths that must exist too (they are uploaded after the
            tags, so a write-back killed half-way is redone, not skipped).
    """

    page_limit: int | None = None
    #: False for a source that only takes runs pushed by its trigger (its listing is empty).
    lists: bool = True
    audited_tag: str = "mlaudit.verdict"
    audited_artifacts: tuple[str, ...] = ()
    #: The watcher's first cursor (set by the watcher before each listing): where a source
    #: starts listing runs that ended without an end time.
    floor: datetime | None = None

    def __init__(self, plugin, scope: str) -> None:
        self.plugin = plugin
        self.scope = scope

    @property
    def tracker(self) -> str:
        return self.plugin.name

    def list_finished(self, since: datetime | None) -> list[str | tuple[str, str]]:
        """Refs of runs that finished after ``since`` with no verdict yet.

        An item may be ``(ref, ending)``, ``ending`` naming this ending of the run (its end
        time, say), so a run that is resumed and ends again is audited again.

        Raise :class:`~mlaudit_core.errors.MlauditError` for a configuration problem (the
        watcher stops, exit 2); any other exception is an outage (retried with backoff).
        """
        return self.plugin.list_finished(since)

    def load(self, ref: str) -> RunData:
        return self.plugin.load(ref)

    def write_back(self, run: RunData, report: AuditReport) -> WriteBackResult:
        return self.plugin.write_back(run, report)

    def skip_reason(self, run: RunData) -> str | None:
        """Why the loaded run is settled without an audit, or None to audit it.

        The default: ``"verdict already present"`` when :meth:`is_audited`. A tracker whose
        trigger may name a run before it ends (a webhook) also returns a reason for a run
        still running; it is audited when it is pushed or listed again with a new ending.
        """
        return "verdict already present" if self.is_audited(run) else None

    def claim(self, run: RunData, owner: str, lease_s: float) -> str | None:
        """Take the run's tracker-side claim for ``owner`` (a lease of ``lease_s`` seconds) so
        that two watchers of one scope do not both write; None when taken, else why not.

        Delegates to the plugin's ``claim(run, owner, lease_s=...)`` when it has one
        (MLflow: the ``mlaudit.claim`` tag); a tracker without one is not claimed.
        """
        fn = getattr(self.plugin, "claim", None)
        return fn(run, owner, lease_s=lease_s) if fn is not None else None

    def release_claim(self, run: RunData, owner: str) -> None:
        """Give up ``owner``'s claim once the verdict is written (best effort)."""
        fn = getattr(self.plugin, "release_claim", None)
        if fn is not None:
            fn(run, owner)

    def is_audited(self, run: RunData) -> bool:
        """True when the run carries a complete verdict (tag and every required artifact).

        An *interim* verdict does not count once the run has ended: ``running`` is what an
        audit of a run still running writes (``mlaudit mlflow RUN`` by hand, a hook), and the
        run is judged again when the watcher finds it ended.
        """
        verdict = run.tags.get(self.audited_tag)
        if verdict is None:
            return False
        if verdict == INTERIM_VERDICT and run.status is not RunStatus.RUNNING:
            return False
        paths = {a.path for a in run.artifacts}
        return all(a in paths for a in self.audited_artifacts)
