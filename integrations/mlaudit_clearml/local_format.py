"""ClearML offline sessions (``~/.clearml/cache/offline/offline-<id>/`` or its ``.zip``).

Detected by ``task.json`` beside ``metrics.jsonl``/``log.jsonl`` in a folder (or a zip
holding them). Read by the ClearML plugin's offline reader
(``integrations/mlaudit_clearml/offline.py``); nothing is written back.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from mlaudit_core.formats._common import head_text

NAME = "clearml_offline"
DETECTS = "ClearML offline session (task.json, metrics.jsonl)"


def sniff(path: Path) -> float:
    if path.is_dir():
        if (path / "task.json").is_file() and (
            (path / "metrics.jsonl").is_file() or (path / "log.jsonl").is_file()
        ):
            return 0.9
        if (path / "task.json").is_file() and '"id"' in head_text(path / "task.json"):
            return 0.6
        return 0.0
    if path.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()[:50]
        except (zipfile.BadZipFile, OSError):
            return 0.0
        return 0.9 if any(n.endswith("task.json") for n in names) else 0.0
    return 0.0


def load(path: Path):
    from .offline import load_offline

    return load_offline(path)
