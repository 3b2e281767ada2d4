"""LI003 epoch-step-mismatch."""

from __future__ import annotations

import re

import numpy as np

from ..formats.consolelog.context import gradient_accumulation, steps_per_epoch
from ..report import (
    ConfigEvidence,
    Finding,
    Hypothesis,
    LogEvidence,
    Outcome,
    SeriesEvidence,
    Severity,
)
from ..roles import Role
from ..signatures import scan_run
from ._counters import launches, on_optimizer_step, reader_counted
from .base import Detector, DetectorParams, Remedy, Skip
from .LI002 import resume_hypotheses


class EpochStepMismatch(Detector, code="LI003", name="epoch-step-mismatch", family="integrity"):
    """The global step does not match the epoch x steps per epoch: one of the two counters restarted.

    Why it matters: a run resumed without restoring its checkpoint keeps (or
    re-reads) its epoch counter but restarts the step counter from zero (or the
    reverse). Its LR schedule then restarts, its curves by step overlay the
    earlier run, and checkpoints named by step overwrite the earlier run's.
    Evidence: the epoch and global step of the first record that does not fit,
    the step expected there (epoch x steps per epoch) and where steps per epoch
    came from; the checkpoints written with the step in their name; whether the
    console shows a checkpoint being restored.
    Remedy: restore the global step (and optimizer / scheduler state) with the
    checkpoint on resume; verify the checkpoint is actually passed to the loader;
    name checkpoints by run and step.
    A restart is a break in the records: a launch whose first record fits and whose step and epoch
    never go back is not called reset, whatever the figure (own corpus f14b1-04: a ``max_steps`` 4 smoke
    test with ``steps_per_epoch`` 2 in its hparams logged all four steps in epoch 0).
    Thresholds: a record fits when its step lies within one epoch (plus ``tol`` 5%)
    of epoch x steps per epoch (counting 0- and 1-based epochs alike), with steps
    per epoch also divided by the gradient-accumulation steps when they are given.
    Steps per epoch come from params (``steps_per_epoch``, ``Number of batches per
    epoch``, "1352 steps per epoch") or the ``steps_per_epoch`` parameter. Runs whose
    step axis is the epoch itself (Keras epoch logs) or a record count the reader made
    (``log.step_axis`` = ``train_log_dict``/``epoch``) are skipped, and so are records at step 0;
    a run whose records hold one steps-per-epoch ratio (within 15% from epoch 1 on, one stray
    record allowed among >= 4) is not
    called reset, whatever the steps-per-epoch figure says (the counters moved together); a
    figure the reader recovered from the log (``log.steps_per_epoch``, a progress-bar total) is
    only trusted when a record fits it before the first mismatch;
    only an epoch logged together with a real global step is compared (an epoch parsed from a
    console header gets step 0 when the line names no step). On a W&B run the step axis ``_step``
    counts ``wandb.log`` calls: the epoch is compared with the ``global_step`` logged in the same row,
    and the run is skipped when none is logged (own corpus f5b3-01, f6b2-03: an epoch every 4 log
    calls). A launch ends where step and epoch both go back (several ``trainer.train()`` calls in one
    run; f6b2-02); each launch is judged on its own (:mod:`._counters`).
    """

    implies = "unstable"

    correctness_remedies = (
        Remedy(
            "Restore the global step (and optimizer/scheduler state) from the checkpoint on resume; "
            "check that the checkpoint was actually loaded",
            "a reset counter means the resume started from scratch",
        ),
        Remedy(
            "Name checkpoints uniquely (run id + step): checkpoints named by step will overwrite the "
            "earlier segment's",
            "prevents silent overwrite",
        ),
    )
    replaces_outcome_actions = True

    needs = (Role.EPOCH,)

    class Params(DetectorParams):
        steps_per_epoch: int | None = None
        tol: float = 0.05

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        return resume_hypotheses(finding, outcome)

    def check(self, run, p):
        self._skip_without_global_step(run)
        spe, source = self._steps_per_epoch(run, p)
        key = run.key_for(Role.EPOCH)
        s = self._epochs_on_global_steps(run, key)
        ga = gradient_accumulation(run.params)
        spes = [spe] + ([spe / ga] if ga > 1 else [])
        # each launch (a new training restarts step and epoch together) is judged on its own
        i, n_bad, why = -1, 0, ""
        for seg in launches(s.steps, s.values):
            j, n_bad, why = _first_misfit(s.steps[seg], s.values[seg], spes, p.tol, spe, source)
            if j is not None:
                i = seg.start + j
                break
        if i < 0:
            if why:
                raise Skip(why)
            return
        step, epoch = int(s.steps[i]), float(s.values[i])
        expected = round(epoch * spe)
        behind = step < expected
        msg = self._mismatch_message(step, epoch, spe, source, expected, behind)
        hits, _ = scan_run(run) if run.console else ([], [])
        saved = [h for h in hits if h.signature.category == "checkpoint"]
        restored = [h for h in hits if h.signature.category == "resume"]
        by_step = [
            h for h in saved if re.search(rf"(?<!\d){step}(?!\d)", h.figures.get("path", ""))
        ]
        if run.console and not restored:
            msg += "; the console shows no checkpoint being restored"
        if by_step:
            msg += (
                f"; checkpoints are named by step ({by_step[0].figures['path']}), so new checkpoints "
                "would overwrite the earlier run's checkpoints of the same steps"
            )
        elif behind:
            msg += "; checkpoints named by step would overwrite the earlier run's"
        ev = [
            SeriesEvidence(
                metric=key,
                step_start=step,
                step_end=step,
                values={"epoch": epoch, "step": float(step), "expected_step": float(expected)},
            ),
            ConfigEvidence(
                key=source if source in run.params else "steps_per_epoch", value=str(spe)
            ),
        ]
        for h in (by_step or saved)[:2]:
            ev.append(
                LogEvidence(
                    source=h.line.source, line=h.line.lineno, text=h.line.text.strip()[:300]
                )
            )
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=ev,
            step=step,
            epoch=epoch,
            steps_per_epoch=spe,
            expected_step=expected,
            direction="behind" if behind else "ahead",
            spe_source=source,
            n_mismatched=n_bad,
            n_records=len(s),
            checkpoints_named_by_step=[h.figures.get("path") for h in by_step[:5]],
            restore_seen=bool(restored),
        )

    @staticmethod
    def _skip_without_global_step(run) -> None:
        """Raises Skip when the step axis is not a logged global step: a reader's own record
        numbering or a counter the reader made."""
        axis = str(run.params.get("log.step_axis", ""))
        if axis and axis not in ("global_step", "step", "iteration", "iter"):
            # the reader numbered records itself (HF console dicts at 1, 2, 3 ...: train_log_dict;
            # per-epoch lines: epoch): there is no global step counter to compare with the epoch
            # (own corpus log15, a finished transformers-5 SFT console, was called a step reset)
            raise Skip(f"the step axis is {axis}, not a logged global step")
        counted = reader_counted(run)
        if counted:
            raise Skip(counted)

    @staticmethod
    def _steps_per_epoch(run, p) -> tuple[float, str]:
        """Steps per epoch and where the figure comes from: the detector parameter, else the
        run's params or printed figure. Raises Skip when unknown."""
        if p.steps_per_epoch:
            return p.steps_per_epoch, "detector parameter steps_per_epoch"
        got = steps_per_epoch(run.params)
        if got is None:
            raise Skip("steps per epoch unknown (no steps_per_epoch param or printed figure)")
        return got

    @staticmethod
    def _epochs_on_global_steps(run, key):
        """The epoch series ``key`` on the optimizer's global steps, records at step 0 left out.
        Raises Skip when it has no finite value, is the step axis itself, sits on W&B's
        ``_step`` without a global step, or has no record past step 0."""
        s = run.series(key).by_step().finite()
        if not len(s):
            raise Skip(f"{key} has no finite values")
        if np.all(np.abs(s.values - s.steps) <= 1):
            raise Skip("the step axis is the epoch itself")
        placed = on_optimizer_step(run, s)
        if placed is None:
            raise Skip(
                "the step axis is W&B's _step, which counts wandb.log calls, and no global_step is logged"
            )
        s = placed
        # only records that carry a real step: step 0 is what a logger or a console parser writes when
        # no step was known on the line (an "Epoch 3/10" header), so epoch >= 1 at step 0 says nothing
        # about the counter
        together = s.steps > 0
        if not together.any():
            raise Skip(f"no {key} record carries a global step (all at step 0)")
        return type(s)(s.key, s.steps[together], s.values[together], s.wall_times[together])

    @staticmethod
    def _mismatch_message(step, epoch, spe, source, expected, behind) -> str:
        """The step against epoch x steps per epoch, and which counter restarted."""
        e_txt = str(int(epoch)) if epoch.is_integer() else f"{epoch:.3g}"
        msg = (
            f"the global step ({step}) does not match epoch {e_txt} x {spe} steps per epoch = {expected} "
            f"(steps per epoch from {source})"
        )
        if behind:
            lag = expected - step
            msg += (
                f": the step counter is {lag} steps (~{lag / spe:.3g} epochs) behind, so it restarted from "
                "zero in a resumed run while the epoch counter did not; the checkpoint (step, optimizer "
                "and schedule state) was likely never restored"
            )
        else:
            msg += ": the step counter is ahead of the epoch counter, so the epoch counter restarted (or steps "
            msg += "per epoch is wrong)"
        return msg


