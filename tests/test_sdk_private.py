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
    assert {m.sdk for m in MEMBERS} == {"wandb", "mlflow", "clearml", "uvicorn"}


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
