"""Console line shapes the catalog has no entry for but many scripts print (issue 15).

- ``name value`` with only spaces between (``print("test accuracy", acc)``), read only for
  names of the metric vocabulary and step/epoch words;
- bare ``epoch N`` header lines;
- a progress bar kept only in its final state once per epoch (W&B's ``output.log`` of a
  terminal session): each finished bar on a later line is the next pass.

The real W&B run folders of shared/realworld (wb01, wb02) are used when present beside the
checkout (CI copies them); the same shapes are also checked on lines written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import parse_lines

REPO = Path(__file__).parent.parent
_SHARED = [
    p for p in (REPO.parent / "shared" / "realworld", Path("/work/shared/realworld")) if p.is_dir()
]
WB = "runs/aorvieto--VerySimpleTransformer/wandb"


def _series(res, key):
    s = res.metrics.series(key)
    return s.steps.tolist(), s.values.tolist()


def test_space_separated_metric_lines_under_epoch_headers():
    res = parse_lines(
        [
            "- nr. of training examples 6250",
            "- nr. of test examples 6250",
            " epoch 0",
            '-- "test accuracy 0.739',
            " epoch 1",
            '-- "test accuracy 0.817',
            "=== Epoch 2 ===",
            "train loss 0.41",
            "test accuracy 0.83",
        ]
    )
    assert set(res.metrics.keys) == {"test/accuracy", "train/loss"}, (
        res.metrics.keys
    )  # no 'examples'
    assert _series(res, "test/accuracy") == ([0, 1, 2], [0.739, 0.817, 0.83])
    assert _series(res, "train/loss") == ([2], [0.41])
    assert res.params.get("log.step_axis") == "epoch"


def test_space_separated_pairs_on_one_line_and_prose_left_alone():
    res = parse_lines(
        [
            "Starting",
            "epoch 1 train loss 0.53 test accuracy 0.81",
            "epoch 2 train loss 0.43 test accuracy 0.85",
            "we used 4 GPUs and batch size 32",
            "loss went up 3 times",
        ]
    )
    assert _series(res, "train/loss") == ([1, 2], [0.53, 0.43])
    assert _series(res, "test/accuracy") == ([1, 2], [0.81, 0.85])
    assert not [k for k in res.metrics.keys if "gpu" in k or "size" in k or "went" in k]


def test_lines_with_delimiters_still_read_as_before():
    res = parse_lines(["step 1: loss: 2.0, lr: 0.1", "step 2: loss: 1.5, lr: 0.1"])
    assert _series(res, "train/loss") == ([1, 2], [2.0, 1.5])


def test_final_state_bars_count_passes():
    """Each epoch's bar appears once, finished (6250/6250), on its own line; a metric printed
    after it takes the cumulative step. A bar's closing redraw on its own line is no new pass."""
    bar = "100%|##########| 6250/6250 [05:02<00:00, 20.67it/s]"
    lines = []
    for e, acc in enumerate((0.7, 0.8, 0.75)):
        lines += [
            f" epoch {e}",
            "",
            f"  0%|          | 0/6250\r 50%|#####     | 3125/6250\r{bar}\r{bar}",
            f'-- "test accuracy {acc}',
        ]
    res = parse_lines(lines)
    assert _series(res, "test/accuracy") == ([6250, 12500, 18750], [0.7, 0.8, 0.75])
    only_final = []
    for acc in (0.7, 0.8, 0.75):
        only_final += ["", bar, f'-- "test accuracy {acc}']
    res = parse_lines(only_final)
    assert _series(res, "test/accuracy") == ([6250, 12500, 18750], [0.7, 0.8, 0.75])


