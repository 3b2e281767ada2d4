"""Baseline selection policy: which earlier runs a run is judged against.

The policy is a pure function over candidate runs that a tracker plugin has
already loaded (the plugin decides how to *find* candidates cheaply: by id, by
tag, by parent, by experiment); this module decides which of them count. Rules,
tried in order, the first that yields runs wins:

1. ``explicit``: the run ids the user named (``--baseline RUN``), all of them.
2. ``tagged``: candidates tagged ``mlaudit.baseline`` with a true value
   (``true``/``1``/``yes``).
3. ``parent``: the run's parent run.
4. ``same_config``: finished candidates of the same experiment/project whose
   params equal the run's except for seed-like and identity keys (see
   :func:`config_matches`), most recent first, at most ``max_runs``.

The run itself is never its own baseline, and only finished runs count for
rules 2-4 (a crashed run is no reference; an explicitly named one is taken as
the user said, with a warning when it did not finish).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..rundata import RunData, RunStatus
from .deltas import norm_key, same

BASELINE_TAG = "mlaudit.baseline"
_TRUE = {"true", "1", "yes", "y", "on"}

#: Params that may differ between a run and a same-config baseline (seed-like and identity keys).
DEFAULT_IGNORED = (
    r"(^|_)(seed|seeds|random_state|random_seed|rng_seed)(_|$)",
    r"run_?name",
    r"run_?id",
    r"output_dir",
    r"logging_dir",
    r"log_dir",
    r"save_dir",
    r"checkpoint_dir",
    r"run_dir",
    r"(^|_)name$",
    r"timestamp",
    r"(^|_)date$",
    r"job_id",
)


@dataclass
class BaselinePolicy:
    """How to choose baselines. Defaults: every rule on, up to 5 same-config runs.

    Attributes:
        explicit: run ids named by the user; when set, only they are used.
        use_tagged: rule 2.
        use_parent: rule 3.
        use_same_config: rule 4.
        max_runs: cap for rule 4 (5 seeds give a usable std; more costs loading time).
        ignore_params: regexes (on the normalised key) of params allowed to differ in rule 4.
    """

    explicit: list[str] = field(default_factory=list)
    use_tagged: bool = True
    use_parent: bool = True
    use_same_config: bool = True
    max_runs: int = 5
    ignore_params: Sequence[str] = DEFAULT_IGNORED


@dataclass
class Selection:
    """The chosen baselines, the rule that chose them, and anything worth telling the user."""

    runs: list[RunData]
    rule: str  # explicit | tagged | parent | same_config | none
    warnings: list[str] = field(default_factory=list)


def config_matches(run: RunData, other: RunData, ignore: Sequence[str] = DEFAULT_IGNORED) -> bool:
    """True when ``other`` has the same params as ``run`` except the ignored keys.

    Values compare as strings or numbers (``"1e-3"`` equals ``"0.001"``). A key
    present on one side only is a mismatch.
    """
    rx = re.compile("|".join(f"(?:{p})" for p in ignore)) if ignore else None

    def keep(k: str) -> bool:
        return not (rx and rx.search(norm_key(k)))

    a = {k: v for k, v in run.params.items() if keep(k)}
    b = {k: v for k, v in other.params.items() if keep(k)}
    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)


def _when(r: RunData) -> datetime:
    t = r.end_time or r.start_time
    if t is None:
        return datetime.min.replace(tzinfo=timezone.utc)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def select_baselines(
    run: RunData, candidates: Iterable[RunData], policy: BaselinePolicy | None = None
) -> Selection:
    """Apply the policy to ``candidates``. See the module docstring for the rules.

    Args:
        run: the run under audit.
        candidates: runs a plugin loaded (explicit ids, tagged runs, the parent,
            recent runs of the experiment); duplicates by id are ignored.
        policy: the rules to apply; defaults when ``None``.

    Returns:
        The selection; ``rule == "none"`` and no runs when nothing qualifies.
    """
    policy = policy or BaselinePolicy()
    seen: dict[str, RunData] = {}
    for c in candidates:
        if c.identity.id != run.identity.id and c.identity.id not in seen:
            seen[c.identity.id] = c
    pool = list(seen.values())
    warnings: list[str] = []
    if policy.explicit:
        return _explicit(pool, policy.explicit, warnings)
    finished = [c for c in pool if c.status is RunStatus.FINISHED]
    for rule in _SELECTION_RULES:
        chosen = rule(run, finished, policy)
        if chosen is not None:
            return Selection(chosen[1], chosen[0], warnings)
    return Selection([], "none", warnings)


def _explicit(pool: list[RunData], ids: Sequence[str], warnings: list[str]) -> Selection:
    """The runs named by id, in the order given; a missing or unfinished one is warned about."""
    by_id = {c.identity.id: c for c in pool}
    missing = [i for i in ids if i not in by_id]
    if missing:
        warnings.append(
            "baseline run(s) not found among the loaded candidates: " + ", ".join(missing)
        )
    chosen = [by_id[i] for i in ids if i in by_id]
    for c in chosen:
        if c.status is not RunStatus.FINISHED:
            warnings.append(f"baseline {c.identity.id} is {c.status.value}, not finished")
    return Selection(chosen, "explicit" if chosen else "none", warnings)


def _tagged(
    run: RunData, finished: list[RunData], policy: BaselinePolicy
) -> tuple[str, list[RunData]] | None:
    """Finished runs tagged as baselines, newest first."""
    if not policy.use_tagged:
        return None
    tagged = [c for c in finished if c.tags.get(BASELINE_TAG, "").strip().lower() in _TRUE]
    return ("tagged", sorted(tagged, key=_when, reverse=True)) if tagged else None


def _parent(
    run: RunData, finished: list[RunData], policy: BaselinePolicy
) -> tuple[str, list[RunData]] | None:
    """The run's finished parent run."""
    if not (policy.use_parent and run.parent_id):
        return None
    parent = [c for c in finished if c.identity.id == run.parent_id]
    return ("parent", parent) if parent else None


def _same_config(
    run: RunData, finished: list[RunData], policy: BaselinePolicy
) -> tuple[str, list[RunData]] | None:
    """Finished runs of the same project with the same configuration (ignored params aside),
    newest first, at most ``max_runs``."""
    if not policy.use_same_config:
        return None
    same = [
        c
        for c in finished
        if c.identity.project == run.identity.project
        and config_matches(run, c, policy.ignore_params)
    ]
    if not same:
        return None
    return "same_config", sorted(same, key=_when, reverse=True)[: policy.max_runs]


#: Without explicit ids, the selection rules in precedence order: the first that finds runs wins.
_SELECTION_RULES: tuple[
    Callable[[RunData, list[RunData], BaselinePolicy], tuple[str, list[RunData]] | None], ...
] = (_tagged, _parent, _same_config)
