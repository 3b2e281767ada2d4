"""LI001 non-finite-values."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, parse_name
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_int, first_series_evidence


def _without_standins(v: np.ndarray, min_neighbour: float = 0.05) -> np.ndarray:
    """``v`` without exact 0.0 values whose non-zero neighbours (3 each side) have a median above
    ``min_neighbour``: LI006's stand-ins for non-finite steps (an HF Trainer window of NaN steps is
    logged as 0.0), which are not a loss level the run reached (demo high_lr: 'best before the onset
    0' read a stand-in as the best loss)."""
    keep = np.ones(v.size, dtype=bool)
    for j in np.flatnonzero(v == 0.0):
        nb = v[max(0, j - 3) : j + 4]
        nb = nb[nb != 0.0]
        if nb.size and float(np.median(nb)) > min_neighbour:
            keep[j] = False
    return v[keep]


class NonFiniteValues(Detector, code="LI001", name="non-finite-values", family="integrity"):
    """A loss, grad norm or validation metric became NaN or infinite.

    Why it matters: every step after the first non-finite loss is wasted compute, and
    the optimizer state is usually poisoned; the onset tells what broke.
    Evidence: the first non-finite step, how many points are non-finite, the last
    finite value and how far it had grown above the best value before the onset
    (``growth_before``). A loss that was finite and falling, then NaN on the very
    next step (``growth_before`` near 1), points at numerics (precision, loss scaling,
    a bad batch) rather than a learning rate that slowly drove the loss up.
    Remedy: with gradual growth, lower the peak learning rate or clip gradients; with
    an abrupt onset, check the precision mode (pure fp16 without loss scaling), the
    batch at the onset step, and divisions/logs in the loss.
    The held-out loss is checked with its other terms (every evaluation-split loss: YOLO's
    ``val/cls_loss`` beside ``val/box_loss``), which measure the same evaluation.
    A run that logs none of those roles but at least 2 series (columns a log printed without names),
    every one finite at first and non-finite from one same step to its end, is read as a non-finite
    training loss: whichever column is the loss went non-finite with the rest (report b41-05:
    four unnamed PointNetLK columns, nan from epoch 198 to 200).
    Thresholds: none; any non-finite value is reported.
    """

    #: A non-finite symptom (``Detector.nonfinite_rank``), asked second.
    nonfinite_rank = 2

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """A non-finite validation metric: the evaluation code first. A training loss non-finite
        at some steps only: the batches at those steps. One non-finite to the end: none of its
        own (the diverged run's actions, the learning rate or the precision, are the fix)."""
        if finding.facts.get("role") in ("val_loss", "val_accuracy"):
            return (
                Remedy(
                    "Evaluate the last finite checkpoint on the validation set in fp32 and look for "
                    "empty batches, divisions by zero and log(0) in the validation loss",
                    "tells a failure of the evaluation code from weights that went non-finite",
                    "minutes",
                ),
            )
        if finding.facts.get("all_after_nonfinite"):
            return ()
        return (
            Remedy(
                f"Replay the batches at the non-finite steps (the first at step "
                f"{fact(finding, 'first_step')}) with the weights of the step before",
                "a batch that reproduces the NaN is the data; one that does not, the optimiser's state",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The onset: growth before it (the learning rate) against none (numerics, a bad batch); a
        validation metric alone: the evaluation code."""
        if finding.facts.get("role") in ("val_loss", "val_accuracy"):
            return [
                hyp(
                    "the evaluation computes a non-finite value (an empty batch, log(0), a division)",
                    "open",
                    Cause.CORRECTNESS_BUG,
                    "evaluate the last finite checkpoint in fp32 batch by batch",
                    for_=said(finding),
                ),
                hyp(
                    "the weights went non-finite",
                    "open",
                    Cause.MODEL_CONVERGENCE,
                    "check the training loss and the weights of the last checkpoint for NaN",
                ),
            ]
        grew = (finding.facts.get("growth_before") or 0) >= 2
        return [
            hyp(
                "learning rate too high (the loss grew before it overflowed)",
                "supported" if grew else "open",
                Cause.MODEL_CONVERGENCE,
                "rerun from before the onset with the LR divided by 10",
                for_=said(finding) if grew else [],
            ),
            hyp(
                "a numerical failure: precision mode, loss scaling, an fp16-unsafe op or a bad batch",
                "open",
                Cause.DATA_CONFIG,
                "rerun from before the onset in fp32/bf16; replay the batch at the onset",
                against=["the loss grew before the onset"] if grew else [],
            ),
        ]

    implies = "diverged"

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "non-finite onset"

    ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.GRAD_NORM, Role.VAL_ACCURACY)

    class Params(DetectorParams):
        pass

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A vertical line where the metric turns non-finite (``first_step``)."""
        facts = finding.facts
        s = as_int(facts.get("first_step"))
        if s is None:
            return None
        ev = first_series_evidence(finding)
        key = str(facts["key"]) if facts.get("key") else (ev.metric if ev else None)
        return [
            PlotMark(
                "vline",
                f"LI001 NaN/inf from step {s}",
                "non-finite",
                (s,),
                key=key,
                note=f"LI001: {key or 'a metric'} non-finite from step {s}",
            )
        ]

    @classmethod
    def nonfinite_role(cls, finding: Finding) -> str | None:
        """The role of the series found non-finite (``train_loss``, ``grad_norm``, ...)."""
        return finding.facts.get("role")

    @classmethod
    def nonfinite_observed(cls, finding: Finding) -> bool:
        """A non-finite training loss, or a validation loss non-finite to the end, is observed,
        not read from a trend."""
        role = finding.facts.get("role")
        return role == "train_loss" or (
            role == "val_loss" and bool(finding.facts.get("all_after_nonfinite"))
        )

    @staticmethod
    def _targets(run) -> list[tuple[Role, str, bool]]:
        """``(role, key, component)`` of every series checked: the key of each of :attr:`ROLES`, then
        the other terms of the held-out loss (``val/cls_loss`` and ``val/dfl_loss`` beside
        ``val/box_loss``: every evaluation-split loss that is not a best-so-far), which measure the
        same evaluation (own corpus f14b1-07: YOLOv8 ``val/cls_loss`` inf at epoch 7)."""
        out: list[tuple[Role, str, bool]] = []
        for role in NonFiniteValues.ROLES:
            key = run.key_for(role)
            if key is not None:
                out.append((role, key, False))
        vk = run.key_for(Role.VAL_LOSS)
        if vk is not None:
            for k in run.metrics.keys:
                np_ = parse_name(k)
                if (
                    k != vk
                    and np_.split == "eval"
                    and np_.family == "loss"
                    and not np_.running_best
                ):
                    out.append((Role.VAL_LOSS, k, True))
        return out

    @staticmethod
    def _all_at_once(run) -> str | None:
        """The first key when the run logs no series of :attr:`ROLES` but at least 2 series, every
        one of them finite at first and non-finite from one same step to its end (columns the log
        never named, turning nan together): whichever of them is the loss, it went non-finite with
        the rest, so the first stands for the training loss. None otherwise."""
        keys = list(run.metrics.keys)
        if len(keys) < 2:
            return None
        onsets = set()
        for k in keys:
            s = run.series(k).by_step()
            bad = ~np.isfinite(s.values)
            if not bad.any() or bad[0]:
                return None
            i = int(np.flatnonzero(bad)[0])
            if not bad[i:].all():
                return None
            onsets.add(int(s.steps[i]))
        return keys[0] if len(onsets) == 1 else None

    def check(self, run, p):
        targets = self._targets(run)
        every = None if targets else self._all_at_once(run)
        if every is not None:
            targets = [(Role.TRAIN_LOSS, every, False)]
        for role, key, component in targets:
            s = run.series(key).by_step()
            bad = ~np.isfinite(s.values)
            if not bad.any():
                continue
            i = int(np.flatnonzero(bad)[0])
            before = s.values[:i][np.isfinite(s.values[:i])]
            if role in (Role.TRAIN_LOSS, Role.VAL_LOSS):
                before = _without_standins(before)
            last = float(before[-1]) if before.size else None
            best = float(before.min()) if before.size else None
            growth = (last / best) if (last is not None and best and best > 0) else None
            sev = Severity.CRITICAL if role is Role.TRAIN_LOSS else Severity.ERROR
            kinds = sorted({("nan" if np.isnan(v) else "inf") for v in s.values[bad]})
            msg = (
                f"{key} is non-finite ({'/'.join(kinds)}) from step {int(s.steps[i])} on "
                f"({int(bad.sum())} of {len(s)} points); "
                + (
                    f"last finite value {fmt(last)}"
                    if last is not None
                    else "no finite value before it"
                )
            )
            best_word = "best" if role in (Role.TRAIN_LOSS, Role.VAL_LOSS) else "lowest"
            if growth is not None and growth < 1.05:
                msg += f", at its {best_word} before the onset (no rise first)"
            elif growth is not None:
                msg += f", {fmt(growth, 3)}x its {best_word} before the onset"
            if every is not None:
                msg += (
                    f"; every one of the {len(run.metrics.keys)} logged series (none named as a loss) "
                    "turned non-finite at that step and stayed so: the loss is among them"
                )
            back = np.flatnonzero(~bad[i:])
            recovered = int(s.steps[i + int(back[0])]) if back.size else None
            if recovered is not None:
                msg += f"; finite again from step {recovered}"
                if not bool(bad[-1]):
                    msg += " to the end"
            yield self.finding(
                sev,
                msg,
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(s.steps[max(i - 3, 0)]),
                        step_end=int(s.steps[min(i + 3, len(s) - 1)]),
                        values={"last_finite": last, "best_before": best},
                    )
                ],
                role=role.value,
                key=key,
                first_step=int(s.steps[i]),
                index=i,
                n_nonfinite=int(bad.sum()),
                n_points=len(s),
                last_finite=last,
                best_before=best,
                growth_before=growth,
                finite_points_before=int(before.size),
                all_after_nonfinite=bool(bad[i:].all()),
                recovered_step=recovered,
                finite_at_end=not bool(bad[-1]),
                component=component,
                every_series=every is not None,
            )
        if not targets:
            raise Skip("no loss, grad norm or validation metric logged")
