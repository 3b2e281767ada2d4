"""Write an audit back onto an MLflow run, in mlaudit's namespace only.

* tags ``mlaudit.verdict``, ``mlaudit.cause``, ``mlaudit.confidence``, ``mlaudit.codes``,
  ``mlaudit.version`` (set_tag replaces: a second audit leaves one set);
* the artifact ``mlaudit/report.html``: the report with its plots as inline SVG and the JSON
  report embedded (:func:`mlaudit_core.render.html.report_json_from_html` reads it back),
  overwritten in place; ``mlaudit/report.json``, ``mlaudit/report.md`` and
  ``mlaudit/plots/<name>.svg`` too when ``MLAUDIT_REPORT_FILES`` asks for them
  (:func:`mlaudit_core.writeback.report_files`);
* the run Description (tag ``mlflow.note.content``): one section between mlaudit's
  markers (:data:`mlaudit_core.writeback.BEGIN`/``END``), the user's text kept.

Order, so that ``mlaudit.verdict`` present means the write-back is complete: report
artifacts, then the Description, then the other tags with ``mlaudit.verdict`` last in one
``log_batch`` (one transaction on a database store; a file store writes them in list order).

Requests per fresh run (a server, ``tests/test_writeback_requests.py``): one upload (MLflow's
artifact proxy takes one file per ``PUT``, so one file is one request), one ``get_run`` (the
Description as it is after the upload, for the merge), one ``log_batch`` with every tag and
the merged Description: **3**. A fourth, a ``get_run`` that checks the Description, only when
the Description changed between the audit's load and the merge (see :func:`write_verdict`).

The Description is read, merged and written *after* the slow steps (rendering, upload): a
user's edit saved before that read is kept. It never exceeds MLflow's tag value limit
(``mlflow.utils.validation.MAX_TAG_VAL_LENGTH``, 8,000 characters in MLflow 2.x and 3.x;
longer values are cut by the server, which would lose the end marker): the section is
shortened to fit, linking ``mlaudit/report.html``, or left out when the user's text leaves
no room.

Claims: :func:`claim_run` / :func:`release_claim` manage the ``mlaudit.claim`` tag
(``<owner> <expiry epoch s>``), a lease two watchers of one experiment use so that only
one of them audits, writes and notifies a run.
"""

from __future__ import annotations

import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from mlaudit_core.report import AuditReport
from mlaudit_core.rundata import RunData
from mlaudit_core.writeback import (
    WriteBackResult,
    merge,
    parse_claim,
    summary_section,
    verdict_tags,
    write_section,
)
from mlaudit_core.writeback import report_files as shared_report_files

NOTE_TAG = "mlflow.note.content"
ARTIFACT_DIR = "mlaudit"
CLAIM_TAG = "mlaudit.claim"
#: MLflow's tag value limit in characters when the installed client does not say (2.x/3.x).
DEFAULT_TAG_LIMIT = 8000


def tag_value_limit() -> int:
    """The installed MLflow's tag value limit (``MAX_TAG_VAL_LENGTH``; 8,000 in 2.x and 3.x)."""
    try:
        from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

        return int(MAX_TAG_VAL_LENGTH)
    except Exception:  # an MLflow without the constant: the documented 2.x/3.x value
        return DEFAULT_TAG_LIMIT


def report_files(
    report: AuditReport, run: RunData | None, out_dir: Path, notes: list[str] | None = None
) -> list[str]:
    """Write the report files (:func:`mlaudit_core.writeback.report_files`) into ``out_dir``;
    returns their names (relative, ``/``-separated)."""
    from mlaudit_core.render.html import write_files

    return write_files(shared_report_files(report, run, notes=notes), out_dir)


#: Report files uploaded at once (each is one request to the artifact store).
UPLOAD_THREADS = 4
#: Where the MLflow loader keeps a run's ``info.artifact_uri`` (``RunData.cache``).
ARTIFACT_URI_KEY = "mlflow.artifact_uri"
#: Where the MLflow loader keeps the run's Description as loaded (``RunData.cache``; ``""``
#: for none). Absent (a run not loaded by the loader): the Description is always re-checked.
NOTE_LOADED_KEY = "mlflow.note_loaded"


