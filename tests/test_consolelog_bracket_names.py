"""Console names qualified by a bracketed word (formats/consolelog/parser.py ``_KEY``,
infer.py ``_NAME_AT_END``, names.py ``_SEP``): ``avg(utility)=U``, ``loss[val]: v``. The
reduction or split written around a name is part of the name; a line of such pairs was read
as nothing (realworld f11b1-17: 858 lines, no series)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import parse_lines
from mlaudit_core.roles import Role

POKEMON = Path(__file__).parent / "data" / "realworld" / "runs" / "0GhOsTO--pokemonQLearning"


def test_function_style_names_of_a_q_learning_console_are_series():
    """Realworld f11b1-17: 'after cycle=N avg(utility)=U avg(num_wins)=W', cycles 0-857."""
    ((_, run),) = load_path(POKEMON / "training.log").runs
    wins = run.metrics.series("train/avg_num_wins")
    assert len(wins) == 858 and wins.values[0] == pytest.approx(0.35)
    assert len(run.metrics.series("train/avg_utility")) == 858
    assert run.key_for(Role.VAL_ACCURACY) == "train/avg_num_wins"  # the agent's win rate


@pytest.mark.parametrize(
    "fmt,names",
    [
        ("iter {i} loss[train]={a:.4f} loss[val]={b:.4f}", {"train/loss", "val/loss"}),
        ("Epoch {i}: mean(loss)={a:.4f} acc={b:.4f}", {"train/mean_loss", "train/accuracy"}),
    ],
)
def test_bracket_qualified_names_in_generic_pairs(fmt, names):
    lines = [fmt.format(i=i, a=1.0 / (i + 1), b=0.5 + i / 100) for i in range(20)]
    got = parse_lines(lines, keep_console=False).metrics
    assert names <= set(got.keys), got.keys
    assert all(len(got.series(k)) == 20 for k in names)
