"""Shared fixtures: a real ``mlflow server`` on 127.0.0.1 with a sqlite backend, and helpers."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

# SIGTERM ends a session as Ctrl-C does: fixtures' finalizers stop the servers they started
# (tests/sigterm_teardown.py)
pytest_plugins = ["sigterm_teardown"]

# The tests talk to 127.0.0.1 only: MLflow's usage telemetry (HTTPS to
# config.mlflow-telemetry.io, on by default since MLflow 3.2) is off for this process and every
# process it starts (mlflow server, training scripts, mlaudit), before mlflow is imported.
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

REPO = Path(__file__).resolve().parents[1]
SHARED_CASES = REPO.parent / "shared" / "cases"

# tests/data holds run material, including copies of other projects' repositories with their own
# tests and conftest.py files (tests/data/ci_real/*/repo): data, never collected as tests.
collect_ignore = ["data"]


@pytest.fixture(scope="module")
def ray_exclusive(tmp_path_factory):
    """Hold a lock shared by every pytest-xdist worker of this session while a test starts Ray.

    ``ray.init()`` without an address joins a Ray it finds running on the machine (its GCS
    process, ``/tmp/ray/ray_current_cluster``) instead of starting its own, so the local Ray of
    test_batch_mlflow's ``--executor ray`` must not start while test_batch_trackers' ``ray
    start --head`` cluster runs on another worker (``-n 2 --dist loadfile``). An ``fcntl``
    lock on a file in the session's base temp dir, which the workers' temp dirs share; in a
    serial run it is always free."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(root / "ray.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """Start ``mlflow server`` (sqlite backend, local artifact store) and yield its URL and db URI.

    Yields a dict with ``url`` (http://127.0.0.1:PORT) and ``db_uri`` (sqlite:///...). The
    server is stopped at the end of the session.
    """
    pytest.importorskip("mlflow")
    root = tmp_path_factory.mktemp("mlflow-server")
    db = root / "mlflow.db"
    port = free_port()
    mlflow_bin = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or "mlflow"
    env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    proc = subprocess.Popen(
        [
            mlflow_bin,
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{db}",
            "--artifacts-destination",
            str(root / "artifacts"),
            "--workers",
            "1",
        ],
        stdout=open(root / "server.log", "wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                "mlflow server exited:\n" + (root / "server.log").read_text()[-3000:]
            )
        try:
            if requests.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except requests.RequestException:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError(
            "mlflow server did not start in 90 s:\n" + (root / "server.log").read_text()[-3000:]
        )
    yield {"url": url, "db_uri": f"sqlite:///{db}", "root": root}
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


# --- markers: unit (the default), e2e (real servers, processes, trainings), slow ----------------
# A test is ``e2e`` when its own source or the source of a fixture it uses (directly or through
# other fixtures) starts a process, a server, a thread that serves, or a training with a real
# framework; ``slow`` when that is a framework training. Everything else is ``unit``:
# ``pytest -m unit`` runs the fast part, the README's command runs everything.
_E2E_SOURCE = re.compile(
    r"subprocess|Popen|_child\(|sys\.executable|uvicorn|threading\.Thread|Thread\(|wandb\.init|"
    r"Task\.init|ray\.init|ray_head|webdriver|multiprocessing|\.fit\(|Trainer\(|serve_forever|"
    r"mlflow\.start_run|make_server|HTTPServer|os\.fork|run_script|_run_training|"
    r"ProcessPoolExecutor|generate\(|load_offline|TaskInit|offline_session"
)
_SLOW_SOURCE = re.compile(
    r"_child\(|\.fit\(|Trainer\(|import torch|import lightning|import keras|"
    r"transformers|ray\.init|ray_head|generate\("
)


@functools.cache
def _source_of(func) -> str:
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return ""


def _sources(item) -> list[str]:
    """The test function's source and those of every fixture it uses (pytest resolves the
    transitive closure into ``fixturenames``)."""
    out = [_source_of(getattr(item, "function", None) or item.obj)] if hasattr(item, "obj") else []
    info = getattr(item, "_fixtureinfo", None)  # pytest's FixtureFunctionInfo (pytest 8-9)
    defs = getattr(info, "name2fixturedefs", {}) if info is not None else {}
    for name in getattr(item, "fixturenames", ()):
        if name == "_unit_guard":  # names Popen/fork to refuse them, starts nothing
            continue
        for fd in defs.get(name, ())[-1:]:
            out.append(_source_of(fd.func))
    return out


def pytest_configure(config):
    for name, text in (
        ("unit", "fast: no process, server or real-framework training (the default)"),
        ("e2e", "starts a real server, process or training"),
        ("slow", "trains with a real framework (seconds to minutes)"),
    ):
        config.addinivalue_line("markers", f"{name}: {text}")
    # ``--dist loadfile`` hands out whole files in the order of the collection, which
    # pytest_collection_modifyitems below sorts longest first; xdist's own reorder (by number of
    # tests per file, on by default) would put the many-test unit files first and leave the few-test
    # training files for the end, where one worker trains for minutes while the other idles.
    # ``--loadscope-reorder`` given on the command line keeps xdist's order.
    if "--loadscope-reorder" not in config.invocation_params.args and hasattr(
        config.option, "loadscopereorder"
    ):
        config.option.loadscopereorder = False


def _listed_tests() -> tuple[frozenset[str], frozenset[str]]:
    """The entries of tests/e2e_tests.txt (``path`` or ``path::test``), and those of them whose
    line ends in ``slow`` (a module fixture or test that trains or round-trips a server for
    more than ~20 s, measured with ``--durations``)."""
    e2e, slow = set(), set()
    for line in (Path(__file__).parent / "e2e_tests.txt").read_text().splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        e2e.add(parts[0])
        if parts[1:2] == ["slow"]:
            slow.add(parts[0])
    return frozenset(e2e), frozenset(slow)


_E2E_TESTS, _SLOW_TESTS = _listed_tests()


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by these markers
def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        marked = {m.name for m in item.iter_markers()}
        if "unit" in marked:
            continue
        try:
            rel = item.path.relative_to(here).as_posix()
            keys = (rel, f"{rel}::{item.originalname}")
        except (ValueError, AttributeError):
            keys = ()
        listed = any(k in _E2E_TESTS for k in keys)
        srcs = _sources(item)
        if marked & {"e2e", "slow"} or listed or any(_E2E_SOURCE.search(s) for s in srcs):
            if "e2e" not in marked:  # a module or test marked e2e by hand may still be slow
                item.add_marker(pytest.mark.e2e)
            if "slow" not in marked and (
                any(k in _SLOW_TESTS for k in keys) or any(_SLOW_SOURCE.search(s) for s in srcs)
            ):
                item.add_marker(pytest.mark.slow)
        else:
            item.add_marker(pytest.mark.unit)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = _longest_files_first(items)


# Expected cost of one test by its marker, in seconds of CPU on one worker (the fresh-clone
# figures of the README's test section: a unit test ~0.05 s; an e2e test a process or server round
# trip of seconds; a slow test a share of a framework training of tens of seconds).
_COST = {"slow": 10.0, "e2e": 2.0, "unit": 0.05}


def _longest_files_first(items: list) -> list:
    """``items`` regrouped by file, the files in order of their summed :data:`_COST`, highest first
    (ties: collection order); the order within a file is kept.

    Workers of ``-n 2 --dist loadfile`` take the next whole file when they finish one: long
    training files first and the many short unit files last lets the two workers end together
    (longest-processing-time-first scheduling). Run only in xdist workers, whose collection
    order is the order the controller hands out files in."""
    files: dict[Path, list] = {}
    for item in items:
        files.setdefault(item.path, []).append(item)

    def cost(group: list) -> float:
        return sum(
            next((c for m, c in _COST.items() if item.get_closest_marker(m)), _COST["unit"])
            for item in group
        )

    ordered = sorted(files.values(), key=cost, reverse=True)  # stable: ties keep their order
    return [item for group in ordered for item in group]


class UnitStartedProcess(AssertionError):
    """A test marked ``unit`` started a process, forked or listened on a socket: it is ``e2e``."""


_PROBES = (f"{os.sep}platform.py", f"ctypes{os.sep}util.py")
_SEEN = pytest.StashKey[list]()


@contextlib.contextmanager
def _refusing(nodeid: str, seen: list):
    """While active, ``subprocess.Popen``, ``os.fork`` and ``socket.socket.listen`` raise
    :class:`UnitStartedProcess` and append what was refused to ``seen``."""

    def refuse(what, original):
        def _raise(*args, **kwargs):
            # a library's import-time probe of the machine (platform.processor() runs
            # ``uname -p``; ctypes.util.find_library runs ldconfig/gcc) is not the test's process
            frame = sys._getframe(1)
            for _ in range(8):
                if frame is None:
                    break
                if frame.f_code.co_filename.endswith(_PROBES):
                    return original(*args, **kwargs)
                frame = frame.f_back
            seen.append(what)
            raise UnitStartedProcess(f"{nodeid} is marked unit but {what}: mark it e2e")

        return _raise

    mp = pytest.MonkeyPatch()
    mp.setattr(
        subprocess.Popen,
        "__init__",
        refuse("started a process (subprocess.Popen)", subprocess.Popen.__init__),
    )
    mp.setattr(os, "fork", refuse("forked (os.fork)", os.fork))
    mp.setattr(
        socket.socket,
        "listen",
        refuse("listened on a socket (socket.listen)", socket.socket.listen),
    )
    try:
        yield
    finally:
        mp.undo()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A module- or session-scoped fixture first set up for a ``unit`` test runs under the
    same refusal as the test (see :func:`_unit_guard`)."""
    item = getattr(request, "_pyfuncitem", None)
    if (
        item is None
        or item.get_closest_marker("unit") is None
        or fixturedef.argname == "_unit_guard"
    ):
        return (yield)
    with _refusing(item.nodeid, item.stash.setdefault(_SEEN, [])):
        return (yield)


@pytest.fixture(autouse=True)
def _unit_guard(request):
    """Make the ``unit`` classification self-checking: while a ``unit`` test and the fixtures
    it sets up run, ``subprocess.Popen``, ``os.fork`` and ``socket.socket.listen`` raise
    :class:`UnitStartedProcess`, and the test fails at teardown even when its code caught the
    error. A miss of the source rule above shows up as a failure naming the test, not as a
    slow ``pytest -m unit``; the fix is an entry in ``_E2E_TESTS`` (or ``pytest.mark.e2e`` on
    the test, or ``pytestmark = pytest.mark.e2e`` in a module that is e2e throughout)."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    seen = request.node.stash.setdefault(_SEEN, [])
    with _refusing(request.node.nodeid, seen):
        yield
    if seen:
        pytest.fail(
            f"{request.node.nodeid} is marked unit but {seen[0]}: mark it e2e", pytrace=False
        )
