"""Structure inference of the console reader (mlaudit_core/formats/consolelog/infer.py).

Unit tests of the bar splitter and the template miner, the parser's use of them (catalogue
entries switched off per framework, step headers, bounded templates), and bad input. The
framework-made logs are in tests/test_consolelog_frameworks.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlaudit_core.formats.consolelog import load_logs, parse_lines
from mlaudit_core.formats.consolelog.formats import CATALOG, FRAMEWORK_FORMATS
from mlaudit_core.formats.consolelog.infer import (
    MAX_PENDING,
    TemplateMiner,
    clean_terminal,
    redraws,
    template_key,
)
from mlaudit_core.formats.consolelog.parser import LogParser


def _values(res, key):
    s = res.metrics.series(key)
    return [int(x) for x in s.steps], [round(float(v), 6) for v in s.values]


# --- bar splitter ------------------------------------------------------------------------------
def test_clean_terminal_removes_colour_and_turns_backspaces_and_cursor_codes_into_redraws():
    keras3 = (
        "\x1b[1m 1/32\x1b[0m \x1b[37m━━━━\x1b[0m \x1b[1m6s\x1b[0m 199ms/step - loss: 0.69\x08\x08\x08\r"
        "\x1b[1m32/32\x1b[0m \x1b[32m━━━━\x1b[0m \x1b[1m2s\x1b[0m 70ms/step - loss: 0.02"
    )
    out = clean_terminal(keras3)
    assert "\x1b" not in out and "\x08" not in out
    assert [p for p in out.split("\r") if p.strip()] == [
        " 1/32 ━━━━ 6s 199ms/step - loss: 0.69",
        "32/32 ━━━━ 2s 70ms/step - loss: 0.02",
    ]
    rich = "Epoch 1 ━━ 5/50 loss: 0.5\x1b[1A\x1b[2KEpoch 1 ━━ 50/50 loss: 0.3"
    assert clean_terminal(rich).count("\r") >= 1
    assert clean_terminal("plain line") == "plain line"


def test_redraws_mark_every_state_but_the_last_of_one_bar():
    line = (
        "\r".join(f"{i}/4 ━━━━ loss: {1 - i / 10:.2f}" for i in range(1, 5))
        + "\rval_loss: 0.5 done"
    )
    parts = list(redraws(line))
    assert [sup for _, sup in parts] == [True, True, True, False, False]
    assert parts[3][0] == "4/4 ━━━━ loss: 0.60"


def test_template_key_masks_numbers_positions_bars_and_times():
    a = template_key("Epoch 3/10  ━━━━━━━ 12/50 0:00:02 • loss=0.3124 lr=1e-4")
    b = template_key("Epoch 4/10  ━━ 50/50 0:01:12 • loss=0.2 lr=5e-5")
    assert a == b
    assert template_key("loss=0.3") != template_key("acc=0.3")


# --- template miner ------------------------------------------------------------------------------
def test_miner_reads_xgboost_lines_with_an_iteration_counter_and_names_the_last_eval_set_val():
    miner = TemplateMiner()
    got = []
    for i in range(4):
        got += miner.add(
            f"[{i}]\tvalidation_0-logloss:{0.6 - i / 20:.5f}\tvalidation_1-logloss:{0.65 - i / 50:.5f}"
        )
    assert [g.step for g in got] == [0, 1, 2, 3]
    assert got[0].rec == {"eval_set_0_logloss": 0.6, "val_logloss": 0.65}


def test_miner_leaves_prose_warnings_code_and_configuration_alone():
    miner = TemplateMiner()
    lines = []
    for i in range(5):
        lines += [
            f"Number of data points in the train set: {80 + i}, number of used features: 10",
            f"UserWarning: This DataLoader will create {i} worker processes in total",
            f"    loss = criterion(out, y) * {i}.5",
            "  lr: 0.01",  # a configuration dump printed again at every relaunch
            f"Downloading shard {i} of 10",
        ]
    assert not [g for line in lines for g in miner.add(line)]
    assert MAX_PENDING >= 2


def test_miner_cap_counts_lines_of_templates_past_it():
    miner = TemplateMiner(max_templates=3)
    for i in range(10):
        miner.add(f"metric_{'abcdefghij'[i]} value: {i}.5")
    assert len(miner.templates) == 3 and miner.dropped == 7
    assert "3 distinct line templates" in miner.summary()


# --- the parser with inference -------------------------------------------------------------------
def test_lightgbm_lines_become_train_and_validation_series_on_their_iteration():
    lines = [
        "[LightGBM] [Info] Number of positive: 37, number of negative: 43",
        "[LightGBM] [Warning] No further splits with positive gain, best gain: -inf",
    ]
    lines += [
        f"[{i}]\ttraining's binary_logloss: {0.5 / i:.6f}\tvalid_1's binary_logloss: {0.6 + i / 100:.6f}"
        for i in range(1, 11)
    ]
    res = parse_lines(lines)
    assert set(res.metrics.keys) == {"train/binary_logloss", "val/binary_logloss"}
    assert _values(res, "val/binary_logloss") == (
        list(range(1, 11)),
        [round(0.6 + i / 100, 6) for i in range(1, 11)],
    )


def test_lightgbm_eval_lines_pasted_without_their_counter_are_one_series():
    """Report b11-04 (LightGBM #677): three ``valid_0's auc: v`` lines pasted without ``[N]``. Before,
    the first two were read as val/auc and the third, once training had 'started', by the generic
    reader as ``train/s_auc``."""
    from pathlib import Path

    (case,) = (Path(__file__).resolve().parent / "data" / "reports").glob("b11-04-*")
    res = parse_lines((case / "train.log").read_text().splitlines())
    assert set(res.metrics.keys) == {"val/auc"}
    assert _values(res, "val/auc")[1] == [0.833976, 0.833972, 0.833968]


def test_step_header_gives_the_step_of_the_indented_lines_under_it():
    lines = []
    for s in (100, 200, 300):
        lines += [f"step {s}", f"    loss={3 - s / 200:.3f}", f"    grad_norm={1 + s / 1000:.3f}"]
    res = parse_lines(lines)
    assert _values(res, "train/loss") == ([100, 200, 300], [2.5, 2.0, 1.5])
    assert _values(res, "train/grad_norm")[0] == [100, 200, 300]


def test_pairs_without_spaces_and_glued_values_are_read():
    lines = [f"it:{i} loss:{2 - i / 10:.3f} acc{0.5 + i / 100:.3f}" for i in range(1, 6)]
    res = parse_lines(lines)
    assert _values(res, "train/loss") == ([1, 2, 3, 4, 5], [1.9, 1.8, 1.7, 1.6, 1.5])
    assert _values(res, "train/accuracy")[1] == [0.51, 0.52, 0.53, 0.54, 0.55]


@pytest.mark.parametrize("framework", ["hf", "json"])
def test_dict_lines_are_read_with_their_catalogue_entries_switched_off(framework):
    if framework == "hf":
        lines = [
            str({"loss": 2 - i / 10, "learning_rate": 1e-4, "epoch": i / 10}) for i in range(1, 6)
        ]
    else:
        lines = [
            json.dumps({"step": i * 10, "loss": 2 - i / 10, "val_loss": 2.1 - i / 20})
            for i in range(1, 6)
        ]
    on = parse_lines(lines)
    off = parse_lines(lines, disabled_formats=[framework])
    assert (
        _values(off, "train/loss")[1] == _values(on, "train/loss")[1] == [1.9, 1.8, 1.7, 1.6, 1.5]
    )
    assert not off.formats.get("hf-dict") and not off.formats.get("json-lines")
    assert off.formats["inferred"] or off.formats["generic"]


def test_keras_verbose1_bars_with_colour_read_with_and_without_the_keras_entries():
    lines = []
    for e in range(1, 4):
        lines.append(f"Epoch {e}/3")
        states = [
            f"\x1b[1m{b}/8\x1b[0m \x1b[32m━━━━\x1b[0m \x1b[1m1s\x1b[0m 9ms/step - accuracy: {0.5 + b / 100:.4f}"
            f" - loss: {1 - e / 10 - b / 100:.4f}" + "\x08" * 20
            for b in range(1, 9)
        ]
        final = (
            f"\x1b[1m8/8\x1b[0m \x1b[32m━━━━\x1b[0m \x1b[1m1s\x1b[0m 9ms/step - accuracy: {0.58:.4f} - loss: "
            f"{1 - e / 10 - 0.08:.4f} - val_accuracy: {0.4 + e / 10:.4f} - val_loss: {1.2 - e / 10:.4f}"
        )
        lines.append("\r" + "\r".join(states) + "\r" + final)
    for disabled in (None, ["keras"]):
        res = parse_lines(lines, disabled_formats=disabled)
        steps, vals = _values(res, "val/loss")
        assert vals == [1.1, 1.0, 0.9], disabled
        assert steps == sorted(steps) and len(set(steps)) == 3
        assert _values(res, "train/loss")[1] == [
            round(1 - e / 10 - 0.08, 4) for e in range(1, 4)
        ], disabled
        assert res.facts["epochs"] == 3


def test_tqdm_bars_are_read_as_structure_when_the_tqdm_entry_is_off():
    """The bar layout is the base layer's: switched off, the catalogue's tqdm entry only takes its
    framework names away (``train_loss_step`` is then ``train/loss_step``, not ``train/loss``); the
    ``loss`` printed beside a ``*loss_step`` is the running mean either way."""
    lines = []
    for e in range(3):
        lines.append(
            "\r".join(
                f"Epoch {e}: {p * 25}%|##   | {p}/4 [00:0{p}<00:01, 3.1it/s, loss={2 - e - p / 10:.2f}, "
                f"train_loss_step={1 - e - p / 10:.2f}]"
                for p in range(5)
            )
        )
    on = parse_lines(lines)
    off = parse_lines(lines, disabled_formats=["tqdm"])
    assert _values(off, "train/loss_running") == _values(on, "train/loss_running")
    assert _values(off, "train/loss_step") == _values(on, "train/loss")
    assert _values(off, "train/loss_step")[0] == [e * 4 + p for e in range(3) for p in range(5)]
    assert off.formats["bar"] and not off.formats["tqdm"]


def test_disabled_formats_accept_ids_and_frameworks_and_reject_unknown_names(monkeypatch):
    ids = {f.id for f in CATALOG}
    assert all(set(v) <= ids for v in FRAMEWORK_FORMATS.values())
    p = LogParser(disabled_formats=["keras", "tqdm"])
    assert p.disabled == {"keras", "keras-epoch-header", "tqdm"}
    with pytest.raises(ValueError, match="no-such-format"):
        LogParser(disabled_formats=["no-such-format"])
    monkeypatch.setenv("MLAUDIT_LOG_DISABLE_FORMATS", "xgboost,hf-dict")
    assert LogParser().disabled == {"hf-dict"}


def test_inference_off_reads_what_the_catalogue_alone_reads():
    lines = [f"[{i}]\tvalidation_0-logloss:{0.6 - i / 20:.5f}" for i in range(5)]
    assert not parse_lines(lines, keep_console=False).metrics.keys == []
    p = LogParser(infer=False)
    p.feed_many(enumerate(lines, 1), "x")
    assert p.result().metrics.keys == []


# --- bad input -------------------------------------------------------------------------------
def test_a_log_with_no_numeric_structure_says_what_was_looked_for(tmp_path):
    log = tmp_path / "prose.log"
    log.write_text("Starting the job\nLoading the data from the bucket\nDone, goodbye\n" * 20)
    run = load_logs([log])
    assert not run.metrics.keys
    (w,) = [w for w in run.warnings if "no metric lines" in w]
    assert "name=value" in w and "N/M" in w and "\n" not in w


def test_many_distinct_lines_stay_within_the_template_cap(tmp_path):
    log = tmp_path / "big.log"
    with open(log, "w") as f:
        for i in range(6000):
            f.write(
                f"{'qwertyuiopasdfghjklzxcvbnm'[i % 26]}{i} metric{chr(97 + i % 26)}{i // 26}: {i}.25\n"
            )
        for i in range(5):
            f.write(f"step {i} loss: {1 / (i + 1):.3f}\n")
    run = load_logs([log])
    assert any("distinct line templates" in n for n in run.notes)
    assert [round(float(v), 3) for v in run.metrics.series("train/loss").values] == [
        1.0,
        0.5,
        0.333,
        0.25,
        0.2,
    ]


def test_non_utf8_and_control_bytes_never_crash_the_reader(tmp_path):
    log = tmp_path / "bytes.log"
    body = b"".join(
        b"[%d]\tvalid_0's auc: 0.%d\xff\xfe\x1b[31m\x08\x07\r\n" % (i, 50 + i) for i in range(8)
    )
    log.write_bytes(b"\x1b]0;title\x07" + body + bytes(range(1, 32)) * 3 + b"\n")
    run = load_logs([log])
    assert run.metrics.keys  # the AUC lines are still read
    assert any("UTF-8" in w or "utf-8" in w for w in run.warnings)


# --- every input path: tracker consoles and live tails use the same inference ----------------
XGB_LINES = [
    f"[{i}]\tvalidation_0-logloss:{0.6 - i / 40:.5f}\tvalidation_1-logloss:{0.62 + i / 50:.5f}"
    for i in range(8)
]


def test_enrich_from_console_adds_inferred_series_to_a_tracker_run():
    """The function the MLflow, W&B and ClearML loaders call on a run's captured console."""
    from mlaudit_core.formats.consolelog import enrich_from_console
    from mlaudit_core.rundata import ConsoleLine, MetricTable, RunData, RunIdentity, RunStatus

    run = RunData(
        identity=RunIdentity(tracker="mlflow", id="r1", name="r1"),
        status=RunStatus.FINISHED,
        metrics=MetricTable.from_series([]),
        console=[ConsoleLine("output.log", i + 1, t) for i, t in enumerate(XGB_LINES)],
    )
    enrich_from_console(run)
    s = run.metrics.series("val/logloss")
    assert [int(x) for x in s.steps] == list(range(8))
    assert "console" in run.derived["val/logloss"]


def test_live_tail_parser_reads_inferred_lines_as_they_arrive(tmp_path):
    """``mlaudit watch PATH --live`` follows a console log with this parser subclass."""
    from mlaudit_core.live.files import _TailParser

    p = _TailParser()
    p.feed(1, XGB_LINES[0], "train.log")
    assert p.take() == []  # one line of a layout is not yet a series
    p.feed(2, XGB_LINES[1], "train.log")
    got = p.take()
    assert {(k, s) for k, s, _, _ in got} == {
        (k, s) for k in ("val/logloss", "val/set_0_logloss") for s in (0, 1)
    }
    p.feed(3, XGB_LINES[2], "train.log")
    assert {k for k, s, _, _ in p.take() if s == 2} == {"val/logloss", "val/set_0_logloss"}


def test_random_text_and_control_characters_never_raise():
    """Lines of random characters (digits, separators, bar glyphs, escapes, quotes, replacement
    characters) through the whole reader: no exception, and no series from noise."""
    import random

    rnd = random.Random(26)
    alphabet = "0123456789.:/=-+|[]{}()'\" \t\r\x08\x1b\x07abcxyzLOSS━█#%\ufffd,;"
    lines = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 120))) for _ in range(3000)]
    res = parse_lines(lines)
    assert res.lines == 3000
    assert len(res.metrics) == 0


