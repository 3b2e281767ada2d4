"""mlaudit_core.sdk_private: every private SDK member mlaudit uses still exists in the installed
SDK (a failure names the SDK and its version), and each adapter degrades to a warning, not a
crash, when its member is gone."""

from __future__ import annotations

import importlib.util

import pytest

from mlaudit_core import sdk_private
from mlaudit_core.sdk_private import MEMBERS, resolve, sdk_version


@pytest.mark.parametrize("member", MEMBERS, ids=[m.where for m in MEMBERS])
def test_resolve_finds_each_private_member_in_the_installed_sdk(member):
    if importlib.util.find_spec(member.sdk) is None:
        pytest.skip(f"{member.sdk} not installed")
    if member.needed_if:
        try:
            resolve(member.needed_if)
        except (ImportError, AttributeError):
            pytest.skip(
                f"{member.sdk} {sdk_version(member.sdk)} predates {member.where} "
                f"(no {member.needed_if}): the adapter takes the older path"
            )
    try:
        resolve(member.where)
    except (ImportError, AttributeError) as exc:
        pytest.fail(
            f"{member.sdk} {sdk_version(member.sdk)} changed {member.where} ({exc}): "
            f"mlaudit needs it to {member.why}; without it: {member.fallback}. Update "
            "mlaudit_core/sdk_private.py and docs/extending.md",
            pytrace=False,
        )


def test_members_cover_every_adapter_sdk():
    assert {m.sdk for m in MEMBERS} == {"wandb", "mlflow", "clearml", "uvicorn", "typer"}


def test_resolve_raises_on_a_missing_member():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        resolve("json:JSONDecoder.nope")
    with pytest.raises(ImportError):
        resolve("json_missing_module_x:thing")


def test_wandb_on_finish_warns_and_returns_false_without_teardown_hooks():
    class Run:  # a wandb.Run of an SDK without _teardown_hooks
        _is_finished = False

    with pytest.warns(RuntimeWarning, match=r"wandb \S+ has no Run._teardown_hooks"):
        assert sdk_private.wandb_on_finish(Run(), lambda: None) is False


def test_wandb_on_finish_registers_a_late_hook():
    pytest.importorskip("wandb")
    from wandb.sdk.wandb_run import TeardownStage

    class Run:
        _is_finished = False
        _teardown_hooks: list = []

    calls = []
    assert sdk_private.wandb_on_finish(Run(), lambda: calls.append(1)) is True
    hook = Run._teardown_hooks[-1]
    assert hook.stage == TeardownStage.LATE
    hook.call()
    assert calls == [1]


def test_wandb_on_finish_is_false_for_a_finished_run():
    class Run:
        _is_finished = True

    assert sdk_private.wandb_on_finish(Run(), lambda: None) is False


def test_wandb_graphql_warns_and_returns_none_without_a_service_api():
    with pytest.warns(RuntimeWarning, match="using public Run.load"):
        assert sdk_private.wandb_graphql(object(), "query { x }", {}) is None


def test_wandb_graphql_passes_query_and_variables():
    class Service:
        def execute_graphql(self, q, v):
            return {"q": q, "v": v}

    class Run:
        _service_api = Service()

    assert sdk_private.wandb_graphql(Run(), "query", {"a": 1}) == {"q": "query", "v": {"a": 1}}


def test_mlflow_store_warns_and_returns_none_for_a_client_without_one():
    with pytest.warns(RuntimeWarning, match=r"mlflow \S+ has no MlflowClient._tracking_client"):
        assert sdk_private.mlflow_store(object()) is None


def test_mlflow_store_returns_a_real_clients_store(tmp_path):
    mlflow = pytest.importorskip("mlflow")
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    assert hasattr(sdk_private.mlflow_store(client), "get_metric_history_bulk_interval")


def test_mlflow_metric_objs_warns_on_rundata_without_them():
    with pytest.warns(RuntimeWarning, match="RunData._metric_objs"):
        assert sdk_private.mlflow_metric_objs(object()) is None


def test_mlflow_last_active_run_id_is_none_before_any_run():
    mlflow = pytest.importorskip("mlflow")
    got = sdk_private.mlflow_last_active_run_id(mlflow)
    assert got is None or isinstance(got, str)


def test_module_level_models_resolve():
    pytest.importorskip("mlflow")
    assert sdk_private.mlflow_sql_metric_model().__tablename__ == "metrics"
    pytest.importorskip("uvicorn")
    assert sdk_private.uvicorn_h11_protocol().__name__ == "H11Protocol"


