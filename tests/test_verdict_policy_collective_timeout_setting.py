"""policy._collective_timeout_set_too_short on real reports: a watchdog timeout printed far below any real
collective's duration is the setting, a timeout at torch's default is the run's own collective."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome

_REPORTS = Path(__file__).parent / "data" / "reports"


def _verdict(prefix: str):
    (case,) = _REPORTS.glob(prefix + "*")
    runs = [r for p in sorted(case.glob("*.log")) for _, r in load_path(p).runs]
    return audit(runs[-1]).verdict


def test_policy_collective_timeout_of_one_ms_is_the_setting():
    """Report b43-01 (instructlab CI, the NCCL process-group timeout set to 1 ms on purpose: 'Watchdog
    caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, ... Timeout(ms)=1) ran for 90
    milliseconds'): the configured timeout ended the run, data_config (was infra_runtime)."""
    v = _verdict("b43-01-")
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.DATA_CONFIG), v.summary
    assert "1 ms" in v.summary


def test_policy_collective_timeout_at_torchs_default_stays_the_run():
    """Report b1-08 (lm-eval on several GPUs, Timeout(ms)=1800000, torch's 30-minute default): the
    setting is not read as the cause."""
    v = _verdict("b1-08-")
    assert v.outcome is Outcome.CRASHED and v.cause is not Cause.DATA_CONFIG, v.summary
