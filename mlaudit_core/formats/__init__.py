"""Local run artifacts: one reader per format, found by sniffing, all in this package.

Every file or folder a framework or tracker leaves on disk is read here: Hugging Face
``trainer_state.json``, CSV logs (Lightning ``CSVLogger``, Keras ``CSVLogger``,
Ultralytics ``results.csv``, timm ``summary.csv``, generic step/epoch tables: comma, tab or
space separated), a Keras ``History`` saved as JSON, JSON-lines
logs (detectron2 ``metrics.json``, mmdetection ``*.log.json``, DETR ``log.txt``,
LLaMA-Factory ``trainer_log.jsonl``), console logs (engine: :mod:`.consolelog`),
TensorBoard log directories, MLflow file stores, W&B run folders and ClearML offline
sessions (the last three readers come with their tracker plugins, registered in the
``mlaudit.formats`` entry-point group). ``docs/formats.md`` lists them with how each is
detected.

Public API (stable; ``benchmarks/diagnosis_eval.py`` and the ``mlaudit PATH`` command
use it)::

    from mlaudit_core.formats import load_path, plan, readers

    loaded = load_path(path, fmt=None)      # -> Loaded
    loaded.reader                           # name of the reader chosen ("trainer_state", ...)
    loaded.reason                           # why: "trainer_state.json with a log_history list"
    loaded.runs                             # list[tuple[str, RunData]]: (run path, run)
    loaded.problems                         # list[tuple[str, str]]: (run path, why unreadable)
    for where, run in loaded: ...           # iterating gives the runs

:func:`load_path` accepts a file or a folder. A folder that is one run gives one
entry; a folder holding several runs (``lightning_logs/version_*``, ``runs/train/exp*``,
an ``mlruns/`` store, a ``wandb/`` folder with several ``run-*``) gives one entry per
run, in path order. ``fmt`` forces a reader by name (``--as`` on the command line).
It raises :class:`~mlaudit_core.errors.InputError` (one line naming the path and the
problem) when nothing recognisable is there, when the only candidate cannot be read,
or when ``fmt`` is unknown. Runs of a multi-run folder that cannot be read are listed
in ``problems`` instead.

A reader is a module (or any object) with:

``NAME`` (str)
    the name ``--as`` takes.
``DETECTS`` (str)
    one line: what it recognises (shown when it is chosen).
``sniff(path: Path) -> float``
    confidence in [0, 1] that ``path`` (a file or a folder) is this format and holds
    one run; must be cheap (reads at most a few KiB) and never raise.
``load(path: Path) -> RunData``
    the run; raises :class:`~mlaudit_core.errors.InputError` for bad input.
``list_runs(path: Path) -> list[Path]`` (optional)
    for container formats (an MLflow store, a ``wandb/`` folder): the runs inside,
    or ``[]`` when ``path`` is itself one run. Called for folders; for files too when the
    reader sets ``LISTS_FILE_RUNS = True`` (a SQLite store: runs named ``FILE#RUN_ID``).

Every reader, the built-in ones included, is registered in the ``mlaudit.formats``
entry-point group (``name = "package.module"`` or ``"package.module:object"``; mlaudit's own in
its ``pyproject.toml``). A third-party reader with the name of a built-in replaces it. A reader
that fails to import warns and is left out.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol, cast

from ..errors import InputError
from ..rundata import RunData

#: Tie-break order of the readers (earlier wins at equal confidence); readers not named here
#: come after these, in the order found.
ORDER = (
    "trainer_state",
    "catboost_info",
    "ultralytics",
    "lightning_csv",
    "keras_csv",
    "keras_history",
    "timm_csv",
    "jsonlines",
    "mlflow_store",
    "wandb_dir",
    "clearml_offline",
    "tensorboard",
    "generic_csv",
    "console",
)

#: Confidence at or above which a folder (or a file inside a walked folder) is taken as a run.
CLAIM = 0.5
#: Folders walked below a multi-run folder, and entries looked at in all.
MAX_DEPTH = 8
MAX_ENTRIES = 200_000
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    "node_modules",
    ".ipynb_checkpoints",
    ".mlaudit",
    "site-packages",
    ".venv",
    "venv",
}


@dataclass
class Loaded:
    """What :func:`load_path` read. Iterating yields ``(run path, RunData)`` pairs."""

    path: str
    reader: str
    reason: str
    runs: list[tuple[str, RunData]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)

    def __iter__(self) -> Iterator[tuple[str, RunData]]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)


@dataclass
class Candidate:
    """One run found under a path: where, which reader, its confidence and why."""

    path: Path
    reader: str
    confidence: float
    reason: str


class FormatReader(Protocol):
    """A format reader (a module of this package or an ``mlaudit.formats`` entry point); the
    interface in the module docstring."""

    def sniff(self, path: Path) -> float: ...

    def load(self, path: Path) -> RunData: ...


@functools.lru_cache(maxsize=1)
def readers() -> dict[str, FormatReader]:
    """Every reader by name, from the ``mlaudit.formats`` entry points: mlaudit's own first,
    then other packages' (which replace one of the same name), in :data:`ORDER`. Cached;
    ``readers.cache_clear()`` looks again."""
    out: dict[str, FormatReader] = {}
    try:
        eps = list(entry_points(group="mlaudit.formats"))
    except Exception:  # noqa: BLE001 - broken third-party metadata warns, never crashes
        warnings.warn("the mlaudit.formats entry points could not be read", stacklevel=2)
        eps = []
    eps.sort(key=lambda ep: getattr(ep.dist, "name", None) != "mlaudit")  # stable: own first
    for ep in eps:
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken third-party reader warns, never crashes
            warnings.warn(f"format reader {ep.name!r} failed to load: {exc}", stacklevel=2)
            continue
        if not (callable(getattr(obj, "sniff", None)) and callable(getattr(obj, "load", None))):
            warnings.warn(
                f"format reader {ep.name!r} has no sniff()/load(); left out", stacklevel=2
            )
            continue
        out[getattr(obj, "NAME", ep.name)] = cast(FormatReader, obj)
    rank = {name: i for i, name in enumerate(ORDER)}
    return dict(sorted(out.items(), key=lambda kv: rank.get(kv[0], len(ORDER))))  # stable


def _sniff(reader, path: Path) -> float:
    try:
        c = float(reader.sniff(path))
    except Exception:  # noqa: BLE001 - a sniffer must not break discovery
        return 0.0
    return c if c == c else 0.0  # NaN -> 0


def best(path: Path, table: dict[str, FormatReader] | None = None) -> Candidate | None:
    """The reader most confident about ``path`` itself (no walking), or None when all say 0."""
    table = table or readers()
    scored = [(_sniff(r, path), -i, name) for i, (name, r) in enumerate(table.items())]
    conf, _, name = max(scored) if scored else (0.0, 0, "")
    if conf <= 0:
        return None
    return Candidate(path, name, conf, getattr(table[name], "DETECTS", name))


_CKPT = re.compile(r"checkpoint-(\d+)$")
_GLOBAL_STEP = re.compile(rb'"global_step"\s*:\s*(\d+)')


def _global_step(state: Path, ckpt: re.Match | None) -> int:
    """A ``trainer_state.json``'s ``global_step`` (HF writes it with sorted keys, near the top:
    the first 64 KiB is read), else the ``checkpoint-N`` number, else -1."""
    try:
        with open(state, "rb") as fh:
            m = _GLOBAL_STEP.search(fh.read(65536))
        if m:
            return int(m.group(1))
    except OSError:
        pass
    return int(ckpt.group(1)) if ckpt else -1


def _latest_checkpoints(found: list[Candidate]) -> list[Candidate]:
    """One run per Hugging Face ``output_dir``: its ``checkpoint-N/trainer_state.json`` files
    (and a ``trainer_state.json`` beside them, from ``save_state``) are snapshots of ONE
    training, each holding the cumulative ``log_history`` up to its step, so only the one
    with the highest ``global_step`` is audited; the others are named in its reason. Auditing
    each snapshot as a run would call an early checkpoint of a run that went on 'succeeded'
    (a real Trainer run with save_strategy=epoch writes one per epoch)."""
    groups: dict[Path, list[tuple[int, bool, Candidate]]] = {}
    keep: list[Candidate | Path] = []
    for c in found:
        if c.reader != "trainer_state":
            keep.append(c)
            continue
        state = c.path if c.path.is_file() else c.path / "trainer_state.json"
        m = _CKPT.match(state.parent.name)
        out = state.parent.parent if m else state.parent
        if out not in groups:
            groups[out] = []
            keep.append(out)
        groups[out].append((_global_step(state, m), m is None, c))
    result: list[Candidate] = []
    for k in keep:
        if isinstance(k, Candidate):
            result.append(k)
            continue
        members = groups[k]
        if len(members) == 1:
            result.append(members[0][2])
            continue
        members.sort(key=lambda t: (t[0], t[1]))
        best_c = members[-1][2]
        others = ", ".join(
            sorted(
                t[2].path.parent.name if t[2].path.is_file() else t[2].path.name
                for t in members[:-1]
            )
        )
        result.append(
            Candidate(
                best_c.path,
                best_c.reader,
                best_c.confidence,
                f"{best_c.reason}; the latest of {len(members)} snapshots of one "
                f"Trainer output_dir (earlier: {others}, prefixes of its log_history)",
            )
        )
    return result


def _missing(p: Path) -> str:
    """Why ``p``, which does not exist, cannot be read: a link loop, a link to nothing, or no
    such file."""
    if not p.is_symlink():
        return "no such file or folder"
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop (it points back to itself), no run to read"
    return f"a symbolic link to {os.readlink(p)}, which does not exist (no run to read)"


def plan(
    path: str | os.PathLike, fmt: str | None = None
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The runs under ``path`` and the reader for each, without loading them.

    Returns ``(candidates, skipped)``; ``skipped`` names files that looked like a format
    but are not readable (a Git LFS pointer) with the reason, and where the walk stopped
    (folders deeper than :data:`MAX_DEPTH`, more than :data:`MAX_ENTRIES` entries), once each.

    Raises:
        InputError: ``path`` does not exist, ``fmt`` is unknown, or nothing under ``path``
            is recognisable (the message says what was looked for).
    """
    from ._common import placeholder_problem

    p = Path(path).expanduser()
    table = readers()
    head, sep, _run = str(p).rpartition("#")
    if not p.exists() and sep and Path(head).is_file():  # FILE#RUN: one run inside a file
        c = best(p, table) if fmt is None else Candidate(p, fmt, 1.0, f"forced with --as {fmt}")
        if c is None or fmt not in (None, *table):
            raise InputError(f"{p}: {head} holds no run named {_run!r} that a reader knows")
        return [c], []
    if not p.exists():
        raise InputError(f"{p}: {_missing(p)}")
    if not p.is_file() and not p.is_dir():  # reading a FIFO blocks until a writer comes
        raise InputError(f"{p}: not a regular file or folder (a FIFO, socket or device)")
    if fmt is not None:
        if fmt not in table:
            raise InputError(f"--as {fmt}: unknown format (known: {', '.join(sorted(table))})")
        r = table[fmt]
        subs = _list_runs(r, p)
        if subs:
            return [Candidate(s, fmt, 1.0, f"forced with --as {fmt}") for s in subs], []
        return [Candidate(p, fmt, 1.0, f"forced with --as {fmt}")], []
    if p.is_file():
        problem = placeholder_problem(p)
        if problem:
            raise InputError(f"{p}: {problem}")
        c = best(p, table)
        if c is None:
            raise InputError(f"{p}: not a recognised run file (docs/formats.md lists the formats)")
        subs = _list_runs(table[c.reader], p)  # a file holding several runs (a SQLite store)
        if subs:
            return [Candidate(s, c.reader, c.confidence, c.reason) for s in subs], []
        return [c], []
    found: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    _walk(p, table, found, skipped, 0, [0, 0, 0])
    found = _latest_checkpoints(found)
    if not found:
        why = "; ".join(f"{a}: {b}" for a, b in skipped[:3])
        empty = p.is_dir() and next(p.iterdir(), None) is None
        raise InputError(
            f"{p}: "
            + (
                "the folder is empty, nothing was written there (a Hugging Face output_dir stays "
                "empty with save_strategy='no')"
                if empty
                else "nothing recognisable as a training run here"
                f"{' (' + why + ')' if why else ''} (docs/formats.md lists the formats)"
            )
            + "; if the job's console output was saved, audit it: mlaudit logs FILE"
        )
    return found, skipped


