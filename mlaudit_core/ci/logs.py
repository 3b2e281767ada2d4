"""Evidence from CI logs: failure, pass and metric lines, test outcomes, metric values, environment changes.

Lines that start with ``# `` are annotations (a reporter's context), never log
content: they are kept for context windows and environment hints but are not
failure, pass or metric lines. Every line keeps its file and 1-based number and
a context window of ``window`` lines on each side.

Metric values are read from the common training-log shapes:

* Megatron-LM: ``iteration 10/ 100 | ... | lm loss: 1.0824E+01 | grad norm: 3.1 |``
* key/value with a step: ``step 10 loss=1.23 acc: 0.5``, ``epoch 3: val_loss=0.41``
* Python dict literals (Hugging Face Trainer): ``{'loss': 0.52, 'epoch': 1.0, 'step': 10}``
  (read with :func:`ast.literal_eval`, never evaluated)

Logs as CI systems store them are read as the job printed them (:func:`clean_line`): ANSI
colour / cursor sequences, Buildkite's per-line timestamps (``ESC _bk;t=1700000000000 BEL``),
the ISO timestamps of GitHub Actions' downloaded logs (``2024-05-01T12:00:00.1234567Z``) and
of GitLab's ``FF_TIMESTAMPS`` (``...Z 00O+``), and GitLab's ``section_start:`` /
``section_end:`` markers are removed; line numbers are kept.

A log can hold runs of two code versions: the change under test and the *old* code (a step
that checks out the base branch / previous commit, a reference job's log). Lines after a
version switch (``git checkout main``, ``HEAD~1``, a Buildkite ``--- `` / ``+++ `` / ``~~~ ``
or GitHub ``##[group]`` section titled "reference" / "baseline" / "previous commit", a log
file named ``*main*`` / ``*reference*`` / ``*base*``) belong to that version: their test
outcomes, assertion figures and metric values are kept apart (``ref_tests``,
``ref_assertions``, ``references``) so the failing run is judged on its own values, and the old
code's results tell drift (old code fails too) from a real change (old code still passes).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from ..rundata import ConsoleLine
from .model import CIContext, EnvChange, Line, LogAssertion, Measured, TestResult, ValueSet

_NUM = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_FAIL = re.compile(
    r"\bFAIL(?:ED|S|URE)?\b|\bfail(?:s|ed|ing|ure)\b|\bError\b|[A-Za-z]+Error\b|Traceback|"
    r"\bassert(?:ion)?\b.*\bfail|timed? ?out\b|\bTimeout\b|exit(?:ed)? (?:code|status) [1-9]|"
    r"non-zero exit|\bERROR\b|\bKilled\b|Segmentation fault|core dumped",
    re.IGNORECASE,
)
_PASS = re.compile(
    r"\bPASS(?:ED|ES)?\b|\bpass(?:es|ed)\b|\bOK\b|\bsucceeded\b|\bsuccess(?:ful)?\b|✓|"
    r"\b\d+ passed\b",
    re.IGNORECASE,
)
#: substrings (lower case) one of which every _FAIL / _PASS match contains: a cheap prefilter
_FAIL_WORDS = (
    "fail",
    "error",
    "traceback",
    "time",
    "exit",
    "non-zero",
    "killed",
    "segmentation",
    "core dumped",
)
_PASS_WORDS = ("pass", "ok", "succe", "✓")
_NOT_FAIL = re.compile(
    r"\b0 failed\b|no (?:training )?(?:crashes|failures|errors)|without (?:error|failure)",
    re.IGNORECASE,
)
_MEGATRON = re.compile(r"\biteration\s+(\d+)\s*/\s*\d+\s*\|(.*)")
_STEP = re.compile(
    r"\b(?:global_step|step|iter|iteration|it|epoch)\b\s*[:=#]?\s*(\d+)", re.IGNORECASE
)
_PAIR = re.compile(
    r"(?P<k>[A-Za-z][\w./\-]*(?: [A-Za-z][\w./\-]*){0,2})\s*[:=]\s*(?P<v>" + _NUM + r"|nan|inf)"
    r"(?![\w.])",
    re.IGNORECASE,
)
_DICT = re.compile(r"\{\s*['\"][^{}]*\}")
_TEST = re.compile(
    r"^(?:(?P<o1>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(?P<t1>\S+::\S+)(?:\s+-\s+(?P<m1>.*))?"
    r"|(?P<t2>\S+::\S+)\s+(?P<o2>PASSED|FAILED|ERROR|SKIPPED)\b.*)$"
)
_ASSERT_CMP = re.compile(
    r"assert\s+(?P<a>" + _NUM + r")\s*(?P<op><=|>=|<|>|==|!=)\s*(?P<b>" + _NUM + r")"
)
_FAILED_METRICS = re.compile(
    r"following metrics failed:\s*(?P<m>.+)$|metrics? failed:\s*(?P<m2>.+)$", re.IGNORECASE
)
_TIMEOUT = re.compile(
    r"timed? ?out|\bTimeout\b|time limit|DUE TO TIME LIMIT|exceeded the maximum|"
    r"job exceeded|deadline exceeded|TimeoutError|pytest-timeout|"
    r"execution took longer than",  # GitLab: "Job failed: execution took longer than 1h0m0s"
    re.IGNORECASE,
)
_TIMEOUT_NOT = re.compile(
    r"no (?:training )?(?:crashes|failures)|timeout[-_ ]minutes|--timeout|"
    # pytest-timeout's session header states its settings: "timeout: 900.0s",
    # "timeout method: signal", "timeout func_only: False"; nothing timed out
    r"^\s*timeout(?: method| func_only)?: \S+\s*$",
    re.IGNORECASE,
)
_SECTION = re.compile(r"^_{3,} (?P<t>\S+(?: \S+)?) _{3,}$")
_E_LINE = re.compile(r"^E(?:\s|$)(?P<t>.*)$")
_LOCATION = re.compile(r"^(?P<f>[^\s:]+\.py):(?P<l>\d+): (?P<e>[\w.]+)")
_F = r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf)"
_A_MISMATCH = re.compile(r"Mismatched elements: (\d+) / (\d+)")
_A_PYTEST_ABS = re.compile(r"^Max absolute difference: " + _F)
_A_PYTEST_REL = re.compile(r"^Max relative difference: " + _F)
_A_NP_ABS = re.compile(r"^Max absolute difference(?P<v> among violations)?: " + _F)
_A_NP_REL = re.compile(r"^Max relative difference(?P<v> among violations)?: " + _F)
_A_NP_TOL = re.compile(r"Not equal to tolerance rtol=" + _F + r", atol=" + _F)
_A_TORCH_ABS = re.compile(
    r"Greatest absolute difference: " + _F + r".*?\(up to " + _F + r" allowed\)"
)
_A_TORCH_REL = re.compile(
    r"Greatest relative difference: " + _F + r".*?\(up to " + _F + r" allowed\)"
)
_A_LEN_PYTEST = re.compile(r"Lengths: (\d+) and (\d+)")
_A_LEN_NP = re.compile(r"\(shapes \((\d+),?\), \((\d+),?\) mismatch\)")
_A_LEN_TORCH = re.compile(
    r"'shape' do not match: torch\.Size\(\[(\d+)\]\) != torch\.Size\(\[(\d+)\]\)"
)
_A_SCALAR = re.compile(r"assert " + _F + r" == " + _F + r" ± " + _F)


# -- CI systems' log framing ---------------------------------------------------------------
#: ANSI: CSI sequences (colours, cursor), OSC / APC strings (Buildkite's ``ESC _bk;t=... BEL``
#: timestamps, links ``ESC ]1339;... BEL``) ended by BEL or ST, and lone two-byte escapes
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]_P^X][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
#: a timestamp a CI system puts before every line: GitHub Actions' downloaded logs
#: (``2024-05-01T12:00:00.1234567Z ``), GitLab FF_TIMESTAMPS (``2024-05-14T11:19:20.000000Z 00O+``)
_TS_PREFIX = re.compile(
    r"^\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\]?"
    r"(?: [0-9a-f]{2}[OE]\+?)? ?"
)
_GITLAB_SECTION = re.compile(r"section_(?:start|end):\d+:[\w.\-]+(?:\[[^\]]*\])?\r?")


def clean_line(text: str) -> str:
    """The text a CI job printed, without the CI system's framing (see the module docstring).

    >>> clean_line("\x1b_bk;t=1700000000000\x07\x1b[31mFAILED\x1b[0m tests/t.py::test_a")
    'FAILED tests/t.py::test_a'
    """
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    if "section_" in text:
        text = _GITLAB_SECTION.sub("", text)
    if text[:1] in "[0123456789" and len(text) >= 20:
        text = _TS_PREFIX.sub("", text, count=1)
    if "\r" in text:  # a progress line redrawn with carriage returns shows its last state
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    return text


# -- which code version a log segment ran ---------------------------------------------------
#: a version switch: ``git checkout [-f] REF``, ``git switch REF``, ``git worktree add DIR REF``
_CHECKOUT = re.compile(
    r"\bgit\s+(?:-C\s+\S+\s+)?(?:checkout|switch)\s+(?:-[-\w]+\s+)*(?P<ref>[^\s;&|'\"]+)(?P<rest>.*)"
    r"|\bgit\s+worktree\s+add\s+(?:-[-\w]+\s+)*\S+\s+(?P<ref2>[^\s;&|'\"]+)"
)
_HEAD_AT = re.compile(r"HEAD is now at (?P<sha>[0-9a-f]{7,40})\b")
#: a section title: Buildkite ``--- `` / ``+++ `` / ``~~~ ``, GitHub ``##[group]``, a ``::group::``
_SECTION_TITLE = re.compile(r"^(?:(?:---|\+\+\+|~~~) |##\[group\]|::group::)(?P<t>.+)$")
#: a checkout target that is the old code
_REF_TARGET = re.compile(
    r"^(?:(?:origin|upstream)/)?(?:main|master|trunk)$|^HEAD(?:~\d*|\^+)$|^@(?:~\d*|\^+)$|"
    r"base|reference|last[-_]?green|previous|parent|baseline|merge[-_]base|BASE_REF|"
    r"TARGET_BRANCH|BASE_BRANCH|BASE_SHA|BASE_COMMIT",
    re.IGNORECASE,
)
#: a section title (or log file name) that names the old code
_REF_TITLE = re.compile(
    r"\breference\b|\bbaseline\b|\bprevious (?:commit|version|release|code|build)\b|"
    r"\bparent commit\b|\blast[- ]green\b|\bold code\b|\bbase (?:branch|commit|code|sha|ref)\b|"
    r"\bon (?:origin/)?(?:main|master)\b|[@(\[] ?(?:origin/)?(?:main|master)\b|"
    r"\b(?:main|master) (?:branch|commit|code)\b|\brevert(?:ed|ing)?\b|HEAD(?:~\d*|\^+)",
    re.IGNORECASE,
)
#: a section title that names the change under test
_CAND_TITLE = re.compile(
    r"\b(?:PR|pull request|merge request|MR|candidate|new code|this (?:commit|change|PR)|"
    r"feature branch|change under test)\b|\bHEAD\b(?![~^])",
)
_REF_FILE = re.compile(
    r"(?:^|[_\-.\s/])(?:main|master|base|baseline|reference|ref|previous|prev|parent|"
    r"old|lastgreen|last[-_]green|revert(?:ed)?)(?=$|[_\-.\s/])",
    re.IGNORECASE,
)
#: the runner / agent a job ran on
_RUNNER = re.compile(
    r"(?:Runner name|Agent name|BUILDKITE_AGENT_NAME|RUNNER_NAME)\s*[:=]\s*['\"]?(?P<n>[\w.\-]+)"
    r"|\bRunning on (?P<g>[\w.\-]+) via\b",
    re.IGNORECASE,
)
#: a statement about the old code (a reporter's note, a PR description, a bisect step)
_OLD_CODE = re.compile(
    r"\b(?:old|previous|parent|base|baseline|reference|last[- ]green|prior)\s+"
    r"(?:code|commit|build|run|job|sha|branch|revision)\b|"
    r"\b(?:origin/)?(?:main|master)(?![.\w/])(?:\s+(?:branch|commit|build|job|code))?|"
    r"HEAD(?:~\d*|\^+)|\brevert(?:ing|ed)?\b|\bthe commit before\b|\bbefore (?:the|this) (?:PR|change|commit)\b",
    re.IGNORECASE,
)
#: substrings (lower case) one of which every _OLD_CODE match contains: a cheap prefilter
_OLD_WORDS = (
    "old",
    "prev",
    "parent",
    "base",
    "reference",
    "green",
    "prior",
    "main",
    "master",
    "head",
    "revert",
    "before",
)
_OLD_YES = re.compile(
    r"\b(?:still\s+)?(?:reproduces?|reproduced|reproducing|matches|matched|passes|passed|"
    r"is within|stays within|within tolerance|restores?|restored|recovers?|green)\b",
    re.IGNORECASE,
)
_OLD_NO = re.compile(
    r"\b(?:also|too|as well|likewise|equally)\b[^.;]*\bfail|\bfail(?:s|ed)?\b[^.;]*\b(?:too|as well|also)\b|"
    r"\b(?:also|both)\b[^.;]*\b(?:drift|differ|diverge)|\bfails? the same\b|\bsame (?:failure|drift|values)\b",
    re.IGNORECASE,
)
_OLD_ABOUT = re.compile(
    r"golden|expected|reference|tolerance|values?|test|gate|assert|pass|reproduc|green",
    re.IGNORECASE,
)


def ref_statement(text: str) -> bool | None:
    """What a prose line says about the old code: True (it still reproduces the golden
    values / passes), False (it fails the same way too), None (it says neither)."""
    if not _OLD_CODE.search(text) or not _OLD_ABOUT.search(text):
        return None
    if _OLD_NO.search(text):
        return False
    if _OLD_YES.search(text) and not re.search(
        r"\b(?:not|no longer|never|doesn't|does not)\b[^.;]*\b(?:reproduce|match|pass)",
        text,
        re.IGNORECASE,
    ):
        return True
    return None


def version_cue(text: str) -> tuple[str, str] | None:
    """(role, label) when a line switches the code version: ``("reference", "git checkout main")``
    or ``("candidate", "git checkout -f 3f2a...")``; None for any other line."""
    m = _CHECKOUT.search(text) if "git" in text else None
    if m:
        ref = m["ref"] or m["ref2"]
        rest = m["rest"] or ""
        if ref == "--" or re.match(r"\s+--\s", rest + " ") or ref.startswith("-"):
            return None  # `git checkout REF -- path`: files, not a version switch
        # actions/checkout checks out the job's own ref: `git checkout --progress --force -B
        # main refs/remotes/origin/main` on a push to main is the code under test
        own = "--progress" in text or re.search(r"\s-B\s", text) or "refs/remotes/pull/" in text
        role = "reference" if _REF_TARGET.search(ref) and not own else "candidate"
        return role, text.strip()[:200]
    t = _SECTION_TITLE.match(text)
    if t:
        title = t["t"].strip()
        if _REF_TITLE.search(title):
            return "reference", title[:200]
        if _CAND_TITLE.search(title):
            return "candidate", title[:200]
    return None


def parse_assertion(block: list[str]) -> dict | None:
    """Figures of one failed comparison from its ``E`` lines (their text without the ``E``).

    Recognises pytest.approx (``Mismatched elements: 2 / 4:``, ``Max absolute difference:``,
    ``Lengths: 3 and 4``, ``assert 4.1 == 3.4 ± 0.04``), numpy.testing (``Not equal to
    tolerance rtol=..., atol=...``, ``... among violations``, ``(shapes (4,), (3,) mismatch)``)
    and torch.testing (``Greatest absolute difference: x at index (1,) (up to 1e-05 allowed)``,
    ``torch.Size([4]) != torch.Size([3])``). Returns ``None`` for anything else.
    """
    text = "\n".join(x.strip() for x in block)
    out: dict = {}
    m = _A_LEN_PYTEST.search(text)
    if m and "different sizes" in text:  # pytest prints len(expected) first
        return {"kind": "length", "lengths": [int(m[1]), int(m[2])]}
    m = _A_LEN_NP.search(text)
    if m:  # numpy prints (actual, desired)
        return {"kind": "length", "lengths": [int(m[2]), int(m[1])]}
    m = _A_LEN_TORCH.search(text)
    if m:  # torch prints (actual, expected)
        return {"kind": "length", "lengths": [int(m[2]), int(m[1])]}
    m = _A_MISMATCH.search(text)
    if m:
        out["n_mismatch"], out["n_total"] = int(m[1]), int(m[2])
    if "Tensor-likes are not close" in text or "Scalars are not close" in text:
        out["kind"] = "assert_close"
        a, r = _A_TORCH_ABS.search(text), _A_TORCH_REL.search(text)
        if a:
            out["max_abs"], out["atol"] = float(a[1]), float(a[2])
        if r:
            out["max_rel"], out["rtol"] = float(r[1]), float(r[2])
        return out
    t = _A_NP_TOL.search(text)
    if t:
        out["kind"] = "allclose"
        out["rtol"], out["atol"] = float(t[1]), float(t[2])
        for ln in text.split("\n"):
            a, r = _A_NP_ABS.match(ln), _A_NP_REL.match(ln)
            if a:
                out["max_abs"], out["among_violations"] = float(a[2]), bool(a["v"])
            if r:
                out["max_rel"] = float(r[2])
        return out
    if "comparison failed" in text or "approx(" in text or " ± " in text:
        out["kind"] = "approx"
        for ln in text.split("\n"):
            a, r = _A_PYTEST_ABS.match(ln), _A_PYTEST_REL.match(ln)
            if a:
                out["max_abs"] = float(a[1])
            if r:
                out["max_rel"] = float(r[1])
        s = _A_SCALAR.search(text)
        if s:
            out["obtained"], out["expected"], out["tolerance"] = (
                float(s[1]),
                float(s[2]),
                float(s[3]),
            )
            out.setdefault("n_mismatch", 1)
            out.setdefault("n_total", 1)
            out["max_abs"] = abs(out["obtained"] - out["expected"])
            if out["expected"]:
                out["max_rel"] = out["max_abs"] / abs(out["expected"])
        return out if len(out) > 1 else None
    return None


_SUCCESS_INSTALL = re.compile(r"Successfully installed (?P<pk>.+)$")
_PIN = re.compile(r"^\s*(?P<n>[A-Za-z0-9][A-Za-z0-9_.\-]*)\s*==\s*(?P<v>[\w.+\-!]+)\s*$")
_VER = r"v?\d+(?:\.\d+)+(?:[-+.]?[A-Za-z0-9]+)*"
_TRANSITION = re.compile(
    r"(?:(?:bump|upgrade|update|move|change)[sd]?\s+(?P<n1>[A-Za-z][\w.\-/:]*?(?:\s+[A-Za-z][\w.\-/]*?){0,2})"
    r"\s+(?:version\s+)?from\s+(?:[\w.\-/]+:)?"
    r"(?P<o1>" + _VER + r")\s+to\s+(?:[\w.\-/]+:)?(?P<v1>" + _VER + r"))"
    r"|(?:(?P<n2>[A-Za-z][\w.\-/:]*?)[\s:=]+(?P<o2>"
    + _VER
    + r")\s*(?:->|→|=>)\s*(?:(?P=n2)[\s:=]*)?(?P<v2>"
    + _VER
    + r"))"
    r"|(?:(?P<o3>" + _VER + r")\s*(?:->|→|=>)\s*(?P<v3>" + _VER + r"))"
    r"|(?:(?P<n4>image|docker image|container)[\w\s]*?\s+(?:version\s+)?to\s+(?P<v4>"
    + _VER
    + r"))",
    re.IGNORECASE,
)
# "Pulling image repo/x:26.04 (was repo/x:26.02)", "(previous run: repo/x:2026-11-17)"
_WAS = re.compile(
    r"\b(?P<n>image|container)\s+(?P<new>[^\s()]+)\s*\((?:was|previous(?: run)?:?|previously)\s+"
    r"(?P<old>[^\s()]+)\)",
    re.IGNORECASE,
)
_ENV_WORDS = re.compile(
    r"image|docker|container|version|upgrade|bump|update|cuda|driver|torch|package|pip|"
    r"==|nvcr|wheel|requirements",
    re.IGNORECASE,
)


def _free_timeout(text: str) -> bool:
    """A timeout statement, not the word inside a path or identifier (``/tmp/test_timeout0/``)."""
    for m in _TIMEOUT.finditer(text):
        before = text[m.start() - 1] if m.start() else " "
        after = text[m.end()] if m.end() < len(text) else " "
        if before in "/\\_-." or after in "/\\_-":
            continue
        return True
    return False


def read_lines(path: Path, source: str | None = None) -> list[ConsoleLine]:
    """The lines of a text file as :class:`ConsoleLine` (1-based), decoding errors replaced."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [
        ConsoleLine(source or str(path), i, t.rstrip("\r"))
        for i, t in enumerate(text.split("\n"), 1)
        if not (i > 1 and t == "" and i == len(text.split("\n")))
    ]