def _first_misfit(
    steps: np.ndarray, epochs: np.ndarray, spes: list[float], tol: float, spe: float, source: str
) -> tuple[int | None, int, str]:
    """The first record of one launch whose step does not fit its epoch x steps per epoch, the number
    of such records and, when none is called, why (empty when every record fits)."""
    fits = np.zeros(len(steps), dtype=bool)
    for c in spes:
        lo = (epochs - 1 - tol) * c
        hi = (epochs + 1 + tol) * c
        fits |= (steps >= lo) & (steps <= hi)
    bad = np.flatnonzero(~fits)
    if bad.size == 0:
        return None, 0, ""
    if fits[0] and np.all(np.diff(steps) >= 0) and np.all(np.diff(epochs) >= 0):
        # a restart is a break in the records: a counter that goes back, or a launch whose first record
        # already misfits (resumed before the log starts). A launch that starts where the figure says and
        # whose step and epoch only move forward has no break; the epochs are longer or shorter than the
        # figure (a max_steps plan that ends inside the first epoch, a steps_per_epoch setting the loop
        # does not use; own corpus f14b1-04: max_steps 4 with steps_per_epoch 2, all four steps in epoch 0)
        return (
            None,
            int(bad.size),
            (
                f"step and epoch only move forward in this launch and its first record fits; steps per epoch "
                f"{spe} ({source}) does not fit the later records, with no restart between them"
            ),
        )
    # a restart shows in the records themselves: steps per epoch (step / epoch) changes when one
    # counter restarts. When every record from epoch 1 on holds the same ratio (within 15%), the
    # two counters advanced together and the steps-per-epoch figure is what is wrong (own corpus
    # log15: a progress-bar total over 3 epochs read as per epoch; 559 steps/epoch in every record)
    if source.startswith("log.") and not fits[: int(bad[0])].any():
        # a figure the reader recovered from the log's structure (a progress-bar total) that no record
        # fits, not even before the first misfit: a restart shows as records that fit and then stop
        # fitting, so here the figure (or the bar it came from) is what is wrong (own corpus log20: a
        # datasets 'Map 4358/4358 examples' bar read as steps per epoch, one epoch record at 8716)
        return (
            None,
            int(bad.size),
            f"steps per epoch {spe} from {source} fits no record before the first mismatch",
        )
    # fractional epochs (a trainer's epoch = step / steps per epoch) hold the ratio from the first record;
    # whole epochs from epoch 1 on (epoch 0 at step k says nothing about the ratio)
    later = epochs > 0 if np.any(epochs % 1.0 != 0) else epochs >= 1.0
    if later.sum() >= 3:
        ratio = steps[later] / epochs[later]
        med = float(np.median(ratio))
        off = int((np.abs(ratio / med - 1.0) > 0.15).sum()) if med > 0 else len(ratio)
        # one stray record (an end-of-training summary placed at another step) is not a restart: a
        # restart moves every record after it
        if off == 0 or (off == 1 and len(ratio) >= 4):
            return (
                None,
                int(bad.size),
                (
                    f"step and epoch advance together (~{med:.0f} steps per epoch in the records from "
                    f"epoch 1 on); the steps-per-epoch figure {spe} ({source}) does not fit them"
                ),
            )
    return int(bad[0]), int(bad.size), ""