def _list_runs(reader, path: Path) -> list[Path]:
    fn = getattr(reader, "list_runs", None)
    if fn is None or not (path.is_dir() or getattr(reader, "LISTS_FILE_RUNS", False)):
        return []
    try:
        return list(fn(path))
    except InputError:
        raise
    except Exception:  # noqa: BLE001
        return []


def _walk(
    d: Path,
    table,
    found: list[Candidate],
    skipped: list[tuple[str, str]],
    depth: int,
    seen: list[int],
) -> None:
    from ._common import placeholder_problem

    c = best(d, table)
    if c is not None and c.confidence >= CLAIM:
        subs = _list_runs(table[c.reader], d)
        if subs:
            found.extend(Candidate(s, c.reader, c.confidence, c.reason) for s in subs)
        else:
            found.append(c)
        return
    if depth > MAX_DEPTH:
        if not seen[1]:  # said once: the runs below are missing from the plan
            seen[1] = 1
            skipped.append((str(d), f"folders deeper than {MAX_DEPTH} levels were not looked at"))
        return
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError as exc:
        skipped.append((str(d), f"cannot list ({exc.strerror})"))
        return
    files = []
    for e in entries:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES:
            if not seen[2]:
                seen[2] = 1
                skipped.append(
                    (
                        str(d),
                        f"more than {MAX_ENTRIES:,} entries under the path; the "
                        "rest were not looked at",
                    )
                )
            return
        try:
            if e.is_dir(follow_symlinks=False):
                if e.name not in _SKIP_DIRS:
                    _walk(Path(e.path), table, found, skipped, depth + 1, seen)
            elif e.is_file():
                files.append(Path(e.path))
        except OSError:
            continue
    for f in files:
        fc = best(f, table)
        if fc is not None and fc.confidence >= CLAIM:
            problem = placeholder_problem(f)
            if problem:
                skipped.append((str(f), problem))
                continue
            subs = _list_runs(table[fc.reader], f)
            found.extend(
                [Candidate(s, fc.reader, fc.confidence, fc.reason) for s in subs] if subs else [fc]
            )
        elif "tfevents" in f.name:
            problem = placeholder_problem(f)
            if problem:
                skipped.append((str(f), problem))


