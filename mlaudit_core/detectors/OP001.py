"""OP001 loss-divergence."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import centered_median, fmt, smooth_window
from ._context import chance_or_bound
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_int


def _heldout_held(run, onset_step: int, share: float) -> str | None:
    """A description when the held-out loss (>= 2 evaluations up to ``onset_step``, >= 2 from it on)
    had improved by then and, from the onset on, regained less than ``share`` of that improvement
    (its median and its last value over those evaluations, against its best up to the onset and its
    first value): the half-the-improvement-lost test of the divergence, on held-out data; else
    ``None``. A training loss logged as single-batch values (Lightning's ``self.log("train_loss",
    loss)`` every ``log_every_n_steps``) scatters over 10x at a small level (tests/data/fixer_nu13: a
    default Lightning run on make_moons, 0.007-0.18 after epoch 4) while the held-out loss sits at
    0.074-0.078 after falling from 0.245: the model did not get worse. A collapse lifts the held-out
    loss with it (realworld ts06: eval_loss best 0.466, then 0.65-0.79)."""
    vk = run.key_for(Role.VAL_LOSS)
    if not vk:
        return None
    v = run.series(vk).by_step().finite()
    before, after = v.values[v.steps <= onset_step], v.values[v.steps >= onset_step]
    if len(before) < 2 or len(after) < 2:
        return None
    first, best = float(before[0]), float(before.min())
    if first <= best:
        return None
    lost = max(float(np.median(after)), float(after[-1])) - best
    if lost >= share * (first - best):
        return None
    return (
        f"{vk} stayed at {fmt(float(after.min()))}-{fmt(float(after.max()))} from that step on, near its "
        f"best {fmt(best)} (from {fmt(first)}): it kept {fmt(100 * (1 - max(lost, 0.0) / (first - best)), 3)}% "
        "of its improvement"
    )


def _task_metric_lost(run, share: float) -> tuple[str, float, float, float, float] | None:
    """``(key, first, best, last, lost)`` of a held-out task metric (an evaluation accuracy, score or error
    rate: WER, CER, F1, mAP; >= 3 finite evaluations) that improved and then lost at least ``share`` of that
    improvement by its last evaluation (``lost``: the share lost, 1.0 = back to its first value), else
    ``None``. With a training loss that sits at 2x its best to the end (the divergence property above), this
    is the half-the-improvement-lost test on the metric the run is judged by: a loss that fell by orders of
    magnitude regains little of its drop in ratio while the model has collapsed (own corpus f10b1-02, a
    wav2vec2 CTC fine-tune: loss 25,446 -> 2,114 -> 8,500, 27% of the drop; eval_wer 1.0 -> 0.337 -> 1.0)."""
    from .GE001 import heldout_task_metrics

    for k, higher in heldout_task_metrics(run):
        v = run.series(k).by_step().finite().values
        if len(v) < 3:
            continue
        g = v if higher else -v
        first, best, last = float(g[0]), float(g.max()), float(g[-1])
        if best - first > _metric_noise(k, v) and int(np.argmax(g)) < len(g) - 1:
            lost = (best - last) / (best - first)
            if lost >= share:
                sign = 1.0 if higher else -1.0
                return k, sign * first, sign * best, sign * last, lost
    return None


#: A training loss is the sum of the other training-loss series the run logs when, over their common
#: last points, the per-point sums are within this share of it (median relative difference).
COMPONENT_SUM_TOL = 0.1
#: ... over at most this many common last points.
COMPONENT_SUM_POINTS = 20


def _sum_of_components(run, key: str) -> int | None:
    """The number of other training-split loss series (>= 2) whose per-point sum over their common
    last points (up to :data:`COMPONENT_SUM_POINTS`) is within :data:`COMPONENT_SUM_TOL` of ``key``'s
    values, else ``None``. Such a loss is a weighted total of several terms (detectron2/Mask2Former
    ``total_loss`` over its ``loss_ce``/``loss_mask``/``loss_dice`` per decoder layer, a YOLO or
    MMDetection total): no single K-way cross-entropy, so ln K is no level to hold it to (own corpus
    f5b4-08: Mask2Former's total 12.9 = the sum of 30 logged terms, its ``loss_ce`` 0.15, read as
    3.4x ln 50 from a ``FED_LOSS_NUM_CLASSES`` of 50)."""
    from ..roles import parse_name

    main = run.series(key).by_step().finite()
    parts = []
    for k in run.metrics.keys:
        pn = parse_name(k)
        if k == key or pn.family != "loss" or pn.split == "eval":
            continue
        parts.append(run.series(k).by_step().finite())
    if len(parts) < 2 or not len(main):
        return None
    common = main.steps
    for sp in parts:
        common = np.intersect1d(common, sp.steps)
    common = common[-COMPONENT_SUM_POINTS:]
    if common.size == 0:
        return None
    total = np.zeros(common.size)
    for sp in parts:
        total += sp.values[np.searchsorted(sp.steps, common)]
    ref = main.values[np.searchsorted(main.steps, common)]
    ok = np.abs(ref) > 0
    if not ok.any():
        return None
    rel = float(np.median(np.abs(total[ok] - ref[ok]) / np.abs(ref[ok])))
    return len(parts) if rel <= COMPONENT_SUM_TOL else None


def _above_uniform(run, key: str, ch, late: np.ndarray, factor: float, sm: np.ndarray) -> bool:
    """Whether ``key``'s late values (median) are at least ``factor`` x the uniform-guess loss ln K of
    the chance level ``ch`` (``None``: no K), for a loss that is not a sum of logged terms
    (:func:`_sum_of_components`) and that did not fall throughout (:func:`_fell_throughout`)."""
    return (
        ch is not None
        and float(np.median(late)) >= factor * ch.loss
        and _sum_of_components(run, key) is None
        and not _fell_throughout(sm)
    )


def _fell_throughout(sm: np.ndarray) -> bool:
    """Whether the smoothed loss ``sm`` fell at every point (never rose) to at most half its first
    value. A loss that improves at every step is being optimised, not blown up by the step size; its
    level above ln K then says it holds more than a cross-entropy (a weight penalty such as Keras'
    ``kernel_regularizer=l2(1.0)`` adds ``sum(w**2)`` to the loss it logs: session-13 new-user run r14,
    223 -> 10.7 over 25 epochs)."""
    return len(sm) >= 2 and bool(np.all(np.diff(sm) <= 0)) and float(sm[-1]) <= 0.5 * float(sm[0])


def _metric_noise(key: str, vals: np.ndarray) -> float:
    """The evaluation noise of a task metric in its own units (GE001.accuracy_tolerance on the metric as a
    fraction: 3 x the median change between evaluations, or 2 binomial standard deviations): an
    improvement within it is no improvement to lose (a shuffled-labels run whose accuracy went 0.211 ->
    0.266 -> 0.211 around chance, tests/test_judgement_rules.py)."""
    from ..roles import as_fraction
    from .GE001 import accuracy_tolerance

    frac, percent = as_fraction(key, vals)
    return accuracy_tolerance(frac) * (100.0 if percent else 1.0)


def _task_text(task: tuple[str, float, float, float, float] | None) -> str:
    """The clause a finding adds for :func:`_task_metric_lost`'s metric ("" without one)."""
    if task is None:
        return ""
    k, first, best, last, lost = task
    return (
        f", and {k} lost {fmt(100 * lost, 3)}% of its improvement ({fmt(first)} at its first evaluation, "
        f"best {fmt(best)}, {fmt(last)} at the end)"
    )


