"""OP003 loss-plateau."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import centered_median, fmt, print_resolution, smooth_window
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_int, first_series_evidence


class LossPlateau(Detector, code="OP003", name="loss-plateau", family="optimization"):
    """Training loss stopped improving for a large share of the run while still far from its early drop rate.

    Why it matters: compute spent on a flat curve buys nothing; a plateau early in
    training usually means a learning rate too low (or decayed too early), too
    little capacity, or a broken input.
    Evidence: the step from which the smoothed loss improved by less than
    ``min_rel_improvement`` relative, the share of the run that is flat, and the
    loss level at which it stalled.
    Remedy: raise the LR or shorten its decay, add capacity, check the inputs
    (shuffled/constant labels give a flat loss near log(num_classes)).
    Thresholds: ``min_rel_improvement`` 1e-2 over the flat span is 100x the
    relative threshold of PyTorch's ``ReduceLROnPlateau`` (1e-4 per epoch) summed
    over a span; a plateau must cover ``min_flat_share`` 40% of the run.
    Short runs (``min_points_short`` 6 to ``min_points`` 20 points, typically one point per
    epoch): the values are judged unsmoothed (an epoch value is already a mean over the
    epoch's steps) and the flat span must hold at least ``min_flat_points`` 3 points after the
    point it is measured from (realworld tb07: a Keras run flat at 28.83-28.97 for 12 of 15
    epochs could never be judged with a 20-point minimum).
    Frozen: a flat span whose median absolute deviation is under ``frozen_rel_spread`` 1e-4 of
    its level (constant to four significant digits, as printed) at a level above
    ``frozen_min_level`` 1% of the initial loss is a warning even after a large drop: minibatch
    training always moves the loss, so an unmoving one sits at a fixed point (tests/data/realworld
    csv01: an LSTM at exactly 0.2500, the MSE of predicting the mean; csv13: a PINN at 0.5109).
    Frozen is read only from values printed with at least four significant digits (the log's print
    unit, :func:`signal.print_resolution`, at most ``frozen_max_print_unit`` 1e-3 of the level): a
    loss printed as ``0.0497`` or ``1.1`` repeats its last digits because of the rounding, whatever
    the updates do (own corpus f10b1-20: ``Loss: 0.0497`` every 100 steps of a converged fine-tune;
    f7b2-01: YOLOX's ``total_loss: 1.1``; report b4-08: OpenNMT's ``Perplexity 8.29``).
    """

    loss_reading = True

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """A loss that repeats one value: the update; else the level against chance."""
        if finding.facts.get("frozen"):
            return (
                Remedy(
                    "Check that the parameters are updated: requires_grad, the optimizer's param groups, "
                    "an LR of 0, a loss detached from the model output",
                    "a loss that repeats one value exactly means no update reached the weights",
                    "minutes",
                ),
            )
        return (
            Remedy(
                f"Compare the plateau level ({fact(finding, 'level')}) with the chance-level loss (ln of "
                "the class count, or the loss of predicting the mean)",
                "a plateau at chance means inputs or labels without signal; above chance a capacity or "
                "LR limit",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A plateau: the learning rate or capacity, against no update or no signal in the data."""
        frozen = bool(finding.facts.get("frozen"))
        return [
            hyp(
                "learning rate too low (or decayed too early) or capacity too small",
                "rejected" if frozen else "open",
                Cause.MODEL_CONVERGENCE,
                "overfit a tiny subset (64 samples): a healthy setup drives the loss near 0",
                for_=[] if frozen else said(finding),
                against=["the loss repeats one value exactly: no update at all"] if frozen else [],
            ),
            hyp(
                "no update reaches the weights, or the inputs/labels carry no signal",
                "supported" if frozen else "open",
                Cause.CORRECTNESS_BUG if frozen else Cause.DATA_CONFIG,
                "compare two checkpoints' weights; compare the level with the chance-level loss",
                for_=said(finding) if frozen else [],
            ),
        ]

    implies = "plateaued"

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "plateau"

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        min_rel_improvement: float = 0.01
        min_flat_share: float = 0.4
        min_points: int = 20
        min_points_short: int = 6
        frozen_rel_spread: float = 1e-4
        frozen_min_level: float = 0.01
        frozen_max_print_unit: float = 1e-3
        min_flat_points: int = 3

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A span over the plateau: ``start_step`` to the end of its series evidence."""
        a = as_int(finding.facts.get("start_step"))
        if a is None:
            return None
        ev = first_series_evidence(finding)
        b = ev.step_end if ev is not None and ev.step_end is not None else a
        return [
            PlotMark(
                "span",
                f"OP003 plateau (steps {a}–{b})",
                "plateau",
                (a, b),
                key=ev.metric if ev else None,
                note=f"OP003: plateau over steps {a}–{b}",
            )
        ]

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step().finite()
        short = len(s) < p.min_points
        if len(s) < p.min_points_short:
            raise Skip(f"{key} has {len(s)} finite points (< {p.min_points_short})")
        if (~np.isfinite(run.series(key).values)).any():
            return  # a loss that went non-finite is not a plateau (LI001 / OP001)
        sm = (
            s.values.astype(float)
            if short
            else centered_median(s.values, smooth_window(len(s), 0.1))
        )
        if sm[-1] > sm[0]:
            return  # ended above where it started: not stalled learning (OP001)
        n = len(sm)
        # earliest start point i such that everything from i on improved < threshold relative to sm[i]
        future_min = np.minimum.accumulate(sm[::-1])[::-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = (sm - future_min) / np.abs(sm)
        flat_from = np.flatnonzero(rel >= p.min_rel_improvement)
        start = int(flat_from[-1] + 1) if flat_from.size else 0
        share = (n - start) / n
        if (
            share < p.min_flat_share
            or start >= n - 1
            or (short and n - 1 - start < p.min_flat_points)
        ):
            return
        level = float(sm[start])
        total_drop = float(sm[0] - sm.min())
        rel_total = total_drop / abs(sm[0]) if sm[0] else 0.0
        tail = s.values[start:]
        med = float(np.median(tail))
        spread = float(np.median(np.abs(tail - med)))
        q = print_resolution(s.values)
        frozen = (
            med > p.frozen_min_level * abs(float(sm[0]))
            and spread <= p.frozen_rel_spread * abs(med)
            and tail.size >= p.min_flat_points
            and (q is None or q <= p.frozen_max_print_unit * abs(med))
        )
        sev = Severity.WARNING if (rel_total < 0.5 or frozen) else Severity.INFO
        msg = (
            f"{key} flat from step {int(s.steps[start])} to the end ({fmt(100 * share, 3)}% of points): "
            f"improved < {fmt(100 * p.min_rel_improvement, 2)}% from {fmt(level)}; "
            f"overall drop {fmt(100 * rel_total, 3)}% of the initial loss"
        )
        if frozen:
            msg += (
                f"; frozen at {fmt(med, 5)} (median deviation {fmt(spread, 2)}): no update changes the loss any "
                "more, the model sits at a fixed (often trivial, constant-prediction) solution rather than "
                "converging with minibatch noise"
            )
        yield self.finding(
            sev,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[start]),
                    step_end=int(s.steps[-1]),
                    values={"level": level, "initial": float(sm[0]), "final": float(sm[-1])},
                )
            ],
            start_step=int(s.steps[start]),
            flat_share=float(share),
            level=level,
            rel_total_improvement=float(rel_total),
            frozen=bool(frozen),
        )