_POOL_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def _upload_pool() -> ThreadPoolExecutor:
    """One pool of upload threads for the process (a batch writes several runs back at once;
    a pool per run started and stopped :data:`UPLOAD_THREADS` threads each time)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(
                max_workers=2 * UPLOAD_THREADS, thread_name_prefix="mlaudit-upload"
            )
        return _POOL


def upload_report(client, run: RunData, out: Path) -> None:
    """Upload the files under ``out`` to the run's ``mlaudit/`` artifact folder.

    With the run's ``artifact_uri`` (kept by the loader in ``run.cache``) the files go straight
    to MLflow's artifact repository for it, :data:`UPLOAD_THREADS` at a time; otherwise (or
    when the repository cannot be built) through ``client.log_artifacts``. In an atexit hook
    (interpreter shutdown: ``ThreadPoolExecutor.submit`` raises RuntimeError) the files go
    one by one. Raises what the repository or client raises.
    """
    from .loader import _artifact_repo

    uri = run.cache.get(ARTIFACT_URI_KEY)
    repo = _artifact_repo(uri, client) if uri else None
    if repo is None:
        client.log_artifacts(run.identity.id, str(out), artifact_path=ARTIFACT_DIR)
        return
    files = sorted(p for p in out.rglob("*") if p.is_file())
    dests = [
        ARTIFACT_DIR
        if p.parent == out
        else f"{ARTIFACT_DIR}/{p.parent.relative_to(out).as_posix()}"
        for p in files
    ]
    if len(files) <= 1:
        for p, d in zip(files, dests):
            repo.log_artifact(str(p), d)
        return
    try:
        futures = [
            _upload_pool().submit(repo.log_artifact, str(p), d) for p, d in zip(files, dests)
        ]
    except RuntimeError:  # interpreter shutdown began (the atexit hook): no new threads
        futures = []
    wait(futures)  # every upload ends before the files' folder is removed
    for fut in futures:
        fut.result()  # the first failure is raised
    if not futures:
        for p, d in zip(files, dests):
            repo.log_artifact(str(p), d)


def write_verdict(
    client, run: RunData, report: AuditReport, *, dry_run: bool = False, before_verdict=None
) -> WriteBackResult:
    """Tag the run, upload the report under ``mlaudit/`` and update the Description section.

    Requests to the tracking server, in order: the report files (one upload each, at most
    :data:`UPLOAD_THREADS` at a time; by default one file, ``report.html``; none when the
    artifact store is a local path); one ``get_run`` (the Description as it is now, for the
    merge); one ``log_batch`` with every ``mlaudit.*`` tag and the merged Description, atomic
    on the server, so ``mlaudit.verdict`` is never visible without the rest. 3 requests per
    fresh run (docs/automation.md).

    A user's edit is never lost to the merge: the Description is read after the slow steps,
    one round trip before the write (an edit saved inside that round trip cannot be seen:
    MLflow has no conditional write). A save from a page loaded *before* the write keeps the
    user's text but drops mlaudit's section; a re-read after the write catches that and merges
    again (:func:`mlaudit_core.writeback.write_section`). That re-read is made only when the
    Description read for the merge differs from the one the audit loaded
    (``run.cache[NOTE_LOADED_KEY]``; always when the run was not loaded with it): someone
    edited it in the last seconds and may save again. On an untouched Description a later
    save from an old page can remove mlaudit's section (never the user's text; the tags and
    ``report.html`` still carry the verdict, and the next audit writes the section again).

    ``before_verdict``: called with no argument just before the batch; a False return leaves
    ``mlaudit.verdict`` out of it (a watcher whose claim on the run was lost). Raises what
    the MLflow client raises, and :class:`mlaudit_core.errors.InputError` when
    ``MLAUDIT_REPORT_FILES`` is malformed.
    """
    run_id = run.identity.id
    tags = verdict_tags(report)
    section = summary_section(report)
    limit = tag_value_limit()
    full = f"artifact `{ARTIFACT_DIR}/report.html`"
    result = WriteBackResult(
        tracker="mlflow", run_id=run_id, dry_run=dry_run, tags=tags, section_limit=limit
    )

    def read() -> str | None:
        return client.get_run(run_id).data.tags.get(NOTE_TAG)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ARTIFACT_DIR
        out.mkdir()
        from mlaudit_core.service.timing import timed

        with timed("render"):  # the batch summary's time split (service/timing.py)
            names = report_files(report, run, out, result.notes)
        result.artifacts = [f"{ARTIFACT_DIR}/{n}" for n in names]
        if dry_run:
            merged = merge(read(), section, limit=limit, full_report=full)
            _describe(result, merged)
            return result
        from mlflow.entities import RunTag

        # the slow part first; the Description is read and written only after it
        upload_report(client, run, out)
    keep_verdict = before_verdict is None or bool(before_verdict())
    batch = [RunTag(k, v) for k, v in tags.items() if k != "mlaudit.verdict"]
    if keep_verdict:
        batch.append(RunTag("mlaudit.verdict", tags["mlaudit.verdict"]))
    pending = {"tags": batch}

    def write(text: str) -> None:  # the first write carries the tags; a re-merge only the text
        client.log_batch(run_id, tags=[*pending.pop("tags", []), RunTag(NOTE_TAG, text)])

    loaded = run.cache.get(NOTE_LOADED_KEY)

    def recheck(current: str | None) -> bool:  # edited since the audit loaded the run
        return loaded is None or (current or "") != loaded

    done = write_section(read, write, section, limit=limit, full_report=full, recheck=recheck)
    if "tags" in pending:  # the Description already held this section: the tags alone
        client.log_batch(run_id, tags=pending.pop("tags"))
    _describe(result, done.merged, verified=done.verified)
    if not keep_verdict:
        result.notes.append("stopped before mlaudit.verdict: the claim on the run was lost")
        result.tags = {k: v for k, v in tags.items() if k != "mlaudit.verdict"}
    return result


def _describe(result: WriteBackResult, merged, *, verified: bool = True) -> None:
    result.description = merged.text if merged.section is not None else None
    result.section_state = (
        "left_out"
        if merged.section is None
        else "unverified"
        if not verified
        else "shortened"
        if merged.shortened
        else "written"
    )


def claim_run(
    client, run_id: str, owner: str, *, lease_s: float = 900.0, settle_s: float = 1.0
) -> str | None:
    """Claim the run for ``owner`` with the ``mlaudit.claim`` tag; None on success, else why not.

    A run whose claim belongs to another owner and has not expired is refused. Otherwise
    the tag is set to ``"<owner> <expiry>"``, and read back after ``settle_s``: two
    watchers setting it at the same moment both read the last value written, so only one
    sees its own (compare-and-check; MLflow has no conditional write). The lease covers one
    audit and write-back; a watcher killed mid-way leaves a claim that expires after
    ``lease_s`` (default 15 min) and the run is then taken over.
    """
    import time

    def holder() -> tuple[str, float] | None:
        return parse_claim(client.get_run(run_id).data.tags.get(CLAIM_TAG))

    now = time.time()
    held = holder()
    if held is not None and held[0] != owner and held[1] > now:
        return f"claimed by another mlaudit watcher ({held[0]}) until {time.ctime(held[1])}"
    client.set_tag(run_id, CLAIM_TAG, f"{owner} {now + lease_s:.0f}")
    time.sleep(settle_s)
    held = holder()
    if held is None or held[0] != owner:
        return f"claimed by another mlaudit watcher ({held[0] if held else 'unknown'})"
    # written since it was loaded ('running' is an interim verdict, judged again once ended)
    if client.get_run(run_id).data.tags.get("mlaudit.verdict") not in (None, "running"):
        release_claim(client, run_id, owner)
        return "a verdict was written meanwhile (another mlaudit watcher)"
    return None


def holds_claim(client, run_id: str, owner: str) -> bool:
    """True when the run's ``mlaudit.claim`` is ``owner``'s and not expired."""
    import time

    value = client.get_run(run_id).data.tags.get(CLAIM_TAG) or ""
    who, _, expiry = value.rpartition(" ")
    try:
        return who == owner and float(expiry) > time.time()
    except ValueError:
        return False


def release_claim(client, run_id: str, owner: str) -> None:
    """Delete the run's ``mlaudit.claim`` when it is ``owner``'s (best effort, never raises)."""
    try:
        value = client.get_run(run_id).data.tags.get(CLAIM_TAG) or ""
        if value.rpartition(" ")[0] == owner:
            client.delete_tag(run_id, CLAIM_TAG)
    except Exception:  # an expired claim is harmless; the verdict is written
        pass