@pytest.mark.skipif(not _SHARED, reason="shared/realworld is not beside this checkout")
@pytest.mark.parametrize(
    "run, expected",
    [
        (
            "run-20230329_030534-dnevcmuk",
            [0.739, 0.817, 0.821, 0.839, 0.799, 0.833, 0.823, 0.815, 0.827, 0.536],
        ),
        ("run-20230329_045808-2brlp5wd", [0.5] * 10),
    ],
)
def test_wandb_output_log_per_epoch_accuracy(run, expected):
    """realworld wb01/wb02: the .wandb stops at step ~3,900 of 62,509; the per-epoch test
    accuracy exists only in files/output.log and covers all 10 epochs up to W&B's last _step."""
    _, r = load_path(_SHARED[0] / WB / run).runs[0]
    steps, values = (
        r.metrics.series("test/accuracy").steps.tolist(),
        r.metrics.series("test/accuracy").values,
    )
    assert values.tolist() == expected
    assert steps == sorted(steps) and len(set(steps)) == 10
    assert 6000 <= steps[0] <= 6500 and steps[-1] == 62500  # W&B's summary says _step 62509


# --- several launches appended to one log -----------------------------------------------------

OWN = REPO / "tests" / "data" / "realworld"


def _launch(lines_after: list[str], when: str) -> list[str]:
    return [
        f"[{when}][__main__][INFO] - Starting job <cfg.seed=1>",
        f"[{when}][__main__][INFO] - Instantiating model <Net>",
    ] + lines_after


def _write(tmp_path, launches: list[list[str]]) -> Path:
    p = tmp_path / "train.log"
    p.write_text("\n".join(line for la in launches for line in la) + "\n")
    return p


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "train.py", line 3, in <module>',
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x10 and 20x5)",
]


def test_last_launch_is_the_run_and_earlier_tracebacks_are_history(tmp_path):
    from mlaudit_core.audit import audit
    from mlaudit_core.settings import Settings

    first = _launch(
        [f"step {i}: loss {2.0 - i / 100:.3f}" for i in range(1, 30)] + TRACEBACK,
        "2024-01-01 10:00:00,000",
    )
    second = _launch(
        [f"step {i}: loss {2.0 / i:.4f}" for i in range(1, 101)] + ["Training done."],
        "2024-01-02 10:00:00,000",
    )
    _, run = load_path(_write(tmp_path, [first, second])).runs[0]
    assert not any("Traceback" in cl.text for cl in run.console)
    assert run.console[0].lineno == len(first) + 1
    loss = run.metrics.series("train/loss")
    assert loss.steps.tolist() == list(
        range(1, 101)
    )  # the first launch's points are not this run's
    assert run.params["log.launches"] == "2" and run.params["log.launches_with_traceback"] == "1"
    assert any("2 launches" in n and "RuntimeError: mat1 and mat2" in n for n in run.notes), (
        run.notes
    )
    report = audit(run, Settings())
    assert report.verdict.outcome.value != "crashed", report.verdict


def test_a_launch_that_resumes_keeps_the_curve_and_a_crash_in_the_last_launch_counts(tmp_path):
    first = _launch(
        [f"step {i}: loss {2.0 / i:.4f}" for i in range(1, 51)] + TRACEBACK,
        "2024-01-01 10:00:00,000",
    )
    dead = _launch(TRACEBACK, "2024-01-01 11:00:00,000")  # crashed at start-up: no point
    resumed = _launch(
        [f"step {i}: loss {2.0 / i:.4f}" for i in range(41, 81)] + TRACEBACK,
        "2024-01-01 12:00:00,000",
    )
    _, run = load_path(_write(tmp_path, [first, dead, resumed])).runs[0]
    steps = run.metrics.series("train/loss").steps.tolist()
    assert steps[0] == 1 and steps[-1] == 80  # resumed from step 40: the whole curve is the run
    assert any("resumes" in n for n in run.notes), run.notes
    assert (
        sum(cl.text.startswith("Traceback") for cl in run.console) == 1
    )  # the last launch's own crash
    assert run.params["log.launches"] == "3" and run.params["log.launches_with_traceback"] == "2"


