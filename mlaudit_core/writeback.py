"""Helpers shared by tracker write-backs: the mlaudit namespace and the marked description section.

Write-back touches only mlaudit's own namespace: tags/properties prefixed
``mlaudit.``, artifacts under ``mlaudit/``, and one section of the run's
description between the markers below. Auditing twice replaces, never duplicates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .render import render_summary_markdown
from .report import AuditReport

#: The section markers. The id is a fixed random UUID (drawn once for mlaudit 0.x): user text
#: cannot plausibly contain it unless it was copied from an mlaudit section, so prose or a
#: code block quoting ``<!-- mlaudit:begin -->`` is never taken for mlaudit's section.
SECTION_ID = "b6e1f0c2-5a7d-4e93-8c1f-2d9a4b7e6f31"
BEGIN = f"<!-- mlaudit:begin {SECTION_ID} -->"
END = f"<!-- mlaudit:end {SECTION_ID} -->"
#: The markers written by mlaudit before the id (still recognised, see :func:`split_section`).
LEGACY_BEGIN = "<!-- mlaudit:begin -->"
LEGACY_END = "<!-- mlaudit:end -->"
#: Every section mlaudit ever wrote starts with this line prefix (render_summary_markdown).
_HEAD = _LEGACY_HEAD = "**mlaudit verdict:"
_SECTION = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
TAG_PREFIX = "mlaudit."
#: Characters of the shortest section worth writing (the verdict line and the report link).
MIN_SECTION_CHARS = 120


@dataclass
class MergedText:
    """A description with mlaudit's section merged in (:func:`merge`).

    ``text``: the whole new description. ``user``: the user's part (``text`` without the
    section). ``section``: the section as written, None when it did not fit the tracker's
    limit at all (``text`` is then the user's part alone). ``shortened``: the section was
    cut to fit ``limit``.
    """

    text: str
    user: str
    section: str | None
    shortened: bool = False


def _lines(text: str) -> list[str]:
    """``text`` cut into lines with their ends, at the line breaks CommonMark knows (``\\n``,
    ``\\r\\n``, ``\\r``): the line numbers of :func:`_markdown` tokens index this list."""
    return _LINE.findall(text)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _markdown(text: str) -> list:
    """The CommonMark block tokens of ``text`` (markdown-it-py, the parser rich uses).

    mlaudit's section is found from the document's structure, not from line matches: a
    marker counts only where a CommonMark reader sees an HTML comment block of its own at the
    top level. A marker quoted in an indented code block, a fenced block (also one inside a
    list item or a block quote), a ``<pre>`` block or a longer HTML comment is user text
    (break-it pass 3: such quotes were taken for mlaudit's section and the text between
    them deleted)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").parse(text)


def _marker_lines(tokens: list) -> set[int]:
    """Line indices that are a one-line top-level HTML block: how mlaudit writes a marker."""
    return {
        t.map[0]
        for t in tokens
        if t.type == "html_block" and t.level == 0 and t.map and t.map[1] - t.map[0] == 1
    }


#: A line that closes an open block and nothing else: a code fence, an HTML comment's end,
#: a ``<pre>``/``<script>``/``<style>``/``<textarea>`` end tag.
_CLOSER = re.compile(
    r"^ {0,3}(?:`{3,}|~{3,}|-->|</(?:pre|script|style|textarea)>)[ \t]*$", re.IGNORECASE
)
_RAW_OPEN = re.compile(r"^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)", re.IGNORECASE)


def _closer(user: str) -> str | None:
    """The line that closes a block the user's text leaves open at its end, else None.

    An unclosed code fence (or HTML comment, ``<pre>`` block) runs to the end of the
    document in CommonMark, so mlaudit's markers written after it would be inside it and not
    found again: every audit would append another section (break-it pass 3). The closer is
    written just before the begin marker, as part of mlaudit's block (see :func:`_block`);
    the user's text itself is not changed."""
    if not user:
        return None
    tokens = _markdown(user)
    lines = _lines(user)
    last = next((t for t in reversed(tokens) if t.level == 0 and t.map), None)
    if last is None or last.map[1] < len(lines):
        return None
    end = lines[-1].strip()
    if last.type == "fence":
        fence = last.markup
        closed = (
            last.map[1] - last.map[0] > 1
            and end
            and set(end) == {fence[0]}
            and len(end) >= len(fence)
        )
        return None if closed else fence
    if last.type == "html_block":
        first = lines[last.map[0]]
        raw = _RAW_OPEN.match(first)
        if raw:
            tag = raw.group(1).lower()
            return None if f"</{tag}>" in "".join(lines[last.map[0] :]).lower() else f"</{tag}>"
        if first.lstrip().startswith("<!--"):
            return None if "-->" in "".join(lines[last.map[0] :])[4:] else "-->"
    return None


def _legacy_spans(text: str, limit: int | None) -> list[tuple[int, int]]:
    """Character spans of sections written by earlier mlaudit versions (marker without id).

    Only a block mlaudit itself wrote counts: the old begin marker alone on its line,
    outside a fenced code block, followed by a line starting ``**mlaudit verdict:``, and
    closed by the old end marker alone on its line. A block whose end marker a tracker cut
    off (the text is exactly ``limit`` characters long, MLflow's 8,000) runs to the end.
    Everything else that quotes the old markers (prose, code blocks) is user text.
    """
    lines = _lines(text)
    top = _marker_lines(_markdown(text))
    offsets, pos = [], 0
    for ln in lines:
        offsets.append(pos)
        pos += len(ln)
    spans, i = [], 0
    while i < len(lines):
        if (
            i in top
            and lines[i].strip() == LEGACY_BEGIN
            and i + 1 < len(lines)
            and lines[i + 1].startswith(_LEGACY_HEAD)
        ):
            j = i + 1
            while j < len(lines) and not (j in top and lines[j].strip() == LEGACY_END):
                j += 1
            if j < len(lines):
                spans.append((offsets[i], offsets[j] + len(lines[j])))
                i = j + 1
                continue
            if limit is not None and len(text) >= limit:  # cut off by the tracker
                spans.append((offsets[i], len(text)))
                break
        i += 1
    return spans


def split_section(existing: str | None, *, limit: int | None = None) -> tuple[str, str | None]:
    """``(user's part, mlaudit's section or None)`` of a description.

    The section is the text between :data:`BEGIN` and :data:`END` (the id in the markers makes
    the pair mlaudit's), each marker a whole line outside a fenced code block (markers quoted
    in prose or in a code block are user text, kept verbatim). A stray marker line (the other
    of the pair missing, or an end before its begin) is dropped and the text around it kept
    as the user's; only when the
    description is exactly ``limit`` characters long (a tracker cut it, losing the end
    marker) does a begin marker without its end run to the end of the text. Without a
    current section, a section of an earlier mlaudit version is recognised (see
    :func:`_legacy_spans`). The user's part keeps its text in order, the section's place
    left empty.
    """
    text = existing or ""
    found = None
    if BEGIN in text or END in text:
        text, found = _split_current(text, limit)
    if found is None:
        spans = _legacy_spans(text, limit)
        if spans:
            s, e = spans[-1]
            found = text[s:e].replace(LEGACY_BEGIN, "").replace(LEGACY_END, "").strip()
            for s, e in reversed(spans):
                text = text[:s] + text[e:]
    return _tidy(text), found


def _split_current(text: str, limit: int | None) -> tuple[str, str | None]:
    """Remove mlaudit's current-marker sections from ``text``: ``(rest, last section or None)``.

    mlaudit writes each marker as a whole line, so only a marker line outside a fenced code
    block counts: a marker quoted in prose (inside a line) or in a code block is user text and
    kept verbatim (break-it pass: a code block quoting a copied section lost its lines). A
    begin line pairs with the next end line; an unpaired marker line is dropped (a broken
    earlier write), its surrounding text kept; a begin line without its end runs to the end of
    the text only when the text is exactly at the tracker's ``limit`` (the tracker cut it).
    """
    lines = _lines(text)
    top = _marker_lines(_markdown(text))
    marks = [
        (i, ln.strip()) for i, ln in enumerate(lines) if i in top and ln.strip() in (BEGIN, END)
    ]
    drop: set[int] = set()
    found = None
    open_at = None
    for i, kind in marks:
        if kind == BEGIN:
            if open_at is not None:
                drop.add(open_at)  # a begin never closed before the next one: stray
            open_at = i
        elif open_at is not None:
            found = "".join(lines[open_at + 1 : i]).strip()
            drop.update(range(open_at, i + 1))
            if (
                open_at > 0
                and _CLOSER.match(lines[open_at - 1].rstrip("\r\n"))
                and _closer("".join(lines[: open_at - 1]).rstrip())
            ):
                drop.add(open_at - 1)  # the closer mlaudit wrote for the user's open block
            open_at = None
        else:
            drop.add(i)  # an end before any begin: stray
    if open_at is not None:
        if limit is not None and len(text) >= limit:
            found = found or "".join(lines[open_at + 1 :]).strip()
            drop.update(range(open_at, len(lines)))
        else:
            drop.add(open_at)
    rest = "".join(ln for i, ln in enumerate(lines) if i not in drop)
    return rest, found


def _tidy(text: str) -> str:
    """Strip trailing blanks and collapse the blank lines left where a section was."""
    return re.sub(r"\n{3,}", "\n\n", text).rstrip()


def strip_section(text: str | None) -> str:
    """The user's part of a description: ``text`` without the mlaudit section."""
    return split_section(text)[0].strip()


def _block(section: str, closer: str | None = None) -> str:
    head = f"{closer}\n" if closer else ""
    return f"{head}{BEGIN}\n{section.strip()}\n{END}"


def _join(user: str, section: str) -> str:
    return f"{user}\n\n{_block(section, _closer(user))}\n" if user else f"{_block(section)}\n"


def shorten_section(section: str, room: int, full_report: str) -> str | None:
    """``section`` cut to at most ``room`` characters, whole lines kept from the top, with a
    last line saying where the full report is; None when not even the first line fits."""
    tail = f"\n\n_Shortened to fit the tracker's limit; full report: {full_report}_"
    lines = section.strip().splitlines()
    for n in range(len(lines) - 1, 0, -1):
        cand = "\n".join(lines[:n]).rstrip() + tail
        if len(cand) <= room:
            return cand
    first = lines[0] if lines else ""
    cand = first + tail
    return cand if len(cand) <= room and len(cand) >= 1 else None


def merge(
    existing: str | None,
    section: str,
    *,
    limit: int | None = None,
    full_report: str = "`mlaudit/report.html`",
) -> MergedText:
    """Put ``section`` between the mlaudit markers in ``existing``, keeping the user's text.

    Replaces mlaudit's previous section (current or legacy markers; see
    :func:`split_section`) and appends the new one after the user's text.

    Args:
        existing: the current description (None or empty: none).
        section: the Markdown to put between the markers.
        limit: the tracker's maximum description length in characters (MLflow: its tag
            value limit, ``mlflow.utils.validation.MAX_TAG_VAL_LENGTH``, 8,000 in MLflow
            2.x/3.x). The section is shortened to fit, with a line naming ``full_report``;
            when not even its first line fits, it is left out (``section`` None) and the
            user's text is returned alone. The user's text is never cut.
        full_report: where the full report is, for the shortened section's last line.
    """
    user, _old = split_section(existing, limit=limit)
    text = _join(user, section)
    if limit is None or len(text) <= limit:
        return MergedText(text, user, section.strip())
    room = limit - len(_join(user, ""))
    short = shorten_section(section, room, full_report) if room > 0 else None
    if short is None:
        return MergedText(user, user, None)
    return MergedText(_join(user, short), user, short, shortened=True)


def merge_section(existing: str | None, section: str, *, limit: int | None = None) -> str:
    """The new description text of :func:`merge` (see there)."""
    return merge(existing, section, limit=limit).text


@dataclass
class SectionWrite:
    """What :func:`write_section` did: the last text written (or found already right),
    the merge behind it, how many writes, whether a re-read checked it (``rechecked``), and
    ``verified``: False only when a re-read still found the text changing after the last
    attempt."""

    merged: MergedText
    writes: int = 0
    verified: bool = False
    conflicts: int = 0
    rechecked: bool = False


def write_section(
    read,
    write,
    section: str,
    *,
    limit: int | None = None,
    full_report: str = "`mlaudit/report.html`",
    attempts: int = 5,
    pause_s: float = 0.2,
    recheck=None,
) -> SectionWrite:
    """Read-modify-write a description with mlaudit's section, checked by a re-read.

    The window between reading the user's text and writing it back is one round trip (call
    this after every slow step: rendering, uploads): a user's edit saved before the read is
    merged, never lost. No tracker here offers a conditional write, so an edit saved inside
    that one round trip itself cannot be seen. After writing, the description is read again
    (when ``recheck`` says so): when it is not what was written (the user saved from a page
    loaded before the write, which drops mlaudit's section but keeps the user's text), the
    merge is redone on the newer text and written again, up to ``attempts`` times,
    ``pause_s`` (doubling) apart. The re-read restores mlaudit's section; the user's text is
    kept either way.

    Args:
        read: ``() -> str | None``, the current description from the tracker (uncached).
        write: ``(text) -> None``, replaces the description.
        section, limit, full_report: as :func:`merge`.
        recheck: ``(description as first read) -> bool``: re-read after the first write?
            None: always. The tracker write-backs re-read only when the description changed
            since the run was loaded for the audit (someone is editing it now, so a save from
            a page loaded before mlaudit's write is likely), which keeps a write-back of an
            untouched run to one read and one write.

    Returns:
        A :class:`SectionWrite`; ``verified`` False when the description still changed after
        the last attempt (the caller says so; the next audit merges again).
    """
    import time

    out: SectionWrite | None = None
    current = read()
    for i in range(max(1, attempts)):
        merged = merge(current, section, limit=limit, full_report=full_report)
        if out is None:
            out = SectionWrite(merged)
        out.merged = merged
        if merged.text == (current or ""):
            out.verified = True
            return out
        write(merged.text)
        out.writes += 1
        if out.writes == 1 and recheck is not None and not recheck(current):
            out.verified = True  # nothing said the text is changing: not read again
            return out
        out.rechecked = True
        current = read()
        if (current or "") == merged.text:
            out.verified = True
            return out
        out.conflicts += 1
        if i + 1 < attempts:
            time.sleep(pause_s * 2**i)
            current = read()
    assert out is not None  # the loop runs at least once
    return out


#: Environment variable naming the report files a write-back uploads beside ``report.html``:
#: a comma-separated list of ``json`` (``report.json``), ``md`` (``report.md``) and ``svg``
#: (each plot as ``plots/<name>.svg``); empty (the default): ``report.html`` alone, which
#: carries the plots inline and the JSON report embedded (one upload per run, issue 30).
REPORT_FILES_ENV = "MLAUDIT_REPORT_FILES"
EXTRA_REPORT_FILES = ("json", "md", "svg")


def extra_report_files() -> frozenset[str]:
    """The extra report files :data:`REPORT_FILES_ENV` asks for (a subset of
    :data:`EXTRA_REPORT_FILES`).

    Raises:
        InputError: the variable names something else (one line naming it and the values
            accepted).
    """
    import os

    raw = os.environ.get(REPORT_FILES_ENV, "")
    kinds = {k.strip().lower() for k in raw.split(",") if k.strip()}
    unknown = sorted(kinds - set(EXTRA_REPORT_FILES))
    if unknown:
        from .errors import InputError

        raise InputError(
            f"{REPORT_FILES_ENV}={raw!r}: unknown report file kind {', '.join(unknown)} "
            f"(accepted: {', '.join(EXTRA_REPORT_FILES)}, comma-separated)"
        )
    return frozenset(kinds)


def report_files(report: AuditReport, run=None, *, notes: list[str] | None = None) -> dict:
    """The report files a tracker write-back uploads under ``mlaudit/``: name -> content
    (``str`` text or ``bytes``), in upload order.

    ``report.html``: the page with its plots inline and the JSON report embedded
    (:func:`mlaudit_core.render.html.render_html` with ``embed_json``), plus what
    :data:`REPORT_FILES_ENV` asks for. When the HTML renderer is missing or fails,
    ``report.json`` and ``report.md`` are written instead (so the verdict's report still
    lands) and ``notes`` gets one line saying why.

    Raises:
        InputError: :data:`REPORT_FILES_ENV` is malformed.
    """
    from .render import render_json, render_markdown

    extra = extra_report_files()
    files: dict[str, str | bytes] = {}
    page: dict[str, str | bytes] = {}
    try:
        from .render.html import render_report_files

        page = render_report_files(report, run, plot_files="svg" in extra, embed_json=True)
    except Exception as exc:  # a broken renderer must not block the verdict write-back
        msg = f"HTML report not written ({type(exc).__name__}: {exc}); report.json and report.md instead"
        if notes is not None:
            notes.append(msg)
        extra = extra | {"json", "md"}
    if "report.html" in page:
        files["report.html"] = page.pop("report.html")
    if "json" in extra:
        files["report.json"] = render_json(report)
    if "md" in extra:
        files["report.md"] = render_markdown(report)
    files.update(page)  # plots/*.svg
    return files


def parse_claim(value: object) -> tuple[str, float] | None:
    """A watcher's claim on a run as the trackers store it (MLflow tag / W&B summary key /
    ClearML user property ``mlaudit.claim``: ``"<owner> <expiry, unix seconds>"``) ->
    ``(owner, expiry)``; ``None`` when empty or not a claim mlaudit wrote (treated as none)."""
    if not isinstance(value, str) or not value:
        return None
    who, _, expiry = value.rpartition(" ")
    try:
        return who, float(expiry)
    except ValueError:
        return None


def verdict_tags(report: AuditReport) -> dict[str, str]:
    """The ``mlaudit.*`` tags for a report (values are short strings every tracker accepts)."""
    from ._version import __version__

    v = report.verdict
    return {
        "mlaudit.verdict": v.outcome.value,
        "mlaudit.cause": v.cause.value,
        "mlaudit.confidence": f"{v.confidence:.2f}",
        "mlaudit.codes": ",".join(report.codes) or "none",
        "mlaudit.version": __version__,
    }


@dataclass
class WriteBackResult:
    """What a write-back did (or, with dry_run, would do)."""

    tracker: str
    run_id: str
    dry_run: bool
    tags: dict[str, str] = field(default_factory=dict)
    artifacts: list[str] = field(default_factory=list)
    description: str | None = None
    notes: list[str] = field(default_factory=list)
    #: What happened to the description section: ``written``, ``shortened`` (cut to the
    #: tracker's limit, linking the full report), ``left_out`` (no room under the limit;
    #: nothing of mlaudit's in the description), ``unverified`` (written, but the description
    #: kept changing under it), or None (no description section for this tracker/run).
    section_state: str | None = None
    #: The tracker's description limit in characters, when it has one.
    section_limit: int | None = None

    def lines(self) -> list[str]:
        verb = "would write" if self.dry_run else "wrote"
        out = (
            [
                f"{verb} {len(self.tags)} tags: "
                + ", ".join(f"{k}={v}" for k, v in self.tags.items())
            ]
            if self.tags
            else []
        )
        if self.artifacts:
            out.append(f"{verb} artifacts: " + ", ".join(self.artifacts))
        state = self.section_state or ("written" if self.description is not None else None)
        limit = f"{self.section_limit:,}-character" if self.section_limit else "tracker's"
        if state == "written":
            out.append(f"{verb} the mlaudit section of the run description")
        elif state == "shortened":
            out.append(
                f"{verb} the mlaudit section of the run description, shortened to fit the "
                f"{limit} limit (it links the full report)"
            )
        elif state == "left_out":
            out.append(
                f"{'would leave' if self.dry_run else 'left'} the mlaudit section out of the "
                f"run description: the user's text leaves no room under the {limit} limit "
                "(the verdict is in the tags and the report artifacts)"
            )
        elif state == "unverified":
            out.append(
                f"{verb} the mlaudit section of the run description, but the description "
                "kept changing under it; the next audit merges it again"
            )
        out += self.notes
        return out


def summary_section(report: AuditReport) -> str:
    return render_summary_markdown(report)


#: Most characters of a triage section in a project description (the rest is in the terminal
#: and ``--format json``): a page of text.
TRIAGE_SECTION_CHARS = 6000
#: Factors listed in a triage section.
TRIAGE_SECTION_FACTORS = 10


def triage_section(doc: dict, noun: str = "runs") -> str:
    """The Markdown section mlaudit writes into a project's description after an experiment
    triage (ClearML, W&B), from the redacted :meth:`mlaudit_core.triage.Triage.to_dict`: the
    counts by outcome, the statements, the first :data:`TRIAGE_SECTION_FACTORS` factors with
    their effect in words, p, q and whether significant, first bad / last good (time, commit)
    and the seed-noise judgement; at most :data:`TRIAGE_SECTION_CHARS` characters. ``noun``:
    what the tracker calls a run (``tasks``)."""
    from .render.markdown import md_escape

    outcomes = ", ".join(f"{n} {o or 'no verdict'}" for o, n in doc.get("outcomes", {}).items())
    lines = [f"### mlaudit triage: {doc.get('runs', 0)} {noun} ({md_escape(outcomes)})", ""]
    lines += [f"- {md_escape(s)}" for s in doc.get("statements") or []]
    for f in (doc.get("factors") or [])[:TRIAGE_SECTION_FACTORS]:
        mark = (
            "**significant**"
            if f["significant"]
            else ("small group" if f.get("small") else "not significant")
        )
        lines.append(
            f"- `{md_escape(f['name'])}` [{md_escape(f['target'])}]: {md_escape(f['effect'])} "
            f"(p={f['p_value']:.3g}, q={f['q_value']:.3g}, {mark})"
        )
    for cp in (doc.get("change_point"), doc.get("commit_change_point")):
        if not cp:
            continue
        lines.append(
            f"- first bad / last good by {md_escape(cp['order'])}: {md_escape(cp['direction'])} at "
            f"{md_escape(str(cp['at']))}; last good `{md_escape(str(cp['last_good']))}`, first bad "
            f"`{md_escape(str(cp['first_bad']))}` (q={cp['q_value']:.3g})"
        )
    sn = doc.get("seed_noise")
    if sn and sn.get("statement"):
        lines.append(f"- seed noise: {md_escape(str(sn['statement']))}")
    text = "\n".join(lines)
    if len(text) <= TRIAGE_SECTION_CHARS:
        return text
    return text[: TRIAGE_SECTION_CHARS - 3] + "..."
