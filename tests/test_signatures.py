"""The failure-signature catalog on one real line per signature, and the traceback reader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mlaudit_core.rundata import ConsoleLine
from mlaudit_core.signatures import CATALOG, classify_path, match_line, scan, to_gib

CASES = yaml.safe_load((Path(__file__).parent / "data" / "signatures" / "cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['id']}: {c['line'][:40]}")
def test_signature_line(case):
    got = {sig.id: figs for sig, figs in match_line(case["line"])}
    if case["id"] is None:
        assert not got, got
        return
    assert case["id"] in got, got
    for k, v in (case.get("figures") or {}).items():
        assert got[case["id"]].get(k) == v, (k, got[case["id"]])


def test_every_signature_has_a_line():
    missing = {s.id for s in CATALOG} - {c["id"] for c in CASES}
    assert not missing, (
        f"signatures without a case line in tests/data/signatures/cases.yaml: {sorted(missing)}"
    )


def test_one_hit_per_category_per_line():
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 19.88 MiB is free."
    )
    assert [s.id for s, _ in match_line(line)] == ["cuda-oom-v2"]
    assert to_gib("19.88", "MiB") == pytest.approx(19.88 / 1024)


def _tb(text: str):
    lines = [ConsoleLine("log", i, t) for i, t in enumerate(text.splitlines(), 1)]
    return scan(lines)[1]


def test_traceback_without_header_raising_frame_and_evaluation_path():
    tbs = _tb(
        (
            Path(__file__).parent / "data" / "cases" / "oom-in-evaluation" / "traceback.log"
        ).read_text()
    )
    assert len(tbs) == 1
    tb = tbs[0]
    assert tb.exception_type == "RuntimeError" and tb.code_path == "evaluation"
    assert tb.raising_frame == ("/home/user1/czsl-main/models/common.py", 363, "score_fast_model")
    assert tb.line.lineno == 11


def test_library_frames_do_not_decide_the_path():
    # forward() inside torch is called by evaluation as well as training: the user's frame decides
    tbs = _tb("""[rank0]: Traceback (most recent call last):
[rank0]:   File "/work/run.py", line 40, in <module>
[rank0]:     validate(model, loader)
[rank0]:   File "/work/run.py", line 22, in validate
[rank0]:     out = model(x)
[rank0]:   File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1532, in _call_impl
[rank0]:     return forward_call(*args, **kwargs)
[rank0]:   File "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 116, in forward
[rank0]:     return F.linear(input, self.weight, self.bias)
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.""")
    assert len(tbs) == 1
    assert tbs[0].code_path == "evaluation"
    assert tbs[0].user_frame == ("/work/run.py", 22, "validate")
    assert tbs[0].exception_type == "torch.OutOfMemoryError"


@pytest.mark.parametrize(
    "frames,path",
    [
        (
            [
                ("train.py", 10, "main"),
                ("train.py", 50, "train_one_epoch"),
                ("model.py", 5, "forward"),
            ],
            "training",
        ),
        (
            [
                ("train.py", 10, "main"),
                ("ckpt.py", 7, "save_checkpoint"),
                ("x/site-packages/torch/serialization.py", 1, "save"),
            ],
            "checkpoint",
        ),
        ([("main.py", 3, "<module>"), ("main.py", 9, "run")], "unknown"),
        ([("main.py", 3, "<module>"), ("evaluate.py", 9, "run")], "evaluation"),
    ],
)
def test_classify_path(frames, path):
    assert classify_path(frames) == path


def test_chained_exceptions_give_two_tracebacks():
    tbs = _tb("""Traceback (most recent call last):
  File "a.py", line 1, in load_batch
KeyError: 'label'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 9, in training_step
RuntimeError: batch failed""")
    assert [t.exception_type for t in tbs] == ["KeyError", "RuntimeError"]
    assert tbs[-1].code_path == "training"