def test_one_repeated_line_is_not_a_launch(tmp_path):
    """A message printed every epoch that happens to open the log does not split it."""
    lines = []
    for e in range(5):
        lines += ["Loading data ...", f"epoch {e}", f"train loss {1.0 / (e + 1):.3f}"]
    p = tmp_path / "train.log"
    p.write_text("\n".join(lines) + "\n")
    _, run = load_path(p).runs[0]
    assert "log.launches" not in run.params
    assert len(run.metrics.series("train/loss")) == 5


def test_own_corpus_log07_ninety_launches():
    """tests/data/realworld log07: a lightning-hydra-template log with 90 launches appended; 22
    earlier ones crashed with tracebacks, the last trained and tested normally and printed no
    metric. The run is the last launch: no traceback in what is audited, no 'crashed'."""
    from mlaudit_core.audit import audit
    from mlaudit_core.settings import Settings

    _, run = load_path(OWN / "runs" / "AnudeepReddy-Katta--cifar10" / "train.log").runs[0]
    assert (
        run.params["log.launches"] == "90" and int(run.params["log.launches_with_traceback"]) >= 20
    )
    assert run.console and not any("Traceback" in cl.text for cl in run.console)
    assert "Starting testing!" in "\n".join(cl.text for cl in run.console)
    v = audit(run, Settings()).verdict
    assert v.outcome.value == "unknown", v


def test_set_up_lines_workers_print_again_inside_a_run_are_not_launches():
    """Own corpus f9b2-19 (AdityaJ87/Face_Emotion_Detection training.log): every DataLoader worker
    start prints the script's first two lines ('Class distribution' / 'Class weights') again, 125
    times, while 'Epoch [e/50]' goes on; the epoch goes back to 1 twice. Was 125 launches, the last
    one only those set-up lines (no metric: unknown); now 3 launches, the last with its 11 epochs."""
    _, run = load_path(OWN / "runs" / "AdityaJ87--Face_Emotion_Detection" / "training.log").runs[0]
    assert run.params["log.launches"] == "3", run.params
    ep = run.metrics.series("train/epoch").values
    assert ep.tolist() == list(range(1, 12)), ep
    assert len(run.metrics.series("val/accuracy")) == 11


def test_one_launch_whose_counter_lines_up_with_the_last_is_not_a_repeated_block():
    """Own corpus f10b1-20 (BlackPool25/AI-Detector-Text training.log): 15 launches of one script,
    several stopping before or in their first epoch; once, a launch's first step (200) comes after
    the step the launch before stopped at (100). One such coincidence does not make the start-up
    lines a block the run repeats (f9b2-19's workers repeat it dozens of times): 15 launches, not 4."""
    _, run = load_path(OWN / "runs" / "BlackPool25--AI-Detector-Text" / "training.log").runs[0]
    assert run.params["log.launches"] == "15", run.params


def test_launches_split_where_the_epoch_starts_over_when_the_steps_number_records():
    """Own corpus f10b1-18 (Bibhuprasadbehera/PPI-predictor- logs/training.log): 'Epoch N/20, Train
    Loss' / 'Epoch N/20, Validation Loss' lines of 11 launches appended, nothing else repeated at a
    launch's start; the steps only number the records. The epoch going back to 1 splits the file (by
    the lines' timestamps): the run is the last launch that trained, 20 epochs (was every launch's
    points as one curve: diverged)."""
    _, run = load_path(
        OWN / "runs" / "Bibhuprasadbehera--PPI-predictor-" / "logs" / "training.log"
    ).runs[0]
    assert any("starts over" in n for n in run.notes), run.notes
    assert len(run.metrics.series("train/loss")) == 20
    assert len(run.metrics.series("val/loss")) == 20