def read_log_lines(
    path: Path, source: str | None = None, notes: list[str] | None = None, option: str = "--logs"
) -> list[ConsoleLine]:
    """The lines of a user-given text file (a CI log) as :class:`ConsoleLine` (1-based).

    Read with the console-log reader (:class:`~mlaudit_core.formats.consolelog.reader.LineReader`), so a
    binary file is refused, ``.gz`` is decompressed and over-long lines are cut; its warnings
    (invalid UTF-8, cut lines) are appended to ``notes``. An empty file has no lines.

    Raises:
        UnreadableLog: the file is binary (NUL bytes in its first 8 KiB) or cannot be read;
            the message starts with ``option`` and names the file.
    """
    from ..formats.consolelog.reader import LineReader, UnreadableLog

    try:
        if path.is_file() and path.stat().st_size == 0:
            return []
        reader = LineReader(path)
    except UnreadableLog as exc:
        raise UnreadableLog(f"{option} {exc}") from None
    except OSError as exc:
        raise UnreadableLog(f"{option} {path}: cannot be read ({exc.strerror or exc})") from None
    lines = [ConsoleLine(source or str(path), n, clean_line(t)) for n, t in reader]
    if notes is not None:
        notes += reader.warnings
    return lines


def is_annotation(text: str) -> bool:
    return text.startswith("# ") or text.strip() == "#"


