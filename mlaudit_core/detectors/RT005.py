"""RT005 python-traceback."""

from __future__ import annotations

import re

from ..exception_causes import classify, is_library_file
from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..signatures import frame_text
from ._console import ConsoleSignatureDetector
from ._knowledge import fact, hyp
from .base import Remedy

#: Exceptions a launcher raises to report that a child process failed; the child's error is the cause.
LAUNCHER_WRAPPERS = ("ChildFailedError",)
#: Messages of errors that report another worker's failure (torch 2.13 libtorch_cpu.so, gloo
#: transport/tcp/pair.cc: "Connection closed by peer ... This is typically caused by a remote worker
#: crashing."; NCCLUtils getNcclErrorDetailStr: "ncclRemoteError ... a remote process exiting").
CONSEQUENCE = re.compile(
    r"caused by a remote worker crash|Connection closed by peer|ncclRemoteError|"
    r"remote process exit",
    re.I,
)


#: Exceptions that stop a process from outside: an interrupt, an exit, a signal turned into an exception.
STOP_EXCEPTIONS = ("KeyboardInterrupt", "SystemExit", "SignalException", "SIGTERMException")
#: An exception message that names a signal (torch elastic ``Process N got signal: 15``, torchrun's
#: ``Signal 9 (SIGKILL) received by PID N``): the process was stopped from outside (docs/signatures.md).
SIGNAL_MESSAGE = re.compile(
    r"got signal:?\s*\d+|\bSignal \d+ \(SIG\w+\)|died with <Signals\.|"
    r"\bSIG(?:TERM|KILL|INT|HUP|QUIT)\b"
)
#: A message that is an interrupt re-raised under another class: an interrupt that reached a C extension
#: (Ctrl-C or SIGINT) comes back as ``RuntimeError: KeyboardInterrupt:`` (own corpus
#: f14b2-12: ``from torch._C import *`` in torch/__init__.py).
INTERRUPT_MESSAGE = re.compile(r"^\s*KeyboardInterrupt\b")

#: Lines either side of the exception line read with it (a CUDA assertion is printed beside the error).
NEARBY_LINES = 20