def test_split_written_after_the_name_is_the_prefix():
    """litgpt's ``loss train: 1.6`` and ``loss_val`` name the same figures as ``train_loss``/``val_loss``."""
    from mlaudit_core.formats.consolelog.names import canonical

    assert canonical("loss train")[0] == canonical("train_loss")[0] == "train/loss"
    assert canonical("loss_val")[0] == canonical("val_loss")[0] == "val/loss"
    assert canonical("acc_test")[0] == "test/accuracy"
    assert (
        canonical("train_loss_step")[0] == "train/loss_step"
    )  # a prefix wins; the suffix rule is not applied


def test_inferred_template_reads_nan_in_a_numbers_place():
    """Report b3-03 (tests/data/reports): ``INFO: train loss:1.20029`` then ``INFO: train loss:nan``
    lines; the nan lines are the same template's values, not a constant word, so the series keeps them."""
    import math
    from pathlib import Path

    from mlaudit_core.formats import load_path

    (log,) = (Path(__file__).resolve().parent / "data" / "reports").glob("b3-03-*/*.log")
    run = load_path(log).runs[0][1]
    s = run.metrics.series("train/loss")
    assert len(s.values) == 10
    assert all(math.isfinite(v) for v in s.values[:5]) and all(math.isnan(v) for v in s.values[5:])


