"""BL001 baseline-regression."""

from __future__ import annotations

from pydantic import Field

from ..baseline.compare import EMITTED, baselines_of, compare_metrics
from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, PlotMark, Remedy, Skip, as_float, as_int


class BaselineRegression(Detector, code="BL001", name="baseline-regression", family="baseline"):
    """A learning metric ends worse than the run's baselines beyond their seed-to-seed noise band.

    Why it matters: "is it really worse?" needs the noise of the baseline, not one
    earlier number. A run inside the band of several seeds is not a regression,
    however different its final value looks; a run outside it is, even when the
    gap is small.
    Evidence: per metric, the run's mean over the last ``tail_frac`` of the
    aligned axis (steps, or tokens/samples seen when every run logs them), the
    baselines' tail means, the band, the delta (absolute, relative and in
    baseline standard deviations), the share of tail points beyond the
    per-point band and the step from which the run stays outside.
    Remedy: read BL002 (what changed) and BL003 (first broken layer); rerun
    the baseline config with one change at a time.
    Thresholds: with >= 3 baselines the Student-t prediction interval for one
    new seed, mean +- t(q, n-1) * sd * sqrt(1 + 1/n) of the tail means (``k`` = 2
    sets the coverage to that of +-2 sd, 95.4%), widened to every baseline
    seed; with 1-2 baselines "not enough seeds to tell" (info) unless the gap
    exceeds 10x the within-run noise and 5% of the baseline (see
    mlaudit_core/baseline/band.py and the false-worse figures of
    benchmarks/baseline_and_ci.py). "Worse" needs the tail mean beyond the band *and* at least
    ``min_outside`` (50%) of the tail points beyond the per-point band, so a
    single bad evaluation is not a regression. ``tail_frac`` 0.2 judges the end
    of training, the part a checkpoint is taken from.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """What the band itself says: where the run left it, and whether it rests on enough seeds
        (the difference to swap back is BL003's first action)."""
        out = []
        at = finding.facts.get("onset_step")
        if at is not None and finding.severity.rank >= Severity.ERROR.rank:
            out.append(
                Remedy(
                    f"Look at what happened at step {at}, where {fact(finding, 'metric')} first left the "
                    "baselines' band (an LR event, the data order, a resume)",
                    "a run worse from its start points at the config or data, one that leaves the band "
                    "late at an event of the run",
                    "minutes",
                )
            )
        n = finding.facts.get("n_baselines")
        if isinstance(n, int) and n < 3:
            out.append(
                Remedy(
                    f"Run more seeds of the baseline config ({n} baseline run(s) now)",
                    "a band from 3 seeds or more tells a real difference from seed noise",
                    "hours",
                )
            )
        return tuple(out)

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A band from fewer than 3 baseline runs cannot settle seed noise (open); with more, the
        ledger is BL003's."""
        n = finding.facts.get("n_baselines")
        if not (isinstance(n, int) and n < 3):
            return None
        return [
            hyp(
                f"the band from {n} baseline run(s) is too narrow to tell a regression from seed noise",
                "open",
                Cause.INCONCLUSIVE,
                "run 3 seeds of the baseline config and compare again",
                for_=said(finding),
            )
        ]

    implies = "regressed"

    class Params(DetectorParams):
        k: float = 2.0
        tail_frac: float = 0.2
        min_outside: float = 0.5
        metrics: list[str] = Field(default_factory=list)
        by_data_seen: bool = True

    @classmethod
    def plot_marks(cls, finding: Finding) -> list[PlotMark] | None:
        """The baselines' tail-mean band (``band_lo``..``band_hi``) over the tail steps."""
        facts = finding.facts
        if facts.get("band_lo") is None or not facts.get("metric"):
            return None
        lo, hi = as_float(facts.get("band_lo")), as_float(facts.get("band_hi"))
        a, b = as_int(facts.get("tail_start_step")), as_int(facts.get("tail_end_step"))
        if lo is None or hi is None or a is None or b is None:
            return []
        n = facts.get("n_baselines")
        verdict = str(facts.get("verdict", "")).replace("_", " ")
        return [
            PlotMark(
                "band",
                f"{finding.code} {facts['metric']}: band of {n} baseline(s), {verdict}",
                "baseline",
                (a, b),
                key=str(facts["metric"]),
                y=(lo, hi),
                note=f"{finding.code}: {facts['metric']} tail mean band {lo:.4g}..{hi:.4g} "
                f"of {n} baseline(s) over steps {a}–{b}: {facts.get('verdict', '')}",
            )
        ]

    def check(self, run, p):
        if run.cache.get(EMITTED):
            return  # already reported through compare_to_baselines()
        if not baselines_of(run):
            raise Skip(
                "no baseline runs given (pass --baseline RUN or tag runs mlaudit.baseline), so "
                "whether the run is worse than before is unknown"
            )
        comps = [
            c
            for c in compare_metrics(
                run, p.k, p.tail_frac, p.min_outside, p.metrics, p.by_data_seen
            )
            if c.kind == "learning"
        ]
        if not comps:
            raise Skip(
                "the run and its baselines share no loss or accuracy metric over a common step range"
            )
        for c in comps:
            b = c.band
            sev = Severity.ERROR if b.verdict == "worse" else Severity.INFO
            yield self.finding(
                sev,
                c.summary(),
                evidence=[
                    SeriesEvidence(
                        metric=c.key,
                        step_start=b.tail_start_step,
                        step_end=b.tail_end_step,
                        values=b.figures(),
                        note=f"tail window, {c.axis} axis",
                    ),
                    FactEvidence(
                        text="baseline tail means",
                        values={bid: v for bid, v in zip(c.baseline_ids, b.baseline_tail_means)},
                    ),
                ],
                metric=c.key,
                role=c.role,
                verdict=b.verdict,
                axis=c.axis,
                is_loss=c.is_loss,
                n_baselines=b.n_baselines,
                baseline_ids=c.baseline_ids,
                band_method=b.method,
                k=b.k,
                run_tail_mean=b.run_tail_mean,
                baseline_tail_means=b.baseline_tail_means,
                band_lo=b.band_lo,
                band_hi=b.band_hi,
                delta=b.delta,
                rel_delta=b.rel_delta,
                z=b.z,
                frac_tail_worse=b.frac_tail_worse,
                frac_tail_better=b.frac_tail_better,
                frac_all_worse=b.frac_all_worse,
                onset_step=b.onset_step,
                tail_start_step=b.tail_start_step,
                tail_end_step=b.tail_end_step,
                higher_is_better=b.higher_is_better,
                notes=b.notes,
            )
