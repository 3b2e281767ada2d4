"""Hugging Face ``Trainer`` state: ``checkpoint-N/trainer_state.json`` (or the checkpoint folder).

Detected by a JSON object with a ``log_history`` list (``global_step``, ``max_steps``
beside it). Every ``log_history`` entry is a logging event at its ``step``: training
entries give ``loss``, ``learning_rate``, ``grad_norm`` and ``epoch``; evaluation entries
``eval_*``. The closing summary entry (``train_runtime``, ``train_loss``: an average over
the whole run, not a point) goes to params as ``final.*``. ``max_steps``,
``num_train_epochs``, ``logging_steps``, ``eval_steps``, ``global_step``,
``best_metric`` and ``best_model_checkpoint`` become params so the planned length is
known. A checkpoint is written mid-run: ``global_step < max_steps`` is said in the notes
and is no evidence of a crash by itself; unless the saved callback states say the Trainer
ended training at that step (``TrainerControl.should_training_stop``, ``EarlyStoppingCallback``'s
patience counter at its patience): then the note says training stopped by itself.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._common import flat_params, head_text, hf_model_config_params, read_json, wide_run

NAME = "trainer_state"
DETECTS = "Hugging Face trainer_state.json (log_history list)"
_STATE_KEYS = (
    "max_steps",
    "num_train_epochs",
    "logging_steps",
    "eval_steps",
    "save_steps",
    "global_step",
    "epoch",
    "best_metric",
    "best_model_checkpoint",
    "train_batch_size",
    "best_global_step",
)
_SUMMARY = (
    "train_runtime",
    "train_samples_per_second",
    "train_steps_per_second",
    "total_flos",
    "train_loss",
)
MAX_BYTES = 512 << 20


def _file_conf(p: Path) -> float:
    text = head_text(p, 8192)
    if '"log_history"' in text or ('"global_step"' in text and '"max_steps"' in text):
        return 0.95
    if p.name == "trainer_state.json" and '"global_step"' in text:
        return 0.9  # the Trainer's file name and step counter, without the history (:func:`_read_state`)
    return 0.0


def sniff(path: Path) -> float:
    if path.is_dir():
        f = path / "trainer_state.json"
        return _file_conf(f) if f.is_file() else 0.0
    if path.suffix.lower() != ".json":
        return 0.0
    return _file_conf(path)


def load(path: Path):
    """A Hugging Face ``trainer_state.json`` (or a checkpoint folder holding one) as a run: its
    ``log_history`` as series by step (:func:`_history`), the end-of-training summary as params
    (as the only record when no step was logged), where the checkpoint sits in ``max_steps``.

    Raises:
        InputError: larger than :data:`MAX_BYTES`, not JSON, or no ``log_history`` list.
    """
    if path.is_dir():
        path = path / "trainer_state.json"
    state = _read_state(path)
    warnings: list[str] = []
    params: dict[str, str] = {k: str(state[k]) for k in _STATE_KEYS if state.get(k) is not None}
    cols, steps, bad, summary = _history(state["log_history"], params)
    if bad:
        warnings.append(
            f"{path.name}: {bad} log_history entries (or values) were not readable and were "
            "left out"
        )
    notes = []
    if not steps and summary is not None:
        notes.append(_summary_only(state, summary, cols, steps))
    if state.get(_NO_HISTORY):
        flat_params(
            {
                k: v
                for k, v in state.items()
                if k not in _STATE_KEYS and k not in (_NO_HISTORY, "log_history")
            },
            "summary.",
            params,
        )
        warnings.append(
            f"{path.name}: no log_history (not as the Trainer writes it): only summary values "
            f"({', '.join(k for k in state if k != _NO_HISTORY and k != 'log_history')}), no curve"
        )
    elif not steps:
        # Partial data, not bad input: the state is read (global_step, max_steps, whether training was told to
        # stop) and the report says the curve is missing.
        warnings.append(
            f"{path.name}: log_history holds no logged step (logging_steps "
            f"{state.get('logging_steps')} vs {state.get('global_step')} steps run, or the checkpoint "
            "was saved before the first logging step): no metric was recorded"
        )
    hf_model_config_params(path.parent, params, notes, warnings)
    n = len(steps)
    arrays = {}
    for k, pts in cols.items():
        v = np.full(n, np.nan)
        present = np.zeros(n, dtype=bool)
        idx = np.fromiter((r for r, _ in pts), np.int64, len(pts))
        v[idx] = np.fromiter((x for _, x in pts), np.float64, len(pts))
        present[idx] = True
        arrays[k] = (v, present)
    note = _checkpoint_note(state, params)
    if note:
        notes.append(note)
    if not steps:
        from ..rundata import MetricTable, RunData, RunIdentity, RunStatus
        from ._common import _name, run_id

        empty = MetricTable(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), names=[])
        return RunData(
            identity=RunIdentity(tracker="huggingface", id=run_id(path), name=_name(path)),
            status=RunStatus.UNKNOWN,
            params={**params, "log.step_axis": "step"},
            metrics=empty,
            notes=notes,
            warnings=warnings,
        )
    return wide_run(
        path,
        arrays,
        np.asarray(steps, dtype=np.float64),
        tracker="huggingface",
        axis="step",
        params=params,
        notes=notes,
        warnings=warnings,
        what="trainer_state.json",
        split=False,
    )


def _read_state(path: Path) -> dict:
    """The parsed state, checked to be a trainer_state.json (a dict with a ``log_history`` list)."""
    state = read_json(path, "trainer_state.json", MAX_BYTES)
    if (
        isinstance(state, dict)
        and "log_history" not in state
        and path.name == "trainer_state.json"
        and isinstance(state.get("global_step"), (int, float))
    ):
        # the Trainer's file name and counter without the history (written by hand or by another
        # tool): partial data, its figures kept as params, no curve
        return {**state, "log_history": [], _NO_HISTORY: True}
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        raise InputError(f"{path}: no log_history list (not a Hugging Face trainer_state.json)")
    return state


_NO_HISTORY = "\x00no_history"


def _history(
    hist: list, params: dict[str, str]
) -> tuple[dict[str, list], list[float], int, dict | None]:
    """The ``log_history`` entries as columns of (row, value) by metric, the steps of the rows,
    the count of unreadable entries or values, and the end-of-training summary entry (its figures
    go into ``params`` as ``final.*``; it is not a row)."""
    cols: dict[str, list] = {}
    steps: list[float] = []
    bad = 0
    summary = None
    for e in hist:
        if not isinstance(e, dict):
            bad += 1
            continue
        if any(k in e for k in ("train_runtime",)) and "loss" not in e:
            for k in _SUMMARY:
                if k in e and _num(e[k]) is not None:
                    params[f"final.{k}"] = str(e[k])
            summary = e
            continue
        st = _num(e.get("step"))
        if st is None:
            bad += 1
            continue
        row = len(steps)
        steps.append(st)
        for k, v in e.items():
            if k == "step":
                continue
            x = _num(v)
            if x is None:
                if not isinstance(v, (str, type(None), list, dict)):
                    bad += 1
                continue
            cols.setdefault(k, []).append((row, x))
    return cols, steps, bad, summary


def _summary_only(state: dict, summary: dict, cols: dict[str, list], steps: list[float]) -> str:
    """With no logged step, the summary's figures as the one row (``logging_steps`` larger than
    the run: HF's default 500 for a 69-step fine-tune), ``train_loss`` named for what it is (the
    mean training loss over the run, ``Trainer.train``'s ``TrainOutput.training_loss``), never a
    curve; returns the note saying so."""
    st = _num(summary.get("step")) or _num(state.get("global_step")) or 0.0
    steps.append(st)
    for k, v in summary.items():
        x = _num(v)
        if k != "step" and x is not None:
            cols["train_loss_mean" if k == "train_loss" else k] = [(0, x)]
    return (
        f"log_history holds only the end-of-training summary (logging_steps "
        f"{state.get('logging_steps')} vs {state.get('global_step')} steps run): no training curve; "
        "train_loss_mean is the mean training loss over the whole run"
    )


def _checkpoint_note(state: dict, params: dict[str, str]) -> str | None:
    """Where a state saved before ``max_steps`` sits: training stopped by itself (an early-stopping
    callback told it to), or a mid-run checkpoint the run may have gone on after."""
    gs, ms = state.get("global_step"), state.get("max_steps")
    told_to_stop = _told_to_stop(state, params)
    if not (isinstance(gs, (int, float)) and isinstance(ms, (int, float)) and 0 < gs < ms):
        return None
    if told_to_stop:
        return (
            f"training stopped by itself at step {int(gs)} of max_steps {int(ms)}: {told_to_stop}"
        )
    return (
        f"checkpoint snapshot at step {int(gs)} of max_steps {int(ms)}: a checkpoint is saved "
        "mid-run, so the run may have gone on after it"
    )


def _told_to_stop(state: dict, params: dict[str, str]) -> str | None:
    """Why the Trainer ended training at this state's step, from its saved callback states
    (``stateful_callbacks``, transformers >= 4.40): ``TrainerControl.should_training_stop`` true
    (a callback stopped training at this step; the checkpoint of that step is saved after the
    decision), explained by ``EarlyStoppingCallback``'s patience counter when it reached its patience.
    Adds ``early_stopping_patience`` to ``params``. ``None`` when nothing says so."""
    cbs = state.get("stateful_callbacks")
    if not isinstance(cbs, dict):
        return None

    def one(name: str) -> dict:
        v = cbs.get(name)
        v = v[-1] if isinstance(v, list) and v else v
        return v if isinstance(v, dict) else {}

    es = one("EarlyStoppingCallback")
    pat = (
        (es.get("args") or {}).get("early_stopping_patience")
        if isinstance(es.get("args"), dict)
        else None
    )
    cnt = (
        (es.get("attributes") or {}).get("early_stopping_patience_counter")
        if isinstance(es.get("attributes"), dict)
        else None
    )
    if isinstance(pat, (int, float)) and not isinstance(pat, bool):
        params.setdefault("early_stopping_patience", str(pat))
    ctl = one("TrainerControl").get("args")
    stop = isinstance(ctl, dict) and ctl.get("should_training_stop") is True
    if isinstance(pat, (int, float)) and isinstance(cnt, (int, float)) and pat > 0 and cnt >= pat:
        return (
            f"EarlyStoppingCallback's patience counter reached its patience ({int(cnt)} of {int(pat)} "
            "evaluations without improvement): early stopping"
        )
    if stop:
        return "the Trainer was told to stop training at this step (TrainerControl.should_training_stop)"
    return None


def _num(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):  # transformers 5 console dicts print strings; states keep numbers
        try:
            x = float(v)
        except ValueError:
            return None
        return x if not math.isnan(x) or v.strip().lower() == "nan" else None
    return None
