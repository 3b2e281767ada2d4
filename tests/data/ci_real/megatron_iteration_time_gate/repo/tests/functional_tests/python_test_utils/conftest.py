"""Fixtures of Megatron-LM's functional tests (NVIDIA/Megatron-LM,
tests/functional_tests/python_test_utils/conftest.py), simplified: fixed paths instead of the
--golden-values-path / --tensorboard-path options."""

import json

import pytest

GOLDEN_VALUES_PATH = (
    "tests/functional_tests/test_cases/gpt/gpt3_mcore_te_tp2_pp2/golden_values_dev_dgx_a100.json"
)


@pytest.fixture
def golden_values():
    with open(GOLDEN_VALUES_PATH) as f:
        return json.load(f)


@pytest.fixture
def tensorboard_logs():
    with open("tensorboard_logs.json") as f:
        return json.load(f)