# --- general shapes the generic reader reads beside its key=value pairs ----------------------------
DATA = Path(__file__).resolve().parent / "data"


def test_bracketed_vector_after_a_name_is_read_per_term():
    """DeepSpeed's ``step=10, skipped=2, lr=[1.5e-05], mom=[(0.9, 0.999)]`` (tests/data/logs/deepspeed.log,
    printed by deepspeed 0.9.2) with every deepspeed entry off: ``lr=[x]`` is the lr; a vector of
    several figures is one series per term; the tuple vector ``mom`` is not read."""
    off = load_logs([DATA / "logs" / "deepspeed.log"], disabled_formats=["deepspeed"])
    assert _values(off, "train/lr") == ([10, 20], [1.5e-05, 3e-05])
    assert not [k for k in off.metrics.keys if "mom" in k]
    res = parse_lines(
        [
            f"step={s}, loss={2 - s / 100:.2f}, lr=[{s / 1e4:.4f}, {s / 1e5:.5f}]"
            for s in (10, 20, 30)
        ]
    )
    assert _values(res, "train/lr_0") == ([10, 20, 30], [0.001, 0.002, 0.003])
    assert _values(res, "train/lr_1")[1] == [0.0001, 0.0002, 0.0003]


def test_name_value_runs_beside_colon_pairs_are_read():
    """litgpt pretrain (tests/data/cases/fp16-true-nan-after-first-step/train.log): ``iter 0 step 0:
    loss 0.5254, iter time: 5439.32ms``: the ``loss`` run is read beside the ``iter time:`` pair with
    the litgpt entries off, on the iteration counter; prose (``loss 10 times higher``) is not."""
    off = load_logs(
        [DATA / "cases" / "fp16-true-nan-after-first-step" / "train.log"],
        disabled_formats=["litgpt"],
    )
    steps, values = _values(off, "train/loss")
    assert steps[:4] == [0, 1, 2, 3] and values[:4] == [0.5254, 1.5451, 2.3252, 1.1392]
    res = parse_lines([f"step: {s} | the loss 10 times higher than lr: 0.{s}" for s in range(1, 5)])
    assert "train/loss" not in res.metrics.keys


