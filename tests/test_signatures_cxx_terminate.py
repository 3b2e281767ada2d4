"""signatures.scan: a C++ exception nothing caught (libstdc++'s verbose terminate handler prints
``terminate called after throwing an instance of 'T'`` and ``  what():  MESSAGE``, then the process
aborts) is the run's exception, class and message, as a pasted Python exception line is.

The message is produced by a real C++ program compiled with the system's g++ and run as a user runs a
job (``./train > log 2>&1``); torch's ``c10::Error`` reaches the same handler.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

SOURCE = """#include <stdexcept>
int main() { throw std::runtime_error("CUDA error: an illegal memory access was encountered"); }
"""


@pytest.fixture
def aborted_log(tmp_path):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++ to build the C++ program that throws")
    (tmp_path / "t.cpp").write_text(SOURCE)
    subprocess.run([gxx, "-o", str(tmp_path / "t"), str(tmp_path / "t.cpp")], check=True)
    log = tmp_path / "train.log"
    with log.open("w") as fh:
        fh.write("epoch 1 loss 2.31\nepoch 2 loss 2.05\n")
        fh.flush()
        res = subprocess.run([str(tmp_path / "t")], stdout=fh, stderr=subprocess.STDOUT)
    assert res.returncode != 0
    assert "terminate called after throwing an instance of" in log.read_text()
    return log


def test_an_uncaught_cxx_exception_is_the_runs_crash(aborted_log):
    out = CliRunner().invoke(app, ["logs", str(aborted_log), "--format", "json"]).stdout
    v = json.loads(out)["verdict"]
    assert v["outcome"] == "crashed"
    assert "std::runtime_error" in v["summary"] and "illegal memory access" in v["summary"]
