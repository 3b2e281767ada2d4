"""lm-evaluation-harness's HFLM regression test (EleutherAI/lm-evaluation-harness,
tests/models/test_huggingface.py, Test_HFLM.test_logliklihood_rolling), simplified: the model run
(HFLM("EleutherAI/pythia-70m").loglikelihood_rolling on wikitext, limit=10) is the CI job's step that
writes artifacts/wikitext_loglikelihood_rolling.json; the expected values and the comparison are the suite's."""

from __future__ import annotations

import json

import numpy as np


class Test_HFLM:
    ROLLING_RES = [
        -3603.6328125,
        -19779.23974609375,
        -8834.16455078125,
        -27967.591796875,
        -7636.794982910156,
        -9491.93505859375,
        -41043.4248046875,
        -8397.689819335938,
        -45969.47155761719,
        -7158.90625,
    ]

    def test_logliklihood_rolling(self) -> None:
        res = json.load(open("artifacts/wikitext_loglikelihood_rolling.json"))
        assert np.allclose(res, self.ROLLING_RES, atol=1e-1)
