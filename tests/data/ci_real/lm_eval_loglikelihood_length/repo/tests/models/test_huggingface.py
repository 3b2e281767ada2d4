"""lm-evaluation-harness's HFLM regression test (EleutherAI/lm-evaluation-harness,
tests/models/test_huggingface.py, Test_HFLM.test_logliklihood), simplified: the model run
(HFLM("EleutherAI/pythia-70m").loglikelihood on arc_easy, limit=10) is the CI job's step that
writes artifacts/arc_easy_loglikelihood.json; the expected values and the comparison are the suite's."""

from __future__ import annotations

import json

import numpy as np


class Test_HFLM:
    MULTIPLE_CH_RES = [
        -41.902435302734375,
        -42.939308166503906,
        -33.914180755615234,
        -37.07139205932617,
        -22.95258331298828,
        -20.342208862304688,
        -14.818366050720215,
        -27.942853927612305,
        -15.80704116821289,
        -15.936427116394043,
        -13.052018165588379,
        -18.04828453063965,
        -13.345029830932617,
        -13.366025924682617,
        -12.127134323120117,
        -11.872495651245117,
        -47.10598373413086,
        -47.76410675048828,
        -36.4406852722168,
        -50.0289421081543,
        -16.72093963623047,
        -18.535587310791016,
        -26.46993637084961,
        -20.355995178222656,
        -17.757919311523438,
        -21.80595588684082,
        -33.1990852355957,
        -39.28636932373047,
        -14.759679794311523,
        -16.753942489624023,
        -11.486852645874023,
        -15.42177677154541,
        -13.15798282623291,
        -15.887393951416016,
        -15.28614616394043,
        -12.339089393615723,
        -44.59441375732422,
        -55.40888214111328,
        -52.70050811767578,
        -56.25089645385742,
    ]

    def test_logliklihood(self) -> None:
        _res = json.load(open("artifacts/arc_easy_loglikelihood.json"))
        _RES = self.MULTIPLE_CH_RES
        assert np.allclose(_res, _RES, atol=1e-2)
        # check indices for Multiple Choice
        argmax_RES, argmax_res = (
            np.argmax(np.array(_RES).reshape(-1, 4), axis=1),
            np.argmax(np.array(_res).reshape(-1, 4), axis=1),
        )
        assert (argmax_RES == argmax_res).all()
