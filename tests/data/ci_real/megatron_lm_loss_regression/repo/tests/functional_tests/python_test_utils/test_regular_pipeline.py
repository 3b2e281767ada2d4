"""Megatron-LM's regular-pipeline golden-value check (NVIDIA/Megatron-LM,
tests/functional_tests/python_test_utils/test_regular_pipeline.py), simplified: the
ApproximateTest(atol_func=approximate_threshold(rtol=0.05)) on "lm loss" written as pytest.approx,
golden values read from the test case's golden_values_dev_dgx_a100.json, the run's TensorBoard
scalars from tensorboard_logs.json (written by the training job)."""

import json

import pytest

GOLDEN = json.load(
    open(
        "tests/functional_tests/test_cases/gpt/gpt3_mcore_te_tp2_pp2/golden_values_dev_dgx_a100.json"
    )
)


def test_regular_pipeline():
    tensorboard_logs = json.load(open("tensorboard_logs.json"))
    golden = list(GOLDEN["lm loss"]["values"].values())
    actual = list(tensorboard_logs["lm loss"]["values"].values())
    assert actual == pytest.approx(golden, rel=0.05)
