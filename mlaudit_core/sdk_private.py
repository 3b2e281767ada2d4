"""Private members of tracker and server SDKs, each behind one adapter function.

mlaudit uses the SDKs' public surfaces. Where an SDK has no public call for what mlaudit
needs, the private member is reached ONLY through a function here: a release that renames or
removes it makes the function warn (``RuntimeWarning`` naming the SDK, its version, the member
and what mlaudit does instead) and return ``None`` / ``False``, never crash, and
``tests/test_sdk_private.py`` fails naming the SDK version (every entry of :data:`MEMBERS` is
probed there). docs/extending.md lists every member with the public call used where one exists.

Nothing here imports an SDK at module import: each function imports what it needs when called.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from importlib import metadata
from typing import Any, NamedTuple


class PrivateMember(NamedTuple):
    """One private member: ``sdk`` (distribution name), ``where`` (module path and attribute
    chain, as ``module:Attr.attr``), ``why`` (what mlaudit needs it for and why no public call
    does it), ``fallback`` (what mlaudit does without it) and ``needed_if`` (a ``where`` that
    resolves exactly in the SDK versions that have the member; empty: every supported version)."""

    sdk: str
    where: str
    why: str
    fallback: str
    needed_if: str = ""


#: Every private SDK member mlaudit uses; tests/test_sdk_private.py resolves each ``where``.
MEMBERS: tuple[PrivateMember, ...] = (
    PrivateMember(
        "wandb",
        "wandb.sdk.wandb_run:Run._teardown_hooks",
        "audit a hooked run after W&B has sent its last messages (no public on-finish callback)",
        "the run is audited at once, as far as W&B has written it",
    ),
    PrivateMember(
        "wandb",
        "wandb.sdk.wandb_run:TeardownHook",
        "the hook type _teardown_hooks holds",
        "as above",
    ),
    PrivateMember(
        "wandb",
        "wandb.sdk.wandb_run:Run._is_finished",
        "do not register a hook on a finished run",
        "as above",
    ),
    PrivateMember(
        "wandb",
        "wandb.apis.public:Run._service_api",
        "read and write only tags / notes / summaryMetrics with one GraphQL call "
        "(public Run.update() re-sends the user's config and a cached summary)",
        "public Run.load(force=True) and Run.update() / Run.summary.update()",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.tracking.client:MlflowClient._tracking_client",
        "the client's tracking store: the bulk metric-history endpoint and the "
        "store's host credentials (no public accessor)",
        "public MlflowClient.get_metric_history per run",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.tracking._tracking_service.utils:_get_artifact_repo",
        "flush the async artifact queue of one run (the fluent flush would start a run "
        "in a worker thread)",
        "nothing flushed: artifacts still uploading are missed",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.tracking.fluent:_last_active_run_id",
        "the last run's id without a server round trip",
        "public mlflow.last_active_run() (one request)",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.store.tracking.dbmodels.models:SqlMetric",
        "all metric points of a run in one SQL query on a local store",
        "public MlflowClient.get_metric_history per metric",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.entities:RunData._metric_objs",
        "each latest metric's step and timestamp (RunData.metrics has the value only)",
        "latest values without step/timestamp",
    ),
    PrivateMember(
        "clearml",
        "clearml.backend_interface.base:InterfaceBase._set_default_session",
        "point the SDK at a session built from mlaudit's credentials "
        "(Task.set_credentials does not rebuild an existing session)",
        "the SDK's own configuration (clearml.conf / CLEARML_* variables)",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.utils.credentials:get_default_host_creds",
        "the MlflowHostCreds (tracking token, basic auth, TLS options) for an artifact or "
        "tracking URI, to send a Range request or a bulk request MLflow's client does not "
        "offer; undocumented module (older MLflow: mlflow.tracking._tracking_service.utils)",
        "the artifact is downloaded whole; metric histories are read per metric",
    ),
    PrivateMember(
        "mlflow",
        "mlflow.environment_variables:_MLFLOW_SGI_NAME",
        "an mlflow.app plugin returns the FastAPI app under uvicorn and the Flask app under "
        "gunicorn/waitress; `mlflow server` says which only in this variable (MLflow's own "
        "basic-auth app reads it too)",
        "uvicorn is assumed when the process has imported it",
        needed_if="mlflow.server.fastapi_app:create_fastapi_app",
    ),
    PrivateMember(
        "clearml",
        "clearml.backend_api.session.session:Session._session_timeout",
        "bound each API call's (connect, read) timeout (the SDK waits up to 300 s; no "
        "configuration key sets it)",
        "the SDK's own timeouts (up to 300 s per call)",
    ),
    PrivateMember(
        "clearml",
        "clearml.backend_api.session.session:Session._session_initial_timeout",
        "as _session_timeout, for the first call (login)",
        "as above",
    ),
    PrivateMember(
        "clearml",
        "clearml.backend_api.session.session:Session._write_session_timeout",
        "as _session_timeout, for requests over 15,000 bytes",
        "as above",
    ),
    PrivateMember(
        "typer",
        "typer._click.exceptions:UsageError",
        "print a usage error as one line and exit 2 (typer >= 0.26 vendors click privately and "
        "exports only BadParameter, Exit, Abort and the TyperException base)",
        "typer's own error output for usage errors (exit code kept)",
        needed_if="typer.exceptions:TyperException",
    ),
    PrivateMember(
        "typer",
        "typer._click.exceptions:ClickException",
        "show any other click error as click does, with its exit code",
        "typer.TyperException (public, typer >= 0.27.2) is caught instead",
        needed_if="typer.exceptions:TyperException",
    ),
    PrivateMember(
        "typer",
        "typer._click.exceptions:NoArgsIsHelpError",
        "a bare command group prints its help, not an error line",
        "as above",
        needed_if="typer.exceptions:TyperException",
    ),
    PrivateMember(
        "uvicorn",
        "uvicorn.protocols.http.h11_impl:H11Protocol",
        "a deadline for a request's headers (slow-header clients); uvicorn has no option for it",
        "uvicorn's own protocol without the header deadline",
    ),
)


def sdk_version(sdk: str) -> str:
    try:
        return metadata.version(sdk)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def resolve(where: str) -> Any:
    """The object ``module:Attr.attr`` names; raises ImportError / AttributeError when gone.
    An instance attribute set in ``__init__`` is looked up in the class's ``__init__`` source
    (it is not on the class)."""
    import inspect

    module, _, chain = where.partition(":")
    obj: Any = importlib.import_module(module)
    parts = chain.split(".")
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if i == len(parts) - 1 and isinstance(obj, type):
            src = "".join(
                inspect.getsource(k)
                for k in obj.__mro__
                if k.__module__.split(".")[0] == module.split(".")[0]
            )
            if f"self.{part} =" in src or f"self.{part}:" in src:
                return part
        raise AttributeError(f"{where}: no attribute {part!r}")
    return obj


def _degrade(sdk: str, member: str, fallback: str) -> None:
    warnings.warn(
        f"mlaudit: {sdk} {sdk_version(sdk)} has no {member}; {fallback}",
        RuntimeWarning,
        stacklevel=3,
    )


# --- W&B --------------------------------------------------------------------------------------
def wandb_on_finish(run: Any, callback: Callable[[], None]) -> bool:
    """Call ``callback`` once W&B has finished ``run`` (a ``wandb.Run``), after its last
    messages (``TeardownStage.LATE``), however it ends. False when the run is finished
    already or the SDK lacks the hook list (warning): the caller audits at once."""
    if getattr(run, "_is_finished", False):
        return False
    try:
        from wandb.sdk.wandb_run import TeardownHook, TeardownStage

        hooks = run._teardown_hooks
    except (ImportError, AttributeError):
        _degrade(
            "wandb",
            "Run._teardown_hooks",
            "the run is audited at once, as far as W&B has written it",
        )
        return False
    hooks.append(TeardownHook(callback, TeardownStage.LATE))
    return True


def wandb_graphql(run: Any, query: str, variables: dict) -> dict | None:
    """Run one GraphQL ``query`` through the public ``Run``'s own API client; None (warning)
    when the SDK has no ``_service_api`` (the caller uses the public, broader call)."""
    service = getattr(run, "_service_api", None)
    if service is None or not hasattr(service, "execute_graphql"):
        _degrade(
            "wandb",
            "apis.public.Run._service_api.execute_graphql",
            "using public Run.load / Run.update",
        )
        return None
    return service.execute_graphql(query, variables)


# --- MLflow -----------------------------------------------------------------------------------
def mlflow_store(client: Any) -> Any:
    """The tracking store behind an ``MlflowClient`` (a RestStore or SqlAlchemyStore), or
    None (warning) when the client has none where MLflow 2-3 keep it."""
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    if store is None:
        _degrade(
            "mlflow",
            "MlflowClient._tracking_client.store",
            "per-run public calls instead of bulk reads",
        )
    return store


def mlflow_artifact_repo(run_id: str) -> Any:
    """MLflow's cached artifact repository of ``run_id`` (None when none is cached or the
    SDK lacks the helper, with a warning in the second case)."""
    try:
        from mlflow.tracking._tracking_service.utils import _get_artifact_repo
    except ImportError:
        _degrade(
            "mlflow",
            "tracking._tracking_service.utils._get_artifact_repo",
            "run artifacts still uploading are not flushed",
        )
        return None
    try:
        return _get_artifact_repo(run_id)
    except Exception:  # noqa: BLE001 - nothing cached for this run
        return None


def mlflow_last_active_run_id(mlflow: Any) -> str | None:
    """The id of the calling thread's last MLflow run, without a server request where MLflow
    keeps it (else the public ``mlflow.last_active_run()``)."""
    try:
        from mlflow.tracking.fluent import _last_active_run_id

        return _last_active_run_id.get()
    except (ImportError, AttributeError):
        run = mlflow.last_active_run()
        return run.info.run_id if run is not None else None


def mlflow_metric_objs(data: Any) -> list | None:
    """The ``Metric`` objects (key, value, step, timestamp) of a ``RunData``; None (warning)
    when absent: the caller uses the public ``RunData.metrics`` values."""
    objs = getattr(data, "_metric_objs", None)
    if objs is None:
        _degrade("mlflow", "entities.RunData._metric_objs", "latest values without step")
    return objs


def mlflow_sql_metric_model() -> Any:
    """MLflow's SQLAlchemy model of the ``metrics`` table, or None (warning)."""
    try:
        from mlflow.store.tracking.dbmodels.models import SqlMetric
    except ImportError:
        _degrade(
            "mlflow",
            "store.tracking.dbmodels.models.SqlMetric",
            "reading metric histories per metric through MlflowClient",
        )
        return None
    return SqlMetric