def test_a_second_training_in_one_script_places_its_epoch_summaries_at_its_own_steps():
    """Own corpus f8b2-05 (PiakoCode/Handwritten-Digit-Recognition train.out): one script trains three
    models one after another, 'Epoch: 001/020 | Batch 0050/0469 | Loss' lines whose position starts
    over, and '**Epoch: 001/020 | Test. Acc.: 97.430% | Loss' summaries with no batch. The summaries
    of the second and third trainings sat at the first one's last step (9361), so the last training
    read as 19 counter resets (unstable/correctness_bug); now each sits at its epoch's step."""
    _, run = load_path(
        OWN / "runs" / "PiakoCode--Handwritten-Digit-Recognition" / "train.out"
    ).runs[0]
    assert any("3 launches" in n for n in run.notes), run.notes
    for key in ("train/loss", "test/accuracy"):
        steps = run.metrics.series(key).steps
        assert (steps[1:] >= steps[:-1]).all(), (key, steps.tolist())
    assert run.metrics.series("test/accuracy").steps.tolist()[:2] == [450, 919]


def test_a_resume_from_an_earlier_checkpoint_replaces_the_steps_it_redoes():
    """Own corpus f7b1-13 (HailongDing/HiFi_TSE doc/train.log): six launches; each resume starts from
    its last checkpoint, before the last step the launch it resumes printed (710000 after 713600).
    The run is the joined launches; the steps a resume trains again are the resume's, so the main
    series' steps only go up (was: 3 counter resets, unstable/correctness_bug)."""
    _, run = load_path(OWN / "runs" / "HailongDing--HiFi_TSE" / "doc" / "train.log").runs[0]
    assert run.params["log.launches"] == "6", run.params
    steps = run.metrics.series("train/loss_g").steps
    assert (steps[1:] > steps[:-1]).all()
    assert steps[0] == 705000 and steps[-1] == 1499900, (steps[0], steps[-1])


# --- session 4: shapes of real logs the console reader read nothing from -----------------------

RW = REPO / "tests" / "data" / "realworld" / "runs"


def test_epoch_header_with_of_and_message_on_the_next_line():
    """KevinZH3/Faster-R-CNN-for-VOC2007 logs/train.log (Python logging, the message on the line
    after its prefix): 'EPOCH 1 of 30' then 'EPOCH loss: 0.53'. Before: no metric at all."""
    res = parse_lines(
        [
            "2024-05-26 16:04:46 - INFO - task2_train_fasterrcnn.py - 65 - ",
            "EPOCH 1 of 30",
            "2024-05-26 16:25:29 - INFO - task2_train_fasterrcnn.py - 128 - ",
            "EPOCH loss: 0.535859936185811",
            "2024-05-26 16:25:35 - INFO - task2_train_fasterrcnn.py - 65 - ",
            "EPOCH 2 of 30",
            "2024-05-26 16:46:10 - INFO - task2_train_fasterrcnn.py - 128 - ",
            "EPOCH loss: 0.4816281531938906",
        ]
    )
    assert _series(res, "train/loss") == ([1, 2], [0.535859936185811, 0.4816281531938906])
    assert res.facts["epochs"] == 30 and res.params["log.step_axis"] == "epoch"


def test_faster_rcnn_log_judges_the_launch_that_trained_not_the_empty_relaunches():
    """The real log holds 22 launches; only the first trained (10 epochs of 30), the 21 after it
    printed set-up lines only: the run is launch 1, its 10 epochs of loss, and the notes say so
    (before: the last, empty launch was the run and nothing was judged)."""
    ((_, run),) = load_path(RW / "KevinZH3--Faster-R-CNN-for-VOC2007-" / "logs" / "train.log").runs
    assert len(run.metrics.series("train/loss")) == 10
    assert run.params["log.launch_judged"] == "1" and run.params["log.launches"] == "22"
    assert any("the run audited is launch 1" in n for n in run.notes), run.notes


