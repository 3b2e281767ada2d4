"""mlaudit_core.verdict.evidence on real input: what counts as evidence that reduced precision
(fp16/bf16/AMP, loss scaling) is in use."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome
from mlaudit_core.roles import Role
from mlaudit_core.rundata import MetricTable

OWN = Path(__file__).parent / "data" / "realworld" / "runs"


def _run(path: Path):
    runs = list(load_path(path).runs)
    assert runs, f"nothing read from {path}"
    return runs[-1][1]


def test_a_python_warning_naming_gradscaler_is_not_precision_evidence():
    """nanoGPT prints a FutureWarning about ``torch.cuda.amp.GradScaler`` and echoes the source line
    ``scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))`` on every run, float32 on a
    CPU included (own corpus log09, a phone CPU run): that names the API, not the setting."""
    from mlaudit_core.verdict.evidence import precision_evidence

    run = _run(OWN / "ChenZihua-cn--nanoGPT/train.log")
    rep = audit(run)
    assert precision_evidence(run, rep.findings) == []
    assert rep.verdict.outcome is Outcome.DIVERGED
    assert not any("precision" in a.action.lower() for a in rep.next_actions), [
        a.action for a in rep.next_actions
    ]
    # a console line that states the setting still counts
    from mlaudit_core.rundata import ConsoleLine

    run.console.append(
        ConsoleLine(
            source="train.log", lineno=9999, text="Using 16bit Automatic Mixed Precision (AMP)"
        )
    )
    assert precision_evidence(run, rep.findings)


def test_assess_counts_an_agent_episode_reward_as_a_judgeable_signal():
    """An agent's episode reward is its task metric and the policy's reward rule judges it
    (policy.agent_reward), although no loss/accuracy detector needs it: SB3 PPO progress.csv of own
    corpus f7b1-05 (2M steps, ep_rew_mean -8 -> 47). ``assess`` must say a learning verdict rests
    on it; with the reward column removed nothing judgeable is left."""
    from mlaudit_core.verdict.evidence import assess

    run = _run(OWN / "TobiasLudwig02--RLFlappyBird/logs/PPO_MLP_std_2Mio/progress.csv")
    rep = audit(run)
    basis = assess(run, rep.findings, rep.detectors)
    assert basis.agent_reward and basis.judgeable
    assert rep.verdict.outcome is Outcome.SUCCEEDED
    rew = run.key_for(Role.VAL_ACCURACY)
    assert rew == "rollout/ep_rew_mean"
    rest = MetricTable.from_series(
        run.metrics.series(k) for k in run.metrics.keys if "rew" not in k
    )
    run2 = dataclasses.replace(run, metrics=rest)
    rep2 = audit(run2)
    assert not assess(run2, rep2.findings, rep2.detectors).agent_reward
