"""Liger-Kernel's convergence test (linkedin/Liger-Kernel, test/convergence/test_mini_models.py,
test_mini_model, with the bf16 tolerances of that file's mini_llama3 row at the time:
loss_atol=1e-8, loss_rtol=1e-5), simplified: the two training runs (Hugging Face modules, then
Liger's kernels; 32 steps, bf16) are the CI job's steps that write their per-step losses to
test/convergence/golden/mini_llama3_bf16_hf_loss.json and artifacts/mini_llama3_bf16_liger_loss.json;
assert_verbose_allclose is written as torch.testing.assert_close with the same atol/rtol."""

import json

import pytest
import torch


@pytest.mark.parametrize(
    "model_name, num_steps, lr, dtype, loss_atol, loss_rtol",
    [
        ("mini_llama3", 32, 1e-4, torch.bfloat16, 1e-8, 1e-5),
    ],
)
def test_mini_model(model_name, num_steps, lr, dtype, loss_atol, loss_rtol):
    expected_output = {
        "loss": json.load(open(f"test/convergence/golden/{model_name}_bf16_hf_loss.json"))
    }
    actual_output = {"loss": json.load(open(f"artifacts/{model_name}_bf16_liger_loss.json"))}

    # Compare the loss of every step
    torch.testing.assert_close(
        torch.tensor([actual_output["loss"]]),
        torch.tensor([expected_output["loss"]]),
        atol=loss_atol,
        rtol=loss_rtol,
    )