def window(lines: list[ConsoleLine], idx: int, n: int) -> list[str]:
    lo, hi = max(0, idx - n), min(len(lines), idx + n + 1)
    return [f"{lines[i].lineno}: {lines[i].text}" for i in range(lo, hi)]


def parse_metric_pairs(text: str) -> tuple[int | None, dict[str, float]]:
    """(step, {metric: value}) from one log line in any supported shape.

    Key/value pairs are read only on lines that carry a step (a metric value
    without a step cannot be placed on a trajectory): ``(None, {})`` otherwise.
    """
    if ":" not in text and "=" not in text:
        return None, {}
    m = _MEGATRON.search(text)
    if m:
        out = {}
        for part in m.group(2).split("|"):
            if ":" in part:
                k, _, v = part.rpartition(":")
                try:
                    out[k.strip()] = float(v.strip())
                except ValueError:
                    continue
        return int(m.group(1)), out
    dm = _DICT.search(text)
    if dm:
        try:
            d = ast.literal_eval(dm.group(0))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            d = None
        if isinstance(d, dict):
            vals = {
                str(k): float(v)
                for k, v in d.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            step = next(
                (int(vals[k]) for k in ("step", "global_step", "iteration") if k in vals), None
            )
            return step, {
                k: v for k, v in vals.items() if k not in ("step", "global_step", "iteration")
            }
    sm = _STEP.search(text)
    if sm is None:
        return None, {}
    pairs = {}
    for pm in _PAIR.finditer(text):
        k = pm.group("k").strip()
        if re.fullmatch(r"(?:global_step|step|iter|iteration|it|epoch)", k, re.IGNORECASE):
            continue
        k = re.sub(r"^(?:step|iter|iteration|epoch)\s+\d*\s*", "", k, flags=re.IGNORECASE)
        try:
            pairs[k] = float(pm.group("v"))
        except ValueError:
            continue
    return int(sm.group(1)), pairs


def parse_packages(text: str) -> dict[str, str]:
    """Package versions named in a ``Successfully installed a-1.0 b-2.0`` line."""
    m = _SUCCESS_INSTALL.search(text)
    out = {}
    if m:
        for tok in m.group("pk").split():
            name, _, ver = tok.rpartition("-")
            if name and re.match(r"\d", ver):
                out[name] = ver
    return out


def env_changes_in(text: str, source: str, line: int) -> list[EnvChange]:
    """Version changes stated on one line (``bump X from 1.2 to 1.3``, ``X 1.2 -> 1.3``, ``image ... to 26.04-py3``)."""
    if "(was " in text or "(previous" in text:
        was = [
            EnvChange(
                m["n"].lower(),
                m["old"].rsplit(":", 1)[-1],
                m["new"].rsplit(":", 1)[-1],
                source,
                line,
                text.strip(),
            )
            for m in _WAS.finditer(text)
            if m["old"] != m["new"]
        ]
        if was:
            return was
    # cheap prefilter: every shape needs an arrow or the word "to" next to a version
    if not ("->" in text or "→" in text or "=>" in text or " to " in text) or not _ENV_WORDS.search(
        text
    ):
        return []
    out = []
    for m in _TRANSITION.finditer(text):
        g = m.groupdict()
        name = g["n1"] or g["n2"] or g["n4"] or "image/version"
        old = g["o1"] or g["o2"] or g["o3"]
        new = g["v1"] or g["v2"] or g["v3"] or g["v4"]
        if old and new and old == new:
            continue
        out.append(EnvChange(name.strip(), old, new, source, line, text.strip()))
    return out


class _FileScan:
    """One log file read line by line into a :class:`CIContext`: the state that carries from
    line to line (the code version of the current segment, the pytest section and its ``E``
    block, the metric series read so far)."""

    def __init__(self, ctx: CIContext, lines: list[ConsoleLine], name: str, window_lines: int):
        self.ctx, self.lines, self.name, self.w = ctx, lines, name, window_lines
        self.series: dict[str, tuple[list[int], list[float]]] = {}
        self.ref_series: dict[str, dict[str, tuple[list[int], list[float]]]] = {}
        self.section: str | None = None
        self.eblock: list[str] = []
        self.eline = 0
        # the code version of the current segment: a log file named for the old code is the
        # old code's until a version switch says otherwise
        stem = Path(name).name.rsplit(".", 1)[0]
        self.role, self.label = (
            ("reference", f"log file {name}") if _REF_FILE.search(stem) else ("candidate", "")
        )

    def _line(self, i: int, cl: ConsoleLine, kind: str, text: str | None = None) -> Line:
        t = cl.text.strip() if text is None else text
        return Line(self.name, cl.lineno, t, window(self.lines, i, self.w), kind)

    def read(self) -> None:
        for i, cl in enumerate(self.lines):
            t = cl.text
            if not t.strip():
                continue
            self._version(t)
            self._runner(t)
            self._old_code_statement(i, cl, t)
            if (t.startswith(("_", "E")) or (self.eblock and ".py:" in t)) and self._pytest_block(
                cl, t
            ):
                continue
            self.ctx.env_changes += env_changes_in(t, self.name, cl.lineno)
            if is_annotation(t):
                continue
            self._results(i, cl, t)
            self._failure_and_pass(i, cl, t)
            self._metrics(cl, t)

    def _version(self, t: str) -> None:
        """A version switch (a checkout, a section titled for the old or new code)."""
        if not (("git" in t or t[:1] in "-+~#:") and not is_annotation(t)):
            return
        cue = version_cue(t.strip())
        if cue:
            titled = (
                self.role == cue[0]
                and self.label
                and not self.label.startswith(("$", "git", "log file"))
            )
            is_checkout = "git" in cue[1] and not _SECTION_TITLE.match(t.strip())
            # a section titled for the old code, then its checkout: keep both
            self.role, self.label = (
                (cue[0], f"{self.label}; {cue[1]}") if titled and is_checkout else cue
            )
        elif self.role == "reference" and "HEAD is now at" in t:
            hm = _HEAD_AT.search(t)
            if hm and hm["sha"] not in self.label:
                self.label = f"{self.label} (HEAD {hm['sha']})"

    def _runner(self, t: str) -> None:
        if ("unner" in t or "gent" in t or " via " in t) and self.name not in self.ctx.runners:
            rm = _RUNNER.search(t)
            if rm:
                self.ctx.runners[self.name] = rm["n"] or rm["g"]

    def _old_code_statement(self, i: int, cl: ConsoleLine, t: str) -> None:
        low0 = t.lower()
        if any(w in low0 for w in _OLD_WORDS) and not _TEST.match(t.strip()):
            said = ref_statement(t)
            if said is not None and len(self.ctx.ref_statements) < 20:
                self.ctx.ref_statements.append(
                    self._line(
                        i, cl, "reference:" + ("reproduces" if said else "fails"), t.strip()[:400]
                    )
                )

    def _pytest_block(self, cl: ConsoleLine, t: str) -> bool:
        """pytest's failure sections: the section title, the ``E`` lines, the raising location
        (an assertion's figures). True when the line is consumed."""
        sm_ = _SECTION.match(t.strip()) if t.startswith("_") else None
        if sm_:
            self.section, self.eblock = sm_.group("t"), []
            return True
        em = _E_LINE.match(t)
        if em:
            if not self.eblock:
                self.eline = cl.lineno
            self.eblock.append(em.group("t"))
            return True
        lm = _LOCATION.match(t.strip())
        if lm and self.eblock:
            fig = parse_assertion(self.eblock)
            if fig:
                ref = self.role == "reference"
                (self.ctx.ref_assertions if ref else self.ctx.assertions).append(
                    LogAssertion(
                        test=self.section,
                        source=self.name,
                        line=self.eline,
                        text=self.eblock[0].strip()[:300],
                        location=f"{lm['f']}:{lm['l']}",
                        segment=self.label if ref else "",
                        **fig,
                    )
                )
            self.eblock = []
        return False

    def _results(self, i: int, cl: ConsoleLine, t: str) -> None:
        """Installed packages, test outcomes, the failed-metrics list, figures of asserts."""
        ctx, low = self.ctx, t.lower()
        if "Successfully installed" in t:
            ctx.packages_log.update(parse_packages(t))
        tm = _TEST.match(t.strip())
        if tm:
            test = tm.group("t1") or tm.group("t2")
            outcome = (tm.group("o1") or tm.group("o2")).lower()
            path_part, _, func = test.partition("::")
            ref = self.role == "reference"
            (ctx.ref_tests if ref else ctx.tests).append(
                TestResult(
                    test,
                    path_part,
                    func.split("[")[0].split("::")[-1],
                    outcome,
                    self.name,
                    cl.lineno,
                    (tm.group("m1") or "").strip(),
                    segment=self.label if ref else "",
                )
            )
        fm = _FAILED_METRICS.search(t) if "failed:" in low else None
        if fm:
            ctx.failed_metrics = [
                m.strip() for m in (fm.group("m") or fm.group("m2")).split(",") if m.strip()
            ]
            ctx.failed_metrics_line = self._line(i, cl, "failure")
        am = _ASSERT_CMP.search(t) if "assert" in low and self.role != "reference" else None
        if am:
            test = next(
                (
                    r.test
                    for r in reversed(ctx.tests)
                    if r.outcome == "failed" and r.source == self.name and r.line == cl.lineno
                ),
                None,
            )
            ctx.measured.append(
                Measured(
                    float(am["a"]), am["op"], float(am["b"]), self.name, cl.lineno, t.strip(), test
                )
            )

    def _failure_and_pass(self, i: int, cl: ConsoleLine, t: str) -> None:
        low = t.lower()
        # substring prefilters first: most lines of a long log match none of these
        if (
            self.role != "reference"
            and ("time" in low or "longer than" in low)
            and _free_timeout(t)
            and not _TIMEOUT_NOT.search(t)
        ):
            self.ctx.timeouts.append(self._line(i, cl, "timeout"))
        if any(w in low for w in _FAIL_WORDS) and _FAIL.search(t) and not _NOT_FAIL.search(t):
            self.ctx.failure_lines.append(self._line(i, cl, "failure"))
        # a line can state both ("APPROXIMATE lane passes everywhere, only DETERMINISTIC fails")
        if any(w in low for w in _PASS_WORDS) and _PASS.search(t):
            self.ctx.pass_lines.append(self._line(i, cl, "pass"))

    def _metrics(self, cl: ConsoleLine, t: str) -> None:
        step, pairs = parse_metric_pairs(t)
        if pairs and (step is not None):
            self.ctx.metric_lines.append(Line(self.name, cl.lineno, t.strip(), [], "metric"))
            into = (
                self.ref_series.setdefault(self.label, {})
                if self.role == "reference"
                else self.series
            )
            for k, v in pairs.items():
                s, vals = into.setdefault(k, ([], []))
                s.append(step)
                vals.append(v)

    def finish(self) -> None:
        """The metric values read, as the job's actual values and the old code's."""
        if self.series:
            self.ctx.actuals.append(ValueSet(self.name, "actual", "log", self.series))
        for lab, ser in self.ref_series.items():
            self.ctx.references.append(ValueSet(self.name, "reference", lab or "reference", ser))


def _same_file(path: str | None, location: str | None) -> bool:
    """A test's path and an assertion's raising location name the same file (or none is known)."""
    if location is None:
        return True
    where = location.split(":")[0]
    return path is not None and (path == where or path.endswith(where) or where.endswith(path))


def _name_assertion_tests(ctx: CIContext, name: str) -> None:
    """The section header names the function; the summary line gives the node id."""
    for a, tests in [(a, ctx.tests) for a in ctx.assertions] + [
        (a, ctx.ref_tests) for a in ctx.ref_assertions
    ]:
        if a.source == name and a.test and "::" not in a.test:
            test = a.test
            hit = next(
                (
                    r.test
                    for r in tests
                    if r.outcome in ("failed", "error")
                    and r.source == name
                    and (
                        r.test.split("::", 1)[1].replace("::", ".") == test
                        or r.function == test.split(".")[-1].split("[")[0]
                    )
                    and _same_file(r.path, a.location)
                ),
                None,
            )
            if hit:
                a.test = hit


_INFRA_CATEGORIES = (
    "oom",
    "collective_timeout",
    "worker_killed",
    "preemption",
    "hardware",
    "disk_full",
    "checkpoint_failed",
)


def _signatures(ctx: CIContext, lines: list[ConsoleLine], name: str, window_lines: int) -> None:
    """Infrastructure signatures and tracebacks of one log file."""
    from ..signatures import scan

    hits, tbs = scan([cl for cl in lines if not is_annotation(cl.text)])
    for h in hits:
        if h.signature.category in _INFRA_CATEGORIES:
            idx = h.line.lineno - 1
            ctx.infra.append(
                Line(
                    name,
                    h.line.lineno,
                    h.line.text.strip(),
                    window(lines, idx, window_lines),
                    f"infra:{h.signature.id}",
                )
            )
    for tb in tbs:
        idx = tb.line.lineno - 1
        frame = tb.raising_frame
        ctx.exceptions.append(
            Line(
                name,
                tb.line.lineno,
                tb.line.text.strip(),
                window(lines, idx, window_lines),
                f"exception:{tb.exception_type}" + (f"@{frame[0]}:{frame[1]}" if frame else ""),
            )
        )


def _unsegment(ctx: CIContext) -> None:
    """Every test result fell in a segment taken for the old code: there is no run of other
    code to compare it with, so the segmentation was wrong (a checkout of main on a push
    build): judge them as the job's own results."""
    ctx.tests, ctx.ref_tests = ctx.ref_tests, []
    ctx.assertions, ctx.ref_assertions = ctx.assertions + ctx.ref_assertions, []
    for tr in ctx.tests:
        tr.segment = ""
    own = {t.source for t in ctx.tests}
    ctx.actuals += [
        ValueSet(v.source, "actual", "log", v.metrics) for v in ctx.references if v.source in own
    ]
    ctx.references = [v for v in ctx.references if v.source not in own]
    ctx.notes.append(
        "test results followed a checkout of the base branch, but no run of other code was "
        "found: they were judged as this job's own results"
    )


def scan_logs(
    ctx: CIContext, files: Iterable[tuple[Path | list[ConsoleLine], str]], window_lines: int = 3
) -> list[ConsoleLine]:
    """Fill ``ctx`` with the evidence of each log file. Returns all lines (for the run's console).

    Args:
        ctx: the context to fill (failure/pass/metric lines, tests, measured figures,
            failed metric names, packages, environment changes, timeouts, infra
            signatures, exceptions, actual metric values).
        files: (path, display name) pairs; instead of a path, the lines another reader read.
        window_lines: context lines kept on each side of an evidence line.
    """
    every: list[ConsoleLine] = []
    for path, name in files:
        # a list of ConsoleLine: lines read already (mlaudit logs shares its one pass, evidence.py)
        lines = path if isinstance(path, list) else read_log_lines(path, name, ctx.notes)
        if isinstance(path, list):  # read by another reader: remove the CI framing here
            lines = [
                cl
                if (c := clean_line(cl.text)) == cl.text
                else ConsoleLine(cl.source, cl.lineno, c)
                for cl in lines
            ]
        every += lines
        fs = _FileScan(ctx, lines, name, window_lines)
        fs.read()
        fs.finish()
        _name_assertion_tests(ctx, name)
        _signatures(ctx, lines, name, window_lines)
    if ctx.ref_tests and not ctx.tests:
        _unsegment(ctx)
    return every
