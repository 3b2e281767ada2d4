"""The registry delivery queue keeps the model name it must tag.

The queue (integrations/mlaudit_mlflow/registry_state.py) is what the webhook worker reads to
tag ``name``/``version``; the name is the registered model's address, not free text. Before the
fix it was passed through the credential redactor, which takes scikit-learn-style names such as
``sk-learn-classifier-prod-...`` for an OpenAI key: the worker then tagged model '[REDACTED]'
(lost delivery) and a second such model's version 1 was refused as a duplicate of the first.
Real sqlite state file (StateStore), no mock.
"""

from __future__ import annotations

from mlaudit_mlflow.registry_state import DeliveryQueue

from mlaudit_core.service import StateStore

NAMES = [
    "sk-learn-classifier-prod-2024-01-15-baseline",
    "sk-learn-regressor-prod-2024-01-15-candidate",
]


def test_model_names_reach_the_worker_unchanged(tmp_path):
    store = StateStore(tmp_path / "deliveries.sqlite", "mlflow registry webhook test")
    try:
        queue = DeliveryQueue(store)
        assert [queue.add(f"d{i}", n, "1", f"run{i}") for i, n in enumerate(NAMES)] == [
            "queued"
        ] * 2
        claimed = [queue.claim(), queue.claim()]
        assert [d.name for d in claimed] == NAMES
        assert queue.add("d0", NAMES[0], "1", "run0") == "seen"
    finally:
        store.close()
