"""Roles from name tokens and values (mlaudit_core.roles.parse_name, roles_of, AliasTable, as_fraction,
is_higher_better, is_counter, unplaced): names outside any list, as frameworks and research code write
them. Fast, no framework; the real framework runs are in tests/detectors/test_roles_real_runs.py."""

from __future__ import annotations

import numpy as np
import pytest

from mlaudit_core.roles import (
    AliasTable,
    Role,
    as_fraction,
    is_counter,
    is_higher_better,
    parse_name,
    roles_of,
    unplaced,
)
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity

#: (key, split, family) -- keys written by frameworks and research code (Keras metric names, timm,
#: Lightning self.log names, torchmetrics, HF compute_metrics, nanoGPT, fairseq, ASR and MT loops)
PARSED = [
    ("val_top1", "eval", "acc"),
    ("val_sparse_top_k_categorical_accuracy", "eval", "acc"),
    ("sparse_top_k_categorical_accuracy", None, "acc"),
    ("valLoss", "eval", "loss"),
    ("trainLoss", "train", "loss"),
    ("Loss_val", "eval", "loss"),
    ("eval_wer", "eval", "error"),
    ("test/cer", "eval", "error"),
    ("dev_bleu", "eval", "score"),
    ("eval/rougeLsum", "eval", "score"),
    ("holdout-auc", "eval", "score"),
    ("val/bpb", "eval", "loss"),
    ("valid_bits_per_byte", "eval", "loss"),
    ("val/acc@1", "eval", "acc"),
    ("top-5 accuracy/validation", "eval", "acc"),
    ("metrics/mAP50-95(B)", None, "score"),
    ("val_mIoU", "eval", "score"),
    ("eval_f1_macro", "eval", "score"),
    ("train/top1_err", "train", "error"),
    ("learning rate", None, "lr"),
    ("lr-AdamW", None, "lr"),
    ("train/grad_norm", "train", "gradnorm"),
    ("gradient-norm", None, "gradnorm"),
    ("train_samples_per_second", "train", "throughput"),
    ("tokens/s", None, "throughput"),
    ("eval_samples_per_second", "eval", "throughput"),
    ("time/step", None, "steptime"),
    ("data_time", None, "datatime"),
    ("epoch", None, "epoch"),
    ("trainer/global_step", None, "counter"),
    ("num_input_tokens_seen", None, "counter"),
    ("hp_metric", None, None),
    ("val_score", "eval", None),
]


@pytest.mark.parametrize("key,split,family", PARSED)
def test_parse_name_reads_split_and_head(key, split, family):
    p = parse_name(key)
    assert (p.split, p.family) == (split, family), p


def test_roles_of_names_no_alias_list_held():
    keys = [
        "train_loss",
        "val_top1",
        "lr-AdamW",
        "epoch",
        "num_input_tokens_seen",
        "eval_samples_per_second",
    ]
    table = AliasTable()
    counts = dict.fromkeys(keys, 20)
    got = {r: table.resolve(r, keys, counts) for r in Role}
    assert got[Role.TRAIN_LOSS] == "train_loss"
    assert got[Role.VAL_ACCURACY] == "val_top1"
    assert got[Role.LEARNING_RATE] == "lr-AdamW"
    assert got[Role.EPOCH] == "epoch"
    assert got[Role.THROUGHPUT] is None  # the evaluation loop's throughput is not the training's
    assert got[Role.VAL_LOSS] is None


def test_heldout_error_rate_plays_the_validation_loss_only_without_a_loss():
    table = AliasTable()
    assert table.resolve(Role.VAL_LOSS, ["loss", "eval_wer"]) == "eval_wer"
    assert table.resolve(Role.VAL_LOSS, ["loss", "eval_wer", "eval_loss"]) == "eval_loss"
    # a bare score is held-out unless its evaluation twin is logged (Keras auc / val_auc)
    assert table.resolve(Role.VAL_ACCURACY, ["loss", "bleu"]) == "bleu"
    assert table.resolve(Role.VAL_ACCURACY, ["loss", "auc", "val_auc"]) == "val_auc"
    assert table.resolve(Role.TRAIN_ACCURACY, ["loss", "auc", "val_auc"]) == "auc"


def test_ranking_and_exclusions():
    table = AliasTable()
    # the COCO primary metric before single-threshold APs; precision/recall last
    keys = ["metrics/precision(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)", "metrics/recall(B)"]
    assert table.candidates(Role.VAL_ACCURACY, keys)[0] == "metrics/mAP50-95(B)"
    assert table.candidates(Role.VAL_ACCURACY, keys)[-2:] == [
        "metrics/precision(B)",
        "metrics/recall(B)",
    ]
    # a running best never plays a role; the held-out _epoch value before its per-batch _step twin
    assert table.resolve(Role.VAL_ACCURACY, ["max_val_acc"]) is None
    assert (
        table.resolve(
            Role.VAL_LOSS,
            ["val_loss_step", "val_loss_epoch"],
            {"val_loss_step": 90, "val_loss_epoch": 9},
        )
        == "val_loss_epoch"
    )
    # loss before nll/ce before perplexity; a whole loss before its components
    assert (
        table.resolve(Role.VAL_LOSS, ["val_ppl", "val_nll", "val/box_loss", "val_loss"])
        == "val_loss"
    )
    assert table.resolve(Role.VAL_LOSS, ["val_ppl", "val_nll"]) == "val_nll"
    # momentum of the LR monitor and a scheduler counter are not learning rates
    assert (
        table.resolve(Role.LEARNING_RATE, ["lr-Adam-momentum", "lr_scheduler/last_epoch"]) is None
    )
    # user patterns still come first
    assert (
        AliasTable({"val_accuracy": ["val_score"]}).resolve(
            Role.VAL_ACCURACY, ["val_score", "val_acc"]
        )
        == "val_score"
    )