class LossDivergence(Detector, code="OP001", name="loss-divergence", family="optimization"):
    """Training loss climbs far above its best value and stays there (or turns non-finite after growing).

    Why it matters: the compute after the divergence point is wasted, and the
    checkpoint written last is worse than one written before the onset.
    Evidence: the step where the smoothed loss first exceeds ``factor`` x its running
    best and never comes back under it, the best and final values, and how much of
    the learned improvement was lost (``regained``: 1.0 means back to the initial loss).
    Remedy: lower the peak learning rate, lengthen warmup, clip gradients, check the
    loss scale when training in fp16.
    Thresholds: ``factor`` 2 follows the divergence property of TheDeepChecker
    (Ben Braiek & Khomh 2020: loss more than twice its running minimum);
    ``min_regained`` 0.5 (half the improvement lost) keeps a loss that approaches 0
    from being called divergent by ratio alone; measured on examples/regimes.py. A loss
    that first dropped by at least ``min_drop`` 20% and then regained ``back_to_initial`` 90%
    of the drop diverged too, even under 2x its best (measured on the corpus: a network that
    dies at a high LR returns to log(num_classes)), when the drop exceeds the loss's own scatter
    (:meth:`_noise_band`, 3 x the median point-to-point change over the second half): a dip and return
    inside the scatter of a per-batch loss is no learning lost (own f26b1-16).
    Smoothing: centred rolling median over 5% of the points, so one spike is not a divergence.
    The task metric lost its improvement (:func:`_task_metric_lost`): a loss at ``factor`` x its best to the
    end that regained less than ``min_regained`` of its drop in ratio diverged too when a held-out task metric
    (WER, CER, accuracy, F1, mAP) lost at least ``min_regained`` of its improvement by the end: the same
    half-the-improvement-lost test, on the metric the run is judged by.
    Worse than guessing: when the chance level is known (params or loss/accuracy agreement, see
    ``detectors/_context.py``), a median training loss over the second half of the run at or above
    ``chance_factor`` 2 x ln K is a divergence too, even if it fell from a higher start (a
    Lightning run at SGD lr=50 bouncing at 40-230x ln 10; realworld ts01's 24 vs ln V = 12.4 has
    the same shape). 2x: a model can only do that much worse than uniform by confidently
    predicting wrong classes, which learning never produces. With an accuracy logged but no class
    count, ln 100,000 bounds the chance loss of any classifier (``chance_or_bound``).
    Rose from the start: a loss whose whole second half (smoothed) sits at ``factor`` 2x or more its
    first logged value (the median of the first 5% of points), and that never fell below half of
    that value, got worse from the start and stayed there (``rose_from_start``): a divergence the
    smoothing of a short series would hide.
    Held-out loss held (:func:`_heldout_held`, fact ``heldout_held``): a rise of the training loss to
    the end while the held-out loss, from the onset on, regained less than ``min_regained`` of its own
    improvement is single-batch scatter, not a divergence: an info finding (not when a held-out task
    metric lost its improvement).
    Came back (:meth:`_came_back`, fact ``came_back``): a final stretch above the divergence line no
    longer than a stretch the smoothed loss spent above that line after its best and came back from, and
    ending no higher than those earlier stretches reached, is a level the loss had visited and left, the
    scatter of a noisy per-batch loss: an info finding, no divergence (a positive loss only: a multiple of
    a best at or below zero is no level).
    Unbounded below (``unbounded_below``): a smoothed loss at or below ``unbounded_factor`` 1000 x its
    starting magnitude (the median of its first 5% of points, at least 1) below zero has left its valid
    range: lower is not better there (own corpus f5b6-01: a TTS vocoder loss 0.005 -> -1e9). Negative
    losses within that range (a flow's NLL at -8, dice+CE at -0.7) are normal.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Before the rerun the outcome's actions advise: what happened at the onset step."""
        at = fact(finding, "onset_step", "the onset")
        return (
            Remedy(
                f"Plot the learning rate and the grad norm around step {at}: an LR peak, a warmup end or "
                "a grad norm growing over many steps points at the schedule; a single-step burst at a batch",
                "tells an optimisation divergence from a bad batch before choosing the rerun",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A divergence: the learning rate and warmup (supported when the loss grew gradually)
        against a bad batch or numerics."""
        gradual = bool(finding.facts.get("gradual"))
        return [
            hyp(
                "learning rate too high or warmup too short",
                "supported" if gradual else "open",
                Cause.MODEL_CONVERGENCE,
                "rerun from before the onset with the peak LR divided by 10",
                for_=said(finding),
            ),
            hyp(
                "a bad batch or a numerical failure at the onset",
                "open",
                Cause.DATA_CONFIG,
                "replay the batch at the onset step in fp32",
                against=["the loss grew over many steps before the onset"] if gradual else [],
            ),
        ]

    implies = "diverged"

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "divergence"

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        factor: float = 2.0
        min_regained: float = 0.5
        back_to_initial: float = 0.9
        min_drop: float = 0.2
        min_points: int = 10
        chance_factor: float = 2.0
        unbounded_factor: float = 1000.0

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """A vertical line at the divergence onset (``onset_step``)."""
        s = as_int(finding.facts.get("onset_step"))
        if s is None:
            return None
        return [
            PlotMark(
                "vline",
                f"OP001 divergence (step {s})",
                "divergence",
                (s,),
                note=f"OP001: divergence from step {s}",
            )
        ]

    @staticmethod
    def _onset(
        sm,
        best_run,
        initial: float,
        best: float,
        span: float,
        regained: float,
        p,
        noise: float = 0.0,
    ):
        """The index from which the smoothed loss ``sm`` stays above ``factor`` x its running best
        to the end, or, for a loss that learned (dropped by ``min_drop``) and climbed back to
        ``back_to_initial`` of its initial level, above half of what it learned: a "dead" network
        back at log(num_classes) diverged too, even below ``factor`` x best. None when the last
        point is below the line."""
        above = LossDivergence._above(sm, best_run, initial, best, span, regained, p, noise)
        if not above[-1]:
            return None
        tail_ok = np.flatnonzero(~above)
        return int(tail_ok[-1] + 1) if tail_ok.size else 0

    @staticmethod
    def _above(
        sm,
        best_run,
        initial: float,
        best: float,
        span: float,
        regained: float,
        p,
        noise: float = 0.0,
    ):
        """The points of the smoothed loss ``sm`` above the divergence line :meth:`_onset` uses:
        ``factor`` x the running best, or, for a loss back near its initial level, half of what it
        learned, when what it learned (``span``) exceeds the loss's own scatter ``noise``
        (:meth:`_noise_band`): a drop inside the scatter was a lucky stretch of batches, not learning
        that was lost."""
        back_to_start = (
            span > 0
            and span / abs(initial) >= p.min_drop
            and regained >= p.back_to_initial
            and span > noise
        )
        above = sm > p.factor * np.maximum(best_run, 1e-12)
        if not above[-1] and back_to_start:
            above = sm > best + 0.5 * span
        return above

    @staticmethod
    def _came_back(sm, above, ibest: int, onset: int) -> tuple[int, float]:
        """``(points, peak)``: the longest stretch the smoothed loss ``sm`` spent above the divergence
        line between its best (``ibest``) and the ``onset`` of the final stretch, and came back under
        it, and the highest smoothed value over those earlier stretches; ``(0, -inf)`` when none. A final
        stretch no longer than that and no higher than that peak is a level the loss had reached and
        left before: the scatter of a noisy per-batch loss around a level near the line, not a
        departure from it (own corpus f17b1-16: a LoRA run's per-batch loss 0.0004-21 with per-epoch
        means falling 1.02 -> 0.54, above 2x its smoothed best for 85 points after it and back, then for
        the last 7). A loss that climbs past its earlier excursions diverged (frameworks corpus
        hf-diverging: 0.69 -> excursions to 3.4 -> 7.4 at the end)."""
        longest = run = 0
        seg = above[ibest:onset]
        for a in seg:
            run = run + 1 if a else 0
            longest = max(longest, run)
        peak = float(np.max(sm[ibest:onset][seg])) if seg.any() else float("-inf")
        return longest, peak

    @staticmethod
    def _rose_from_start(vals, late, p):
        """(first value, late median) when the raw first 5% of points (at least one) sit below
        ``factor`` x every point of the smoothed second half ``late`` and the loss never fell
        below half its start; None otherwise or with fewer than 5 points."""
        if len(vals) < 5:
            return None
        k = max(1, len(vals) // 20)
        first0 = float(np.median(vals[:k]))
        if (
            first0 > 0
            and bool(np.all(late >= p.factor * first0))
            and float(np.min(vals)) >= 0.5 * first0
        ):
            return (first0, float(np.median(late)))
        return None

    @staticmethod
    def _unbounded(vals, sm, p):
        """(starting magnitude, smoothed minimum) when the smoothed loss reaches
        ``unbounded_factor`` x its starting magnitude (at least 1) below zero; None otherwise or
        with fewer than ``min_points`` points."""
        if len(vals) < p.min_points:
            return None
        first0 = float(np.median(vals[: max(1, len(vals) // 20)]))
        low = float(sm.min())
        if low <= -p.unbounded_factor * max(abs(first0), 1.0):
            return (first0, low)
        return None

    @staticmethod
    def _finite_prefix(values):
        """(index of the first non-finite value or None, the values before it)."""
        finite = np.isfinite(values)
        first_bad = int(np.flatnonzero(~finite)[0]) if (~finite).any() else None
        return first_bad, (values[:first_bad] if first_bad is not None else values)

    @staticmethod
    def _regained(best, final, span):
        """The share of the improvement ``span`` (initial - best) lost by the end: (final - best) /
        span; with no improvement, inf when the loss ended above its best, else 0."""
        return (final - best) / span if span > 0 else (np.inf if final > best else 0.0)

    def _diverged(self, key, steps, onset, ibest, initial, best, final, regained, task) -> Finding:
        """The critical finding of a gradual divergence of ``key`` from step ``steps[onset]``: the
        smoothed loss went from ``best`` (at ``steps[ibest]``) to ``final``, losing ``regained`` of
        the improvement (or a task metric, ``task``, lost)."""
        return self.finding(
            Severity.CRITICAL,
            f"{key} diverged from step {int(steps[onset])}: smoothed loss {fmt(final)} at the "
            f"end vs best {fmt(best)} at step {int(steps[ibest])} ({fmt(final / best if best > 0 else np.inf, 3)}x); "
            + (
                f"{fmt(100 * regained, 3)}% of the improvement was lost"
                if regained <= 1
                else "the loss ended above its initial value"
            )
            + _task_text(task),
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(steps[onset]),
                    step_end=int(steps[-1]),
                    values={"initial": initial, "best": best, "final": final},
                )
            ],
            onset_step=int(steps[onset]),
            best_step=int(steps[ibest]),
            best=best,
            final=final,
            initial=initial,
            regained=float(regained),
            gradual=True,
        )

    @staticmethod
    def _noise_band(vals) -> float:
        """The loss's own point-to-point scatter: ``NOISE_UNITS`` 3 x the median absolute change between
        consecutive points over the second half of the series (the task metric's noise band,
        :func:`mlaudit_core.task_metric.noise_band`, applied to the loss). A per-batch loss of a short
        fine-tune wanders by this much without learning or losing anything (own f26b1-16: a 60-step
        QLoRA loss at 0.46-1.32, band 0.50, whose smoothed dip from 0.78 to 0.58 and return is scatter)."""
        from ..task_metric import NOISE_UNITS

        half = np.asarray(vals[len(vals) // 2 :], dtype=np.float64)
        if half.size < 3:
            return 0.0
        return NOISE_UNITS * float(np.median(np.abs(np.diff(half))))

    def _scatter(self, key, steps, sm, onset, ibest, first_bad, best_run, p, noise=0.0):
        """An INFO finding when the smoothed loss ``sm`` ended above ``p.factor`` x its best from
        ``onset`` on, but after its best had already been above that line for at least as many points
        and come back under it, no lower than the end (:meth:`_came_back`): the end is a level the loss
        had visited, the scatter of a noisy positive loss, not a divergence. ``None`` otherwise."""
        if onset is None or first_bad is not None or ibest >= len(sm) - 1:
            return None
        initial, best, final = float(sm[0]), float(sm.min()), float(sm[-1])
        span = initial - best
        regained = self._regained(best, final, span)
        before, peak = self._came_back(
            sm, self._above(sm, best_run, initial, best, span, regained, p, noise), ibest, onset
        )
        if not (before >= len(sm) - onset and final <= peak and best > 0):
            return None
        return self.finding(
            Severity.INFO,
            f"{key} ended above {fmt(p.factor, 2)}x its best (smoothed {fmt(final)} vs {fmt(best)} at step "
            f"{int(steps[ibest])}) for its last {len(sm) - onset} points, but after its best it had been above "
            f"that line for {before} points, up to {fmt(peak)}, and came back under it: the end is a level the loss had "
            "already visited, the scatter of a noisy loss, not a divergence",
            onset_step=int(steps[onset]),
            best=best,
            final=final,
            came_back=before,
        )

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        first_bad, vals = self._finite_prefix(s.values)
        steps = s.steps[: len(vals)]
        if len(vals) < p.min_points and first_bad is None:
            raise Skip(f"{key} has {len(vals)} finite points (< {p.min_points})")
        if len(vals) < 2:
            raise Skip(f"{key} has fewer than 2 finite points before turning non-finite")
        sm = centered_median(vals, smooth_window(len(vals)))
        best_run = np.minimum.accumulate(sm)
        initial, best = float(sm[0]), float(sm.min())
        ibest = int(np.argmin(sm))
        final = float(sm[-1])
        span = initial - best
        regained = self._regained(best, final, span)
        noise = self._noise_band(vals)
        onset = self._onset(sm, best_run, initial, best, span, regained, p, noise)
        # growth before a NaN is judged on the smoothed curve: noisy micro-batch losses
        # (0.5, 1.5, 2.3, 1.1 ...) are not growth
        grew_then_nan = first_bad is not None and len(vals) >= 3 and float(sm[-1]) > p.factor * best
        ch = chance_or_bound(run)
        late = sm[len(sm) // 2 :]
        # rose from its first logged value and never came back: the centred median of a short series
        # averages the first point with the blow-up after it, so the smoothed best can sit on the rise
        # (own corpus ts23: QLoRA at lr 5, loss 1.64 -> 11.8 at step 2 -> exactly 10.37 = ln 32000 for
        # the rest; called underfit). Judged on the raw first values (the first 5% of points, at least
        # one) against the smoothed second half; never when the loss ever fell below half its start.
        rose_from_start = None if first_bad is not None else self._rose_from_start(vals, late, p)
        # unbounded below: the smoothed loss reaches unbounded_factor x its starting magnitude (at least 1) below
        # zero. A negative loss is normal for a likelihood of continuous data (a flow's NLL at -8, a dice+CE at
        # -0.7); three orders of magnitude past its start is not (own corpus f5b6-01: a vocoder loss 0.005 ->
        # -1e9 in a TTS run, its total loss following)
        unbounded = None if first_bad is not None else self._unbounded(vals, sm, p)
        worse_than_uniform = (
            first_bad is None
            and len(vals) >= p.min_points
            and _above_uniform(run, key, ch, late, p.chance_factor, sm)
        )
        task = None
        scatter = self._scatter(key, steps, sm, onset, ibest, first_bad, best_run, p, noise)
        if scatter is not None:
            yield scatter  # judged as scatter: the tests below that need a divergence onset do not run
            onset = None
        if (
            onset is not None
            and ibest < len(sm) - 1
            and (regained >= p.min_regained or (task := _task_metric_lost(run, p.min_regained)))
            and task is None
            and (held := _heldout_held(run, int(steps[onset]), p.min_regained)) is not None
        ):
            yield self.finding(
                Severity.INFO,
                f"{key} rose from {fmt(best)} (step {int(steps[ibest])}) to {fmt(final)} at the end (smoothed), "
                f"but {held}: a model that diverged does worse on held-out data too, so the rise is the "
                "scatter of single-batch losses, not a divergence",
                onset_step=int(steps[onset]),
                best=best,
                final=final,
                heldout_held=True,
            )
        elif (
            onset is not None
            and ibest < len(sm) - 1
            and (regained >= p.min_regained or (task := _task_metric_lost(run, p.min_regained)))
        ):
            yield self._diverged(key, steps, onset, ibest, initial, best, final, regained, task)
        elif worse_than_uniform:
            med = float(np.median(late))
            yield self.finding(
                Severity.CRITICAL,
                f"{key} stays far above the chance level: median {fmt(med)} over the second half of the run is "
                f"{fmt(med / ch.loss, 3)}x the loss of a uniform guess over {ch.classes} classes (ln {ch.classes} = "
                f"{fmt(ch.loss)}; {ch.source}): the model predicts worse than guessing, so the optimisation is "
                "unstable (learning rate far too high) or the loss is computed on broken inputs",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(steps[len(sm) // 2]),
                        step_end=int(steps[-1]),
                        values={
                            "median_late": med,
                            "chance_loss": ch.loss,
                            "best": best,
                            "final": final,
                        },
                    )
                ],
                onset_step=int(steps[0]),
                best_step=int(steps[ibest]),
                best=best,
                final=final,
                initial=initial,
                regained=None,
                gradual=False,
                above_chance=True,
                chance_loss=ch.loss,
                times_chance=med / ch.loss,
            )
        elif rose_from_start is not None:
            first0, med = rose_from_start
            yield self.finding(
                Severity.CRITICAL,
                f"{key} rose from its first logged value {fmt(first0)} to {fmt(final)} (smoothed) and stayed at "
                f">= {fmt(p.factor, 2)}x it for the whole second half of the run (median {fmt(med)}): the loss got "
                "worse from the start, a divergence (the smoothing of a short series hides the first point)",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(steps[0]),
                        step_end=int(steps[-1]),
                        values={"first": first0, "median_late": med, "final": final},
                    )
                ],
                onset_step=int(steps[0]),
                best_step=int(steps[0]),
                best=first0,
                final=final,
                initial=first0,
                regained=None,
                gradual=False,
                rose_from_start=True,
            )
        elif unbounded is not None:
            first0, low = unbounded
            yield self.finding(
                Severity.CRITICAL,
                f"{key} ran to {fmt(low)} (smoothed, from {fmt(first0)} at its start): a loss "
                f"{fmt(abs(low) / max(abs(first0), 1.0), 3)}x its starting magnitude below zero has left its valid "
                "range (a log-likelihood or adversarial term unbounded below, a sign error); lower is not better "
                "there, the optimisation diverged",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(steps[0]),
                        step_end=int(steps[-1]),
                        values={"first": first0, "min_smoothed": low, "final": final},
                    )
                ],
                onset_step=int(
                    steps[int(np.argmax(sm <= -p.unbounded_factor * max(abs(first0), 1.0)))]
                ),
                best_step=int(steps[0]),
                best=first0,
                final=final,
                initial=first0,
                regained=None,
                gradual=True,
                unbounded_below=True,
            )
        elif grew_then_nan:
            yield self.finding(
                Severity.CRITICAL,
                f"{key} grew from {fmt(best)} to {fmt(float(sm[-1]))} (smoothed) and then "
                f"turned non-finite at step {int(s.steps[first_bad])}",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(steps[0]),
                        step_end=int(s.steps[first_bad]),
                        values={"best": best, "last_finite": float(vals[-1])},
                    )
                ],
                onset_step=int(s.steps[first_bad]),
                best=best,
                final=float(sm[-1]),
                initial=initial,
                regained=None,
                gradual=True,
            )
