"""verdict.policy: ``frozen_loss`` (V13, a full-precision training loss bitwise identical at every record
is correctness_bug) and ``_at_uniform_guess`` (V19e, a classifier whose loss starts and ends at the
uniform guess's ln K is underfit).

Real input from the own corpus (tests/data/realworld): a Lightning CSVLogger run whose
train_loss_batch is 16.74222755432129 at all 74 records (f8b2-17, labelled plateaued|underfit /
correctness_bug), an HF Trainer run that ends inside its warm-up with the loss 1.096 -> 1.033 on 3
classes (f8b1-15, labelled underfit), a BERT console whose binary loss ends at 0.633 with the
validation accuracy 0.501 (f7b1-15, labelled underfit / data_config), and runs that must keep their
verdicts: AlexNet stuck at ln 10 printed to 4 decimals (wb04, underfit / model_convergence) and a
every labelled healthy HF trainer_state run.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _run(ident: str):
    (lab,) = [x for x in LABELS if x["id"].startswith(ident)]
    runs = load_path(REAL / lab["path"]).runs
    return runs[-1][1]


def test_a_loss_identical_to_the_last_bit_is_a_correctness_bug():
    run = _run("f8b2-17-")
    s = run.metrics.series("train_loss_batch").finite().values
    assert len(s) == 74 and (s == s[0]).all()
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value, v.rule) == ("underfit", "correctness_bug", "V13"), (
        v.summary
    )
    assert "16.74222755432129" in v.summary


def test_a_loss_rounded_for_display_at_ln_k_is_no_frozen_loss():
    """wb04: AlexNet at 2.3026 (= ln 10, four decimals) for most epochs: a collapse to the uniform
    guess, judged by the underfit rules, not a frozen value."""
    run = _run("wb04-")
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary


def test_a_run_ending_in_warm_up_at_ln_3_is_underfit():
    run = _run("f8b1-15-")
    v = audit(run).verdict
    assert (v.outcome.value, v.rule) == ("underfit", "V19e"), v.summary
    assert v.cause.value == "model_convergence"  # eval accuracy 0.74 beats chance (1/3)
    assert "ln 3" in v.summary


def test_a_binary_loss_at_ln_2_with_validation_at_chance_is_a_data_problem():
    run = _run("f7b1-15-")
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value, v.rule) == ("underfit", "data_config", "V19e"), (
        v.summary
    )


def test_classifiers_that_left_the_uniform_guess_are_not_at_it():
    """Every labelled healthy trainer_state run with a class count stays out of V19e: their losses end
    well below 0.9 ln K."""
    healthy = [
        x
        for x in LABELS
        if x.get("kind") == "trainer_state"
        and x["outcome_any_of"] == ["succeeded"]
        and not x["id"].startswith("f9")
    ]
    assert healthy
    for lab in healthy:
        for _, run in load_path(REAL / lab["path"]).runs:
            v = audit(run).verdict
            assert v.rule != "V19e", (lab["id"], v.summary)