def test_split_groups_prefix_their_figures_with_the_split():
    """Realworld f5b3-16 (BehnamB94/Fingerprint-Matching, tests/data/realworld):
    ``1 \\tTrain(L=0.693  | A=0.499) \\tValid(L=0.693  | A=0.500) \\tTest(...)``: each group's figures
    are that split's, ``L``/``A`` inside a split group are loss and accuracy, the leading counter the step."""
    (log,) = (DATA / "realworld" / "runs" / "BehnamB94--Fingerprint-Matching" / "results").glob(
        "21-with-16-features+flipped-log.txt"
    )
    res = load_logs([log])
    assert _values(res, "train/loss")[1][:3] == [0.693, 0.693, 0.678]
    assert _values(res, "val/loss")[1][:3] == [0.693, 0.68, 0.65]
    assert _values(res, "val/accuracy")[0][:3] == [1, 2, 3]
    assert _values(res, "test/accuracy")[1][:2] == [0.5, 0.536]
    assert not [k for k in res.metrics.keys if k.endswith(("/l", "/a"))]
    # a group that is not a split (a call's arguments) is not a record
    cfg = parse_lines([f"step {s}: Adam(lr=0.{s}, eps=1e-8) loss={1 / s:.3f}" for s in range(1, 4)])
    assert not [k for k in cfg.metrics.keys if "adam" in k.lower()]