def mlflow_host_creds(uri: str) -> Any:
    """MLflow's ``MlflowHostCreds`` for ``uri`` as its own REST client builds them (token, basic
    auth, TLS options from the MLFLOW_TRACKING_* variables and the credentials file), or None
    (warning) when MLflow has no such function: the caller uses a public call instead."""
    try:
        from mlflow.utils.credentials import get_default_host_creds
    except ImportError:
        try:  # MLflow releases before mlflow.utils.credentials
            from mlflow.tracking._tracking_service.utils import get_default_host_creds
        except ImportError:
            _degrade(
                "mlflow",
                "utils.credentials.get_default_host_creds",
                "reading through the public client instead",
            )
            return None
    return get_default_host_creds(uri)


def mlflow_server_uses_uvicorn() -> bool:
    """True when this process serves an ``mlflow server`` app under uvicorn (MLflow 3's default),
    False under gunicorn / waitress or an MLflow without a FastAPI server. MLflow says which
    only in ``_MLFLOW_SGI_NAME``; without it (warning) uvicorn is assumed when it is imported."""
    try:
        from mlflow.server.fastapi_app import create_fastapi_app  # noqa: F401
    except ImportError:  # MLflow 2.x: Flask under gunicorn / waitress only
        return False
    try:
        from mlflow.environment_variables import _MLFLOW_SGI_NAME
    except ImportError:
        import sys

        _degrade(
            "mlflow",
            "environment_variables._MLFLOW_SGI_NAME",
            "uvicorn is assumed when the server process has imported it",
        )
        return "uvicorn" in sys.modules
    return _MLFLOW_SGI_NAME.get() == "uvicorn"


