"""RT011 launch-failed."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, on_crash
from .base import DetectorParams, Remedy


class LaunchFailed(ConsoleSignatureDetector, code="RT011", name="launch-failed", family="runtime"):
    """The launch failed before training: the console ends on the shell's, the interpreter's or the
    argument parser's error.

    Why it matters: nothing of the training ran, so there is no loss to read; the failure is in the
    environment or the command line the job was started with (a variable the launch script needs is
    not set under ``set -u``, a command or the script not found, a missing execute bit, an option
    the script does not define), not in the model or the data.
    Evidence: the error line (bash ``NAME: unbound variable``, ``CMD: command not found``, ``PATH: No
    such file or directory`` / ``Permission denied``; CPython's ``can't open file``; argparse's
    ``PROG: error: ...``) among the last :attr:`Params.tail_lines` non-blank lines of its file: the
    launch ended on it. An error line followed by more output (a setup script that prints
    ``nvidia-smi: command not found`` and goes on to train) is not reported.
    Remedy: set the variable (or guard it: ``${PYTHONPATH:-}``), fix the path or the command, or
    correct the option the parser names, and launch again.
    Thresholds: ``tail_lines`` 3: bash prints the error as the script's last line, argparse its
    usage block then the error as its last; two more lines leave room for a scheduler's or nohup's
    closing line. Own corpus: f13b1-13 (``run_deepspeed.sh: line 9: PYTHONPATH: unbound variable``),
    f7b3-07, f13b2-20 and log08 (argparse errors, the whole capture).
    """

    implies = "crashed"
    supersedable_crash = True

    class Params(DetectorParams):
        tail_lines: int = 3

    categories = ("launch_failed",)

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the launch environment or command line (supported); the code (rejected)."""
        return on_crash(
            finding,
            outcome,
            "the launch environment or command line is wrong (nothing of the training ran)",
            Cause.DATA_CONFIG,
            "run the launch command by hand in the job's environment (bash -x for a script)",
            hyp(
                "the training code or the data failed",
                "rejected",
                Cause.CORRECTNESS_BUG,
                against=[
                    "the launch stopped before the training program ran or parsed its options"
                ],
            ),
        )

    crash_remedy = Remedy(
        "Fix the launch: set the variable the script needs (or guard it with ${NAME:-}), the path or "
        "command it runs, or the option the argument parser rejected, then launch again",
        "the job stopped before training started; the model and data were never reached",
    )

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        tails: dict[str, list[int]] = {}
        for ln in run.console:
            if ln.text.strip():
                tails.setdefault(ln.source, []).append(ln.lineno)
        at_end = [
            h
            for h in hits
            if h.line.lineno in tails.get(h.line.source, [])[-max(1, int(p.tail_lines)) :]
        ]
        if not at_end:
            return
        h = at_end[-1]
        what = h.signature.description
        text = h.line.text.strip()[:200]
        yield self.finding(
            Severity.ERROR,
            f'the console ends on "{text}" ({h.line.source}:{h.line.lineno}): {what}',
            evidence=[self.log_evidence(x.line) for x in at_end[-3:]],
            signature=h.signature.id,
            lineno=h.line.lineno,
            n_hits=len(hits),
            **{
                f"launch_{k}": v
                for k, v in h.figures.items()
                if k in ("name", "command", "path", "prog", "message")
            },
        )
