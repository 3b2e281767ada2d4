"""Any text file is the same file whatever its line ends, encoding or NUL holes
(mlaudit_core/formats/_text.py and the readers that sniff and read through it).

Real inputs: files of tests/data/realworld written by the real libraries (a Keras CSVLogger
file, a console log), re-saved the ways real files reach users (CR-only or CRLF line ends,
UTF-16 from PowerShell, a hole of NUL bytes left where a file was extended by a writer that
died), and the corpus files that arrived that way (realworld f12b1-08, f12b1-09, f7b3-06).
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

import numpy as np
import pytest

from mlaudit_core.errors import InputError
from mlaudit_core.formats import load_path, plan
from mlaudit_core.formats._text import decode, split_lines, unholed

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"
KERAS_CSV = RUNS / "BurakErguvn--Car-Prediction-CNN-Model" / "training.log"  # csv06
CONSOLE = RUNS / "5697526--CIFAR-10-Network" / "training.log"  # log03
KERAS_CR = (  # f12b1-08: the Keras CSVLogger file as committed, '\r\r' between rows
    RUNS / "19090418G--dissertation_deep_learning" / "dissertation_code" / "cnn_image" / "train.log"
)
SLURM_HOLE = RUNS / "HEISENYAN--openvla-oft" / "slurm.out"  # f12b1-09: 3,235 NULs mid-file
POWERSHELL = RUNS / "Yatsuiii--Brain-Connectivity-GCN" / "train_output.log"  # f7b3-06: UTF-16LE


def _series(path: Path) -> dict[str, tuple[list, list]]:
    ((_, run),) = load_path(path).runs
    return {
        k: (run.metrics.series(k).steps.tolist(), run.metrics.series(k).values.tolist())
        for k in run.metrics.keys
    }


def _copy(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("ends", ["\r", "\r\n", "\r\r", "\r\r\n"])
def test_keras_csvlogger_file_reads_the_same_with_any_line_end(tmp_path, ends):
    """A Keras CSVLogger file re-saved with CR, CRLF or doubled CR line ends is the same table:
    sniffed as keras_csv (with CR-only ends it was sniffed as a console, its rows one line)."""
    text = KERAS_CSV.read_text()
    p = _copy(tmp_path, "training.log", text.replace("\n", ends).encode())
    assert plan(p)[0][0].reader == "keras_csv"
    assert _series(p) == _series(KERAS_CSV)


def test_the_committed_cr_only_keras_csvlogger_file_is_read_epoch_by_epoch():
    """Realworld f12b1-08 as committed: 22 epochs, val_acc 0.367 at epoch 0 then ~0.645."""
    loaded = load_path(KERAS_CR)
    assert loaded.reader == "keras_csv"
    s = loaded.runs[0][1].metrics.series("val_acc")
    assert s.steps.tolist() == list(range(22))
    assert s.values[0] == pytest.approx(0.3665254) and s.values[1] == pytest.approx(0.6451271)


@pytest.mark.parametrize(
    "codec,bom", [("utf-16-le", True), ("utf-16-be", True), ("utf-16-le", False)]
)
def test_a_console_log_saved_as_utf16_is_the_same_log(tmp_path, codec, bom):
    """A console log saved as UTF-16 (PowerShell's ``Out-File`` and ``>`` write UTF-16LE with a
    byte-order mark) is sniffed and read as the UTF-8 original (it was refused as binary)."""
    mark = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}[codec]
    text = CONSOLE.read_bytes().decode("utf-8", "replace")
    p = _copy(tmp_path, "training.log", (mark if bom else b"") + text.encode(codec))
    assert plan(p)[0][0].reader == "console"
    got, want = _series(p), _series(CONSOLE)
    assert got.keys() == want.keys() and got
    for k in want:
        assert got[k][0] == want[k][0] and np.allclose(got[k][1], want[k][1], equal_nan=True)
    run = load_path(p).runs[0][1]
    assert not any("line end" in w for w in run.warnings)  # its last line ends in '\n\x00'


def test_a_keras_csvlogger_file_saved_as_utf16_is_the_same_table(tmp_path):
    text = KERAS_CSV.read_text()
    p = _copy(tmp_path, "training.log", codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    assert plan(p)[0][0].reader == "keras_csv"
    assert _series(p) == _series(KERAS_CSV)


def test_the_committed_powershell_capture_is_sniffed_as_a_console():
    """Realworld f7b3-06 (a PowerShell ``Out-File`` capture, UTF-16LE with a BOM): its epochs'
    validation accuracy, exactly 0.5 every epoch, is read."""
    loaded = load_path(POWERSHELL)
    assert loaded.reader == "console"
    run = loaded.runs[0][1]
    assert set(run.metrics.series("val/accuracy").values.tolist()) == {0.5}


def test_a_console_log_with_a_nul_hole_is_the_same_log_less_the_hole(tmp_path):
    """A log whose writer died while the file system extended it: ``os.truncate`` past the end
    leaves the same hole of NUL bytes, then the next writer appends. The log is sniffed and read
    (it was refused as binary), the hole is skipped and said in a warning."""
    lines = CONSOLE.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    p = tmp_path / "training.log"
    p.write_bytes(b"".join(lines[:half]))
    os.truncate(p, p.stat().st_size + 4096)
    with open(p, "ab") as fh:
        fh.write(b"".join(lines[half:]))
    assert b"\x00" * 4096 in p.read_bytes()
    assert plan(p)[0][0].reader == "console"
    assert _series(p) == _series(CONSOLE)
    run = load_path(p).runs[0][1]
    assert any("4096 NUL byte(s)" in w for w in run.warnings)


def test_a_console_log_that_begins_with_a_nul_hole_lost_its_start_only():
    """Realworld f16b1-10: a training.log that begins with 11,363 NULs (the file emptied or
    recreated while the training process went on writing at its old offset), then steps 700-2840
    to the file's end. The hole is its start, not a gap in the text read: said apart, and not as
    skipped data (which makes a healthy verdict 'not judged')."""
    from mlaudit_core.audit import audit

    loaded = load_path(RUNS / "269652--neuroslm" / "training.log")
    assert loaded.reader == "console"
    run = loaded.runs[0][1]
    assert any("begins with 11363 NUL byte(s)" in w for w in run.warnings), run.warnings
    assert not any("inside the text were skipped" in w for w in run.warnings), run.warnings
    v = audit(run).verdict
    assert v.rule != "V20p" and v.outcome.value != "unknown", v.summary


def test_the_committed_slurm_out_with_a_nul_hole_is_a_console():
    """Realworld f12b1-09: a SLURM .out a dozen jobs appended to, with 3,235 NULs after line
    ~540 (not recognised before); the cancellations after the hole are read."""
    loaded = load_path(SLURM_HOLE)
    assert loaded.reader == "console"
    run = loaded.runs[0][1]
    assert any("3235 NUL byte(s)" in w for w in run.warnings)
    assert any("CANCELLED AT 2025-08-21T02:53:05" in ln.text for ln in run.console)


def test_binary_files_stay_binary(tmp_path):
    """A TensorBoard event file, a torch checkpoint and random bytes are no text, NUL holes or
    not: refused by the console reader and by every sniffer."""
    torch = pytest.importorskip("torch")
    ckpt = tmp_path / "model.log"  # a text-like name, so the console sniffer opens it
    torch.save({"w": torch.arange(2000, dtype=torch.float32)}, ckpt)
    events = sorted(
        (RUNS / "TaikiTakiuchi--linebot" / "runs" / "Oct11_01-48-25_4dac8fc521bd").glob(
            "events.out.tfevents.*"
        )
    )[0]
    tb = _copy(tmp_path, "events.log", events.read_bytes())
    noise = _copy(tmp_path, "noise.log", np.random.default_rng(0).bytes(20000))
    for p in (ckpt, tb, noise):
        assert decode(p.read_bytes()[:65536]) is None, p
        with pytest.raises(InputError):
            plan(p)


def test_split_lines_ends():
    assert split_lines("a\r\nb\nc") == ["a", "b", "c"]
    assert split_lines("a\rb\r") == ["a", "b"]
    assert split_lines("bar 1%\rbar 2%\nnext\n") == ["bar 1%\rbar 2%", "next"]  # a redraw stays
    assert unholed(b"a\n" + b"\x00" * 100 + b"b\n") == (b"a\nb\n", 100)
    assert unholed(b"line one" + b"\x00" * 10 + b"line two\n") == (b"line one\nline two\n", 10)


def test_labels_name_no_reader_gap_for_these_files():
    """The corpus entries of the files above load; their labels no longer carry a reader_gap."""
    labels = json.loads((RUNS.parent / "labels.json").read_text())
    fixed = ("f12b1-08", "f12b1-09", "f7b3-06", "f7b3-08")
    assert not [e["id"] for e in labels if e["id"].startswith(fixed) and e.get("reader_gap")]


_SEGFAULT_WORKER = r"""
import os, signal, torch
from torch.utils.data import DataLoader, Dataset
for i in range(1, 31):
    print(f"step {i} | loss {2.0 / i:.4f} | lr 0.001", flush=True)
class Bad(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        os.kill(os.getpid(), signal.SIGSEGV)
for b in DataLoader(Bad(), num_workers=1):
    pass
"""


def test_a_nul_written_by_a_program_is_no_hole(tmp_path):
    """PyTorch's DataLoader segfault handler writes its message with the C string's terminating NUL
    (realworld f7b1-13: eight such lines). Captured from a real worker killed by SIGSEGV: the NUL is
    dropped without a warning (nothing is missing, so the data is not partial) and the lines read."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    log = tmp_path / "train.log"
    with open(log, "wb") as fh:
        p = subprocess.run(
            [sys.executable, "-c", _SEGFAULT_WORKER],
            stdout=fh,
            stderr=subprocess.STDOUT,
            timeout=600,
        )
    assert p.returncode != 0
    assert b"worker.\n\x00" in log.read_bytes()
    ((_, run),) = load_path(log).runs
    assert not any("NUL" in w for w in run.warnings), run.warnings
    assert len(run.metrics.series("train/loss")) == 30
    assert any(ln.text.startswith("ERROR: Unexpected segmentation fault") for ln in run.console)
