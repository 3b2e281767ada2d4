"""Weights & Biases integration for mlaudit.

Read a run online (``wandb.Api``) or offline (a ``run-<id>.wandb`` directory),
write the verdict back (tags, ``mlaudit/`` summary keys, a notes section, report
files, a report panel), and triage runs automatically from W&B Automations
webhooks or by polling. The wandb SDK is imported only when used.
"""

from __future__ import annotations

from .offline import load_offline
from .plugin import WandbPlugin

__all__ = ["WandbPlugin", "load_offline"]