class PythonTraceback(
    ConsoleSignatureDetector, code="RT005", name="python-traceback", family="runtime"
):
    """The console holds a Python traceback: the run raised an exception.

    Why it matters: the last traceback is usually why the run stopped; its raising
    frame and code path (training, evaluation, checkpoint) tell where to look.
    Evidence: the exception type and message, the raising frame (file:line in
    function), and the code path classified from the frames' names.
    Remedy: depends on the exception; shape mismatches and key errors are code or
    config bugs, resource errors are infrastructure.
    The cause the exception itself names (:mod:`mlaudit_core.exception_causes`: an image that
    does not decode, a label outside the configured classes, a worker that died while starting, a
    network or driver failure) is reported as ``exception_cause``; the lines printed within
    :data:`NEARBY_LINES` of the exception line are read with it (a CUDA kernel's assertion).
    Thresholds: none. KeyboardInterrupt is reported at info level (a person stopped it).
    A launcher's report that a child failed (torchrun's ``ChildFailedError``) is not the
    error itself: the child's own traceback before it is reported when the log holds one. An
    error that reports another worker's failure (gloo's "Connection closed by peer ... typically
    caused by a remote worker crashing", NCCL's ``ncclRemoteError``) is a consequence: the
    failing worker's traceback is reported when the log holds one. A traceback whose exception
    line the reporter's paste cut (its frames, then an elision mark such as ``[...]``) is still the
    run's exception, of an unknown class.
    """

    implies = "crashed"
    supersedable_crash = True

    remedies = (
        Remedy(
            "Compare the code, config, data and package versions with the last run that got past the "
            "raising frame",
            "tells a change (code, data, environment) from a latent bug on a path taken for the first time",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the cause the exception names (supported when the exception catalogue
        recognised it), against the code at the raising frame and the environment."""
        if outcome is not Outcome.CRASHED:
            return None
        try:
            named = Cause(finding.facts.get("exception_cause"))
        except ValueError:
            named = None
        where = f"{fact(finding, 'raising_file', 'the raising frame')}:{fact(finding, 'raising_line', '')}"
        meaning = finding.facts.get("exception_meaning")
        rows = [
            (
                Cause.CORRECTNESS_BUG,
                f"a bug in the code at {where} (shape, key, type or state mismatch)",
                f"run {where} on one batch in a debugger (python -m pdb, post-mortem)",
            ),
            (
                Cause.DATA_CONFIG,
                "the input data or the configuration it reads (a file, a label, a path)",
                "rerun on a known-good config and a few known-good samples",
            ),
            (
                Cause.INFRA_RUNTIME,
                "the environment (memory, network, driver, a dependency's version)",
                "rerun the same commit in the last environment that worked",
            ),
        ]
        return [
            hyp(
                s,
                "supported" if c is named else "open",
                c,
                t,
                for_=[str(meaning or finding.message)] if c is named else [],
            )
            for c, s, t in rows
        ]

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "exception"

    categories = ()

    @classmethod
    def stopped_from_outside(cls, finding):
        """The exception is an interrupt, an exit or a signal's (:data:`STOP_EXCEPTIONS`), its
        message names a signal (:data:`SIGNAL_MESSAGE`), or it is an interrupt re-raised under another
        class (:data:`INTERRUPT_MESSAGE`)."""
        exc = str(finding.facts.get("exception_type", ""))
        msg = finding.facts.get("exception_message") or ""
        return (
            exc.endswith(STOP_EXCEPTIONS)
            or bool(SIGNAL_MESSAGE.search(msg))
            or bool(INTERRUPT_MESSAGE.search(msg))
        )

    def check(self, run, p):
        _, tbs = self.hits(run)
        if not tbs:
            return
        own = [t for t in tbs if not t.exception_type.endswith(LAUNCHER_WRAPPERS)]
        causes = [t for t in own if not CONSEQUENCE.search(t.message)]
        tb = (causes or own or tbs)[-1]
        frame = tb.raising_frame
        # the innermost frame of the user's own code: where a change is made (the raising frame is
        # often inside numpy or torch)
        user = next((f for f in reversed(tb.frames) if not is_library_file(f[0])), None)
        near = [
            cl.text
            for cl in run.console
            if cl.source == tb.line.source
            and abs(cl.lineno - tb.line.lineno) <= NEARBY_LINES
            and cl is not tb.line
        ]
        why = classify(tb.exception_type, tb.message, tb.frames, near)
        sev = Severity.INFO if tb.exception_type.endswith("KeyboardInterrupt") else Severity.ERROR
        where = f" at {frame_text(frame)}" if frame else ""
        raised = (
            (f"{tb.exception_type}: {tb.message[:200]}" if tb.message else tb.exception_type)
            if tb.exception_type
            else f"a traceback whose exception line the paste cut ({tb.line.text.strip()} after "
            f"{len(tb.frames)} frames)"
        )
        yield self.finding(
            sev,
            f"{raised}{where} ({tb.code_path} code path"
            + (f"; {len(tbs)} tracebacks in all" if len(tbs) > 1 else "")
            + ")",
            evidence=[
                self.log_evidence(tb.line),
                FactEvidence(
                    text=" -> ".join(
                        f"{f[2]} ({f[0].rsplit('/', 1)[-1]}:{f[1]})" for f in tb.frames[-6:]
                    )
                ),
            ],
            exception_type=tb.exception_type,
            exception_message=tb.message,
            code_path=tb.code_path,
            n_tracebacks=len(tbs),
            **_frame_facts(frame, user, why),
        )


def _frame_facts(frame, user, why) -> dict:
    """The raising frame's, the user's innermost frame's and the exception cause's facts
    (None where absent)."""
    return {
        "raising_file": frame[0] if frame else None,
        "raising_line": frame[1] if frame else None,
        "raising_func": frame[2] if frame else None,
        "user_file": user[0] if user else None,
        "user_line": user[1] if user else None,
        "exception_cause": why.cause if why else None,
        "exception_rule": why.id if why else None,
        "exception_meaning": why.meaning if why else None,
    }
