"""Experiment triage: what the failing runs of a sweep have in common.

Input: one record per audited run, a mapping with the keys ``run_id``, ``outcome`` (the
verdict: ``succeeded``, ``diverged``...), ``cause``, ``params`` and ``tags`` (str -> str),
``start_time`` (seconds since the epoch or None), ``commit``, ``host`` (str or None) and,
optionally, ``metrics`` (str -> float, the final values). :func:`triage` returns a
:class:`Triage` (``to_dict()`` for JSON, :func:`render_text` for people).

What it does, as an analyst would (``../shared/seeds``: "what varies between runs",
"affected population and unaffected control population", "first bad / last good"):

1. **Factors.** Every param, tag (outside ``mlflow.*`` / ``mlaudit.*``), the commit, the
   host and the start time that takes at least two values is a candidate. For each failing
   outcome present (and for "any failure" when there are several), runs with that outcome are
   the affected population and ``succeeded`` runs (plus runs with another failing outcome,
   for the per-outcome targets) the control; ``running``/``unknown`` runs take no part.
   *Categorical* factors: the level whose failure count is furthest above its expectation
   (the hypergeometric z-score); *numeric* factors (every value parses as a float): the
   threshold split ``x >= t`` with the largest absolute z-score of the difference in failure
   rate. The p-value is a **permutation test** of that maximum (the failure labels shuffled
   over the runs, the same maximum taken over every level or threshold), so picking the best
   level or threshold is paid for: Fisher's exact test on the chosen level would not be.
   Permutations run in chunks of 200 and stop once 10 of them reach the observed maximum
   (Besag & Clifford 1991, sequential Monte Carlo p-values: a null factor costs one chunk);
   otherwise up to ``permutations`` (default ``2 m / alpha`` for ``m`` tests, 999 to 9,999). p = (1 + hits) /
   (1 + permutations drawn). The permutation machinery is hand-written on numpy: scipy's
   ``permutation_test`` evaluates a Python statistic per resample (about 40x slower on a
   10,000-run sweep here), and the whole grouping has a 1 s budget at 10,000 runs
   (``benchmarks/triage_eval.py``).
2. **Benjamini-Hochberg** (1995) across every (target, factor) test; ``significant`` only
   when q <= ``alpha`` (0.05) *and* the affected group has at least
   :data:`MIN_GROUP` runs.
3. **First bad / last good**: the start-time factor's split is the change point on the run
   sequence; the last healthy run before it and the first failing run after it are named,
   with the params, commit and host that differ between them.
4. **Seed noise**: runs whose params are equal except the seed (a param whose name contains
   ``seed``) form a noise band (pooled within-configuration standard deviation of the
   chosen metric); the best run's lead over the best run of another configuration is judged
   against it (|lead| / (sd * sqrt(1/n1 + 1/n2)) >= 2, the two-sided 95 % normal point).
5. **Bad input** gets a statement and no factor: fewer than 2 runs, no failing runs, no
   healthy runs, no candidate, more than :data:`MAX_FACTORS` candidates.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

#: Outcomes counted as healthy (the control population).
HEALTHY = frozenset({"succeeded"})
#: Outcomes that take no part (no verdict on how the run went).
EXCLUDED = frozenset({"running", "unknown", ""})
#: Fewest runs in the affected group for a factor to be called significant; a smaller
#: group is reported with its counts and said to be small.
MIN_GROUP = 5
#: Most candidate factors tested; beyond it the sweep has more candidates than runs can
#: separate and triage says so instead of testing.
MAX_FACTORS = 200
#: Most levels of a categorical factor; a factor with more distinct values is not tested
#: (an id, a timestamp, a path).
MAX_LEVELS = 50
#: Bars of a factor's failure-rate-by-bin plot.
N_BINS = 10
#: Tag prefixes that are the tracker's or mlaudit's own bookkeeping, not a factor.
SKIP_TAG_PREFIXES = ("mlflow.", "mlaudit.")
#: Significance level of the Benjamini-Hochberg false discovery rate.
ALPHA = 0.05
#: Most thresholds tried on a numeric factor (evenly spaced over the sorted distinct values
#: beyond it): keeps a 10,000-run numeric factor at 256 z-scores per permutation.
MAX_CUTS = 256
_CHUNK = 200
_STOP_HITS = 10
_SEED_RE = re.compile(r"seed", re.I)


@dataclass
class Factor:
    """One (target, candidate) test.

    ``name``: ``param:lr``, ``tag:team``, ``commit``, ``host``, ``start_time``; ``kind``:
    ``numeric`` or ``categorical``; ``target``: the affected outcome (or ``failed``);
    ``effect``: one sentence with the counts; ``counts``: ``{"group": {rule, runs, failing},
    "rest": {...}}``; ``p_value``: permutation p; ``q_value``: Benjamini-Hochberg;
    ``significant``: q <= alpha and the affected group has >= MIN_GROUP runs; ``small``:
    the affected group is under MIN_GROUP."""

    name: str
    kind: str
    target: str
    effect: str
    counts: dict[str, Any]
    p_value: float
    q_value: float = 1.0
    significant: bool = False
    small: bool = False
    split: Any = None  # the level (categorical) or threshold (numeric)
    #: failure rate by bin: ``[{"label", "runs", "failing"}]`` (numeric: up to
    #: :data:`N_BINS` quantile bins; categorical: the :data:`N_BINS` most frequent values)
    bins: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Triage:
    """The triage of one experiment. ``statements``: what could or could not be concluded, in
    words (bad input, small groups); ``factors``: every test, significant first then by
    q-value; ``change_point`` and ``seed_noise``: dicts or None."""

    runs: int
    outcomes: dict[str, int]
    statements: list[str] = field(default_factory=list)
    factors: list[Factor] = field(default_factory=list)
    change_point: dict[str, Any] | None = None
    seed_noise: dict[str, Any] | None = None
    tested: int = 0
    #: first bad / last good on the runs ordered by code version (:func:`commit_order`)
    commit_change_point: dict[str, Any] | None = None

    @property
    def significant(self) -> list[Factor]:
        return [f for f in self.factors if f.significant]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{runs, outcomes, statements, tested, factors: [{name, kind, target,
        effect, counts, p_value, q_value, significant, small}], change_point, seed_noise}``."""
        fs = []
        for f in self.factors:
            d = asdict(f)
            d.pop("split", None)
            d["p_value"] = round(f.p_value, 6)
            d["q_value"] = round(f.q_value, 6)
            fs.append(d)
        return {
            "runs": self.runs,
            "outcomes": dict(self.outcomes),
            "statements": list(self.statements),
            "tested": self.tested,
            "factors": fs,
            "change_point": self.change_point,
            "commit_change_point": self.commit_change_point,
            "seed_noise": self.seed_noise,
        }