def test_counter_positions_beside_an_epoch_give_the_step():
    """YOLOX (tests/data/logs/yolox.log) with its entry off: ``epoch: 2/300, iter: 10/47`` is step
    (2 - 1) * 47 + 10 (the first epoch printed is 1)."""
    off = load_logs([DATA / "logs" / "yolox.log"], disabled_formats=["yolox"])
    steps, values = _values(off, "train/loss")
    assert steps[:5] == [10, 20, 30, 40, 57] and values[:2] == [9.4, 7.3]


def test_a_split_tag_opening_the_message_names_its_figures_held_out():
    """mmengine (tests/data/logs/mmengine.log) with its entries off: ``08/18 20:27:23 - mmengine - INFO -
    Epoch(val) [1][5/5]  accuracy: 7.5000`` is validation accuracy (the short date and the logger
    prefix are stripped before the tag is looked for); ``Epoch(train)`` lines stay training."""
    off = load_logs([DATA / "logs" / "mmengine.log"], disabled_formats=["mmengine"])
    assert _values(off, "val/accuracy")[1] == [7.5, 12.5]
    assert "train/accuracy" not in off.metrics.keys
    assert _values(off, "train/loss")[1] == [6.7576, 5.3044]
    res = parse_lines(
        [f"[val] step {s}: loss={1 / s:.3f}" for s in (1, 2, 3)]
        + [f"Test | step {s} acc 0.{s}" for s in (1, 2, 3)]
    )
    assert _values(res, "val/loss")[0] == [1, 2, 3]
    assert _values(res, "test/accuracy")[1] == [0.1, 0.2, 0.3]
    # the tag right after the position (realworld f5b5-09: ``Epoch 1 Validation - Loss: 18.4914, Mod Acc: 0.0``)
    tagged = parse_lines(
        [f"Epoch {e} Training - Loss: 0.{9 - e}" for e in (1, 2)]
        + [f"Epoch {e} Validation - Loss: 1.{e}" for e in (1, 2)]
    )
    assert _values(tagged, "val/loss")[1] == [1.1, 1.2]
    assert _values(tagged, "train/loss")[1] == [0.8, 0.7]
    assert "train/loss" not in res.metrics.keys


def test_rates_and_unit_labelled_timings_are_not_training_figures():
    """DeepSpeed (tests/data/logs/deepspeed.log) with its entries off: ``RunningAvgSamplesPerSec=31.6`` is a
    throughput (``perf/``), and ``time (ms) | forward: 120.55 | ... | step: 15.30`` are durations in ms
    (``step`` there is not the step counter)."""
    off = load_logs([DATA / "logs" / "deepspeed.log"], disabled_formats=["deepspeed"])
    assert "perf/runningavgsamplespersec" in off.metrics.keys
    assert not [k for k in off.metrics.keys if "samplespersec" in k and not k.startswith("perf/")]
    assert _values(off, "train/time_forward")[1] == [0.12055]
    assert 15 not in _values(off, "train/lr")[0]


def test_a_step_position_beside_an_epoch_counts_the_passes_before():
    """``Epoch 1 | Step    0/6501 | Loss: 0.5187`` (tests/data/logs/pipe-epoch-step.log) with its entry off:
    the step position starts over each epoch, so epoch 1's step 0 is 6501, after epoch 0's."""
    off = load_logs([DATA / "logs" / "pipe-epoch-step.log"], disabled_formats=["pipe-epoch-step"])
    assert _values(off, "train/loss") == ([0, 10, 20, 6501], [8.9351, 8.2445, 6.6806, 0.5187])


