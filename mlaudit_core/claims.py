"""Numeric claims in prose (a PR description, a results note) checked against the raw telemetry.

Extraction is deterministic pattern matching over each line of the text:

* values: ``val accuracy 92.1%``, ``92.1% top-1``, ``loss converged to 1.8``,
  ``F1 of 0.87``, ``throughput 1200 samples/s``, ``val loss below 2.0``,
  ``accuracy improved from 90.3% to 92.1%`` (the "to" value is the claim);
* speedups: ``2x faster``, ``1.5× speedup``, ``30% faster`` (= 1.3x);
* no regression: ``no regression``, ``matches the baseline``, ``within noise``,
  ``no accuracy change``, ``parity``.

Checking a claim:

* a value is *supported* when the logged final value, the mean of the last
  10% of points, or the best value (min for a loss, max for an accuracy)
  equals the claimed number to the precision it was written with (half a unit
  in its last digit; ``92.1%`` covers 0.9205-0.9215 when the metric is logged as
  a fraction); ``converged``/``final`` claims use only the final and tail
  values, ``best``/``peak`` claims only the best; bounds (``below 2.0``) compare
  the final value;
* a speedup is *supported* when the median throughput ratio (or inverse
  step-time ratio) against the baselines reaches the claimed factor within 10%
  (a factor written with one significant figure, such as "2x", is rounded);
* "no regression" uses the baseline comparison (BL001) or the CI verdict;
* a claim whose metric is not logged, or that needs a baseline that was not
  given, is *unverifiable*.

A report built on a contradicted claim gets cause ``unsupported_claim``
(:func:`mlaudit_core.verdict.claims.apply_claims`); so does one whose every claim is unverifiable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .roles import Role, is_higher_better, normalise_key
from .rundata import RunData
from .signal import fmt

CLAIMS = "mlaudit.claims"
REGRESSION = "mlaudit.claims.regression"

#: Speedup tolerance: a claimed factor holds when measured >= claimed x (1 - 0.1).
SPEEDUP_TOL = 0.10

_NUM = r"(?P<num>\d+(?:\.\d+)?)"
_METRICS: list[tuple[str, Role | None, str | None]] = [
    (
        r"(?:val(?:idation)?|eval(?:uation)?|test|dev|held[- ]out)(?:\s+set)?\s+(?:top-?1\s+)?acc(?:uracy)?",
        Role.VAL_ACCURACY,
        None,
    ),
    (r"top-?1(?:\s+acc(?:uracy)?)?", Role.VAL_ACCURACY, None),
    (r"train(?:ing)?\s+acc(?:uracy)?", Role.TRAIN_ACCURACY, None),
    (r"(?:val(?:idation)?|eval(?:uation)?|test|dev)\s+loss", Role.VAL_LOSS, None),
    (r"(?:train(?:ing)?\s+|lm\s+)?loss", Role.TRAIN_LOSS, None),
    (r"acc(?:uracy)?", Role.VAL_ACCURACY, None),
    (r"(?:(?:val|eval|test)\s+)?(?:macro[- ]|micro[- ])?f1(?:[- ]score)?", None, "f1"),
    (r"perplexity|ppl", None, "perplexity|ppl"),
    (r"bleu", None, "bleu"),
    (r"(?:roc[- ])?auc", None, "auc"),
    (r"wer", None, "wer"),
    (r"throughput", Role.THROUGHPUT, None),
    (r"(?:step|iteration)[- ]time", Role.STEP_TIME, None),
]
_ALT = "|".join(f"(?:{p})" for p, _, _ in _METRICS)
_LINK = (
    r"(?:\s+(?:of|at|is|was|=|:|reached|reaches|hit|hits|to|converged to|converges to|ended at|ends at|"
    r"went to|goes to|stays?|settled at|improved to|dropped to|fell to|rose to|around|about|~|≈|"
    r"below|under|less than|above|over|more than|greater than|at least|at most|<|>|<=|>=))*\s*"
)
_VALUE = re.compile(
    rf"\b(?P<m>{_ALT})\b(?P<link>{_LINK})(?:~|≈)?{_NUM}\s*(?P<pct>%)?", re.IGNORECASE
)
_VALUE_BEFORE = re.compile(rf"{_NUM}\s*(?P<pct>%)\s+(?P<m>{_ALT})\b", re.IGNORECASE)
_FROM_TO = re.compile(
    rf"\b(?P<m>{_ALT})\b[^.;\n]*?\bfrom\s+(?P<a>\d+(?:\.\d+)?)\s*(?P<pa>%)?\s+to\s+"
    rf"{_NUM}\s*(?P<pct>%)?",
    re.IGNORECASE,
)
_SPEEDUP = re.compile(
    r"(?P<num>\d+(?:\.\d+)?)\s*(?:x|×)\s*(?:faster|speed-?up|quicker|higher throughput|"
    r"more throughput)|(?:speed-?up|faster)\s+(?:of\s+)?(?P<num2>\d+(?:\.\d+)?)\s*(?:x|×)|"
    r"(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:faster|speed-?up|higher throughput|more throughput)",
    re.IGNORECASE,
)
_NO_REG = re.compile(
    r"\bno (?:\w+ )?regressions?\b|\bdoes(?:n't| not) regress\b|\bmatch(?:es|ing)? (?:the )?"
    r"baselines?\b|\bwithin (?:the )?noise\b|\bno (?:accuracy|loss|quality|metric) "
    r"(?:change|drop|difference)\b|\bparity with\b|\bon par with\b",
    re.IGNORECASE,
)
_BELOW = re.compile(r"below|under|less than|at most|<", re.IGNORECASE)
_ABOVE = re.compile(r"above|over|more than|greater than|at least|>", re.IGNORECASE)
_CONVERGED = re.compile(r"converge|final|ended|ends|settled", re.IGNORECASE)
_BEST = re.compile(r"\bbest\b|\bpeak\b|\bmax(?:imum)?\b|\bhighest\b|\blowest\b", re.IGNORECASE)


@dataclass
class Claim:
    """One numeric claim as written, with where it was found."""

    text: str
    source: str
    line: int
    kind: str  # value | speedup | no_regression
    metric: str | None = None
    role: Role | None = None
    hint: str | None = None
    value: float | None = None
    percent: bool = False
    decimals: int = 0
    comparator: str = "="  # = | < | >
    qualifier: str | None = None  # final | best | None
    before: float | None = None


@dataclass
class ClaimCheck:
    claim: Claim
    status: str  # supported | contradicted | unverifiable
    explanation: str
    figures: dict[str, float | str | None] = field(default_factory=dict)


def _decimals(num: str) -> int:
    return len(num.split(".", 1)[1]) if "." in num else 0


def _metric(phrase: str) -> tuple[Role | None, str | None]:
    for pat, role, hint in _METRICS:
        if re.fullmatch(pat, phrase.strip(), re.IGNORECASE):
            return role, hint
    return None, None


def extract_claims(text: str, source: str = "claims") -> list[Claim]:
    """Every claim in ``text``, in reading order. See the module docstring for the shapes.

    Args:
        text: prose (Markdown is fine).
        source: the name shown in evidence (e.g. the file name).
    """
    out: list[Claim] = []
    for i, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"[*_`]", "", raw)
        spans: list[tuple[int, int]] = []

        def free(m: re.Match, spans: list[tuple[int, int]] = spans) -> bool:
            return not any(a < m.end() and m.start() < b for a, b in spans)

        for m in _FROM_TO.finditer(line):
            role, hint = _metric(m["m"])
            out.append(
                Claim(
                    m.group(0).strip(),
                    source,
                    i,
                    "value",
                    m["m"],
                    role,
                    hint,
                    float(m["num"]),
                    bool(m["pct"] or m["pa"]),
                    _decimals(m["num"]),
                    "=",
                    "final",
                    before=float(m["a"]),
                )
            )
            spans.append(m.span())
        for rx in (_VALUE, _VALUE_BEFORE):
            for m in rx.finditer(line):
                if not free(m):
                    continue
                role, hint = _metric(m["m"])
                link = m.groupdict().get("link") or ""
                comp = "<" if _BELOW.search(link) else ">" if _ABOVE.search(link) else "="
                context = line[max(0, m.start() - 20) : m.end()]
                qual = (
                    "best"
                    if _BEST.search(context)
                    else "final"
                    if _CONVERGED.search(context)
                    else None
                )
                out.append(
                    Claim(
                        m.group(0).strip(),
                        source,
                        i,
                        "value",
                        m["m"],
                        role,
                        hint,
                        float(m["num"]),
                        bool(m["pct"]),
                        _decimals(m["num"]),
                        comp,
                        qual,
                    )
                )
                spans.append(m.span())
        for m in _SPEEDUP.finditer(line):
            if m["pct"]:
                factor = 1 + float(m["pct"]) / 100
            else:
                factor = float(m["num"] or m["num2"])
            out.append(Claim(m.group(0).strip(), source, i, "speedup", value=factor))
        for m in _NO_REG.finditer(line):
            out.append(Claim(m.group(0).strip(), source, i, "no_regression"))
    return out


def _key(run: RunData, c: Claim) -> str | None:
    if c.hint:
        rx = re.compile(c.hint)
        hits = sorted(k for k in run.metrics.keys if rx.search(normalise_key(k)))
        evals = [k for k in hits if re.search(r"val|eval|test|dev", k, re.IGNORECASE)]
        found = evals or hits
        return found[0] if found else None
    if c.role is not None:
        key = run.key_for(c.role)
        if (
            key is None
            and c.role is Role.VAL_ACCURACY
            and not re.search(r"val|eval|test|dev|top", c.metric or "", re.IGNORECASE)
        ):
            key = run.key_for(Role.TRAIN_ACCURACY)
        return key
    return None


def _check_value(c: Claim, run: RunData) -> ClaimCheck:
    assert c.value is not None  # a value claim states its value (extract_claims)
    key = _key(run, c)
    if key is None:
        return ClaimCheck(c, "unverifiable", f"no logged metric matches {c.metric!r}")
    s = run.metrics.series(key).by_step().finite()
    if not len(s):
        return ClaimCheck(c, "unverifiable", f"{key} has no finite values")
    v = s.values
    claimed, dec = float(c.value), c.decimals
    if c.percent and np.nanmax(np.abs(v)) <= 1.5:
        claimed, dec = claimed / 100, dec + 2
    tol = 0.5 * 10**-dec
    hib = c.role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY, Role.THROUGHPUT) or is_higher_better(
        key
    )
    final = float(v[-1])
    tail = float(np.mean(v[-max(1, len(v) // 10) :]))
    ib = int(np.argmax(v) if hib else np.argmin(v))
    best = float(v[ib])
    figs = {
        "key": key,
        "claimed": claimed,
        "final": final,
        "final_step": int(s.steps[-1]),
        "tail_mean": tail,
        "best": best,
        "best_step": int(s.steps[ib]),
        "tolerance": tol,
    }
    scale = "%" if c.percent and claimed != c.value else ""

    def show(x: float) -> str:
        return f"{fmt(100 * x, 4)}%" if scale else fmt(x, 6)

    if c.comparator in ("<", ">"):
        ok = final < claimed if c.comparator == "<" else final > claimed
        return ClaimCheck(
            c,
            "supported" if ok else "contradicted",
            f"{key} final {show(final)} (step {figs['final_step']}) is "
            f"{'' if ok else 'not '}{'below' if c.comparator == '<' else 'above'} {show(claimed)}",
            figs,
        )
    cands = {"final": final, "tail mean": tail, "best": best}
    if c.qualifier == "final":
        cands = {"final": final, "tail mean": tail}
    elif c.qualifier == "best":
        cands = {"best": best}
    hit = next((name for name, x in cands.items() if abs(x - claimed) <= tol + 1e-12), None)
    if hit:
        note = (
            ""
            if hit != "best" or abs(final - claimed) <= tol
            else f" (the final value is {show(final)})"
        )
        return ClaimCheck(
            c, "supported", f"{key} {hit} {show(cands[hit])} matches {show(claimed)}{note}", figs
        )
    return ClaimCheck(
        c,
        "contradicted",
        f"claimed {show(claimed)} but {key} logged final {show(final)} at step {figs['final_step']}"
        f" (best {show(best)} at step {figs['best_step']}, mean of the last 10% {show(tail)})",
        figs,
    )


def _median(run: RunData, role: Role) -> float | None:
    key = run.key_for(role)
    if key is None:
        return None
    s = run.metrics.series(key).finite()
    return float(np.median(s.values)) if len(s) else None


def _check_speedup(c: Claim, run: RunData, baselines: Sequence[RunData]) -> ClaimCheck:
    assert c.value is not None  # a speedup claim states its factor (extract_claims)
    if not baselines:
        return ClaimCheck(
            c, "unverifiable", "a speedup needs a baseline run to compare with; none was given"
        )
    for role, higher in ((Role.THROUGHPUT, True), (Role.STEP_TIME, False)):
        mine = _median(run, role)
        theirs = [x for x in (_median(b, role) for b in baselines) if x is not None]
        if mine is None or not theirs or mine <= 0:
            continue
        base = float(np.mean(theirs))
        ratio = mine / base if higher else base / mine
        figs = {
            "key": run.key_for(role),
            "run_median": mine,
            "baseline_median": base,
            "measured_factor": ratio,
            "claimed_factor": c.value,
        }
        ok = ratio >= float(c.value) * (1 - SPEEDUP_TOL)
        return ClaimCheck(
            c,
            "supported" if ok else "contradicted",
            f"median {figs['key']} {fmt(mine)} vs baseline {fmt(base)}: {fmt(ratio, 3)}x "
            f"{'>=' if ok else '<'} claimed {fmt(c.value, 3)}x (within {int(SPEEDUP_TOL * 100)}%)",
            figs,
        )
    return ClaimCheck(
        c, "unverifiable", "neither the run nor its baselines log throughput or step time"
    )


def _check_no_regression(c: Claim, run: RunData) -> ClaimCheck:
    flag = run.cache.get(REGRESSION)
    if flag is not None:
        return ClaimCheck(c, "contradicted" if flag["regressed"] else "supported", flag["why"])
    from .baseline.compare import baselines_of, latest_comparisons

    if not baselines_of(run):
        return ClaimCheck(c, "unverifiable", "no baseline run or golden values to compare with")
    comps = [x for x in latest_comparisons(run) if x.kind == "learning"]
    if not comps:
        return ClaimCheck(c, "unverifiable", "the run and its baselines share no learning metric")
    worse = [x for x in comps if x.band.verdict == "worse"]
    if worse:
        return ClaimCheck(c, "contradicted", worse[0].summary(), {"metric": worse[0].key})
    return ClaimCheck(c, "supported", "; ".join(x.summary() for x in comps[:2]))


def check_claims(
    claims: Sequence[Claim], run: RunData, baselines: Sequence[RunData] = ()
) -> list[ClaimCheck]:
    """Check each claim against ``run`` (and ``baselines`` for speedups / "no regression").

    ``baselines`` defaults to the baselines attached to the run
    (:func:`mlaudit_core.baseline.attach_baselines`).
    """
    from .baseline.compare import baselines_of

    bls = list(baselines) or baselines_of(run)
    out = []
    for c in claims:
        if c.kind == "value":
            out.append(_check_value(c, run))
        elif c.kind == "speedup":
            out.append(_check_speedup(c, run, bls))
        else:
            out.append(_check_no_regression(c, run))
    return out


def attach_claims(run: RunData, text: str, source: str = "claims") -> list[Claim]:
    """Extract the claims of ``text`` and attach them to ``run`` for the claims detectors (CL001-CL003)."""
    claims = extract_claims(text, source)
    run.cache[CLAIMS] = claims
    return claims


def claims_of(run: RunData) -> list[Claim] | None:
    return run.cache.get(CLAIMS)


def claim_evidence(ch: ClaimCheck):
    from .report import LogEvidence

    return LogEvidence(source=ch.claim.source, line=ch.claim.line, text=ch.claim.text)


__all__ = [
    "SPEEDUP_TOL",
    "Claim",
    "ClaimCheck",
    "attach_claims",
    "check_claims",
    "claims_of",
    "extract_claims",
]
