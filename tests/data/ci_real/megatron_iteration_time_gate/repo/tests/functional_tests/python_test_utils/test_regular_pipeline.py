"""Megatron-LM's regular pipeline (NVIDIA/Megatron-LM,
tests/functional_tests/python_test_utils/test_regular_pipeline.py), simplified: its checks
dict kept (iteration-time ApproximateTest(atol=2.0, rtol=0), memory and lm loss within 5%,
num-zeros within 20%), common.pipeline written as numpy.testing.assert_allclose per metric."""

import numpy as np


def test_regular_pipeline(golden_values, tensorboard_logs):
    checks = {
        "iteration-time": {"atol": 2.0, "rtol": 0},
        "mem-allocated-bytes": {"atol": 0, "rtol": 0.05},
        "mem-max-allocated-bytes": {"atol": 0, "rtol": 0.05},
        "lm loss": {"atol": 0, "rtol": 0.05},
        "num-zeros": {"atol": 0, "rtol": 0.20},
    }
    for metric, tol in checks.items():
        golden = np.array(list(golden_values[metric]["values"].values()))
        actual = np.array(list(tensorboard_logs[metric]["values"].values()))
        np.testing.assert_allclose(
            actual, golden, rtol=tol["rtol"], atol=tol["atol"], err_msg=metric
        )
