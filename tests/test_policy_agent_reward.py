"""roles (family ``reward``) and verdict.policy V09c (agent_reward): an agent is judged by its
episode reward, never by its surrogate losses.

Real input: stable-baselines3 logs of the own corpus (tests/data/realworld, scored in session 7):
a DQN whose TD loss rises while its reward levels off (f7b1-06), a PPO whose loss rises while its
reward rises (f7b2-08), a PPO whose reward collapses back to its start (f7b1-08, TensorBoard) and an
actor-critic whose reward never moves (f7b3-16), each audited as ``mlaudit audit`` audits it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.roles import Role, parse_name, roles_of

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _verdict(path: Path) -> dict:
    res = CliRunner().invoke(app, ["audit", str(path), "--format", "json", "--no-write"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize(
    "key",
    [
        "rollout/ep_rew_mean",
        "eval/mean_reward",
        "mean 100 episode reward",
        "charts/episodic_return",
        "Environment/Cumulative Reward",
        "episode_reward_mean",
    ],
)
def test_an_episode_reward_is_the_task_metric_and_the_losses_play_no_role(key):
    roles = roles_of([key, "train/loss", "train/value_loss", "train/policy_gradient_loss"])
    assert roles[key] == (Role.VAL_ACCURACY,)
    assert parse_name(key).higher_is_better is True
    assert roles["train/loss"] == () and roles["train/value_loss"] == ()


def test_a_reward_that_is_not_an_episode_return_changes_nothing():
    # DPO/reward-model statistics and a running best are not an agent's task metric
    roles = roles_of(["loss", "rewards/chosen", "rewards/margins", "max 100 episode reward"])
    assert roles["loss"] == (Role.TRAIN_LOSS,)
    assert roles["rewards/chosen"] == () and roles["max 100 episode reward"] == ()


@pytest.mark.parametrize(
    "path, expect",
    [
        # DQN TD loss 0.001 -> 0.027 while ep_rew_mean -8 -> 7 (was: diverged from the loss)
        (
            "TobiasLudwig02--RLFlappyBird/logs/DQN_MLP_std_2Mio/progress.csv",
            ("succeeded", "healthy"),
        ),
        # PPO loss negative and rising while the reward rises 6 -> 28 (was: diverged)
        ("phnk--Driving-Env/logs/progress.csv", ("succeeded", "healthy")),
        # Acrobot PPO: reward -7976 -> -4969 -> -7946, the loss falls (was: succeeded)
        (
            "kevin866--Acrobot_with_MuJoCo/ppo_acrobot_tensorboard/PPO_Acrobot_2_2",
            ("unstable", "model_convergence"),
        ),
        # actor-critic: reward flat around -12.5, eval reward ends at its worst (was: plateaued)
        ("DonWick32--AIML-Project/logs/4/progress.csv", ("underfit", "model_convergence")),
    ],
)
def test_agent_verdict_follows_the_reward(path, expect):
    v = _verdict(RUNS / path)
    assert v["rule"] == "V09c"
    assert (v["outcome"], v["cause"]) == expect
    assert "ep_rew_mean" in v["summary"] or "mean_reward" in v["summary"]
