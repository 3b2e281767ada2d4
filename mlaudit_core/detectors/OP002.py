"""OP002 loss-spike."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import MAD_Z_CUTOFF, fmt, robust_z, rolling_median
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, as_int, first_series_evidence


def lr_restart_steps(run) -> list[tuple[int, int]]:
    """The steps where the learning-rate schedule restarts, with the tolerance around each (steps).

    A restart is a point where the learning rate, having decayed to at most half of its peak so
    far, rises to more than twice its previous value: SGDR's warm restarts (Loshchilov & Hutter
    2017, whose loss rises after each restart before it falls again), a cyclic schedule's next cycle,
    a resumed stage whose schedule starts again from zero. The tolerance is two logging intervals
    of the learning rate: a restart logged as ``lr = 0`` at the stage's first step rises at the next.
    ``[]`` without a learning-rate series of at least 3 finite points."""
    key = run.key_for(Role.LEARNING_RATE)
    if key is None:
        return []
    lr = run.series(key).by_step().finite()
    if len(lr) < 3:
        return []
    v, st = lr.values, lr.steps
    tol = 2 * int(max(np.median(np.diff(st)), 1))
    peak = np.maximum.accumulate(v)
    out = []
    for i in range(1, len(v)):
        if 0 < peak[i - 1] and v[i - 1] <= 0.5 * peak[i - 1] and v[i] > 2 * v[i - 1]:
            out.append((int(st[i]), tol))
    return out


def _near(step: int, restarts: list[tuple[int, int]]) -> bool:
    return any(abs(step - r) <= tol for r, tol in restarts)


def _events(v: np.ndarray, base: np.ndarray, idx: np.ndarray, p) -> list:
    """``(index, value, trailing median, points to recovery or None)`` of each burst of spike points
    ``idx`` of the loss ``v`` (trailing medians ``base``) that rises by at least ``recovery_range`` of
    the loss's range."""
    # one episode per burst: spike points closer than ``window`` points belong together
    # (a spike often knocks the optimizer state and the next points rise too)
    starts = idx[np.concatenate([[True], np.diff(idx) > p.window])]
    ends = np.append(idx[np.flatnonzero(np.diff(idx) > p.window)], idx[-1])
    events = []
    # near zero a relative tolerance is too strict: also accept a return to within
    # ``recovery_range`` of the loss's whole range (initial level minus best)
    rng = max(float(np.median(v[: p.window])) - float(v.min()), 0.0)
    for i, last in zip(starts, ends):
        ref = base[i]
        if float(v[i]) - ref < p.recovery_range * rng:
            continue  # smaller than 2% of the loss's range: noise near zero, not an instability
        # from the burst's first spike: a point between two spikes of a burst back at the
        # earlier level is a recovery (single hard batches of a per-batch loss)
        after = v[i + 1 : last + 1 + p.recovery_points]
        back = np.flatnonzero(after <= ref + max(ref * p.recovery_tol, p.recovery_range * rng))
        events.append((int(i), float(v[i]), float(ref), int(back[0]) + 1 if back.size else None))
    return events