# ---------------------------------------------------------------- candidates


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _as_float(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _numeric(vals: Sequence[Any]) -> np.ndarray | None:
    """``vals`` as a float array when every value is a finite number (or a string of one),
    else None. numpy parses the strings in C (10,000 values in about 2 ms)."""
    if any(v is None or isinstance(v, bool) for v in vals):
        return None
    try:
        x = np.array(vals, dtype=float)
    except (TypeError, ValueError):
        return None
    return x if x.ndim == 1 and bool(np.isfinite(x).all()) else None


def hide_credentials(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``records`` with the values of every param or tag named like a credential
    (:func:`mlaudit_core.redact.is_secret_key`) replaced by opaque labels ``[REDACTED value N]``
    (N by first appearance over the runs): such a factor is still tested, but its values appear
    in no statement, rule, level or change point (``db_password != 's3cretP@ss'`` passes the text
    redactor, which knows ``key = value``). Idempotent; the records given are not changed."""
    from .redact import is_secret_key

    labels: dict[tuple[str, str], dict[Any, str]] = {}
    for r in records:
        for src in ("params", "tags"):
            for k, v in (r.get(src) or {}).items():
                if v is None or (src, k) in labels and v in labels[(src, k)]:
                    continue
                if (src, k) not in labels:
                    if not is_secret_key(str(k), v):
                        continue
                    labels[(src, k)] = {}
                seen = labels[(src, k)]
                seen[v] = f"{REDACTED_VALUE} {len(seen) + 1}]"
    if not labels:
        return list(records)
    out: list[Mapping[str, Any]] = []
    for r in records:
        r = dict(r)
        for src in ("params", "tags"):
            d = r.get(src)
            if d and any((src, k) in labels for k in d):
                r[src] = {
                    k: labels[(src, k)].get(v, v) if (src, k) in labels else v for k, v in d.items()
                }
        out.append(r)
    return out


#: The start of the label that stands for a credential's value (:func:`hide_credentials`).
REDACTED_VALUE = "[REDACTED value"


def candidates(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """``{factor name: [value per run (None when the run lacks it)]}`` for every param, tag,
    commit, host and start time seen on the runs (taking at least 2 distinct values). The
    values of a param or tag named like a credential (:func:`mlaudit_core.redact.is_secret_key`)
    are opaque labels (:func:`hide_credentials`)."""
    records = hide_credentials(records)
    keys: dict[str, None] = {}
    for r in records:
        for k in r.get("params") or {}:
            keys[f"param:{k}"] = None
        for k in r.get("tags") or {}:
            if not str(k).startswith(SKIP_TAG_PREFIXES):
                keys[f"tag:{k}"] = None
    out: dict[str, list[Any]] = {}
    for name in keys:
        src, _, key = name.partition(":")
        vals = [(r.get("params" if src == "param" else "tags") or {}).get(key) for r in records]
        out[name] = vals
    out["commit"] = [r.get("commit") or None for r in records]
    out["host"] = [r.get("host") or None for r in records]
    out["start_time"] = [_as_float(r.get("start_time")) for r in records]
    return {k: v for k, v in out.items() if len({x for x in v if x is not None}) >= 2}


#: Run tags read as the code version, then the host, by :func:`record_of_run` (taken out of
#: the tag factors): MLflow's ``mlflow.source.git.commit`` and the common hand-set names.
COMMIT_KEYS = ("mlflow.source.git.commit", "git_commit", "commit")
HOST_KEYS = ("host", "hostname", "node", "node_name", "gpu")


def record_of_run(run: Any, outcome: str | None, cause: str | None = None) -> dict[str, Any]:
    """A :class:`~mlaudit_core.rundata.RunData` (any reader's) as a triage record: its params
    and tags; the commit and host from the tags :data:`COMMIT_KEYS` / :data:`HOST_KEYS` or
    the reader's ``environment`` (``git_commit``, ``host``: W&B run folders); the start time;
    the last value of each metric series (for the seed-noise band)."""
    tags = dict(run.tags or {})
    env = dict(run.environment or {})
    commit = next((tags.pop(k) for k in COMMIT_KEYS if tags.get(k)), None) or env.get("git_commit")
    host = next((tags.pop(k) for k in HOST_KEYS if tags.get(k)), None) or env.get("host")
    metrics: dict[str, float] = {}
    for key in run.metrics.keys:
        if run.metrics.count(key):
            v = _as_float(run.metrics.series(key).values[-1])
            if v is not None:
                metrics[key] = v
    return {
        "run_id": run.identity.id,
        "name": run.identity.name or "",
        "outcome": outcome or "",
        "cause": cause,
        "params": {str(k): str(v) for k, v in (run.params or {}).items()},
        "tags": {k: str(v) for k, v in tags.items() if not str(k).startswith(SKIP_TAG_PREFIXES)},
        "start_time": run.start_time.timestamp() if run.start_time else None,
        "commit": commit or None,
        "host": host or None,
        "metrics": metrics,
    }


# ---------------------------------------------------------------- permutation statistics


class _Perms:
    """Chunks of permuted failure labels, drawn once per target and shared by every factor
    tested on it (shuffling is most of the cost; the same permutations for every factor is
    also what a max-statistic correction would use)."""

    def __init__(self, y: np.ndarray, rng: np.random.Generator) -> None:
        self.y, self.rng = y, rng
        self.chunks: list[np.ndarray] = []

    def chunk(self, i: int) -> np.ndarray:
        while len(self.chunks) <= i:
            self.chunks.append(
                self.rng.permuted(np.broadcast_to(self.y, (_CHUNK, self.y.size)), axis=1)
            )
        return self.chunks[i]


def _perm_p(perms: _Perms, stat, observed: float, permutations: int) -> float:
    """Sequential permutation p-value of ``stat`` (a function of a (B, n) 0/1 label matrix
    returning (B,) maxima) at ``observed``."""
    hits, drawn, i = 0, 0, 0
    while drawn < permutations:
        b = min(_CHUNK, permutations - drawn)
        hits += int(np.count_nonzero(stat(perms.chunk(i)[:b]) >= observed - 1e-9))
        drawn += b
        i += 1
        if hits >= _STOP_HITS:
            return hits / drawn
    return (1 + hits) / (1 + drawn)


def _z(f: np.ndarray, n: np.ndarray, total_f: int, total_n: int) -> np.ndarray:
    """Hypergeometric z-score of ``f`` failing among ``n`` of ``total_n`` runs of which
    ``total_f`` fail (0 where the variance is 0)."""
    p = total_f / total_n
    var = n * p * (1 - p) * (total_n - n) / max(total_n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, (f - n * p) / np.sqrt(np.where(var > 0, var, 1)), 0.0)
    return z


def _test_categorical(vals: list[Any], y: np.ndarray, perms: _Perms, permutations: int):
    labels = ["(missing)" if v is None else str(v) for v in vals]
    levels = sorted(set(labels))
    code = (
        np.array([levels.index(v) for v in labels])
        if len(levels) < 64
        else np.unique(np.array(labels), return_inverse=True)[1]
    )
    onehot = np.zeros((len(labels), len(levels)), dtype=np.float32)
    onehot[np.arange(len(labels)), code] = 1.0
    n_l = onehot.sum(axis=0)
    tf, tn = int(y.sum()), y.size

    def stat(mat: np.ndarray) -> np.ndarray:
        return _z(mat.astype(np.float32) @ onehot, n_l, tf, tn).max(axis=1)

    z_obs = _z(y.astype(np.float32) @ onehot, n_l, tf, tn)
    best = int(np.argmax(z_obs))
    p = _perm_p(perms, stat, float(z_obs[best]), permutations)
    return levels[best], p, onehot[:, best].astype(bool)


def _test_numeric(x: np.ndarray, y: np.ndarray, perms: _Perms, permutations: int):
    order = np.argsort(x, kind="stable")
    xs = x[order]
    cuts = np.nonzero(np.diff(xs) > 0)[0] + 1  # split before index c: below = xs[:c]
    if cuts.size > MAX_CUTS:  # thresholds at MAX_CUTS quantiles of the distinct cut points
        cuts = np.unique(cuts[np.linspace(0, cuts.size - 1, MAX_CUTS).round().astype(int)])
    n_below = cuts.astype(np.float64)
    tf, tn = int(y.sum()), y.size

    def stat(mat: np.ndarray) -> np.ndarray:
        cs = np.cumsum(mat[:, order], axis=1, dtype=np.int32)[:, cuts - 1]
        return np.abs(_z(cs, n_below, tf, tn)).max(axis=1)

    cs_obs = np.cumsum(y[order])[cuts - 1]
    z_obs = np.abs(_z(cs_obs, n_below, tf, tn))
    best = int(np.argmax(z_obs))
    threshold = float(xs[cuts[best]])
    p = _perm_p(perms, stat, float(z_obs[best]), permutations)
    return threshold, p, x >= threshold


def _bins(vals: list[Any], x: np.ndarray | None, y: np.ndarray) -> list[dict[str, Any]]:
    """Failure counts by bin (:attr:`Factor.bins`)."""
    out = []
    if x is not None:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, N_BINS + 1)))
        idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, max(len(edges) - 2, 0))
        for b in range(max(len(edges) - 1, 1)):
            m = idx == b
            if m.any():
                lo, hi = x[m].min(), x[m].max()
                label = _fmt(lo) if lo == hi else f"{_fmt(lo)}-{_fmt(hi)}"
                out.append({"label": label, "runs": int(m.sum()), "failing": int(y[m].sum())})
        return out
    labels = ["(missing)" if v is None else str(v) for v in vals]
    for level, n in Counter(labels).most_common(N_BINS):
        m = np.array([lab == level for lab in labels])
        out.append({"label": level, "runs": int(n), "failing": int(y[m].sum())})
    return out


def bh(pvals: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg (1995) q-values, in the input order (monotone, capped at 1)."""
    m = len(pvals)
    if not m:
        return []
    order = sorted(range(m), key=lambda i: pvals[i])
    q = [1.0] * m
    prev = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        prev = min(prev, pvals[i] * m / rank)
        q[i] = min(prev, 1.0)
    return q


# ---------------------------------------------------------------- words


def _label(name: str) -> str:
    return name.split(":", 1)[1] if ":" in name else name.replace("_", " ")


def _rule_words(name: str, kind: str, split: Any, inside: bool) -> str:
    lab = _label(name)
    if kind == "numeric":
        if name == "start_time":
            from datetime import UTC, datetime

            t = datetime.fromtimestamp(split, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            return f"start time >= {t}" if inside else f"start time < {t}"
        return f"{lab} >= {_fmt(split)}" if inside else f"{lab} < {_fmt(split)}"
    return f"{lab} = {split!r}" if inside else f"{lab} != {split!r}"


def _effect(name: str, kind: str, split: Any, mask: np.ndarray, y: np.ndarray, target: str):
    n_in, f_in = int(mask.sum()), int(y[mask].sum())
    n_out, f_out = int((~mask).sum()), int(y[~mask].sum())
    # Speak about the side where the failures concentrate.
    if n_out and n_in and f_out / n_out > f_in / n_in:
        mask_side, (n_in, f_in, n_out, f_out) = False, (n_out, f_out, n_in, f_in)
    else:
        mask_side = True
    rule_in = _rule_words(name, kind, split, mask_side)
    rule_out = _rule_words(name, kind, split, not mask_side)
    total_f = f_in + f_out
    who = "failing" if target == "failed" else target
    if f_in == total_f:
        head = f"all {total_f} {who} runs have {rule_in}"
    else:
        head = f"{f_in} of {total_f} {who} runs have {rule_in}"
    text = (
        f"{head} ({f_in} of {n_in} runs there are {who}); {f_out} of {n_out} runs with {rule_out}"
    )
    counts = {
        "group": {"rule": rule_in, "runs": n_in, "failing": f_in},
        "rest": {"rule": rule_out, "runs": n_out, "failing": f_out},
    }
    return text, counts


# ---------------------------------------------------------------- main


def _targets(outcomes: list[str]) -> list[str]:
    failing = sorted({o for o in outcomes if o not in HEALTHY and o not in EXCLUDED})
    return failing + (["failed"] if len(failing) > 1 else [])


def triage(
    records: Iterable[Mapping[str, Any]],
    *,
    permutations: int | None = None,
    alpha: float = ALPHA,
    metric: str | None = None,
    seed: int = 0,
) -> Triage:
    """Triage of an experiment's runs (see the module docstring).

    ``records``: mappings as in the module docstring; ``permutations``: most label
    permutations per test (default ``2 m / alpha`` for ``m`` tests, at least 999 and at most
    9,999: the smallest p-value then survives Benjamini-Hochberg with a factor 2 to spare); ``alpha``: the false discovery rate; ``metric``: the metric for the
    seed-noise band (default: the first of ``val/loss``-like, then ``loss``-like names present
    on the healthy runs); ``seed``: the permutations' random seed (the result is reproducible).
    Raises nothing on odd input: what cannot be concluded is a statement.
    """
    recs = hide_credentials([r for r in records])
    outcomes = [str(r.get("outcome") or "") for r in recs]
    out = Triage(runs=len(recs), outcomes=dict(Counter(outcomes)))
    use = [r for r, o in zip(recs, outcomes, strict=True) if o not in EXCLUDED]
    n_excl = len(recs) - len(use)
    if n_excl:
        out.statements.append(
            f"{n_excl} run(s) without a verdict on how they went (running or unknown) take no part"
        )
    if len(use) < 2:
        out.statements.append(
            f"{len(use)} run(s) with a verdict: nothing to compare; no factor tested"
        )
        return out
    outs = [str(r.get("outcome")) for r in use]
    n_fail = sum(o not in HEALTHY for o in outs)
    if n_fail == 0:
        out.statements.append(
            f"all {len(use)} runs succeeded: no failure to explain; no factor tested"
        )
    elif n_fail == len(use):
        out.statements.append(
            f"all {len(use)} runs failed ({_outcome_words(outs)}): no healthy run "
            "to compare with; no factor tested"
        )
    if not any(r.get("params") for r in use):
        out.statements.append(
            "no run carries params (config): only tags, commit, host and start time can be tested"
        )
    cands = candidates(use)
    skipped = []
    for name, vals in list(cands.items()):
        distinct = len(set(vals))
        if _numeric(vals) is None and (distinct > MAX_LEVELS or distinct == len(vals)):
            skipped.append(name)
            del cands[name]
    if skipped:
        out.statements.append(
            f"{len(skipped)} factor(s) with a different non-numeric value on every run or more "
            f"than {MAX_LEVELS} distinct values not tested (ids, names, paths): "
            + ", ".join(_label(s) for s in skipped[:5])
            + (" ..." if len(skipped) > 5 else "")
        )
    out.seed_noise = seed_noise(use, metric)
    if 0 < n_fail < len(use):
        if not cands:
            out.statements.append(
                "no param, tag, commit, host or start time varies between the "
                "runs: no factor to test"
            )
        elif len(cands) > MAX_FACTORS:
            out.statements.append(
                f"{len(cands)} candidate factors vary between {len(use)} runs, over "
                f"the limit of {MAX_FACTORS}: too many to separate; no factor tested"
            )
        else:
            _run_tests(out, use, outs, cands, permutations, alpha, seed)
    return out


def _outcome_words(outs: list[str]) -> str:
    return ", ".join(f"{n} {o}" for o, n in Counter(outs).most_common())


def _run_tests(out: Triage, use, outs, cands, permutations, alpha, seed) -> None:
    rng = np.random.default_rng(seed)
    if permutations is None:
        m = len(_targets(outs)) * len(cands)
        permutations = max(999, min(9999, math.ceil(2 * m / alpha)))
    tests: list[Factor] = []
    masks: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for target in _targets(outs):
        y_all = np.array(
            [(o not in HEALTHY) if target == "failed" else (o == target) for o in outs],
            dtype=np.int8,
        )
        perms = _Perms(y_all, rng)
        for name, vals in cands.items():
            x = _numeric(vals)
            if x is not None:
                split, p, mask = _test_numeric(x, y_all, perms, permutations)
                kind = "numeric"
            else:
                split, p, mask = _test_categorical(vals, y_all, perms, permutations)
                kind = "categorical"
            effect, counts = _effect(name, kind, split, mask, y_all.astype(bool), target)
            f_total = int(y_all.sum())
            small = f_total < MIN_GROUP
            if small:
                effect += f" (small group: {f_total} {target} run(s))"
            tests.append(
                Factor(
                    name,
                    kind,
                    target,
                    effect,
                    counts,
                    p,
                    small=small,
                    split=split,
                    bins=_bins(vals, x, y_all),
                )
            )
            masks[(target, name)] = (mask, y_all)
    by_commit = _commit_order_test(use, outs, rng, permutations)
    family = tests + ([by_commit[0]] if by_commit else [])
    for f, q in zip(family, bh([f.p_value for f in family]), strict=True):
        f.q_value = q
        f.significant = q <= alpha and not f.small
    tests.sort(key=lambda f: (not f.significant, f.q_value, f.p_value))
    if by_commit:
        out.commit_change_point = _commit_change_point(use, outs, *by_commit)
    out.factors = tests
    out.tested = len(tests)
    for t in sorted({f.target for f in tests if f.small}):
        n = sum((o not in HEALTHY) if t == "failed" else (o == t) for o in outs)
        out.statements.append(
            f"small group: {n} {t} run(s), under {MIN_GROUP}: counts shown, no factor claimed"
        )
    if not out.significant:
        out.statements.append(
            f"no factor separates the failing runs after the Benjamini-Hochberg "
            f"correction ({len(tests)} tests, false discovery rate {alpha:g})"
        )
    out.change_point = _change_point(use, outs, tests)


def _change_point(use, outs, tests: list[Factor]) -> dict[str, Any] | None:
    st = [f for f in tests if f.name == "start_time"]
    if not st:
        return None
    f = min(st, key=lambda f: f.q_value)
    t = float(f.split)
    times = [_as_float(r.get("start_time")) for r in use]
    idx = sorted(range(len(use)), key=lambda i: times[i] or 0.0)
    fail = [(outs[i] not in HEALTHY) for i in range(len(use))]
    before = [i for i in idx if (times[i] or 0.0) < t]
    after = [i for i in idx if (times[i] or 0.0) >= t]
    worse_after, last_good, first_bad, changed = _ends(use, fail, before, after)
    return {
        "order": "start_time",
        "direction": "failures start" if worse_after else "failures stop",
        "at": f.counts["group"]["rule"] if worse_after else f.counts["rest"]["rule"],
        "before": {"runs": len(before), "failing": sum(fail[i] for i in before)},
        "after": {"runs": len(after), "failing": sum(fail[i] for i in after)},
        **_runs_and_test(use, f, last_good, first_bad, changed),
    }


def _ends(use, fail: list[bool], before: list[int], after: list[int]):
    """Either side of a change point (``before``/``after``: run indices in sequence order):
    ``(worse_after, last_good, first_bad, changed)``: whether the failure rate is higher after,
    the last healthy run next to the change on the good side and the first failing run on the
    bad side (indices or None), and what differs between those two runs (:func:`_diff`)."""
    rate_b = sum(fail[i] for i in before) / max(len(before), 1)
    rate_a = sum(fail[i] for i in after) / max(len(after), 1)
    worse_after = rate_a > rate_b
    good = [i for i in (before if worse_after else after) if not fail[i]]
    bad = [i for i in (after if worse_after else before) if fail[i]]
    last_good = (good[-1] if worse_after else good[0]) if good else None
    first_bad = (bad[0] if worse_after else bad[-1]) if bad else None
    changed = (
        _diff(use[last_good], use[first_bad])
        if (last_good is not None and first_bad is not None)
        else {}
    )
    return worse_after, last_good, first_bad, changed


def _runs_and_test(use, f: Factor, last_good, first_bad, changed) -> dict[str, Any]:
    """The change point's runs (ids), what changed between them, and its test's p, q and
    significance."""
    return {
        "last_good": None if last_good is None else str(use[last_good].get("run_id")),
        "first_bad": None if first_bad is None else str(use[first_bad].get("run_id")),
        "changed": changed,
        "p_value": round(f.p_value, 6),
        "q_value": round(f.q_value, 6),
        "significant": f.significant,
    }


def commit_order(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The distinct commits of ``records`` in the order they came into use: by the earliest
    start time of a run carrying each (ties by the commit text). Runs record no commit history,
    so the first run made on a commit stands for the commit's date."""
    first: dict[str, float] = {}
    for r in records:
        c = r.get("commit")
        if c:
            t = _as_float(r.get("start_time"))
            t = math.inf if t is None else t
            first[str(c)] = min(first.get(str(c), math.inf), t)
    return sorted(first, key=lambda c: (first[c], c))


def _commit_order_test(use, outs, rng, permutations: int):
    """The change point of the failure rate on the runs ordered by commit
    (:func:`commit_order`): the threshold split on the commit's rank with the largest
    |z| of the failure-rate difference, its permutation p-value (the same maximum over every
    split on each shuffle of the failure labels). ``None`` unless every run carries a commit,
    at least 3 commits are seen (with 2, the split is the ``commit`` factor itself) and some
    but not all runs fail. Returns ``(Factor, order)``."""
    commits = [r.get("commit") for r in use]
    if not all(commits):
        return None
    order = commit_order(use)
    if len(order) < 3:
        return None
    y = np.array([o not in HEALTHY for o in outs], dtype=np.int8)
    if y.sum() in (0, y.size):
        return None
    rank = {c: i for i, c in enumerate(order)}
    x = np.array([rank[str(c)] for c in commits], dtype=float)
    split, p, mask = _test_numeric(x, y, _Perms(y, rng), permutations)
    f_total = int(y.sum())
    f = Factor(
        "commit_order",
        "numeric",
        "failed",
        "",
        {},
        p,
        small=f_total < MIN_GROUP,
        split=split,
    )
    return f, order


def _commit_change_point(use, outs, f: Factor, order: list[str]) -> dict[str, Any]:
    """First bad / last good by commit: the commits either side of the split, the runs (the
    last healthy run on the last good commit's side, the first failing run on the other),
    what differs between those two runs, and the failure counts before and after."""
    rank = {c: i for i, c in enumerate(order)}
    cut = int(f.split)
    fail = [o not in HEALTHY for o in outs]

    def when(i: int) -> tuple[int, float]:
        t = _as_float(use[i].get("start_time"))
        return rank[str(use[i]["commit"])], (math.inf if t is None else t)

    seq = sorted(range(len(use)), key=when)
    before = [i for i in seq if rank[str(use[i]["commit"])] < cut]
    after = [i for i in seq if rank[str(use[i]["commit"])] >= cut]
    worse_after, last_good, first_bad, changed = _ends(use, fail, before, after)
    nb, na = sum(fail[i] for i in before), sum(fail[i] for i in after)
    return {
        "order": "commit",
        "commits": list(order),
        "direction": "failures start" if worse_after else "failures stop",
        "at": f"commit {order[cut]}" if worse_after else f"commit {order[cut - 1]} and earlier",
        "last_good_commit": order[cut - 1] if worse_after else order[cut],
        "first_bad_commit": order[cut] if worse_after else order[cut - 1],
        "before": {"commits": cut, "runs": len(before), "failing": nb},
        "after": {"commits": len(order) - cut, "runs": len(after), "failing": na},
        **_runs_and_test(use, f, last_good, first_bad, changed),
        "small": f.small,
    }


def _diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for key in ("commit", "host"):
        if a.get(key) != b.get(key):
            out[key] = [a.get(key), b.get(key)]
    for src in ("params", "tags"):
        da, db = a.get(src) or {}, b.get(src) or {}
        for k in sorted(set(da) | set(db)):
            if src == "tags" and str(k).startswith(SKIP_TAG_PREFIXES):
                continue
            if src == "params" and _SEED_RE.search(str(k)):
                continue
            if da.get(k) != db.get(k):
                out[f"{src[:-1]}:{k}"] = [da.get(k), db.get(k)]
    return out


# ---------------------------------------------------------------- seed noise

_LOWER_BETTER = re.compile(r"loss|err|perplex|ppl|mse|mae|rmse|wer|cer", re.I)


def _pick_metric(recs) -> str | None:
    seen: Counter[str] = Counter()
    for r in recs:
        seen.update(k for k, v in (r.get("metrics") or {}).items() if _as_float(v) is not None)
    names = [k for k, _ in seen.most_common()]
    for pat in (
        r"^(val|valid|validation|eval|test)[/_.].*loss",
        r"^(val|valid|validation|eval)[/_.]",
        r"loss",
    ):
        hit = sorted(k for k in names if re.search(pat, k, re.I))
        if hit:
            return hit[0]
    return None


def seed_noise(
    records: Sequence[Mapping[str, Any]], metric: str | None = None
) -> dict[str, Any] | None:
    """The seed-noise band and the best run's lead against it, or None without a metric.

    Healthy runs are grouped by their params minus the seed params; groups with >= 2 runs give
    a pooled within-configuration standard deviation of ``metric`` (lower is better when its
    name reads as a loss or error, else higher). The best run's lead over the best run of any
    other configuration is a difference of two configuration means with standard error
    ``sd * sqrt(1/n1 + 1/n2)``; ``real`` is True when |lead| >= 2 standard errors (the
    two-sided 95 % normal point). Returns ``{metric, lower_is_better, sd, groups,
    best_run, runner_up, lead, z, real, statement}`` (``sd``/``z``/``real`` None without
    repeated seeds)."""
    healthy = [r for r in records if str(r.get("outcome")) in HEALTHY]
    metric = metric or _pick_metric(healthy)
    if not metric:
        return None
    lower = bool(_LOWER_BETTER.search(metric))
    vals = [
        (r, v)
        for r in healthy
        if (v := _as_float((r.get("metrics") or {}).get(metric))) is not None
    ]
    if len(vals) < 2:
        return {
            "metric": metric,
            "statement": f"fewer than 2 healthy runs report {metric}: no comparison",
        }
    groups = _config_groups(vals)
    reps = [g for g in groups.values() if len(g) >= 2]
    sd = _pooled_sd(reps)
    sign = 1.0 if lower else -1.0
    best_r, best_v = min(vals, key=lambda t: sign * t[1])
    best_key = _group_key(groups, best_r)
    others = [(r, v) for k, g in groups.items() if k != best_key for r, v in g]
    res: dict[str, Any] = {
        "metric": metric,
        "lower_is_better": lower,
        "sd": None if sd is None else round(sd, 6),
        "groups": len(groups),
        "repeated_groups": len(reps),
        "best_run": str(best_r.get("run_id")),
        "best_value": best_v,
    }
    if not others:
        res.update(
            runner_up=None,
            lead=None,
            z=None,
            real=None,
            statement=f"every healthy run has the same configuration: the spread of "
            f"{metric} is seed noise (sd {'n/a' if sd is None else _fmt(sd)})",
        )
        return res
    ru_r, _ = min(others, key=lambda t: sign * t[1])
    ru_key = _group_key(groups, ru_r)
    m1 = float(np.mean([v for _, v in groups[best_key]]))
    m2 = float(np.mean([v for _, v in groups[ru_key]]))
    n1, n2 = len(groups[best_key]), len(groups[ru_key])
    lead = (m2 - m1) if lower else (m1 - m2)
    res.update(runner_up=str(ru_r.get("run_id")), lead=round(lead, 6))
    res.update(_lead_judgement(metric, best_r, best_v, lead, sd, n1, n2, len(reps)))
    return res


def _group_key(groups: dict[tuple, list[tuple[Mapping[str, Any], float]]], run) -> tuple:
    """The configuration ``run`` (that very record) belongs to."""
    return next(k for k, g in groups.items() if any(r is run for r, _ in g))


def _pooled_sd(reps: list[list[tuple[Mapping[str, Any], float]]]) -> float | None:
    """The pooled within-configuration standard deviation of the repeated configurations (sum of
    squared deviations from each group's mean over the degrees of freedom); None without any."""
    dof = sum(len(g) - 1 for g in reps)
    ss = sum(sum((v - np.mean([w for _, w in g])) ** 2 for _, v in g) for g in reps)
    return math.sqrt(ss / dof) if dof else None


def _config_groups(
    vals: list[tuple[Mapping[str, Any], float]],
) -> dict[tuple, list[tuple[Mapping[str, Any], float]]]:
    """The runs grouped by configuration: their params minus the seed params."""
    groups: dict[tuple, list[tuple[Mapping[str, Any], float]]] = {}
    for r, v in vals:
        key = tuple(
            sorted(
                (k, str(x))
                for k, x in (r.get("params") or {}).items()
                if not _SEED_RE.search(str(k))
            )
        )
        groups.setdefault(key, []).append((r, v))
    return groups


def _lead_judgement(
    metric: str,
    best_r: Mapping[str, Any],
    best_v: float,
    lead: float,
    sd: float | None,
    n1: int,
    n2: int,
    n_reps: int,
) -> dict[str, Any]:
    """``z``, ``real`` and the statement: the lead in standard errors of the seed-noise band
    (real at >= 2), or why there is no band to judge it against (no repeated configuration, or
    identical values across seeds)."""
    if sd is None or sd == 0:
        why = (
            "no configuration was repeated with another seed"
            if sd is None
            else f"its {n_reps} repeated configuration(s) give identical values across seeds (sd 0)"
        )
        return {
            "z": None,
            "real": None,
            "statement": f"best run {best_r.get('run_id')} ({metric} {_fmt(best_v)}) leads the "
            f"next configuration by {_fmt(lead)}; {why}, so there is no noise band to judge "
            "the lead against",
        }
    z = lead / (sd * math.sqrt(1 / n1 + 1 / n2))
    real = z >= 2.0
    return {
        "z": round(z, 3),
        "real": real,
        "statement": (
            f"best run {best_r.get('run_id')} ({metric} {_fmt(best_v)}): its "
            f"configuration ({n1} run(s)) leads the next ({n2} run(s)) by {_fmt(lead)}, "
            f"{z:.1f} standard errors of the seed-noise band (sd {_fmt(sd)} from "
            f"{n_reps} repeated configuration(s)): "
            + ("a real lead" if real else "within seed noise, not shown to be better")
        ),
    }


# ---------------------------------------------------------------- rendering


def render_text(t: Triage, limit: int = 10) -> str:
    """Plain text for people: statements, significant factors (then the best few others),
    the change point and the seed-noise judgement."""
    lines = [f"Triage: {t.runs} runs ({_outcome_words_d(t.outcomes)})"]
    lines += [f"  - {s}" for s in t.statements]
    sig = t.significant
    if sig:
        lines.append(
            f"Factors that separate the failing runs ({len(sig)} of {t.tested} tests "
            "significant after Benjamini-Hochberg):"
        )
        for f in sig[:limit]:
            lines.append(
                f"  * {f.name} [{f.target}]: {f.effect} (p={f.p_value:.4g}, q={f.q_value:.4g})"
            )
    elif t.factors:
        lines.append("Closest factors (not significant):")
        for f in t.factors[:3]:
            lines.append(
                f"    {f.name} [{f.target}]: {f.effect} (p={f.p_value:.4g}, q={f.q_value:.4g})"
            )
    lines += change_point_lines(t)
    if t.seed_noise and t.seed_noise.get("statement"):
        lines.append("Seed noise: " + t.seed_noise["statement"])
    return "\n".join(lines) + "\n"


def change_point_lines(t: Triage) -> list[str]:
    """The first bad / last good statements (by start time when significant; by commit when
    tested), for the text and HTML renderings."""
    lines: list[str] = []
    cp = t.change_point
    if cp and cp.get("significant"):
        lines.append(
            f"First bad / last good: {cp['direction']} at runs {cp['at']} "
            f"({cp['before']['failing']} of {cp['before']['runs']} failing before, "
            f"{cp['after']['failing']} of {cp['after']['runs']} after); last good "
            f"{cp['last_good']}, first bad {cp['first_bad']}"
        )
        if cp["changed"]:
            lines.append(
                "  changed between them: "
                + "; ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(cp["changed"].items())[:8])
            )
    cc = t.commit_change_point
    if cc:
        verdict = "significant" if cc["significant"] else "not significant"
        lines.append(
            f"First bad / last good by commit ({len(cc['commits'])} commits in order of first "
            f"use): {cc['direction']} at {cc['at']} ({cc['before']['failing']} of "
            f"{cc['before']['runs']} runs failing on the {cc['before']['commits']} commit(s) "
            f"before, {cc['after']['failing']} of {cc['after']['runs']} on the "
            f"{cc['after']['commits']} from there; p={cc['p_value']:.4g}, q={cc['q_value']:.4g}, "
            f"{verdict}); last good commit {cc['last_good_commit']} (run {cc['last_good']}), "
            f"first bad commit {cc['first_bad_commit']} (run {cc['first_bad']})"
        )
        if cc["changed"] and cc["significant"]:
            lines.append(
                "  changed between them: "
                + "; ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(cc["changed"].items())[:8])
            )
    return lines


def _outcome_words_d(d: Mapping[str, int]) -> str:
    return ", ".join(
        f"{n} {o or 'no verdict'}" for o, n in sorted(d.items(), key=lambda kv: -kv[1])
    )


def render_html(t: Triage) -> str:
    """A self-contained HTML page: the statements, then one failure-rate-by-bin bar plot (inline
    SVG) per significant factor with its effect. Every run-controlled text is redacted
    (:func:`mlaudit_core.redact.redact_text`), then escaped: redacting the escaped page misses
    ``&quot;api_key&quot;: &quot;...&quot;``."""
    from html import escape as _escape

    from .redact import redact_text

    def escape(text: str) -> str:
        return _escape(redact_text(text))

    parts = [
        "<!doctype html><meta charset='utf-8'><title>mlaudit triage</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto}"
        "svg text{font-size:11px}</style>",
        f"<h1>Triage: {t.runs} runs</h1><p>{escape(_outcome_words_d(t.outcomes))}</p>",
    ]
    if t.statements:
        parts.append("<ul>" + "".join(f"<li>{escape(s)}</li>" for s in t.statements) + "</ul>")
    for f in t.significant:
        parts.append(
            f"<h2>{escape(f.name)} [{escape(f.target)}]</h2><p>{escape(f.effect)} "
            f"(p={f.p_value:.4g}, q={f.q_value:.4g})</p>"
        )
        parts.append(_bar_svg(f.bins))
    cps = change_point_lines(t)
    if cps:
        parts.append("<h2>First bad / last good</h2>")
        parts.append("<ul>" + "".join(f"<li>{escape(c.strip())}</li>" for c in cps) + "</ul>")
    return "\n".join(parts) + "\n"


def _bar_svg(bins: list[dict[str, Any]]) -> str:
    from html import escape

    from .redact import redact_text

    w, h, left, bottom = 60, 160, 40, 40
    width = left + w * max(len(bins), 1) + 10
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h + bottom}' "
        "role='img' aria-label='failure rate by bin'>",
        f"<line x1='{left}' y1='{h}' x2='{width}' y2='{h}' stroke='#444'/>",
        f"<text x='2' y='12'>100%</text><text x='2' y='{h}'>0%</text>",
    ]
    for i, b in enumerate(bins):
        label = redact_text(str(b["label"]))  # whole, then cut: a cut secret is not recognisable
        rate = b["failing"] / b["runs"] if b["runs"] else 0.0
        bh_ = rate * (h - 10)
        x = left + i * w + 5
        out.append(
            f"<rect x='{x}' y='{h - bh_:.1f}' width='{w - 10}' height='{bh_:.1f}' fill='#c0392b'>"
            f"<title>{escape(label)}: {b['failing']} of {b['runs']} failing</title></rect>"
        )
        out.append(f"<text x='{x}' y='{h + 14}'>{escape(label[:12])}</text>")
        out.append(f"<text x='{x}' y='{h + 28}'>{b['failing']}/{b['runs']}</text>")
    out.append("</svg>")
    return "".join(out)
