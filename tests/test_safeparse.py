"""Bounded parsing (issue 16, finding 10): a 1 KB YAML alias bomb or deeply nested JSON / YAML /
TOML given to ``--config`` or found as settings is one error line and exit 2, never exit 3 or
gigabytes; real configs with anchors and merge keys still load. Real ``mlaudit`` processes
with an address-space limit, so a regression fails instead of swapping the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.safeparse import TooComplex, json_depth, load_yaml, loads_json

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
LOG = "step 1 loss 2.0\nstep 2 loss 1.5\nstep 3 loss 1.2\nstep 4 loss 1.0\n"


def _bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def run(args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MLAUDIT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        preexec_fn=_limit_memory,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.parametrize(
    "name,text,message",
    [
        ("bomb.yaml", _bomb(), "aliases expand to over"),
        ("deep.json", "[" * 50_000 + "]" * 50_000, "too deep"),
        ("deep.yaml", "[" * 50_000 + "]" * 50_000, "too deep"),
        ("deep.toml", "a = " + "[" * 50_000 + "]" * 50_000, "too deep"),
    ],
)
def test_config_files_over_a_limit_are_one_line_exit_2(tmp_path, name, text, message):
    assert len(_bomb()) < 1024  # the "1 KB alias bomb"
    (tmp_path / "train.log").write_text(LOG)
    (tmp_path / name).write_text(text)
    p = run(["logs", "train.log", "--config", name, "--format", "json"], tmp_path)
    assert p.returncode == 2, p.stderr[-2000:]
    assert p.stderr.count("\n") == 1 and name in p.stderr and message in p.stderr, p.stderr


def test_deep_settings_file_is_one_line_exit_2(tmp_path):
    (tmp_path / "train.log").write_text(LOG)
    (tmp_path / "mlaudit.toml").write_text("ignore = " + "[" * 50_000 + "]" * 50_000 + "\n")
    p = run(["logs", "train.log", "--format", "json"], tmp_path)
    assert p.returncode == 2 and "too deep" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_real_configs_with_anchors_and_merge_keys_load(tmp_path):
    cfg = (
        "defaults: &defaults {lr: 0.0003, warmup_steps: 500}\n"
        "train:\n  <<: *defaults\n  steps_per_epoch: 1352\n"
        "eval: {<<: *defaults, lr: 0.0}\n"
    )
    assert load_yaml(cfg)["train"] == {"lr": 0.0003, "warmup_steps": 500, "steps_per_epoch": 1352}
    (tmp_path / "train.log").write_text(LOG)
    (tmp_path / "cfg.yaml").write_text(cfg)
    p = run(["logs", "train.log", "--config", "cfg.yaml", "--format", "json"], tmp_path)
    assert p.returncode == 0, p.stderr


def test_depth_counts_brackets_outside_strings_only():
    assert json_depth('{"a": "[[[[[[", "b": [1, [2]]}') == 3
    assert json_depth('"\\"[[["') == 0
    assert loads_json('{"x": [1, 2]}') == {"x": [1, 2]}
    with pytest.raises(TooComplex, match="too deep"):
        loads_json("[" * 101 + "]" * 101)
    with pytest.raises(TooComplex, match="aliases"):
        load_yaml(_bomb())