def test_a_message_that_changes_a_quantity_gives_its_new_value():
    """apex (tests/data/logs/apex.log) ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale
    to 32768.0`` and DeepSpeed ``Attempted loss scale: 65536, reducing to 32768`` with their entries off:
    the new loss scale is a point; a change of a name outside the vocabulary is not."""
    apex = load_logs([DATA / "logs" / "apex.log"], disabled_formats=["apex"])
    assert _values(apex, "train/loss_scale") == ([100, 200], [32768.0, 16384.0])
    ds = load_logs([DATA / "logs" / "deepspeed.log"], disabled_formats=["deepspeed"])
    assert _values(ds, "train/loss_scale")[1] == [32768.0, 16384.0]
    res = parse_lines(["step 1: loss=1.0", "reducing batch size to 16", "step 2: loss=0.9"])
    assert [k for k in res.metrics.keys if "batch" in k] == []


@pytest.mark.parametrize("disabled", [[], ["hf-dict"]])
def test_a_record_whose_only_loss_is_held_out_is_an_evaluation(disabled):
    """accelerate's nlp_example (tests/data/logs/frameworks/accelerate-healthy.log, made with accelerate):
    ``epoch 0: {'accuracy': 0.9625, 'eval_loss': 0.2258}`` is the evaluation: its accuracy is held-out,
    with the dict entry on or off; a Keras record with a training loss keeps its accuracy training."""
    res = load_logs(
        [DATA / "logs" / "frameworks" / "accelerate-healthy.log"], disabled_formats=disabled
    )
    assert _values(res, "val/accuracy")[1] == [0.9625, 0.9625, 0.975, 0.975]
    assert "train/accuracy" not in res.metrics.keys
    keras = parse_lines(
        [f"step {s}: loss: 0.{9 - s} - accuracy: 0.{s} - val_loss: 0.{8 - s}" for s in (1, 2, 3)]
    )
    assert _values(keras, "train/accuracy")[1] == [0.1, 0.2, 0.3]


@pytest.mark.parametrize(
    ("log", "entries", "steps"),
    [
        ("torchvision-metriclogger.log", ["torchvision-metriclogger"], [0, 5, 6, 11]),
        ("imagenet.log", ["imagenet-train", "imagenet-val", "imagenet-test-batch"], [0, 10, 5005]),
    ],
)
def test_a_bracketed_position_after_an_epoch_is_that_epochs_batch(log, entries, steps):
    """torchvision's MetricLogger ``Epoch: [1]  [0/6]`` and the ImageNet example's ``Epoch: [0][  10/5005]``
    (tests/data/logs) with their entries off: the step is epoch x batches per epoch + batch."""
    off = load_logs([DATA / "logs" / log], disabled_formats=entries)
    assert _values(off, "train/loss")[0] == steps


def test_non_finite_values_printed_with_a_trailing_point_zero_are_read():
    """Lightning 2's tqdm bar (tests/data/logs/frameworks/lightning2-tqdm-diverge.log, made with
    lightning): ``train_loss_step=inf.0`` then ``train_loss_step=nan.0`` are inf and NaN points."""
    import math

    res = load_logs([DATA / "logs" / "frameworks" / "lightning2-tqdm-diverge.log"])
    values = res.metrics.series("train/loss").values.tolist()
    assert math.isinf(values[-2]) and math.isnan(values[-1])
    res = parse_lines([f"step={s} loss={v}" for s, v in ((1, "0.5"), (2, "inf.0"), (3, "nan.0"))])
    got = res.metrics.series("train/loss").values.tolist()
    assert got[0] == 0.5 and math.isinf(got[1]) and math.isnan(got[2])


def test_an_accuracy_printed_as_a_count_of_the_total_is_its_fraction():
    """PyTorch's MNIST example (tests/data/logs/mnist.log) with its entries off: ``Test set: Average loss:
    0.0497, Accuracy: 9838/10000 (98%)`` is the held-out loss and accuracy 0.9838, not a position."""
    off = load_logs(
        [DATA / "logs" / "mnist.log"], disabled_formats=["pytorch-mnist", "pytorch-mnist-test"]
    )
    assert _values(off, "test/accuracy")[1] == [0.9838]
    assert _values(off, "test/loss")[1] == [0.0497]
    res = parse_lines([f"step {s}: loss: 0.{s}, batch: {s}/10" for s in (1, 2, 3)])
    assert not [k for k in res.metrics.keys if "batch" in k]


# --- evaluation passes, loggers' prefixes, names after rates (reader7, session 7) -----------------
LOGS_DIR = Path(__file__).parent / "data" / "logs"


def test_an_evaluation_pass_printed_per_batch_gives_its_running_means_at_the_last_batch():
    """timm's ``validate()`` prints ``Test: [ n/N]  Loss: cur ( mean)`` per batch (real timm run,
    tests/frameworks_logs/make_logs.sh): with timm's entries switched off the template reader
    takes the means at ``[N/N]`` as the pass's figures, none of the running values before."""
    log = LOGS_DIR / "frameworks" / "timm-style-healthy.log"
    run = load_logs([log], disabled_formats=frozenset({"timm-train", "timm-val"}))
    # Acc@k in percent, as the catalogue's ImageNet-lineage entries read it
    assert run.metrics.series("test/top1").values.tolist() == pytest.approx(
        [0.695, 0.805, 0.81, 0.82]
    )
    assert run.metrics.series("test/loss").values.tolist() == [0.952, 0.62, 0.62, 0.596]
    steps = run.metrics.series("test/loss").steps.tolist()
    assert steps == sorted(steps) and len(set(steps)) == 4  # at the training step of each pass