# --- ClearML ----------------------------------------------------------------------------------
def clearml_set_default_session(session: Any) -> bool:
    """Make ``session`` the ClearML SDK's default session; False (warning) when the SDK has
    no such hook."""
    try:
        from clearml.backend_interface.base import InterfaceBase

        setter = InterfaceBase._set_default_session
    except (ImportError, AttributeError):
        _degrade(
            "clearml",
            "backend_interface.base.InterfaceBase._set_default_session",
            "using the SDK's own configured session",
        )
        return False
    setter(session)
    return True


def clearml_bounded_session(session_cls: type, timeouts: dict[str, tuple[float, float]]) -> type:
    """A subclass of ClearML's ``Session`` class whose per-call ``(connect s, read s)`` timeouts
    are ``timeouts`` (``{class attribute: (connect, read)}``; the SDK reads them from class
    attributes, no configuration key sets them). ``session_cls`` itself (warning) when the SDK
    has none of those attributes: its own timeouts apply."""
    missing = [name for name in timeouts if not hasattr(session_cls, name)]
    if missing:
        _degrade(
            "clearml",
            "backend_api.session.Session." + "/".join(missing),
            "the SDK's own per-call timeouts apply (up to 300 s)",
        )
        return session_cls
    return type("BoundedSession", (session_cls,), dict(timeouts))


# --- typer ------------------------------------------------------------------------------------
def typer_click_exceptions() -> Any:
    """The exceptions module of the click that typer runs on, holding ``UsageError``,
    ``ClickException`` and (click >= 8.2) ``NoArgsIsHelpError``: typer's vendored copy
    (typer >= 0.26, ``typer._click.exceptions``) or the click package's (older typer). Found
    from the module of typer's public ``typer.BadParameter``; None (warning) when that module
    lacks ``UsageError`` or ``ClickException``: the caller handles ``typer.TyperException``."""
    import typer

    mod = importlib.import_module(typer.BadParameter.__module__)
    if not all(hasattr(mod, name) for name in ("UsageError", "ClickException")):
        _degrade(
            "typer",
            f"{mod.__name__}.UsageError/ClickException",
            "usage errors are printed by typer's own handler",
        )
        return None
    return mod


# --- uvicorn ----------------------------------------------------------------------------------
def uvicorn_h11_protocol() -> type | None:
    """uvicorn's h11 HTTP protocol class (to subclass with a header deadline), or None
    (warning): the server runs with uvicorn's default protocol."""
    try:
        from uvicorn.protocols.http.h11_impl import H11Protocol
    except ImportError:
        _degrade(
            "uvicorn",
            "protocols.http.h11_impl.H11Protocol",
            "serving without a deadline for request headers",
        )
        return None
    return H11Protocol