def test_mlflow_host_creds_are_mlflows_own_for_the_uri(monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-123")
    creds = sdk_private.mlflow_host_creds("http://127.0.0.1:5000/api/2.0/mlflow-artifacts")
    assert creds.host == "http://127.0.0.1:5000/api/2.0/mlflow-artifacts"
    assert creds.token == "tok-123"


def test_mlflow_host_creds_warn_and_are_none_without_the_helper(monkeypatch):
    pytest.importorskip("mlflow")
    import sys

    monkeypatch.setitem(sys.modules, "mlflow.utils.credentials", None)  # import raises
    monkeypatch.setitem(sys.modules, "mlflow.tracking._tracking_service.utils", None)
    with pytest.warns(RuntimeWarning, match=r"mlflow \S+ has no utils.credentials"):
        assert sdk_private.mlflow_host_creds("http://127.0.0.1:1") is None


@pytest.mark.parametrize(
    "sgi, expected", [("uvicorn", True), ("gunicorn", False), ("waitress", False)]
)
def test_mlflow_server_uses_uvicorn_follows_mlflow_servers_choice(monkeypatch, sgi, expected):
    pytest.importorskip("mlflow.server.fastapi_app")
    monkeypatch.setenv("_MLFLOW_SGI_NAME", sgi)
    assert sdk_private.mlflow_server_uses_uvicorn() is expected


def test_mlflow_server_uses_uvicorn_warns_without_the_variable(monkeypatch):
    pytest.importorskip("mlflow.server.fastapi_app")
    import sys

    import mlflow.environment_variables as ev

    monkeypatch.delattr(ev, "_MLFLOW_SGI_NAME")
    with pytest.warns(RuntimeWarning, match="_MLFLOW_SGI_NAME; uvicorn is assumed"):
        got = sdk_private.mlflow_server_uses_uvicorn()
    assert got is ("uvicorn" in sys.modules)


def test_clearml_bounded_session_sets_the_timeouts_on_a_subclass():
    pytest.importorskip("clearml")
    from clearml.backend_api.session import Session

    timeouts = {
        "_session_timeout": (4.0, 5.0),
        "_session_initial_timeout": (4.0, 5.0),
        "_write_session_timeout": (4.0, 15.0),
    }
    before = Session._session_timeout
    bounded = sdk_private.clearml_bounded_session(Session, timeouts)
    assert issubclass(bounded, Session) and bounded is not Session
    assert bounded._write_session_timeout == (4.0, 15.0)
    assert Session._session_timeout == before  # the SDK's class is left as it was


def test_clearml_bounded_session_warns_and_keeps_the_class_without_the_attributes():
    class Session:  # an SDK whose Session no longer keeps timeouts in class attributes
        pass

    with pytest.warns(RuntimeWarning, match=r"clearml \S+ has no .*_session_timeout"):
        assert sdk_private.clearml_bounded_session(Session, {"_session_timeout": (1, 1)}) is Session


def test_typer_click_exceptions_is_the_module_of_typers_bad_parameter():
    import typer

    mod = sdk_private.typer_click_exceptions()
    assert issubclass(typer.BadParameter, mod.UsageError)
    assert issubclass(mod.UsageError, mod.ClickException)


def test_typer_click_exceptions_warns_when_the_module_lacks_them(monkeypatch):
    import typer

    class BadParameter(Exception):  # a typer whose BadParameter lives in a module without them
        __module__ = "json"

    monkeypatch.setattr(typer, "BadParameter", BadParameter)
    with pytest.warns(RuntimeWarning, match=r"typer \S+ has no json.UsageError"):
        assert sdk_private.typer_click_exceptions() is None


@pytest.mark.parametrize("adapter", ["present", "degraded"])
def test_cli_usage_error_exits_2_with_and_without_the_typer_adapter(monkeypatch, capsys, adapter):
    """With the adapter a usage error is one line; degraded (typer's click gone) typer prints
    its own message, and the exit code is still 2, not an internal error (3)."""
    import sys

    from mlaudit import cli

    if adapter == "degraded":
        monkeypatch.setattr(sdk_private, "typer_click_exceptions", lambda: None)
    monkeypatch.setattr(sys, "argv", ["mlaudit", "logs", "--bogus-option", "x"])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--bogus-option" in err and "internal error" not in err
    if adapter == "present":
        assert err.count("\n") == 1 and "logs: No such option: --bogus-option (see '" in err
