"""torchtune's full-finetune resume test (pytorch/torchtune,
tests/recipes/test_full_finetune_single_device.py, TestFullFinetuneSingleDeviceRecipe.test_training_state_on_resume),
simplified: the resumed recipe run (`tune run full_finetune_single_device ... resume_from_checkpoint=True`)
is the CI job's step that writes the per-step losses of its metric logger to
artifacts/resume/loss_values.json; the expected values and the comparison are torchtune's."""

import json

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
    @pytest.mark.parametrize("optimizer_in_bwd", [True, False])
    def test_training_state_on_resume(self, optimizer_in_bwd):
        log_file = f"artifacts/resume_optimizer_in_bwd_{optimizer_in_bwd}/loss_values.json"
        expected_loss_values = self._fetch_expected_loss_values("llama2")[2:]

        loss_values = json.load(open(log_file))
        torch.testing.assert_close(loss_values, expected_loss_values, rtol=1e-4, atol=1e-4)
