"""The fake servers the W&B and ClearML tests drive answer only operations and fields the real
servers define, as the SDKs themselves ship them:

- ClearML: every ``ep_<service>__<action>`` of tests/clearml_fake_server.FakeClearMLServer is an
  action of the service definitions in ``clearml.backend_api.services.v<API_VERSION>`` (the
  version the fake announces at login), and every top-level key of a response dict the method
  returns is a property of that action's Response schema.
- W&B: every GraphQL operation the fake answers names a root field of the schema W&B's
  generated client code is built from (``wandb`` ships the operations it sends; a field the fake
  answers that no shipped operation selects is a field the fake invented).

A failure names the SDK version: the fake drifted from the SDK, or the SDK changed."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

HERE = Path(__file__).parent

#: actions the fake answers that the SDK's shipped service definitions lack: the ClearML server
#: has them (the web UI's ``*.get_all_ex`` queries, ``tasks.update_tags``); their request and
#: response shapes were only ever seen against this fake (docs/clearml.md says so)
CLEARML_NOT_SHIPPED = {"projects.get_all_ex", "tasks.get_all_ex", "tasks.update_tags"}


def _clearml_fake():
    import clearml_fake_server

    return clearml_fake_server


def _returned_keys(fn) -> set[str]:
    """Top-level string keys of every dict literal the method returns directly."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            keys |= {
                k.value
                for k in node.value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return keys


def _clearml_actions():
    pytest.importorskip("clearml")
    fake = _clearml_fake()
    pkg = "clearml.backend_api.services.v" + fake.API_VERSION.replace(".", "_")
    out = []
    for name, fn in inspect.getmembers(fake.FakeClearMLServer, inspect.isfunction):
        if name.startswith("ep_"):
            service, _, action = name[3:].partition("__")
            out.append((pkg, service, action, fn))
    return out


def _response_class(pkg: str, service: str, action: str):
    try:
        mod = importlib.import_module(f"{pkg}.{service}")
    except ImportError:
        return None, None
    for obj in vars(mod).values():
        if (
            inspect.isclass(obj)
            and getattr(obj, "_service", None) == service
            and getattr(obj, "_action", None) == action
        ):
            if obj.__name__.endswith("Response"):
                return mod, obj
    return mod, None


def test_the_fake_clearml_server_answers_only_actions_the_sdk_defines():
    actions = _clearml_actions()
    assert len(actions) > 20, "FakeClearML's ep_ methods were not found"
    ver = metadata.version("clearml")
    missing, extra = [], []
    for pkg, service, action, fn in actions:
        mod, resp = _response_class(pkg, service, action)
        if mod is None or resp is None:
            if f"{service}.{action}" not in CLEARML_NOT_SHIPPED:
                missing.append(f"{service}.{action}")
            continue
        assert f"{service}.{action}" not in CLEARML_NOT_SHIPPED, (
            f"clearml {ver} now ships {service}.{action}: drop it from CLEARML_NOT_SHIPPED"
        )
        props = set((resp._schema or {}).get("properties") or {})
        if props:
            extra += [f"{service}.{action}: {k}" for k in sorted(_returned_keys(fn) - props)]
    assert not missing, (
        f"clearml {ver} ({pkg}) defines no action for the fake's {', '.join(missing)}"
    )
    assert not extra, f"clearml {ver}: the fake answers fields its Response schema lacks: {extra}"


def test_returned_keys_reads_return_dict_literals():
    class C:
        def ep_a__b(self, d):
            if d:
                return {"x": 1, "y": 2}
            return {"z": 3}

    assert _returned_keys(C.ep_a__b) == {"x", "y", "z"}


def _wandb_shipped_root_fields() -> tuple[set[str], set[str]]:
    """Root query and mutation fields of every GraphQL document in the installed ``wandb``
    package's string literals (W&B ships no schema file; its client sends these documents)."""
    from graphql import parse
    from graphql.language import OperationDefinitionNode

    roots = []
    for pkg in ("wandb", "wandb_workspaces"):  # W&B's report/workspace API is its own package
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.origin:
            roots.append(Path(spec.origin).parent)
    queries: set[str] = set()
    mutations: set[str] = set()
    for path in (p for root in roots for p in root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if "{" not in text or not any(w in text for w in ("query", "mutation", "{")):
                continue
            try:
                doc = parse(re.sub(r"\{\d*\}", "", text).replace("{{", "{").replace("}}", "}"))
            except Exception:  # noqa: BLE001 - not a GraphQL document (or a format template)
                continue
            for op in doc.definitions:
                if isinstance(op, OperationDefinitionNode):
                    names = {
                        s.name.value for s in op.selection_set.selections if hasattr(s, "name")
                    }
                    (mutations if op.operation.value == "mutation" else queries).update(names)
    for core in (r / "bin" / "wandb-core" for r in roots):
        if core.is_file():  # wandb-core (Go) sends the run's own operations: its embedded documents
            for doc in _embedded_documents(core.read_bytes()):
                for op in parse_ops(doc):
                    (mutations if op[0] == "mutation" else queries).update(op[1])
    return queries, mutations


def parse_ops(text: str) -> list[tuple[str, set[str]]]:
    from graphql import parse
    from graphql.language import OperationDefinitionNode

    try:
        doc = parse(text)
    except Exception:  # noqa: BLE001 - not a whole document
        return []
    return [
        (
            op.operation.value,
            {s.name.value for s in op.selection_set.selections if hasattr(s, "name")},
        )
        for op in doc.definitions
        if isinstance(op, OperationDefinitionNode)
    ]


def _embedded_documents(blob: bytes):
    """GraphQL operations embedded in a binary: from ``query Name`` / ``mutation Name`` to the
    brace that closes its selection set."""
    for m in re.finditer(rb"(?:query|mutation) [A-Za-z_]\w*[ (]", blob):
        depth, i, opened = 0, m.start(), False
        end = min(len(blob), m.start() + 20000)
        while i < end:
            c = blob[i]
            if c == 0x7B:
                depth += 1
                opened = True
            elif c == 0x7D:
                depth -= 1
                if opened and depth == 0:
                    yield blob[m.start() : i + 1].decode("utf-8", "replace")
                    break
            i += 1


def test_the_fake_wandb_server_answers_only_root_fields_the_sdk_sends():
    pytest.importorskip("wandb")
    pytest.importorskip("graphql")
    import wandb_fake_server

    fake = wandb_fake_server.FakeWandbServer("k")
    queries, mutations = _wandb_shipped_root_fields()
    assert "upsertBucket" in mutations and "project" in queries, "no shipped document was read"
    ver = metadata.version("wandb")
    q_extra = sorted(set(fake.query_root()) - queries)
    m_extra = sorted(set(fake.mutation_root()) - mutations)
    assert not q_extra and not m_extra, (
        f"wandb {ver} sends no operation with root field(s) {q_extra + m_extra} that the fake "
        "answers: the fake drifted from the SDK (or the SDK changed its calls)"
    )
