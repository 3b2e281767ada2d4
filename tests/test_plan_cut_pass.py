"""plan.cut_pass: a console whose per-pass batch counter (``Epoch 1 [300/469]``) stops more than one
printing interval short of the pass's end, after earlier passes printed theirs to the end, was cut
while that pass ran; the verdict then reads the run as stopped (crashed/inconclusive), never succeeded.

Real input: own corpus f21b1-11, the console of a DCGAN on MNIST (469 batches per epoch, a loss line
every 100 batches) that ends at ``Epoch 1 [300/469]`` inside a tensor dump, with no error and no end.
"""

from __future__ import annotations

from functools import cache

from realworld_helpers import own_run

from mlaudit_core.audit import audit
from mlaudit_core.plan import cut_pass
from mlaudit_core.report import Outcome


@cache
def _run(prefix: str):
    return own_run(prefix)


def _lines(prefix: str) -> list[str]:
    return [c.text for c in _run(prefix).console]


def test_cut_pass_reads_the_dcgan_console_cut_at_batch_300_of_469():
    why = cut_pass(_lines("f21b1-11"))
    assert why is not None and "batch 300 of the 469" in why


def test_cut_pass_run_is_stopped_not_succeeded():
    v = audit(_run("f21b1-11")).verdict
    assert v.outcome is Outcome.CRASHED and v.cause.value == "inconclusive"
    assert "ends inside that pass" in v.summary


def test_cut_pass_needs_an_earlier_pass_printed_to_its_end():
    """The same console cut inside its first pass: no earlier pass shows where this loop's passes end."""
    lines = _lines("f21b1-11")
    first = [t for t in lines if not t.startswith("Epoch 1 ")]
    assert cut_pass(first) is None


def test_cut_pass_last_print_of_a_pass_is_its_end():
    """A loop printing every 100 of 469 batches ends each pass at 400: a console whose last counter
    is there ended with its pass, and ``Epoch 12/40`` alone is a plan counter, not epoch 1 at 2/40."""
    lines = [
        f"Epoch {e} [{k}/469] loss_D: 0.1 loss_G: 2.0" for e in range(3) for k in range(0, 469, 100)
    ]
    assert cut_pass(lines) is None
    assert cut_pass([f"Epoch {e}/40 loss 1.0" for e in range(1, 13)]) is None


def test_cut_pass_reads_the_imagenet_example_and_pytorch_gan_forms():
    meter = [f"Epoch: [{e}][{k:>4}/480]\tLoss 2.0" for e in range(2) for k in range(0, 480, 10)]
    assert cut_pass(meter + ["Epoch: [2][  10/480]\tLoss 2.0", "Epoch: [2][  20/480]\tLoss 2.0"])
    gan = [
        f"[Epoch {e}/200] [Batch {k}/938] [D loss: 0.3]"
        for e in range(2)
        for k in range(0, 938, 100)
    ]
    assert cut_pass(gan + ["[Epoch 2/200] [Batch 0/938] [D loss: 0.3]"]) is not None
    assert (
        cut_pass(gan + ["[Epoch 2/200] [Batch 0/938] [D loss: 0.3]", "Training finished."]) is None
    )
