"""Diagnosis quality on the labelled corpus: per-class precision and recall, false alarms, confusion.

Audits every run of a corpus made by ``examples/corpus`` (generated first when ``--corpus``
is empty or missing) through the real MLflow loader and :func:`mlaudit_core.audit.audit`
(nothing is written back), then prints:

* per class: runs, correct, recall, precision. A verdict is *correct* when its outcome is
  in the class's expected outcome set and its cause equals the expected cause (the
  ``corpus.expected_outcome`` / ``corpus.expected_cause`` tags; ``*`` = any outcome);
* the false-alarm rate on healthy runs (classes ``healthy`` and ``benign_spike`` given any
  verdict but succeeded / healthy);
* a confusion matrix, expected class x predicted class. The predicted class of a run is
  its own class when the verdict is correct for it, else the first class in catalogue
  order whose expected label accepts the verdict, else ``other`` (several classes share
  a label, e.g. the three ``slow / infra_runtime`` classes, so only this rule is
  well-defined). Precision of a class = correct runs / runs predicted as that class;
* every miss with the verdict, its summary and the findings at warning or above;
* each detector's share of the total detector time (``report.detectors[*].seconds``) and
  any errored detector;
* the report sections that are missing or empty: the JSON fields ``timeline``,
  ``key_metrics``, ``hypotheses``, ``unknowns``, ``missing_instrumentation``,
  ``next_actions`` and the Markdown headings of the triage workflow's final format.

Targets (issue #4): recall >= 0.9 in every class, false alarms on healthy runs <= 5%.
Exit status 0 whatever the figures (it is a measurement); ``--strict`` exits 1 when a
target is missed; 2 on bad input (a ``--corpus`` that is a file, or a non-empty
directory without ``mlflow.db``).

Usage::

    python benchmarks/diagnosis_eval.py --corpus /tmp/corpus [--seeds 3] [--strict]
        [--json results.json] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # examples.corpus
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")

RECALL_TARGET = 0.9
FALSE_ALARM_TARGET = 0.05
HEALTHY_CLASSES = ("healthy", "benign_spike")
HEALTHY_LABEL = ("succeeded", "healthy")
JSON_SECTIONS = ("timeline", "key_metrics", "hypotheses", "unknowns", "missing_instrumentation",
                 "next_actions")
MD_HEADINGS = ("## Run", "## Verdict", "## Timeline", "## Key metric interpretation",
               "## Instability or degradation", "## Bottlenecks", "## Surprising findings",
               "## Missing logs or artifacts", "## Next actions", "## Confidence or unknowns")


@dataclass
class Row:
    """One audited corpus run."""

    run_id: str
    name: str
    cls: str
    seed: str
    variant: str
    expected_outcomes: list[str] | None  # None = any outcome
    expected_cause: str
    outcome: str = ""
    cause: str = ""
    confidence: float = 0.0
    summary: str = ""
    correct: bool = False
    predicted_class: str = ""
    findings: list[str] = field(default_factory=list)  # "CODE severity: message", warning and above
    load_s: float = 0.0
    audit_s: float = 0.0
    render_s: float = 0.0
    missing_sections: list[str] = field(default_factory=list)
    errored: list[str] = field(default_factory=list)
    detector_s: dict[str, float] = field(default_factory=dict)
    detector_status: dict[str, str] = field(default_factory=dict)
    skip_reasons: dict[str, str] = field(default_factory=dict)


def accepts(outcomes: list[str] | None, cause: str, outcome: str, got_cause: str) -> bool:
    """Whether the verdict (``outcome``, ``got_cause``) is correct for a label."""
    return (outcomes is None or outcome in outcomes) and got_cause == cause


def _label_from_tags(tags: dict[str, str]) -> tuple[list[str] | None, str]:
    raw = tags.get("corpus.expected_outcome", "*").strip()
    outcomes = None if raw in ("*", "") else sorted(o.strip() for o in raw.split(",") if o.strip())
    return outcomes, tags.get("corpus.expected_cause", "")


def ensure_corpus(corpus: Path, seeds: int) -> None:
    """Generate the corpus into ``corpus`` when it is missing or empty.

    Raises:
        ValueError: ``corpus`` is a file, or a non-empty directory without ``mlflow.db``.
    """
    if corpus.exists() and not corpus.is_dir():
        raise ValueError(f"--corpus {corpus} is a file, not a directory")
    if (corpus / "mlflow.db").exists():
        return
    if corpus.exists() and any(corpus.iterdir()):
        raise ValueError(f"--corpus {corpus} is not empty and holds no mlflow.db; "
                         "pass a corpus directory or an empty one")
    from examples.corpus.generate import generate

    print(f"corpus {corpus} is empty: generating it ({seeds} seeds per class)", flush=True)
    generate(corpus, seeds=seeds, echo=lambda line: print("  " + line, flush=True))
    print(flush=True)


def list_corpus_runs(uri: str) -> list:
    """Every run with a ``corpus.class`` tag in the store, oldest first."""
    import mlflow

    client = mlflow.MlflowClient(uri)
    exp_ids = [e.experiment_id for e in client.search_experiments()]
    runs, token = [], None
    while True:
        page = client.search_runs(exp_ids, filter_string="tags.`corpus.class` != ''",
                                  order_by=["attributes.start_time ASC"], max_results=1000,
                                  page_token=token)
        runs += list(page)
        token = page.token
        if not token:
            return runs


def audit_runs(uri: str, runs: list, progress: bool = True) -> list[Row]:
    """Load, audit and render every run; never writes back."""
    from mlaudit_mlflow.plugin import MlflowPlugin

    from mlaudit_core.audit import audit
    from mlaudit_core.render.markdown import render_markdown
    from mlaudit_core.report import Severity

    plugin = MlflowPlugin(uri)
    rows: list[Row] = []
    for i, r in enumerate(runs, 1):
        tags = r.data.tags
        outcomes, cause = _label_from_tags(tags)
        row = Row(r.info.run_id, r.info.run_name or r.info.run_id, tags["corpus.class"],
                  tags.get("corpus.seed", "?"), tags.get("corpus.variant", "?"), outcomes, cause)
        t0 = time.perf_counter()
        run = plugin.load(r.info.run_id)
        t1 = time.perf_counter()
        report = audit(run)
        t2 = time.perf_counter()
        md = render_markdown(report)
        t3 = time.perf_counter()
        row.load_s, row.audit_s, row.render_s = t1 - t0, t2 - t1, t3 - t2
        v = report.verdict
        row.outcome, row.cause, row.confidence, row.summary = (v.outcome.value, v.cause.value,
                                                               v.confidence, v.summary)
        row.correct = accepts(outcomes, cause, row.outcome, row.cause)
        row.findings = [f"{f.code} {f.severity.value}: {f.message}" for f in report.findings
                        if f.severity.rank >= Severity.WARNING.rank]
        data = report.model_dump(mode="json")
        for sec in JSON_SECTIONS:
            if sec not in data:
                row.missing_sections.append(f"json:{sec} (absent)")
            elif not data[sec]:
                row.missing_sections.append(f"json:{sec} (empty)")
        lines = [ln.rstrip() for ln in md.splitlines()]
        for h in MD_HEADINGS:
            if not any(ln == h or ln.startswith(h + " ") for ln in lines):
                row.missing_sections.append(f"md:{h}")
        for d in report.detectors:
            row.detector_status[d.code] = d.status
            if d.status == "skipped":
                row.skip_reasons[d.code] = d.reason or ""
            if d.status != "skipped":
                row.detector_s[d.code] = row.detector_s.get(d.code, 0.0) + d.seconds
            if d.status == "errored":
                row.errored.append(f"{d.code}: {d.reason}")
        rows.append(row)
        if progress:
            mark = "ok " if row.correct else "MISS"
            print(f"  [{i:>3}/{len(runs)}] {mark} {row.cls:<24} seed={row.seed} {row.variant:<26} -> "
                  f"{row.outcome}/{row.cause}", flush=True)
    return rows


def class_order(rows: list[Row]) -> list[str]:
    try:
        from examples.corpus.classes import CLASSES

        known = [c for c in CLASSES if any(r.cls == c for r in rows)]
    except ImportError:  # a corpus read without the generator on the path
        known = []
    return known + sorted({r.cls for r in rows} - set(known))


def assign_predicted(rows: list[Row], order: list[str]) -> None:
    labels = {}
    for r in rows:
        labels.setdefault(r.cls, (r.expected_outcomes, r.expected_cause))
    for r in rows:
        if r.correct:
            r.predicted_class = r.cls
            continue
        r.predicted_class = next((c for c in order if accepts(*labels[c], r.outcome, r.cause)), "other")


def summarise(rows: list[Row]) -> dict:
    order = class_order(rows)
    assign_predicted(rows, order)
    per_class = {}
    for c in order:
        mine = [r for r in rows if r.cls == c]
        predicted = [r for r in rows if r.predicted_class == c]
        tp = sum(r.correct for r in mine)
        per_class[c] = {"runs": len(mine), "correct": tp, "recall": tp / len(mine) if mine else None,
                        "predicted": len(predicted),
                        "precision": tp / len(predicted) if predicted else None,
                        "expected": f"{'|'.join(mine[0].expected_outcomes or ['*'])} / {mine[0].expected_cause}"}
    healthy = [r for r in rows if r.cls in HEALTHY_CLASSES]
    alarms = [r for r in healthy if (r.outcome, r.cause) != HEALTHY_LABEL]
    det_total: dict[str, float] = defaultdict(float)
    det_status: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        for code, s in r.detector_s.items():
            det_total[code] += s
        for code, st in r.detector_status.items():
            det_status[code][st] += 1
    missing = Counter(m for r in rows for m in r.missing_sections)
    recall_miss = {c: v["recall"] for c, v in per_class.items() if v["recall"] is not None
                   and v["recall"] < RECALL_TARGET}
    fa_rate = len(alarms) / len(healthy) if healthy else None
    return {
        "order": order, "per_class": per_class,
        "accuracy": sum(r.correct for r in rows) / len(rows) if rows else None,
        "healthy_runs": len(healthy), "false_alarms": len(alarms), "false_alarm_rate": fa_rate,
        "detector_seconds": dict(det_total), "detector_status": {k: dict(v) for k, v in det_status.items()},
        "missing_sections": dict(missing),
        "recall_misses": recall_miss,
        "targets_met": not recall_miss and (fa_rate is not None and fa_rate <= FALSE_ALARM_TARGET),
    }


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:5.2f}"


def print_report(rows: list[Row], m: dict, corpus: Path, verbose: bool = False) -> None:
    from mlaudit_core import __version__

    order = m["order"]
    n = len(rows)
    load = sum(r.load_s for r in rows)
    aud = sum(r.audit_s for r in rows)
    ren = sum(r.render_s for r in rows)
    print(f"mlaudit {__version__} diagnosis eval: {n} runs, {len(order)} classes, corpus {corpus}")
    print(f"time: load {load:.1f}s ({load / n * 1000:.0f} ms/run), audit {aud:.2f}s "
          f"({aud / n * 1000:.1f} ms/run), markdown {ren:.2f}s")
    print()
    print("Per class (correct = outcome in the expected set and cause == expected cause)")
    print(f"  {'class':<24} {'runs':>4} {'correct':>7} {'recall':>6} {'pred':>4} {'precision':>9}  "
          f"{'recall>=0.9':<11}  expected")
    for c in order:
        v = m["per_class"][c]
        ok = "ok" if v["recall"] is not None and v["recall"] >= RECALL_TARGET else "MISS"
        print(f"  {c:<24} {v['runs']:>4} {v['correct']:>7} {_pct(v['recall']):>6} {v['predicted']:>4} "
              f"{_pct(v['precision']):>9}  {ok:<11}  {v['expected']}")
    print(f"  overall accuracy {sum(r.correct for r in rows)}/{n} = {m['accuracy']:.3f}")
    print()
    fa = m["false_alarm_rate"]
    fa_ok = "ok" if fa is not None and fa <= FALSE_ALARM_TARGET else "MISS"
    print(f"False alarms on healthy runs ({' + '.join(HEALTHY_CLASSES)}): {m['false_alarms']}/"
          f"{m['healthy_runs']} = {100 * (fa or 0):.1f}% (target <= {100 * FALSE_ALARM_TARGET:.0f}%): {fa_ok}")
    for r in rows:
        if r.cls in HEALTHY_CLASSES and (r.outcome, r.cause) != HEALTHY_LABEL:
            print(f"  {r.cls} seed={r.seed} {r.variant}: {r.outcome}/{r.cause}")
    print()
    cols = order + (["other"] if any(r.predicted_class == "other" for r in rows) else [])
    print("Confusion matrix (rows: expected class; columns: predicted class, numbered as the rows; "
          "'other' = a verdict no class expects)")
    head = "".join(f"{i + 1:>4}" for i in range(len(order))) + ("  other" if "other" in cols else "")
    print(f"  {'':<28}{head}")
    for i, c in enumerate(order):
        counts = Counter(r.predicted_class for r in rows if r.cls == c)
        cells = "".join(f"{(counts.get(p) or '.'):>4}" for p in order)
        if "other" in cols:
            cells += f"{(counts.get('other') or '.'):>7}"
        print(f"  {i + 1:>2} {c:<25}{cells}")
    others = Counter(f"{r.outcome}/{r.cause}" for r in rows if r.predicted_class == "other")
    if others:
        print("  'other' verdicts: " + ", ".join(f"{k} x{v}" for k, v in others.most_common()))
    print()
    misses = [r for r in rows if not r.correct]
    print(f"Misses ({len(misses)})")
    for r in misses:
        exp = "|".join(r.expected_outcomes or ["*"])
        print(f"  {r.cls} seed={r.seed} {r.variant} ({r.name}, {r.run_id}): expected {exp}/"
              f"{r.expected_cause}, got {r.outcome}/{r.cause} (confidence {r.confidence:.2f})")
        print(f"      summary: {r.summary[:300]}")
        for f in r.findings[:8]:
            print(f"      {f[:220]}")
        if not r.findings:
            print("      (no finding at warning or above)")
    if not misses:
        print("  none")
    print()
    total = sum(m["detector_seconds"].values())
    print(f"Detector time: share of the total detector time ({total:.3f}s over {n} audits; "
          f"audit overhead outside detectors {max(aud - total, 0.0):.3f}s)")
    print(f"  {'code':<7} {'share':>6} {'total ms':>9} {'ms/run':>7}  ran/skipped/errored")
    for code, s in sorted(m["detector_seconds"].items(), key=lambda kv: -kv[1]):
        st = m["detector_status"].get(code, {})
        print(f"  {code:<7} {100 * s / total if total else 0:5.1f}% {s * 1000:9.1f} {s * 1000 / n:7.2f}  "
              f"{st.get('ran', 0)}/{st.get('skipped', 0)}/{st.get('errored', 0)}")
    never = sorted(c for c, st in m["detector_status"].items() if c not in m["detector_seconds"])
    if never:
        print("  skipped on every run:")
        for code in never:
            reasons = Counter(r.skip_reasons.get(code, "") for r in rows)
            print(f"    {code}: {reasons.most_common(1)[0][0][:150]}")
    errored = Counter(e for r in rows for e in r.errored)
    if errored:
        print("  errored detectors:")
        for e, k in errored.most_common():
            print(f"    x{k} {e[:200]}")
    print()
    print("Report sections (JSON fields, Markdown headings) missing or empty")
    if not m["missing_sections"]:
        print(f"  none: all {len(JSON_SECTIONS)} JSON sections and {len(MD_HEADINGS)} headings in every run")
    for sec, k in sorted(m["missing_sections"].items(), key=lambda kv: (-kv[1], kv[0])):
        who = [f"{r.cls}/s{r.seed}" for r in rows if sec in r.missing_sections]
        print(f"  {sec:<48} {k:>3}/{n} runs  e.g. {', '.join(who[:4])}")
    print()
    if verbose:
        print("All runs")
        for r in rows:
            print(f"  {'ok  ' if r.correct else 'MISS'} {r.cls:<24} seed={r.seed} {r.variant:<26} "
                  f"{r.outcome}/{r.cause} conf={r.confidence:.2f} codes="
                  f"{','.join(sorted({f.split()[0] for f in r.findings}))}")
        print()
    rm = m["recall_misses"]
    print("Targets: recall >= 0.9 in every class: " + ("ok" if not rm else "MISS (" + ", ".join(
        f"{c} {v:.2f}" for c, v in rm.items()) + ")") +
        f"; false alarms on healthy <= 5%: {fa_ok}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, type=Path,
                    help="corpus directory (generated there first when empty or missing)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per class when generating (default 3)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--json", type=Path, default=None, help="also write rows and figures as JSON here")
    ap.add_argument("--verbose", action="store_true", help="print every run's verdict")
    ap.add_argument("--quiet", action="store_true", help="no per-run progress lines")
    args = ap.parse_args(argv)
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        ensure_corpus(args.corpus, args.seeds)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from examples.corpus.generate import tracking_uri

    uri = tracking_uri(args.corpus)
    runs = list_corpus_runs(uri)
    if not runs:
        print(f"error: no run tagged corpus.class in {uri}", file=sys.stderr)
        return 2
    print(f"auditing {len(runs)} corpus runs from {uri}", flush=True)
    rows = audit_runs(uri, runs, progress=not args.quiet)
    print()
    m = summarise(rows)
    print_report(rows, m, args.corpus, verbose=args.verbose)
    if args.json is not None:
        args.json.write_text(json.dumps({"figures": m, "runs": [asdict(r) for r in rows]}, indent=1,
                                        default=str))
    return 1 if args.strict and not m["targets_met"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
