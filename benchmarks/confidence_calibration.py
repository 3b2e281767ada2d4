"""Fit and check the confidence calibration map (``mlaudit_core.verdict.evidence.CALIBRATION``).

Input: ``benchmarks/confidence_first_runs.csv``, one row per judged verdict (``unknown`` left out)
of the first run of every fresh batch f9-f16 and f18-f26 (artifacts) and b12-b28 and b31-b48
(reports; round 17 ran on code that printed no evidence class): each batch was
audited once on the code of its scoring commit (column ``code``) before any rule was changed for
it, so these verdicts are verdicts on runs the rules had not seen. Columns: ``evidence`` (the
evidence class the confidence rests on: ``observed``, ``no_failure``, ``curve``), ``score`` (the
evidence score, i.e. the confidence that code printed), ``capped`` (1 when partial input or a
run still running capped it at 0.5: those rows are not fitted, the cap applies after the map),
``right`` (1 when outcome and cause were both accepted by the label of the time).

The map per class is Platt scaling (Platt 1999, "Probabilistic outputs for support vector
machines") on the logit of the score, ``p = sigmoid(a + b * logit(s))`` with ``b >= 0`` (monotone)
and a Gaussian prior of unit scale pulling ``(a, b)`` towards the identity ``(0, 1)``.

Prints the fitted constants and, for the raw scores and the map: the reliability table, the
expected calibration error (5 bins of width 0.2, as ``diagnosis_eval.py``) and the Brier score of
(1) leave-one-round-out (each round predicted by a map fitted on the other rounds) and (2) a
temporal split (fit on rounds 9-20, check on rounds 21-26).

Usage: ``python benchmarks/confidence_calibration.py [--csv PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from scipy.optimize import minimize

from mlaudit_core.verdict.evidence import CALIBRATION, calibrated

CSV = Path(__file__).with_name("confidence_first_runs.csv")
CLASSES = ("observed", "no_failure", "curve")
BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0000001)
#: The last round of the temporal split's fit (rounds after it are the check).
SPLIT = 20


def load(path: Path = CSV) -> list[dict]:
    """The rows of ``path`` with ``round``, ``capped`` and ``right`` as int, ``score`` as float."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["round"], r["capped"], r["right"] = int(r["round"]), int(r["capped"]), int(r["right"])
        r["score"] = float(r["score"])
    return rows


def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return math.log(p / (1 - p))


def fit(rows: list[dict]) -> dict[str, tuple[float, float]]:
    """``{class: (a, b)}`` by maximum a-posteriori over the uncapped rows (see the module doc)."""
    out = {}
    for k in CLASSES:
        xs = [
            (_logit(r["score"]), r["right"]) for r in rows if r["evidence"] == k and not r["capped"]
        ]

        def loss(t: list[float], xs: list[tuple[float, int]] = xs) -> float:
            a, b = t
            s = 0.5 * (a**2 + (b - 1) ** 2)
            for x, y in xs:
                z = a + b * x
                # log(1 + exp(-z)) and log(1 + exp(z)), numerically stable
                s += (
                    (math.log1p(math.exp(-abs(z))) + max(-z, 0))
                    if y
                    else (math.log1p(math.exp(-abs(z))) + max(z, 0))
                )
            return s

        res = minimize(loss, [0.0, 1.0], bounds=[(-5, 5), (0, 5)], method="L-BFGS-B")
        out[k] = (float(res.x[0]), float(res.x[1]))
    return out


def apply(params: dict[str, tuple[float, float]], r: dict) -> float:
    """The calibrated confidence of row ``r`` under ``params`` (the cap of a capped row after)."""
    p = calibrated(r["score"], r["evidence"], params)
    return min(p, 0.5) if r["capped"] else p


def reliability(pairs: list[tuple[float, int]]) -> tuple[list[str], float, float]:
    """Bins ``lo: n, mean confidence, fraction right``, the ECE and the Brier score of ``pairs``."""
    lines, ece = [], 0.0
    for lo, hi in zip(BINS, BINS[1:]):
        b = [(c, y) for c, y in pairs if lo <= c < hi]
        if b:
            mc, fr = sum(c for c, _ in b) / len(b), sum(y for _, y in b) / len(b)
            ece += len(b) * abs(mc - fr)
            lines.append(f"{lo:.1f}-{min(hi, 1):.1f}: {len(b):>3} {mc:.2f} {fr:.2f}")
    brier = sum((c - y) ** 2 for c, y in pairs) / len(pairs)
    return lines, ece / len(pairs), brier


def leave_one_round_out(rows: list[dict]) -> list[tuple[float, float, int]]:
    """``(score, calibrated, right)`` per row, each round's rows mapped by a fit on the others."""
    out = []
    for rnd in sorted({r["round"] for r in rows}):
        params = fit([r for r in rows if r["round"] != rnd])
        out += [(r["score"], apply(params, r), r["right"]) for r in rows if r["round"] == rnd]
    return out


def _show(name: str, pairs: list[tuple[float, int]]) -> None:
    lines, ece, brier = reliability(pairs)
    print(f"  {name}: n={len(pairs)} ECE {ece:.3f} Brier {brier:.3f}")
    for line in lines:
        print(f"      {line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", type=Path, default=CSV)
    rows = load(ap.parse_args().csv)
    params = fit(rows)
    print("fit on every round:", {k: (round(a, 2), round(b, 2)) for k, (a, b) in params.items()})
    print("shipped CALIBRATION:", CALIBRATION)
    for k in CLASSES:
        sel = [r for r in rows if r["evidence"] == k and not r["capped"]]
        print(
            f"  {k}: {len(sel)} uncapped rows, {sum(r['right'] for r in sel) / len(sel):.0%} right"
        )
    loro = leave_one_round_out(rows)
    print("leave-one-round-out")
    _show("raw score", [(s, y) for s, _, y in loro])
    _show("calibrated", [(c, y) for _, c, y in loro])
    early = fit([r for r in rows if r["round"] <= SPLIT])
    late = [r for r in rows if r["round"] > SPLIT]
    print(f"fit on rounds up to {SPLIT}, checked on the later rounds")
    _show("raw score", [(r["score"], r["right"]) for r in late])
    _show("calibrated", [(apply(early, r), r["right"]) for r in late])


if __name__ == "__main__":
    main()