def test_roles_of_sub_module_accuracy_without_split_is_not_the_task_accuracy():
    """detectron2's fast_rcnn/cls_accuracy (region proposals, mostly background) next to bbox/AP."""
    roles = roles_of(["fast_rcnn/cls_accuracy", "bbox/AP", "total_loss"])
    assert roles["fast_rcnn/cls_accuracy"] == ()
    assert roles["bbox/AP"] == (Role.VAL_ACCURACY,)


def test_values_percent_direction_and_counters():
    v, pct = as_fraction("val_top1", [12.5, 55.0, 76.0])
    assert pct and np.allclose(v, [0.125, 0.55, 0.76])
    assert as_fraction("val_loss", [12.5, 55.0])[1] is False
    assert (
        is_higher_better("dev_bleu")
        and is_higher_better("val_top1")
        and is_higher_better("val_score")
    )
    assert (
        not is_higher_better("eval_wer")
        and not is_higher_better("val/bpb")
        and not is_higher_better("x")
    )
    assert is_counter([0, 0, 1, 1, 2]) and is_counter([10, 20, 30])
    assert not is_counter([0.5, 0.4, 0.3]) and not is_counter([3, 3, 3]) and not is_counter([1, 2])


def test_unplaced_names_heldout_series_it_could_not_place():
    keys = (
        ["train_loss"] * 5
        + ["val_score"] * 5
        + ["global_batch"] * 5
        + ["epoch"] * 5
        + ["my_thing"] * 5
    )
    vals = (
        [1.0, 0.8, 0.6, 0.5, 0.4]
        + [0.3, 0.5, 0.6, 0.7, 0.7]
        + [1, 2, 3, 4, 5]
        + [0, 0, 1, 1, 2]
        + [3.0, 1.0, 2.0, 5.0, 4.0]
    )
    run = RunData(RunIdentity("t", "u"), metrics=MetricTable(keys, list(range(5)) * 5, vals))
    assert unplaced(run, heldout_only=True) == ["val_score"]
    assert unplaced(run) == [
        "my_thing",
        "val_score",
    ]  # global_batch counts (values), epoch is a counter


def test_mi001_names_the_heldout_series_it_could_not_place():
    """The report says which held-out series had no role (issue 26: 'the report says which series it
    could not place'), so the user can map it; the training loss is still judged."""
    from mlaudit_core.audit import audit

    n = 30
    keys = ["train_loss"] * n + ["val_score"] * n
    vals = [2.0 - 0.05 * i for i in range(n)] + [0.3 + 0.01 * i for i in range(n)]
    run = RunData(RunIdentity("t", "u"), metrics=MetricTable(keys, list(range(n)) * 2, vals))
    rep = audit(run)
    mi = [f for f in rep.findings if f.code == "MI001"]
    assert mi and "could not place val_score" in mi[0].message
    assert mi[0].facts["unplaced"] == ["val_score"]


def test_a_game_agents_win_rate_is_its_task_metric():
    """A win rate (``win rate``, ``win_ratio``, ``avg(num_wins)`` over N games: realworld f11b1-17,
    a Q-learning agent's console) plays the held-out task metric as an episode return does, and
    the agent's losses then play no role (surrogate objectives of an agent need not fall)."""
    for key in ("win rate", "eval/win_ratio", "train/avg_num_wins", "WinRate"):
        assert parse_name(key).family == "reward", key
    roles = roles_of(["train/avg_num_wins", "train/avg_utility", "loss"])
    assert roles["train/avg_num_wins"] == (Role.VAL_ACCURACY,)
    assert roles["loss"] == () and roles["train/avg_utility"] == ()
    assert roles_of(["winning_streak"])["winning_streak"] == ()


def test_parse_name_reads_a_lone_L_as_the_loss():
    """OpenJERE's tqdm postfix (own f13b2-06, a real console) prints its objective as the papers
    write it, ``L = L_crf + L_selection``: the bare ``L`` is the training loss, the subscripted ones
    its terms; ``l1``/``lr``/``lm`` stay what they were."""
    from pathlib import Path

    from mlaudit_core.formats import load_path

    log = Path(__file__).parent / "data/realworld/runs/WindChimeRan--OpenJERE/nohup.out"
    run = load_path(log).runs[0][1]
    assert run.key_for(Role.TRAIN_LOSS) == "train/l"
    s = run.series("train/l").by_step()
    assert float(s.values[0]) > 2000 and float(s.values[-1]) < 8
    assert parse_name("train/l_crf").family == "loss" and parse_name("train/l_crf").qualifier_rank
    assert [parse_name(k).family for k in ("l1", "lm", "layer")] == [None, None, None]
    # report b9-05 (a real console): box sizes ``x= y= z= l= h= w=`` printed beside the losses
    boxes = roles_of(["train/x", "train/y", "train/z", "train/l", "train/h", "train/w"])
    assert boxes["train/l"] == ()
