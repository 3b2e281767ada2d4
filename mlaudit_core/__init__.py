"""mlaudit core: tracker-agnostic run diagnosis.

Public surface::

    from mlaudit_core import RunData, Role, audit, AuditReport
"""

from __future__ import annotations

from ._version import __version__  # the one version string: pyproject.toml's, as installed
from .audit import audit, run_detectors  # noqa: E402
from .errors import InputError, MissingDependency, MlauditError  # noqa: E402
from .report import AuditReport, Cause, Finding, Outcome, Severity, report_json_schema  # noqa: E402
from .roles import AliasTable, Role  # noqa: E402
from .rundata import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus, Series  # noqa: E402
from .settings import Settings, load_settings  # noqa: E402

__all__ = [
    "AliasTable",
    "AuditReport",
    "Cause",
    "ConsoleLine",
    "Finding",
    "InputError",
    "MetricTable",
    "MissingDependency",
    "MlauditError",
    "Outcome",
    "Role",
    "RunData",
    "RunIdentity",
    "RunStatus",
    "Series",
    "Settings",
    "Severity",
    "audit",
    "load_settings",
    "report_json_schema",
    "run_detectors",
    "__version__",
]