def test_epoch_and_batch_without_a_step_take_the_batch_as_step():
    """Barber0/LLM-pretrain train.log: 'ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513, loss: 10.98'.
    Before: every line was taken for start-up configuration (no 'step' or 'epoch' word)."""
    ((_, run),) = load_path(RW / "Barber0--LLM-pretrain" / "train.log").runs
    loss = run.metrics.series("train/loss")
    assert loss.steps.tolist() == list(range(20, 261, 20)) and loss.values[0] == pytest.approx(
        10.984375
    )
    assert run.params["log.step_axis"] == "batch" and "ntokens" not in run.params
    res = parse_lines(
        [
            "ep: 0, batch: 100, loss: 3.0",
            "ep: 0, batch: 200, loss: 2.0",
            "ep: 1, batch: 100, loss: 1.5",
            "ep: 1, batch: 200, loss: 1.2",
        ]
    )
    assert _series(res, "train/loss")[0] == [
        100,
        200,
        300,
        400,
    ]  # the next epoch goes on, never back


def test_yolox_loguru_lines_and_last_launch():
    """Duke-Rodriguez-Rudolph/yolox-chepai train_log.txt: 14 launches appended; the last trains
    epochs 1-300 of 47 iterations. Before: no metric (loguru's 'module:function:line - ' prefix
    and 'epoch: e/E, iter: i/N' had no reading)."""
    ((_, run),) = load_path(RW / "Duke-Rodriguez-Rudolph--yolox-chepai" / "train_log.txt").runs
    loss = run.metrics.series("train/loss")
    assert run.params["log.steps_per_epoch"] == "47"
    assert loss.steps[0] == 10 and loss.steps[-1] == 299 * 47 + 40
    assert run.metrics.series("train/epoch").values[-1] == 300


def test_hf_console_two_trainings_in_one_script_keeps_the_last():
    """EshaUbale/Language-Modeling-with-Huggiingface train_log.txt (transformers 4.35, no bar kept):
    a masked-LM training (3 epochs), then a classifier trained from it (10 epochs). Each Trainer.train()
    closes with its summary dict; the next training's dicts are numbered from 1 again, so the file
    splits and the last training is audited. Before: 'Map' bars gave every point step 8716."""
    ((_, run),) = load_path(
        RW / "EshaUbale--Language-Modeling-with-Huggiingface" / "train_log.txt"
    ).runs
    loss = run.metrics.series("train/loss")
    assert loss.steps.tolist() == [1, 2, 3, 4] and loss.values[0] == pytest.approx(0.1373)
    val = run.metrics.series("val/loss")
    assert len(val) == 10 and val.values[-1] == pytest.approx(0.031908828765153885)
    assert list(val.steps) == sorted(val.steps)  # trainer.evaluate() after training sits at the end
    assert any("2 launches" in n or "starts over" in n for n in run.notes), run.notes


def test_a_space_before_the_colon_of_name_value_pairs():
    """``name : value`` (TransUNet-family trainers: ``'iteration %d : loss : %f, lr: %f'``; own corpus
    f6b1-16's first lines, where only ``lr`` was read before): the figure after ``loss :`` is read as
    the loss; a clock time after a spaced colon is not a figure, nor is a figure written before its name
    (own corpus f5b1-19: ``Epoch 5 @ 12:10 AM : 0.9643 C.E. Loss, 97.09% Accuracy`` is no ``AM`` metric)."""
    lines = (RW / "Kozmosa--EMCAD-TOM500" / "train.out").read_text().splitlines()[:10]
    res = parse_lines(lines + ["a time : 12:30:01", "a time : 12:31:02"])
    steps, values = _series(res, "train/loss")
    assert (steps[:3], values[:3]) == ([50, 100, 125], [5.753381, 3.900187, 3.487165])
    assert not [k for k in res.metrics.keys if "time" in k]
    value_first = (RW / "davijoocho--convolutional-neural-network" / "train.out").read_text()
    keys = list(parse_lines(value_first.splitlines()).metrics.keys)
    assert not [k for k in keys if k.lower().endswith(("/am", "/pm"))]
