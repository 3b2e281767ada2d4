"""The verdict: findings in, outcome / cause / confidence / narrative out.

Detectors measure; this package decides.

* :mod:`.policy` is the policy table (:data:`~.policy.POLICY`): one row per rule with the
  findings it needs, the outcome and cause it gives, its precedence and its own cases.
* :mod:`.evidence` says what the verdict rests on: the judgeable training signal examined, how
  the run ended (planned vs reached, interrupts, snapshots), precision and learning-rate
  evidence, and the confidence derived from that evidence.
* :mod:`.narrative` writes the timeline, key metrics, hypotheses and next actions.

With no judgeable training signal and nothing else that says what happened (a signature, the
tracker's status) the outcome is ``unknown`` (schema 1.1) and the report says exactly what was
missing and what to log or pass; ``succeeded`` needs a training signal actually examined.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..model_family import DL_ONLY_ADVICE, tree_ensemble
from ..report import (
    AuditReport,
    Cause,
    DetectorRun,
    Finding,
    MissingSignal,
    NextAction,
    Outcome,
    RunRef,
    Severity,
    Verdict,
)
from ..roles import Role
from ..rundata import RunData, RunStatus
from ..signal import clip
from .evidence import (
    Ending,
    assess,
    confidence,
    ending,
    lr_assessment,
    precision_evidence,
    primary_points,
    superseded_crash,
    what_to_log,
)
from .liveness import abandoned
from .narrative import build_timeline, hypotheses, key_metrics, next_actions, surprising
from .policy import POLICY, Case, Ctx, Decision, Rule, first_match, table_markdown

__all__ = ["POLICY", "Case", "Ctx", "Decision", "Rule", "build_context", "decide", "table_markdown"]

_PARTIAL = re.compile(
    r"truncat|corrupt|could not be read|cannot read|no such file|skipped|empty", re.I
)


#: Rules that judge a run from its final values (verdict.final_values, policy V20b-V20d): their
#: verdict names what a curve would show, so the actions that would log or find one come first.
FINAL_VALUE_RULES = frozenset({"V20b", "V20c", "V20d"})


def build_context(run: RunData, findings: list[Finding], det_runs: list[DetectorRun]) -> Ctx:
    by_code: dict[str, list[Finding]] = {}
    superseded: list[str] = []
    for f in findings:
        if (end := superseded_crash(run, f)) is not None:
            # an earlier attempt's crash in an appended log: reported, but not how this run ended
            superseded.append(
                f"{f.code} ({f.message[:100]}): {end}"
                if end.startswith("training went on")
                else f"{f.code} ({f.message[:100]}) is followed by '{end}'"
            )
            continue
        by_code.setdefault(f.code, []).append(f)
    return Ctx(
        run,
        by_code,
        assess(run, findings, det_runs),
        ending(run, findings),
        precision_evidence(run, findings),
        lr_assessment(run),
        superseded,
    )


def decide(run: RunData, findings: list[Finding], det_runs: list[DetectorRun]) -> AuditReport:
    """Apply the policy. Returns a report with verdict, timeline, hypotheses, unknowns and actions.

    The steps: the first policy rule that matches (:func:`~.policy.first_match`), read as an
    interim verdict while the run is running (:func:`_while_running`) and not as a success on
    partial data (:func:`_on_partial_data`); the summary's additions (:func:`_summary`); the
    confidence (:func:`~.evidence.confidence`); the unknowns and next actions
    (:func:`_unknowns_and_actions`); the narrative around them."""
    stale = abandoned(run)
    if stale is not None:
        # a RUNNING status nobody wrote to for weeks: read as the status it stands for
        run = replace(run, status=stale.status)
    ctx = build_context(run, findings, det_runs)
    decision = _while_running(run, first_match(ctx))
    missing = [
        MissingSignal(signal=f.facts["signal"], would_tell=f.facts["would_tell"])
        for f in findings
        if f.family == "instrumentation"
        and not f.facts.get("logged_nonfinite")
        # a tree ensemble has no gradient norm to log (model_family)
        and not (tree_ensemble(run) is not None and DL_ONLY_ADVICE.search(f.facts["signal"]))
    ]
    # partial input (a truncated or unreadable file, a missing log): the verdict stands as the
    # best reading of what was there, but is marked inconclusive and says what is missing
    partial = [w for w in run.warnings if _PARTIAL.search(w)]
    decision = _on_partial_data(decision, partial, ctx.ending, run)
    inconclusive = decision.cause is Cause.INCONCLUSIVE or bool(partial)
    # a learning check that errored is evidence not examined: it lowers the confidence, and a verdict
    # of health says which checks did not run
    errored = [
        f"{d.code}" for d in det_runs if d.status == "errored" and d.code[:2] in ("GE", "OP", "LI")
    ]
    summary = _summary(run, ctx, decision, partial, errored)
    if stale is not None:
        summary = f"{stale.sentence()} {summary}"
    conf, terms = confidence(
        outcome=decision.outcome.value,
        cause=decision.cause.value,
        primary=decision.primary,
        basis=ctx.basis,
        findings=findings,
        has_validation=run.has(Role.VAL_LOSS) or run.has(Role.VAL_ACCURACY),
        has_step_time=run.has(Role.STEP_TIME),
        warnings=len(run.warnings),
        inconclusive=inconclusive,
        n_primary=primary_points(run, decision.primary, ctx.basis),
        partial=bool(partial),
        errored=errored,
    )
    verdict = Verdict(
        outcome=decision.outcome,
        cause=decision.cause,
        confidence=conf,
        summary=summary,
        inconclusive=inconclusive,
        rule=decision.rule or None,
        basis=terms,
    )
    ordered = sorted(findings, key=lambda f: (-f.severity.rank, f is not decision.primary, f.code))
    unknowns, actions = _unknowns_and_actions(run, ctx, decision, det_runs)
    return AuditReport(
        run=RunRef(tracker=run.identity.tracker, id=run.identity.id),
        verdict=verdict,
        findings=ordered,
        timeline=build_timeline(run, findings),
        key_metrics=key_metrics(run, findings),
        hypotheses=hypotheses(decision, ctx),
        conclusions=[f.message for f in ordered if f.severity.rank >= Severity.ERROR.rank][:5],
        unknowns=unknowns,
        surprising=surprising(run, findings),
        missing_instrumentation=missing,
        next_actions=actions[:8],
        detectors=det_runs,
    )


def _while_running(run: RunData, decision: Decision) -> Decision:
    """A run the tracker says is running gets an interim verdict: outcome ``running`` with what
    the points so far show (a healthy reading's cause stays open); a crash or an unknown stays."""
    if run.status is not RunStatus.RUNNING or decision.outcome in (
        Outcome.CRASHED,
        Outcome.RUNNING,
        Outcome.UNKNOWN,
    ):
        return decision
    return Decision(
        Outcome.RUNNING,
        decision.cause if decision.cause is not Cause.HEALTHY else Cause.INCONCLUSIVE,
        "The run is still running; so far: " + decision.summary,
        decision.primary,
        decision.rule,
    )


def _on_partial_data(
    decision: Decision, partial: list[str], end: Ending | None = None, run: RunData | None = None
) -> Decision:
    """'succeeded' needs positive evidence about the whole run; a history known to be cut (a
    truncated file, a .wandb prefix of a longer run) shows only part of it: not judged (V20p),
    unless a witness the cut did not reach shows the run's end: its plan reached (``share`` of the
    planned length >= :data:`evidence.COMPLETE_SHARE`: the tracker's end-of-run summary, a console that
    goes on: own corpus f10b1-13, a ``.wandb`` history cut in epoch 1 of a run whose summary and console
    reach epoch 20 of 20), or the framework's end-of-training line or summary
    (:func:`.final_values.ended_normally`: own corpus f18b1-09, a ``.wandb`` history cut at epoch 29
    whose console ends "100 epochs completed in 0.547 hours"). A console that itself ends inside a
    progress bar with time to go, or on a new epoch's header, went on past what was read: no such
    witness."""
    from .evidence import COMPLETE_SHARE
    from .final_values import ended_normally

    if not (partial and decision.outcome is Outcome.SUCCEEDED):
        return decision
    share = end.share if end is not None else None
    went_on = end is not None and bool(end.open_bar or end.open_epoch)
    if share is not None and share >= COMPLETE_SHARE and not went_on:
        return decision
    if run is not None and not went_on and ended_normally(run) is not None:
        return decision
    return Decision(
        Outcome.UNKNOWN,
        Cause.INCONCLUSIVE,
        "Not judged: the data read is partial, so whether the run succeeded "
        "cannot be told from it; what was read looked healthy: " + decision.summary,
        decision.primary,
        "V20p",
    )


def _undeciding_errors(ctx, decision: Decision) -> str:
    """For a succeeded verdict, the findings at error or above that did not decide it, named, so
    the headline does not stand beside an unexplained error: '' when there are none."""
    if decision.outcome is not Outcome.SUCCEEDED:
        return ""
    errs = [
        f
        for fs in ctx.by_code.values()
        for f in fs
        if f.severity.rank >= Severity.ERROR.rank and f.family != "instrumentation"
    ]
    if not errs:
        return ""
    named = "; ".join(f"{f.code} ({clip(f.message, 120)})" for f in errs[:2])
    return (
        f" Not deciding: {named} - the verdict rules did not read "
        f"{'it' if len(errs) == 1 else 'them'} as a failure of this run; read "
        f"{'it' if len(errs) == 1 else 'them'} before trusting the success."
    )


def _summary(run: RunData, ctx, decision: Decision, partial: list[str], errored: list[str]) -> str:
    """The decision's summary, then: the failure lines that did not end the run (an earlier
    attempt's crash, a failure training went on after), which launch of the log was judged, the
    partial data, and the learning checks that errored (for a healthy or running verdict)."""
    summary = decision.summary
    if ctx.superseded:
        went_on = [
            x
            for x in ctx.superseded
            if "training went on after it" in x or "the process went on" in x
        ]
        ended = [x for x in ctx.superseded if x not in went_on]
        if ended:
            summary += (
                " Earlier attempts in the same log crashed before a later one finished, so those crashes "
                "did not end this run: " + "; ".join(ended[:2]) + "."
            )
        if went_on:
            summary += (
                " Training went on after these failure lines, so they did not end the run: "
                + "; ".join(went_on[:2])
                + "."
            )
    judged = run.params.get("log.launch_judged")
    if judged and judged == run.params.get("log.launches"):
        # several launches, the run is the last (TensorBoard event files of several processes)
        summary += (
            f" Judged: launch {judged} of {judged} in this log, the last that trained; the earlier "
            "launches trained from the first step again and are history, not this run."
        )
    elif judged:
        # several launches in one log, and the run is not the last one (formats/consolelog/launches.py)
        summary += (
            f" Judged: launch {judged} of {run.params.get('log.launches', '?')} in this log, the last one that "
            "trained; the launch(es) after it printed no training point and no traceback (evaluation only, "
            "or a resume that found training done)."
        )
    if partial:
        summary += " Partial data: " + "; ".join(partial[:3]) + "."
    summary += _undeciding_errors(ctx, decision)
    if errored and decision.outcome in (Outcome.SUCCEEDED, Outcome.RUNNING):
        summary += (
            f" Not checked: {', '.join(errored)} errored (see unknowns), so a failure only "
            f"{'it' if len(errored) == 1 else 'they'} would see cannot be ruled out."
        )
    return summary


def _unknowns_and_actions(
    run: RunData, ctx, decision: Decision, det_runs: list[DetectorRun]
) -> tuple[list[str], list[NextAction]]:
    """What is unknown (skipped and errored checks, load warnings, no loss for a timeline, no
    metric; for a verdict not judged what is missing, first; how the run ended when not in the
    data) and the next actions (for a verdict not judged, what to log first)."""
    unknowns = [f"{d.code} {d.name}: {d.reason}" for d in det_runs if d.status == "skipped"]
    unknowns += [
        f"{d.code} {d.name} errored ({d.reason}); its check is unknown"
        for d in det_runs
        if d.status == "errored"
    ]
    if run.warnings:
        unknowns += [f"loading: {w}" for w in run.warnings]
    if not (run.key_for(Role.TRAIN_LOSS) or run.key_for(Role.VAL_LOSS)):
        unknowns.append(
            "timeline: unknown, no training or validation loss series to place phases on"
        )
    if not len(run.metrics):
        unknowns.append("key metrics: unknown, no metric was logged")
    actions = next_actions(decision, ctx)
    from_final_values = decision.rule in FINAL_VALUE_RULES
    if decision.outcome is Outcome.UNKNOWN or decision.rule == "V20" or from_final_values:
        if not from_final_values:
            unknowns[:0] = [f"verdict: not judged, {m}" for m in ctx.basis.missing(run)]
        actions = [
            NextAction(action=a, why=w, cost="minutes") for a, w in what_to_log(run, ctx.basis)
        ] + [
            a
            for a in actions
            if not a.action.startswith(
                ("Attach the console log and the loss", "Tag this run mlaudit.baseline")
            )
        ]
    if ctx.ending.in_warmup and decision.outcome is not Outcome.CRASHED:
        unknowns.append(
            f"ending: {ctx.ending.in_warmup}; whether it stopped early or was a short run with "
            "a long warmup is not in the data"
        )
    if ctx.ending.snapshot:
        unknowns.append(
            f"ending: {ctx.ending.snapshot}; whether the run went on is not in this file"
        )
    return unknowns, actions