def test_a_mid_pass_running_line_of_an_evaluation_is_not_a_record():
    lines = [
        "Train: 0 [   0/20 (  0%)]  Loss: 2.60 (2.60)  LR: 3.000e-03",
        "Train: 0 [  19/20 (100%)]  Loss: 1.11 (1.77)  LR: 3.000e-03",
        "Test: [   0/3]  Loss:   1.070 ( 1.070)  Acc@1:  68.000 ( 68.000)",
        "Test: [   3/3]  Loss:   1.010 ( 0.952)  Acc@1:  70.000 ( 69.500)",
        "Train: 1 [   0/20 (  0%)]  Loss: 0.90 (0.90)  LR: 3.000e-03",
        "Train: 1 [  19/20 (100%)]  Loss: 0.61 (0.77)  LR: 3.000e-03",
        "Test: [   0/3]  Loss:   0.660 ( 0.660)  Acc@1:  78.000 ( 78.000)",
        "Test: [   3/3]  Loss:   0.721 ( 0.620)  Acc@1:  78.000 ( 80.500)",
    ]
    res = parse_lines(lines, disabled_formats=["timm", "imagenet-example"])
    steps, values = _values(res, "test/loss")
    assert values == [0.952, 0.62]
    assert steps == [19, 39]  # the training step each pass ran at
    assert _values(res, "train/loss")[1] == [
        2.6,
        1.11,
        0.9,
        0.61,
    ]  # training keeps the printed value


def test_a_catalogued_layout_printed_through_a_logger_is_read_after_its_prefix():
    """Swin's ``[time name] (main.py 268): INFO  * Acc@1 ..`` is the ImageNet example's summary."""
    run = load_logs([LOGS_DIR / "swin.log"], disabled_formats=frozenset({"swin-train"}))
    assert run.metrics.series("val/top1").values.tolist() == [0.01234]  # the entry reads percent
    assert "imagenet-val" in run.params["log.formats"]


def test_a_line_of_top_k_accuracies_only_is_an_evaluation_summary():
    run = load_logs(
        [LOGS_DIR / "swin.log"], disabled_formats=frozenset({"swin-train", "imagenet-example"})
    )
    assert run.metrics.series("val/top1").values.tolist() == [1.234]
    assert run.metrics.series("val/top5").values.tolist() == [4.567]
    assert "train/top1" not in run.metrics


def test_a_name_after_a_rate_does_not_take_the_rates_unit():
    """open_clip: ``Batch (t): 1.544s, 26530/s LR: 0.000421``: the figure is ``LR``, not ``s LR``."""
    run = load_logs([LOGS_DIR / "open-clip.log"], disabled_formats=frozenset({"pytorch-mnist"}))
    assert run.metrics.series("train/lr").values.tolist() == [0.000421, 0.000419]


def test_detectron2_evaluation_tables_are_held_out_figures():
    run = load_logs([LOGS_DIR / "detectron2.log"])
    assert run.metrics.series("val/bbox/AP").values.tolist() == [45.123]


def test_an_integer_label_before_a_figure_is_not_read_as_its_value():
    """WS-DAN's per-head meters (tests/data/realworld f6b1-01): ``Prec@1 001 0.000 (0.000)``, the
    head's label ``001`` / ``0`` / ``05`` printed between the name and the figure."""
    lines = [
        "Epoch: [0][0/250]\tTime 3.923 (3.923)\tData 0.411 (0.411)\tLoss 13.0603 (13.0603)",
        "Prec@1   0 0.000 (0.000)\tPrec@5   0 4.167 (4.167)",
        "Prec@1 001 0.000 (0.000)\tPrec@5 001 0.000 (0.000)",
        "Epoch: [0][10/250]\tTime 1.154 (1.408)\tData 0.371 (0.374)\tLoss 12.6626 (12.3890)",
        "Prec@1   0 4.167 (0.379)\tPrec@5   0 8.333 (3.030)",
        "Prec@1  05 8.333 (0.379)\tPrec@5  05 12.500 (3.030)",
    ]
    res = parse_lines(lines)
    values = [v for k in res.metrics.keys if "top" in k for v in _values(res, k)[1]]
    assert 0.01 not in values and 0.05 not in values and 1.0 not in values and 5.0 not in values


def test_top_k_accuracies_with_running_means_are_a_batch_not_an_evaluation():
    lines = [
        "Epoch: [0][0/250]\tLoss 13.0603 (13.0603)",
        "Prec@1     0.000 (0.000)\tPrec@5     4.167 (4.167)",
        "Epoch: [0][10/250]\tLoss 12.6626 (12.3890)",
        "Prec@1     4.167 (0.379)\tPrec@5     8.333 (3.030)",
    ]
    res = parse_lines(lines, disabled_formats=["imagenet-example"])
    assert not [k for k in res.metrics.keys if k.startswith(("val/", "test/"))]


