"""The figures failed comparisons print, parsed from a real pytest run, and path confinement.

A small suite of failing comparisons (pytest.approx on a list and on a scalar, numpy's
assert_allclose, torch's assert_close, each also with a length mismatch) is run with
``python -m pytest -rA`` in a subprocess; the log is pytest's own output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.ci.logs import scan_logs
from mlaudit_core.ci.model import CIContext
from mlaudit_core.ci.trace import confine

SUITE = """\
import numpy as np
import pytest
import torch

a = [1.0, 2.0, 3.0, 4.0]
b = [1.0, 2.001, 2.999, 4.0]


def test_approx_list():
    assert a == pytest.approx(b, rel=1e-4)


def test_approx_scalar():
    assert 4.1779 == pytest.approx(3.48158, rel=0.0125)


def test_approx_len():
    assert a == pytest.approx(b[:3], rel=1e-4)


def test_allclose():
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_allclose_len():
    np.testing.assert_allclose(a, b[:3], rtol=1e-5)


def test_close():
    torch.testing.assert_close(torch.tensor(a), torch.tensor(b))


def test_close_len():
    torch.testing.assert_close(torch.tensor(a), torch.tensor(b[:3]))
"""


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    d = tmp_path_factory.mktemp("asserts")
    (d / "test_shapes.py").write_text(SUITE)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_shapes.py"],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    log = d / "ci.log"
    log.write_text(res.stdout + res.stderr)
    ctx = CIContext(repo=str(d))
    scan_logs(ctx, [(log, "ci.log")])
    return {a.test.split("::")[-1]: a for a in ctx.assertions}, res.stdout


def test_every_failed_comparison_is_parsed_and_tied_to_its_test(parsed):
    got, out = parsed
    assert out.count("FAILED test_shapes.py::") == 7
    assert set(got) == {
        "test_approx_list",
        "test_approx_scalar",
        "test_approx_len",
        "test_allclose",
        "test_allclose_len",
        "test_close",
        "test_close_len",
    }
    assert all(a.test.startswith("test_shapes.py::") for a in got.values())
    assert got["test_close"].location.startswith("test_shapes.py:")


def test_figures_are_the_libraries_own(parsed):
    got, _ = parsed
    al = got["test_approx_list"]
    # pytest: max |a - e| and max |a - e| / |a| over the mismatched elements
    assert (al.kind, al.n_mismatch, al.n_total) == ("approx", 2, 4)
    assert al.max_abs == pytest.approx(0.001, rel=1e-9)
    assert al.max_rel == pytest.approx(0.001 / 2.0, rel=1e-9)
    sc = got["test_approx_scalar"]  # the example: assert 4.1779 == 3.48158 ± 4.3e-02
    assert (sc.obtained, sc.expected) == (4.1779, 3.48158)
    assert sc.tolerance == pytest.approx(3.48158 * 0.0125, rel=1e-5)
    ac = got["test_allclose"]
    assert (ac.kind, ac.n_mismatch, ac.rtol, ac.atol, ac.among_violations) == (
        "allclose",
        2,
        1e-5,
        0.0,
        True,
    )
    assert ac.max_rel == pytest.approx(0.001 / 2.001, rel=1e-4)
    tc = got["test_close"]
    assert (tc.kind, tc.n_mismatch, tc.rtol, tc.atol) == ("assert_close", 2, 1.3e-6, 1e-5)
    # lengths are (expected, actual) whatever order each library prints them in
    for name in ("test_approx_len", "test_allclose_len", "test_close_len"):
        assert got[name].kind == "length" and got[name].lengths == [3, 4], name


def test_confine_keeps_paths_inside_the_repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("s")
    (repo / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert confine(repo, "tests/test_a.py")[0] == (repo / "tests" / "test_a.py").resolve()
    assert confine(repo, "../secret.txt")[0] is None
    assert confine(repo, "tests/../../secret.txt")[0] is None
    assert confine(repo, "link.txt")[0] is None  # a symlink out of the repo
    assert confine(repo, "/proc/self/environ")[0] is None
    assert confine(repo, str(tmp_path / "secret.txt"))[0] is None
    p, _ = confine(repo, "/home/runner/work/proj/proj/tests/test_a.py")
    assert p == (repo / "tests" / "test_a.py").resolve()
    assert confine(repo, "/etc/test_a.py")[0] is None  # a bare file name is not a runner path
    assert isinstance(Path(confine(repo, str(repo / "tests" / "test_a.py"))[0]), Path)
