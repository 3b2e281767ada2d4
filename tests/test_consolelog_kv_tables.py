"""Console reader (consolelog/parser.py ``_kv_row``): a key/value table printed again and again is one
record per table, not a summary.

Real input: the OpenAI-baselines logger's ``log.txt`` of a GAIL/PPO agent from the own corpus
(tests/data/realworld f7b3-11, scored in session 7): 100 dashed ``| name | value |`` tables, one per
logging interval, which were read as one summary point per name. A table printed once (Lightning's
test results) stays a summary.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.formats import load_path
from mlaudit_core.roles import Role

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())
(GAIL,) = [REAL / x["path"] for x in LABELS if x["id"].startswith("f7b3-11-")]


def test_repeated_tables_are_records_and_the_episode_reward_is_the_task_metric():
    ((_, run),) = load_path(GAIL).runs
    reward = run.key_for(Role.VAL_ACCURACY)
    assert reward == "train/mean_100_episode_reward"
    s = run.series(reward).finite()
    assert len(s) == 100 and list(s.values[:3]) == [25.8, 62.0, 101.0]
    assert list(s.steps[:3]) == [1, 2, 3]
    assert run.series("train/value_loss").finite().values[0] == 21.48343


def test_a_table_printed_once_stays_a_summary(tmp_path):
    p = tmp_path / "train.log"
    lines = [f"Epoch {i}: loss={2.0 - 0.1 * i:.3f}" for i in range(10)]
    lines += [
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "│         test_acc          │    0.9100000262260437     │",
        "│         test_loss         │    0.3100000262260437     │",
        "└───────────────────────────┴───────────────────────────┘",
    ]
    p.write_text("\n".join(lines) + "\n")
    ((_, run),) = load_path(p).runs
    assert len(run.series("test/accuracy").finite()) == 1
    assert len(run.series("train/loss").finite()) == 10


def test_repeated_tables_with_a_non_finite_or_huge_step_counter(tmp_path):
    """A step counter column holding nan, inf or 1e30 is no step: the table is the next record
    (was: ValueError 'cannot convert float NaN to integer' ended the read)."""
    counters = ["0", "2048", "nan", "inf", "-inf", "1e30", "10240"]
    rows = []
    for i, c in enumerate(counters):
        rows += ["-" * 40, f"| ep_rew_mean     | {i * 1.5} |", f"| total_timesteps | {c} |"]
        rows += [f"| loss            | {1 / (i + 1)} |"]
    p = tmp_path / "log.txt"
    p.write_text("\n".join(rows) + "\n")
    ((_, run),) = load_path(p).runs
    s = run.series("train/loss").finite()
    assert len(s) == len(counters) and (s.steps[1:] > s.steps[:-1]).all()
    assert s.steps[-1] == 10240
