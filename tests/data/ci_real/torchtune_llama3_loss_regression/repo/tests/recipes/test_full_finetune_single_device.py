"""torchtune's full-finetune recipe loss test (pytorch/torchtune,
tests/recipes/test_full_finetune_single_device.py, TestFullFinetuneSingleDeviceRecipe), simplified:
the recipe run (`tune run full_finetune_single_device ... seed=9`) is the CI job's training step,
which writes the per-step losses of its metric logger to artifacts/<config>/loss_values.json;
the expected values and the comparison are torchtune's."""

import json
from pathlib import Path

import pytest
import torch


class TestFullFinetuneSingleDeviceRecipe:
    def _fetch_expected_loss_values(self, model_type):
        loss_values_map = {
            "llama2": [10.5201, 10.5217, 10.4945, 10.5136],
            "llama3": [11.9839, 11.9684, 11.9596, 11.9366],
        }

        return loss_values_map[model_type]

    @pytest.mark.integration_test
    @pytest.mark.parametrize(
        "config, model_type, ckpt_type",
        [
            ("llama2/7B_full_low_memory", "llama2", "meta"),
            ("llama3/8B_full_single_device", "llama3", "tune"),
        ],
    )
    def test_loss(self, config, model_type, ckpt_type):
        log_file = Path("artifacts") / config.replace("/", "_") / "loss_values.json"
        loss_values = json.load(open(log_file))
        expected_loss_values = self._fetch_expected_loss_values(model_type)

        torch.testing.assert_close(loss_values, expected_loss_values, rtol=1e-4, atol=1e-4)
