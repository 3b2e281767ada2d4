"""The console reader (mlaudit_core/formats/consolelog/parser.py, ``_KEY``) on spaced lines whose
value is a non-finite word: ``step 80/640 loss nan lr 1.198e+01`` is loss = NaN and lr = 11.98,
never a name ``loss nan lr`` (which dropped every non-finite training loss of a diverging run:
tests/data/newuser11/pt_warmup_nan_peak.log, a real PyTorch loop's console)."""

from __future__ import annotations

import math
from pathlib import Path

from mlaudit_core.formats.consolelog import load_logs

LOG = Path(__file__).parent / "data" / "newuser11" / "pt_warmup_nan_peak.log"


def test_spaced_nan_and_inf_values_are_points_of_their_series(tmp_path):
    run = load_logs([LOG])
    loss = run.metrics.series("train/loss")
    lr = run.metrics.series("train/lr")
    by_step = dict(zip(loss.steps.tolist(), loss.values.tolist()))
    assert math.isinf(by_step[70]) and math.isnan(by_step[80]) and math.isnan(by_step[630])
    assert set(lr.steps.tolist()) <= set(by_step)  # every printed step's loss was read
    assert lr.values.tolist()[:2] == [2.062, 3.938]
    p = tmp_path / "t.log"
    p.write_text(
        "epoch 1 loss 0.7 acc 0.5\nepoch 2 loss Infinity acc 0.5\nepoch 3 loss -inf acc 0.5\n"
    )
    got = load_logs([p]).metrics.series("train/loss").values.tolist()
    assert got[0] == 0.7 and got[1] == math.inf and got[2] == -math.inf