def test_a_count_inside_a_sentence_is_not_a_figure():
    """datasets' warning under a tqdm bar (tests/data/realworld f6b1-18, oumi/TRL SFT)."""
    lines = [
        "  0%|          | 0/1000 [00:00<?, ?it/s]Too many dataloader workers: 2 (max is "
        "dataset.num_shards=1). Stopping 1 dataloader workers.",
        "step 1: loss: 2.31 lr: 0.001",
        "step 2: loss: 2.12 lr: 0.001",
    ]
    res = parse_lines(lines)
    assert sorted(res.metrics.keys) == ["train/loss", "train/lr"]


def test_a_best_so_far_line_still_at_its_initial_infinity_is_not_a_record():
    """``best = float("inf")`` printed before any evaluation (tests/data/realworld f6b1-12)."""
    lines = [
        "09-06 15:04:07 - INFO - __main__ - step 1: loss: 2.31",
        "09-06 15:04:16 - INFO - __main__ - Best model found at epoch 0, Val Loss: inf, AUC: 0.00%, AP: 0.00%",
        "09-06 15:04:17 - INFO - __main__ - Best model found at epoch 3, Val Loss: 0.41, AUC: 91.00%, AP: 88.00%",
    ]
    res = parse_lines(lines)
    assert _values(res, "val/loss")[1] == [0.41]


def test_hf_dicts_without_their_entry_take_their_step_from_the_epoch_and_the_plan():
    """A real HF Trainer console (tests/data/cases/healthy-fp16-finetune, transformers 3.x, fp16)
    with the hf and tqdm entries off: with the plan known (``num_train_epochs=1`` printed at
    start-up, the bar's total 1,352), a dict printed without its bar (``{'loss': 1.057, ...,
    'epoch': 0.0518}``) is at step round(0.0518 x 1352) = 70, not the next record number."""
    log = Path(__file__).parent / "data" / "cases" / "healthy-fp16-finetune" / "train.log"
    run = load_logs([log], disabled_formats=frozenset({"hf", "tqdm"}))
    steps = run.metrics.series("train/loss").steps.tolist()
    assert steps[:6] == [20, 30, 40, 60, 70, 80]


def test_a_table_whose_header_names_hold_spaces_and_whose_cells_hold_units_is_read():
    """scikit-learn 1.9 GradientBoostingClassifier(verbose=1), a real capture
    (benchmarks/log_structure_key/logs/sklearn-gb-verbose.log): ``Iter  Train Loss  OOB Improve
    Remaining Time`` then rows ending in ``3.36s``; the Iter column is the step."""
    log = Path(__file__).parent.parent / "benchmarks" / "log_structure_key" / "logs"
    run = load_logs([log / "sklearn-gb-verbose.log"])
    steps, values = _values(run, "train/loss")
    assert steps[:3] == [1, 2, 3] and steps[-1] == 60
    assert values[:3] == [1.1589, 1.0063, 0.9032]


def test_a_logging_prefix_joined_by_colons_keeps_the_split_tag():
    """``logging.basicConfig(format='%(asctime)s:%(levelname)s: %(message)s')`` joins timestamp and
    level with ``:`` (realworld f8b1-11, the CS230 project template): the message's ``Eval metrics:``
    tag is still seen, so its figures are held-out ones, not a second set of training figures."""
    lines = [
        "2018-07-27 17:06:07,821:INFO: - Train metrics: accuracy: 0.398 ; loss: 1.542",
        "2018-07-27 17:06:08,355:INFO: - Eval metrics: accuracy: 0.224 ; loss: 2.692",
        "2018-07-27 17:06:17,036:INFO: - Train metrics: accuracy: 0.559 ; loss: 1.120",
        "2018-07-27 17:06:17,431:INFO: - Eval metrics: accuracy: 0.344 ; loss: 1.680",
        "2018-07-27 17:06:26,075:INFO: - Train metrics: accuracy: 0.662 ; loss: 0.917",
        "2018-07-27 17:06:26,498:INFO: - Eval metrics: accuracy: 0.539 ; loss: 1.217",
    ]
    res = parse_lines(lines)
    assert _values(res, "train/loss")[1] == [1.542, 1.12, 0.917]
    assert _values(res, "train/accuracy")[1] == [0.398, 0.559, 0.662]
    # the held-out layout is learnt from its repeats: its first record may be read past, never
    # read as training figures
    val = _values(res, "val/accuracy")[1]
    assert val and val == [0.224, 0.344, 0.539][-len(val) :]
    assert _values(res, "val/loss")[1] == [2.692, 1.68, 1.217][-len(val) :]