def load_path(path: str | os.PathLike, fmt: str | None = None) -> Loaded:
    """Sniff ``path`` (a file or a folder) and load every run in it.

    Args:
        path: a run file, a run folder, or a folder holding several runs.
        fmt: a reader name to use instead of sniffing (``--as``).

    Returns:
        :class:`Loaded`: ``runs`` as ``(run path, RunData)`` in path order, the reader
        chosen (``"mixed"`` when a multi-run folder holds several formats), why, and
        ``problems`` for runs that could not be read.

    Raises:
        InputError: nothing recognisable; the only run cannot be read (its one-line
            problem); an unknown ``fmt``.
    """
    cands, skipped = plan(path, fmt)
    table = readers()
    names = sorted({c.reader for c in cands})
    reader = names[0] if len(names) == 1 else "mixed"
    reason = (
        cands[0].reason
        if len(cands) == 1
        else (
            f"{len(cands)} runs: "
            + ", ".join(f"{n} ({sum(c.reader == n for c in cands)})" for n in names)
        )
    )
    out = Loaded(str(path), reader, reason, problems=list(skipped))
    for c in cands:
        try:
            run = table[c.reader].load(c.path)
        except InputError as exc:
            if len(cands) == 1:
                raise
            out.problems.append((str(c.path), str(exc)))
            continue
        run.tags.setdefault("mlaudit.format", c.reader)
        out.runs.append((str(c.path), run))
    return out
