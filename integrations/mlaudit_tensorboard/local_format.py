"""TensorBoard log directories (``events.out.tfevents.*``), read by the tracker plugin's
full-fidelity reader in ``integrations/mlaudit_tensorboard/reader.py``.

Detected by event files directly in the folder, or in its split sub-folders
(``train/``, ``validation/``, ``eval/``, ``test/``: Keras, Lightning and HF write one
run's splits there), or a single event file. A folder whose event files sit in several
run folders (``lightning_logs/version_*``, ``runs/<date>_<host>``) holds several runs:
:func:`list_runs` names them. Runs are told apart only by directory, never by tag
prefix: PyTorch's documented ``Loss/train``, ``Accuracy/test`` is one run. Split
sub-folders give split-prefixed keys (``train/epoch_loss``, ``validation/epoch_loss``).
"""

from __future__ import annotations

from pathlib import Path

NAME = "tensorboard"
DETECTS = "TensorBoard event files (events.out.tfevents.*)"


def _has_events(d: Path) -> bool:
    try:
        return any(
            "tfevents" in p.name and not p.name.endswith(".mlaudit") and p.is_file()
            for p in d.iterdir()
        )
    except OSError:
        return False


def sniff(path: Path) -> float:
    if path.is_file():
        return 0.8 if "tfevents" in path.name else 0.0
    if _has_events(path):
        return 0.8
    from .reader import run_dirs

    try:
        subs = [d for d in path.iterdir() if d.is_dir()]
    except OSError:
        return 0.0
    files = []
    for d in subs[:200]:
        try:
            files.extend(p for p in d.iterdir() if "tfevents" in p.name and p.is_file())
        except OSError:
            continue
    # event files only in split sub-folders (train/, validation/, "train with SGD"...): one run
    return 0.8 if files and run_dirs(path, files) == [path] else 0.0


def list_runs(path: Path) -> list[Path]:
    from .reader import event_files, run_dirs

    if path.is_file():
        return []
    runs = run_dirs(path, event_files(path))
    return runs if len(runs) > 1 else []


def load(path: Path):
    from .reader import load_logdir

    return load_logdir(path)
