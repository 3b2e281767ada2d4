"""ClearML tracker plugin for mlaudit (entry point ``mlaudit.trackers: clearml``).

* :mod:`.connection` opens one SDK session with bounded retries (tenacity) and
  turns login/connection failures into one-line errors;
* :mod:`.loader` reads a task from the server at full fidelity, :mod:`.offline`
  reads an offline session folder or zip written by ``Task.set_offline(True)``;
  both go through :mod:`.mapping` into one :class:`~mlaudit_core.rundata.RunData`;
* :mod:`.writeback` puts the verdict back onto the task (tags, user properties,
  comment section, report panel, artifacts where the server allows them);
* :mod:`.watcher` audits tasks as they finish, on ClearML's public ``Monitor`` class.

Importing this package imports no ClearML SDK; the SDK is imported on first use
through :func:`mlaudit_core.plugins.require`.
"""

from .plugin import ClearMLPlugin

__all__ = ["ClearMLPlugin"]
