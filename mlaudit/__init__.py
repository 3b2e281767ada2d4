"""mlaudit for training scripts: audit the run the moment training ends.

Public surface (imported lazily, so ``import mlaudit`` costs nothing)::

    import mlaudit

    with mlaudit.audit_on_exit():          # or call it once: audits at interpreter exit
        train()

    trainer = Trainer(..., callbacks=[mlaudit.hooks.hf_callback()])          # Hugging Face
    trainer = L.Trainer(..., callbacks=[mlaudit.hooks.lightning_callback()]) # Lightning
    model.fit(..., callbacks=[mlaudit.hooks.keras_callback()])               # Keras

See :mod:`mlaudit.hooks` and ``docs/hooks.md``. The command line is :mod:`mlaudit.cli`
(the application); the library it drives is ``mlaudit_core``; tracker plugins are
``mlaudit_<tracker>``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["audit_on_exit", "hooks"]


def __getattr__(name: str) -> Any:
    if name == "hooks":
        return importlib.import_module(".hooks", __name__)
    if name == "audit_on_exit":
        return importlib.import_module(".hooks", __name__).audit_on_exit
    raise AttributeError(f"module 'mlaudit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
