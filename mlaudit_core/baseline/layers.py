"""First broken layer and the hypothesis ledger of a baseline comparison.

Following the diagnosis workflow, the logged invariants are compared boundary
by boundary in causal order (:data:`~.deltas.LAYERS`): the earliest boundary
with a consistent delta is the *first broken layer*; differences at later
boundaries and the metric movements themselves are reported as possible
consequences. Code commits cannot be placed on one boundary and are kept as a
separate hypothesis.

Discriminating evidence already in the run is used before any layer is
blamed: a change upstream of the model (data, features, training config,
artifact, runtime) would move the loss, so when every loss is within the noise
band while an accuracy-like metric moved, the upstream hypotheses are rejected
and a metric-library change, when there is one, becomes the explanation
(cause ``metric_policy``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..report import Cause, Hypothesis
from .deltas import LAYERS, Delta

_TESTS = {
    "source": "rerun the baseline code and config on the new data version, and the new code on the old "
    "data (old data + new code vs new data + old code)",
    "labels": "compare label definitions and class counts of both data versions; retrain the baseline "
    "config on the old labels",
    "split": "check split sizes and entity overlap; rerun with the baseline's split",
    "features": "push the same records through both feature pipelines and diff the outputs",
    "training": "rerun the baseline with only {keys} changed to the new value (one variable at a time)",
    "model": "load both artifacts and compare their outputs on one fixed batch",
    "metric": "recompute the metric from the same raw predictions with both {keys} versions",
    "runtime": "rerun the baseline config in the new environment ({keys}) with nothing else changed",
}
_CAUSE = {
    "source": Cause.DATA_CONFIG,
    "labels": Cause.DATA_CONFIG,
    "split": Cause.DATA_CONFIG,
    "features": Cause.DATA_CONFIG,
    "training": Cause.MODEL_CONVERGENCE,
    "model": Cause.MODEL_CONVERGENCE,
    "metric": Cause.METRIC_POLICY,
    "runtime": Cause.MODEL_CONVERGENCE,
}
LAYERS_INDEX = {k: i for i, k in enumerate(LAYERS)}


@dataclass
class MetricMove:
    """One compared metric: its key, whether it is a loss, and the band verdict."""

    key: str
    is_loss: bool
    verdict: str  # worse | within_noise | better
    summary: str


@dataclass
class LayerReport:
    """The first broken layer, the consequences, the cause it implies and the ledger."""

    first: str | None
    deltas_by_layer: dict[str, list[Delta]]
    consequences: list[str]
    cause: Cause | None  # None: the metrics are within noise, nothing to explain
    hypotheses: list[Hypothesis] = field(default_factory=list)
    message: str = ""


def _keys(ds: list[Delta], n: int = 3) -> str:
    return ", ".join(d.key for d in ds[:n])


def analyse(deltas: list[Delta], moves: list[MetricMove]) -> LayerReport:
    """Place the deltas on the boundaries and decide which explanations survive.

    Args:
        deltas: from :func:`~.deltas.find_deltas` (any order).
        moves: one entry per compared learning metric.

    Returns:
        The layer report; ``cause`` is ``None`` when no learning metric is worse
        than its baselines.
    """
    by_layer: dict[str, list[Delta]] = {}
    for d in sorted(deltas, key=lambda d: -d.score):
        if d.consistent:
            by_layer.setdefault(d.layer, []).append(d)
    noisy = [d for d in deltas if not d.consistent]
    ordered = [lay for lay in LAYERS if lay in by_layer]
    worse = [m for m in moves if m.verdict == "worse"]
    # fewer than 3 baselines and no large gap: neither worse nor within noise
    unsure = [m for m in moves if m.verdict == "insufficient_seeds"]
    losses = [m for m in moves if m.is_loss]
    loss_quiet = bool(losses) and all(m.verdict in ("within_noise", "better") for m in losses)
    hs: list[Hypothesis] = []

    # seed noise: the null hypothesis. No cause: "no regression against the baselines" says
    # nothing of the run's health (baselines that diverged the same way are within the noise too)
    hs.append(
        Hypothesis(
            statement="the difference is seed-to-seed noise",
            status="rejected" if worse else "open" if unsure else "supported",
            evidence_against=[m.summary for m in worse],
            evidence_for=[] if worse or unsure else [m.summary for m in moves],
            discriminating_test="run two more seeds of the new config; a real regression "
            "stays outside the band",
        )
    )

    metric_only = bool(worse) and loss_quiet and "metric" in by_layer
    first: str | None = None
    for lay in ordered:
        h = _layer_hypothesis(
            lay, by_layer[lay], worse, unsure, losses, loss_quiet, metric_only, first
        )
        if h.status == "supported":
            first = lay
        hs.append(h)
    hs += _other_hypotheses(deltas, noisy, worse, first)
    return _report(first, by_layer, ordered, worse, hs)


def _layer_hypothesis(
    lay: str,
    ds: list[Delta],
    worse: list[MetricMove],
    unsure: list[MetricMove],
    losses: list[MetricMove],
    loss_quiet: bool,
    metric_only: bool,
    first: str | None,
) -> Hypothesis:
    """A change at one boundary: rejected when no metric moved (open when unsure), when only a
    metric moved and the boundary is upstream of it, or when the loss moved with a metric
    change; supported for the first boundary left; open (a possible consequence) after it."""
    stmt = f"a change in the {LAYERS[lay]}: " + "; ".join(d.describe() for d in ds[:3])
    test = _TESTS[lay].format(keys=_keys(ds))
    if not worse:
        return Hypothesis(
            statement=stmt,
            status="open" if unsure else "rejected",
            cause=_CAUSE[lay],
            evidence_against=[]
            if unsure
            else ["no compared metric left the baselines' noise band"],
            evidence_for=[
                "not enough baseline seeds to tell whether a metric moved: "
                + "; ".join(m.summary for m in unsure[:2])
            ]
            if unsure
            else [],
            discriminating_test=test,
        )
    if metric_only and LAYERS_INDEX[lay] < LAYERS_INDEX["metric"]:
        return Hypothesis(
            statement=stmt,
            status="rejected",
            cause=_CAUSE[lay],
            evidence_against=[
                "every loss is within the noise band, so the model's fit "
                "did not change: " + "; ".join(m.summary for m in losses)
            ],
            discriminating_test=test,
        )
    if lay == "metric" and losses and not loss_quiet:
        return Hypothesis(
            statement=stmt,
            status="rejected",
            cause=_CAUSE[lay],
            evidence_against=[
                "the loss moved too, which a change in how a metric is "
                "computed cannot do: "
                + "; ".join(m.summary for m in losses if m.verdict == "worse")
            ],
            discriminating_test=test,
        )
    if first is None:
        return Hypothesis(
            statement=stmt,
            status="supported",
            cause=_CAUSE[lay],
            evidence_for=["earliest boundary whose logged invariants differ"]
            + [m.summary for m in worse],
            discriminating_test=test,
        )
    return Hypothesis(
        statement=stmt,
        status="open",
        cause=_CAUSE[lay],
        evidence_for=[f"downstream of the {first} change; may be a consequence"],
        discriminating_test=test,
    )


def _other_hypotheses(
    deltas: list[Delta], noisy: list[Delta], worse: list[MetricMove], first: str | None
) -> list[Hypothesis]:
    """A code change, an unlogged change, and the keys the baselines already differ on."""
    hs: list[Hypothesis] = []
    code = [d for d in deltas if d.layer == "unlocalised" and d.consistent]
    if code:
        hs.append(
            Hypothesis(
                statement="a code change: " + "; ".join(d.describe() for d in code),
                status="open" if worse else "rejected",
                cause=Cause.CORRECTNESS_BUG,
                evidence_for=["the commit differs; a code change can touch any layer"]
                if worse
                else [],
                evidence_against=[] if worse else ["no compared metric left the band"],
                discriminating_test="rerun the baseline commit with the new config and data, "
                "or bisect the commits in between",
            )
        )
    if worse and first is None and not code:
        hs.append(
            Hypothesis(
                statement="an unlogged change (data, config or environment not logged as "
                "params/tags)",
                status="open",
                cause=Cause.MODEL_CONVERGENCE,
                evidence_for=["no logged invariant differs, yet the run is outside the band"],
                discriminating_test="diff the full resolved config and `pip freeze` of both runs; "
                "log them as params next time",
            )
        )
    if noisy:
        hs.append(
            Hypothesis(
                statement="keys on which the baselines already differ: "
                + ", ".join(d.key for d in noisy[:5]),
                status="rejected",
                evidence_against=[("the baselines differ on them and still agree within noise")],
            )
        )

    return hs


def _report(
    first: str | None,
    by_layer: dict[str, list[Delta]],
    ordered: list[str],
    worse: list[MetricMove],
    hs: list[Hypothesis],
) -> LayerReport:
    """The report: the first broken layer, what follows from it, the cause and a summary."""
    cause: Cause | None = None
    if worse:
        cause = _CAUSE[first] if first else Cause.MODEL_CONVERGENCE
    consequences = [
        f"{lay}: " + "; ".join(d.describe() for d in by_layer[lay][:3])
        for lay in ordered
        if first and LAYERS_INDEX[lay] > LAYERS_INDEX[first]
    ]
    consequences += [m.summary for m in worse]
    if first:
        msg = (
            f"first broken layer: {LAYERS[first]} ("
            + "; ".join(d.describe() for d in by_layer[first][:3])
            + ")"
        )
    elif ordered:
        msg = (
            "logged invariants differ ("
            + ", ".join(ordered)
            + ") but no metric left the noise band"
        )
    else:
        msg = "no logged invariant differs between the run and its baselines"
    return LayerReport(first, by_layer, consequences, cause, hs, msg)
