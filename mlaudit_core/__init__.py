"""mlaudit core: tracker-agnostic run diagnosis.

Public surface::

    from mlaudit_core import RunData, Role, audit, AuditReport
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version

try:  # the one version string is pyproject.toml's, as installed
    __version__ = _dist_version("mlaudit")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"

from .audit import audit, run_detectors  # noqa: E402
from .errors import InputError, MissingDependency, MlauditError  # noqa: E402
from .report import AuditReport, Cause, Finding, Outcome, Severity, report_json_schema  # noqa: E402
from .roles import AliasTable, Role  # noqa: E402
from .rundata import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus, Series  # noqa: E402
from .settings import Settings, load_settings  # noqa: E402

__all__ = [
    "AliasTable", "AuditReport", "Cause", "ConsoleLine", "Finding", "InputError", "MetricTable",
    "MissingDependency", "MlauditError", "Outcome", "Role", "RunData", "RunIdentity", "RunStatus",
    "Series", "Settings", "Severity", "audit", "load_settings", "report_json_schema", "run_detectors",
    "__version__",
]
