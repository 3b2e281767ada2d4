"""verdict.policy._metric_out_of_range (V09b) for an overlap score of masks, and the console reader's
``name - value`` records (formats.consolelog.parser._dash_record), on report b48-07 (tests/data/reports):

segmentation_models.pytorch's epoch runners print ``dice_loss - -10.63, iou_score - -1.209``. Before: the
line was read as nothing (no ``:``, ``=`` or ``|`` pair; taken for start-up configuration), so
unknown/inconclusive "no metric was logged at all". IoU = TP / (TP + FP + FN) with TP = sum(y p), FP =
sum(p) - TP, FN = sum(y) - TP stays in [0, 1] for targets and predictions in [0, 1]; the prediction
passes the metric's activation, so a negative IoU means targets outside [0, 1] (0/255 masks): data_config,
not a bug in the metric's code. The outcome is unknown: one record, no curve to judge the training by.
"""

from __future__ import annotations

import pytest
from report_helpers import report_case, report_verdict

from mlaudit_core.formats.consolelog import load_logs


def test_smp_dash_records_are_read_as_metrics(tmp_path):
    case = report_case("b48-07")
    run = load_logs([case / "train.log"])
    assert {k: run.series(k).values.tolist() for k in run.metrics.keys} == {
        "train/dice_loss": [-10.63],
        "train/iou_score": [-1.209],
    }
    # records under epoch headers make curves
    log = tmp_path / "smp.log"
    log.write_text(
        "Epoch: 0\ndice_loss - 0.6312, iou_score - 0.2091\n"
        "Epoch: 1\ndice_loss - 0.5013, iou_score - 0.3102\n"
        "Epoch: 2\ndice_loss - 0.4113, iou_score - 0.4202\n"
    )
    run = load_logs([log])
    assert run.series("train/iou_score").values.tolist() == [0.2091, 0.3102, 0.4202]
    # Keras joins ``name: value`` pairs with `` - ``: read by its colons as before (b48-04's lines)
    keras = tmp_path / "keras.log"
    keras.write_text(
        "\n".join(
            ln
            for ln in (report_case("b48-04") / "train.log").read_text().splitlines()
            if ln.startswith(("Epoch", "78/78"))
        )
    )
    run = load_logs([keras])
    assert run.series("val/accuracy").values.tolist()[-1] == 0.0786
    assert not any("dice" in k or k.endswith("/3s") for k in run.metrics.keys)


def test_a_negative_iou_is_the_masks_format_not_the_metric_code():
    v = report_verdict(report_case("b48-07"))
    assert (v["rule"], v["cause"]) == ("V09b", "data_config"), v["summary"]
    assert "iou_score reaches -1.209" in v["summary"] and "0/255" in v["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="b48-07 with its thread's '# reporter:' lines read is an excerpt of a report, and V09b "
    "reads an excerpt with no judgeable curve as running (the convention of "
    "tests/test_evidence_excerpt.py and tests/detectors/test_li007_impossible_values.py); the label "
    "accepts unknown, diverged or unstable: whether one impossible value in an excerpt says the run "
    "was going is open",
)
def test_a_negative_iou_in_an_excerpt_with_no_curve_is_unknown():
    v = report_verdict(report_case("b48-07"))
    assert v["outcome"] == "unknown", v["summary"]