def _recovered_late(v: np.ndarray, event: tuple, p) -> bool:
    """Whether the loss ``v`` came back from the spike ``event`` (``(index, value, trailing median,
    None)``) after ``recovery_points`` and went on to end far below its level before the spike (the median of
    the last tenth of the points, at least ``window``, at most ``1 - min_rise`` (half) the trailing median
    at the spike; repeated excursions from a level the run never leaves stay unrecovered): a rise the
    run outgrew and kept learning past, not the start of an instability (own f25b2-03: a 3D-pose loss at
    2.9 rising to 17.7 near step 100 of 5000, back under 3 by step 300, ending at 0.16). An instability
    leaves the loss above where it was, or turns into a divergence, which OP001 judges."""
    i, _val, ref, _ = event
    tail = v[-max(p.window, len(v) // 10) :]
    if len(v) - 1 - i <= p.recovery_points + len(tail):
        return False
    return bool(float(np.median(tail)) <= (1 - p.min_rise) * ref)


def _classify(v: np.ndarray, steps: np.ndarray, events: list, restarts: list, p):
    """``(scheduled, late, unrecovered, kept)`` of the spike ``events``: at a learning-rate restart,
    recovered late and outgrown (:func:`_recovered_late`), not recovered (with at least
    ``min_points_after`` points after it to show it: a burst in the last few points has no room to
    show recovery), and the events worth reporting."""
    scheduled = [e for e in events if _near(int(steps[e[0]]), restarts)]
    late = [e for e in events if e[3] is None and _recovered_late(v, e, p)]
    unrecovered = [
        e
        for e in events
        if e[3] is None
        and len(v) - 1 - e[0] >= p.min_points_after
        and e not in scheduled
        and e not in late
    ]
    kept = [
        e for e in events if e[3] is not None or e in unrecovered or e in scheduled or e in late
    ]
    return scheduled, late, unrecovered, kept


class LossSpike(Detector, code="OP002", name="loss-spike", family="optimization"):
    """Training loss jumps far above its recent level, and either recovers or does not.

    Why it matters: a spike that recovers within a few hundred steps is usually
    benign (a hard batch, an LR restart); one that does not recover is the start of
    an instability and often precedes divergence.
    Evidence: each spike's step, height over the trailing median, and whether the
    loss came back after the burst's first spike and within ``recovery_points`` (100) points of
    its last: a point between two spikes of a burst that is back at the earlier level is a
    recovery (a per-batch loss whose hard batches spike one at a time: own corpus f13b2-07, a
    BERT fine-tune's batches at 0.155 between batches at 0.005-0.02, called unrecovered when
    the burst ran into the end of the log).
    A spike where the learning-rate schedule restarts (:func:`lr_restart_steps`: SGDR's warm
    restarts, a resumed stage whose schedule starts again) is the schedule's: it is not counted as
    unrecovered, and a run whose only spikes sit at restarts gets an info finding (facts
    ``at_lr_restart``; own corpus f18b1-01, a trainer_state with six restarts, was called unstable).
    A spike the loss came back from later than ``recovery_points`` and went on to end below its level
    before the spike (:func:`_recovered_late`, fact ``n_late``) is a transient the run outgrew, not an
    unrecovered one (own f25b2-03: an adversarial 3D-pose loss 2.9 -> 17.7 -> 0.16 at the end).
    Remedy: for unrecovered spikes, lower the LR or clip gradients; for frequent
    recovered spikes, inspect the batches at those steps.
    Thresholds: modified z-score > 3.5 on the residual from a trailing median
    (Iglewicz & Hoaglin 1993), and a relative rise of at least ``min_rise`` (50%),
    so noisy-but-flat curves do not trigger. A spike has recovered when the loss
    returns to within ``recovery_tol`` (20%) of its pre-spike median, or within
    ``recovery_range`` 2% of the loss's whole range (initial level minus best) for losses near
    zero (measured on the corpus: 0.012 -> 0.036 after a spike is 3x but 1.5% of the range).
    A rise smaller than ``recovery_range`` of that range is not a spike at all, and a burst with
    fewer than ``min_points_after`` 10 points after it cannot be called unrecovered (tests/data/
    realworld log06: a T5 loss at 0.0004 "spiking" to 0.002 near the end was called unstable).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Line the spike steps up with the schedule and the data order."""
        steps = (
            ", ".join(str(s) for s in (finding.facts.get("spike_steps") or [])[:5]) or "the spikes"
        )
        return (
            Remedy(
                f"Line the spike steps ({steps}) up with the LR schedule (warmup end, restarts) and the "
                "data order (epoch boundaries, shard changes)",
                "spikes at LR events point at the schedule, spikes at the same data position at the batches",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """An unstable run: a step too large (LR, warmup, no clipping) against bad batches; a
        healthy run's benign spikes are the healthy ledger's."""
        if outcome is Outcome.SUCCEEDED:
            return None
        unrecovered = (finding.facts.get("n_unrecovered") or 0) > 0
        return [
            hyp(
                "the optimiser's steps are too large at these points (LR, warmup, no gradient clipping)",
                "supported" if unrecovered else "open",
                Cause.MODEL_CONVERGENCE,
                "rerun the spiking stretch with gradient clipping at 1.0 or half the LR",
                for_=said(finding) if unrecovered else [],
            ),
            hyp(
                "bad batches at the spike steps (corrupt, extreme or mislabelled samples)",
                "open",
                Cause.DATA_CONFIG,
                "replay the batches at the spike steps with the weights of the step before",
            ),
        ]

    implies = "unstable"

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        window: int = 25
        z: float = MAD_Z_CUTOFF
        min_rise: float = 0.5
        recovery_points: int = 100
        recovery_tol: float = 0.2
        recovery_range: float = 0.02
        max_reported: int = 5
        min_points_after: int = 10

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A point at each spike (``spike_steps``) on the spiking metric's plot."""
        ev = first_series_evidence(finding)
        steps = tuple(
            s for s in (as_int(v) for v in finding.facts.get("spike_steps") or []) if s is not None
        )
        if not steps or ev is None:
            return []
        return [
            PlotMark(
                "points",
                f"OP002 loss spike ({len(steps)})",
                "spike",
                steps,
                key=ev.metric,
                note=f"OP002: {len(steps)} spike(s) at step(s) "
                + ", ".join(map(str, steps[:10]))
                + ("…" if len(steps) > 10 else ""),
            )
        ]

    surprise_rank = 0

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """A benign spike (info): the loss came back, worth knowing, not a failure."""
        return f"benign: {finding.message}" if finding.severity is Severity.INFO else None

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step().finite()
        if len(s) < 2 * p.window:
            return
        v = s.values
        base = np.concatenate([[v[0]], rolling_median(v, p.window)[:-1]])
        z = robust_z(v, base, p.window)
        spike = (z > p.z) & (v > base * (1 + p.min_rise)) & (base > 0)
        idx = np.flatnonzero(spike)
        if idx.size == 0:
            return
        events = _events(v, base, idx, p)
        if not events:
            return
        scheduled, late, unrecovered, events = _classify(
            v, s.steps, events, lr_restart_steps(run), p
        )
        if not events:
            return
        recovered = [e for e in events if e[3] is not None]
        ev = [
            SeriesEvidence(
                metric=key,
                step_start=int(s.steps[i]),
                step_end=int(s.steps[i]),
                values={
                    "value": val,
                    "trailing_median": ref,
                    "recovered_after_points": (float(r) if r is not None else None),
                },
            )
            for i, val, ref, r in events[: p.max_reported]
        ]
        facts = dict(
            n_late=len(late),
            n_spikes=len(events),
            n_recovered=len(recovered),
            n_unrecovered=len(unrecovered),
            spike_steps=[int(s.steps[e[0]]) for e in events[:50]],
            at_lr_restart=[int(s.steps[e[0]]) for e in scheduled[:50]],
        )
        yield self._report(key, s.steps, v, events, unrecovered, scheduled, late, ev, facts, p)

    def _report(  # noqa: PLR0913
        self, key, steps, v, events, unrecovered, scheduled, late, ev, facts, p
    ) -> Finding:
        """The finding for the spike ``events``: a warning with unrecovered ones, else an info note
        (at learning-rate restarts, recovered, or recovered late and outgrown)."""
        recovered = [e for e in events if e[3] is not None]
        if unrecovered:
            i, val, ref, _ = unrecovered[0]
            return self.finding(
                Severity.WARNING,
                f"{key}: {len(events)} spike(s); {len(unrecovered)} did not recover within "
                f"{p.recovery_points} points (first at step {int(steps[i])}: {fmt(val)} vs "
                f"trailing median {fmt(ref)})",
                evidence=ev,
                **facts,
            )
        elif scheduled and not recovered:
            i, val, ref, _ = scheduled[0]
            return self.finding(
                Severity.INFO,
                f"{key}: {len(events)} spike(s), each where the learning-rate schedule restarts "
                f"(first at step {int(steps[i])}: {fmt(val)} vs trailing median {fmt(ref)}); a "
                "restarted schedule lifts the loss before it falls again: scheduled, not unstable",
                evidence=ev,
                **facts,
            )
        elif recovered or scheduled:
            i, val, ref, r = (recovered or scheduled)[0]
            return self.finding(
                Severity.INFO,
                f"{key}: {len(events)} spike(s), all recovered (first at step {int(steps[i])}: "
                f"{fmt(val)} vs trailing median {fmt(ref)}, back within {r} points"
                + (
                    f"; {len(late)} later than {p.recovery_points} points, the loss ending below"
                    if late
                    else ""
                )
                + "); benign",
                evidence=ev,
                **facts,
            )
        else:
            i, val, ref, _ = late[0]
            return self.finding(
                Severity.INFO,
                f"{key}: {len(events)} spike(s), each recovered later than {p.recovery_points} points (first at "
                f"step {int(steps[i])}: {fmt(val)} vs trailing median {fmt(ref)}), and the loss went on to end at "
                f"{fmt(float(np.median(v[-max(p.window, len(v) // 10) :])))}, below its level before the spike: a "
                "transient the run outgrew, not an instability",
                evidence=ev,
                **facts,
            )
