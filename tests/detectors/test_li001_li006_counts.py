"""LI001 (non-finite values) and LI006 (exact-zero stand-ins) say the counts and the growth the
series shows, on a real Hugging Face Trainer console (tests/data/newuser17/hf_nanlabel_csv_empty_cell.log:
a regression whose CSV had one empty target cell; grad_norm nan from step 30, the Trainer's
logging_nan_inf_filter logging loss 0.0 at the last 6 of 9 points).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path

LOG = Path(__file__).parent.parent / "data" / "newuser17" / "hf_nanlabel_csv_empty_cell.log"


def _messages(code: str) -> list[str]:
    run = list(load_path(LOG).runs)[-1][1]
    return [f.message for f in audit(run).findings if f.code == code]


def test_li006_counts_every_zero_of_a_stand_in_stretch():
    (msg,) = _messages("LI006")
    loss = [
        float(x.split("'loss': '")[1].split("'")[0])
        for x in LOG.read_text().splitlines()
        if "'loss': '" in x
    ]
    zeros = sum(v == 0.0 for v in loss)
    assert zeros == 6 and len(loss) == 9
    assert f"exactly 0.0 at {zeros} of {len(loss)} points" in msg, msg


def test_li001_says_no_rise_when_the_last_finite_value_is_the_lowest():
    msgs = _messages("LI001")
    grad = next(m for m in msgs if "grad_norm" in m)
    assert "at its lowest before the onset" in grad and "1x its" not in grad, grad
    val = next(m for m in msgs if "val/loss" in m)
    assert "no finite value before it" in val and "n/a" not in val, val
