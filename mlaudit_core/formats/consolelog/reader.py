"""Reading log files safely: binary files, encodings, compressed logs and enormous lines.

Every problem is either one clear :class:`UnreadableLog` (the file cannot be
used at all: missing, a directory, empty, binary) or a warning that ends up in
the report (lines that were not valid UTF-8, lines cut at the length cap), never
a traceback.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ...errors import InputError
from .._text import encoding, unholed

#: Shortest run of NUL bytes taken as a hole where lines may be missing (realworld f12b1-09: runs of
#: 259 to 1,377 NULs in a SLURM .out several jobs appended to); a program writes at most a C string's
#: terminator or alignment padding (f7b1-13: eight single NULs ending PyTorch's segfault lines).
HOLE_BYTES = 16
_NUL_RUN = re.compile(rb"\x00+")
#: Longest line read, in bytes; the rest of a longer line is skipped (and counted).
#: 1 MiB is ~100x the longest metric line of any framework in the catalog.
MAX_LINE_BYTES = 1 << 20
_SNIFF = 8192
#: A ``.gz`` log is read up to this many times its compressed size (at least
#: :data:`GZ_MIN_BYTES`): training logs compress 7-28x (the four logs over 50 KB of
#: ../shared/realworld, gzip -9; benchmarks/logs_throughput.py's mixed log 11x), gzip's most is
#: about 1,000x, so an archive that expands past this is a bomb, not a log: the time to read
#: it stays that of a plain log 50 times its size; the rest is said unread.
GZ_MAX_RATIO = 50
GZ_MIN_BYTES = 16 << 20


class UnreadableLog(InputError):
    """A log file that cannot be read at all. The message names the file and the reason."""


class LineReader:
    """Iterate ``(lineno, text)`` over one log file, collecting warnings.

    Args:
        path: the file, or ``"-"`` for standard input. ``.gz`` files are decompressed.
        max_line_bytes: the line-length cap.

    Text is UTF-8, or UTF-16 with or without its byte-order mark; a file without any line feed
    ends its lines in carriage returns; NUL holes between lines are skipped and counted in a
    warning (:mod:`.._text`).

    Raises:
        UnreadableLog: on open, when the file is missing, a directory, unreadable,
            empty, or binary (in its first 8 KiB, NUL bytes that are not a hole between lines
            or control bytes: :func:`.._text.unholed`).
    """

    def __init__(self, path: str | Path, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.name = str(path)
        self.max_line = max_line_bytes
        self.warnings: list[str] = []
        self.bad_utf8 = 0
        self.first_bad_line: int | None = None
        self.cut_lines = 0
        self.holes = 0
        self.leading_hole = 0  # NUL bytes before the file's first text
        self._text_seen = False
        self.longest_cut = 0
        self.first_cut_line: int | None = None
        self._gz: _Capped | None = None
        self._snapshot: _Capped | None = None  # a regular file, read up to its size at open
        self._fifo = False
        self._fh, self._encoding = self._open(path)

    def _open(self, path) -> tuple[BinaryIO, str]:
        if str(path) == "-":
            fh: BinaryIO = sys.stdin.buffer
        else:
            p = Path(path)
            if not p.exists():
                raise UnreadableLog(f"{p}: no such file")
            if p.is_dir():
                raise UnreadableLog(f"{p}: is a directory, not a log file")
            fh = self._open_file(p)
            if p.suffix == ".gz":
                cap = max(GZ_MIN_BYTES, GZ_MAX_RATIO * p.stat().st_size)
                self._gz = _Capped(gzip.open(fh, "rb"), cap)  # noqa: SIM115
                fh = io.BufferedReader(self._gz)  # type: ignore[assignment]
        try:
            if not hasattr(fh, "peek"):  # a stream without look-ahead (a test runner's stdin)
                first = fh.read(_SNIFF)
                fh = io.BufferedReader(_Rewound(first, fh))  # type: ignore[assignment]
            head = fh.peek(_SNIFF)[:_SNIFF]
        except (OSError, EOFError) as exc:
            raise UnreadableLog(f"{self.name}: cannot be read ({exc})") from None
        if not head:
            if self._fifo:
                raise UnreadableLog(
                    f"{self.name}: a FIFO (named pipe) that no program writes to, nothing to audit"
                )
            raise UnreadableLog(f"{self.name}: empty file (0 bytes), nothing to audit")
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return fh, "utf-16"
        enc, _bom = encoding(head)
        if enc.startswith("utf-16"):
            return fh, enc  # BOM-less UTF-16: NUL in every other byte
        if b"\x00" in head and unholed(head) is None:
            raise UnreadableLog(
                f"{self.name}: binary file (NUL bytes in the first 8 KiB), not a text log"
            )
        return fh, "utf-8"

    @property
    def grew(self) -> bool:
        """Whether the file grew while it was read (lines were appended after the read began;
        they were not read). Known once the iteration ended."""
        return self._snapshot is not None and self._snapshot.capped

    def _open_file(self, p: Path) -> BinaryIO:
        """``p`` opened for reading without waiting for a FIFO's writer (``O_NONBLOCK``; then
        blocking again, so a FIFO without a writer reads as empty and a process substitution
        ``<(zcat log.gz)`` is read to its end). A regular file is read up to the size it had
        when opened: a log still being appended to faster than it is parsed would otherwise
        never end (:attr:`warnings` then says that lines came after)."""
        try:
            nonblock = getattr(os, "O_NONBLOCK", 0)  # POSIX; Windows has no FIFO files
            fd = os.open(p, os.O_RDONLY | nonblock | getattr(os, "O_BINARY", 0))
        except OSError as exc:
            raise UnreadableLog(f"{p}: cannot be read ({exc.strerror or exc})") from None
        st = os.fstat(fd)
        if nonblock:
            os.set_blocking(fd, True)
        self._fifo = stat.S_ISFIFO(st.st_mode)
        raw = open(fd, "rb", buffering=0)  # noqa: SIM115 - closed when iteration ends
        if not stat.S_ISREG(st.st_mode):
            return io.BufferedReader(raw, 1 << 16)
        self._snapshot = _Capped(raw, st.st_size)
        return io.BufferedReader(self._snapshot, 1 << 16)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        fh = self._fh
        try:
            if self._encoding.startswith("utf-16"):
                yield from self._iter_utf16(fh)
                return
            readline = fh.readline
            limit = self.max_line
            lineno = 0
            while True:
                raw = readline(limit)
                if not raw:
                    break
                lineno += 1
                if b"\x00" in raw:
                    raw = self._unholed(raw)
                    if not raw.strip(b"\r\n"):
                        continue
                self._text_seen = True
                if lineno == 1 and len(raw) < limit and not raw.endswith(b"\n") and b"\r" in raw:
                    # the whole file holds no line feed: its lines end in carriage returns
                    for i, part in enumerate(raw.split(b"\r"), 1):
                        if part.strip():
                            yield i, self._decode(part, i)
                    break
                if not raw.endswith(b"\n") and len(raw) >= limit:
                    if b"\r" in raw:
                        # progress output joined by carriage returns: read it update by update
                        for part in self._cr_parts(raw, readline, lineno):
                            yield lineno, self._decode(part, lineno)
                        continue
                    skipped = 0
                    while True:
                        rest = readline(limit)
                        skipped += len(rest)
                        if not rest or rest.endswith(b"\n"):
                            break
                    self._cut(lineno, len(raw) + skipped)
                text = self._decode(raw, lineno)
                yield lineno, text.rstrip("\n").rstrip("\r") if text.endswith("\n") else text
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            self.warnings.append(f"{self.name}: reading stopped early: {exc}")
        finally:
            self._finish()

    def _unholed(self, raw: bytes) -> bytes:
        """``raw`` without its NUL bytes; those in runs of :data:`HOLE_BYTES` or more are a hole a
        writer left (:mod:`.._text`), counted for the warning. A shorter run is a C string's
        terminator or padding written with a message (PyTorch's DataLoader segfault handler writes
        ``ERROR: Unexpected segmentation fault encountered in worker.\\n\\0``): nothing is missing.
        A hole before the file's first text is counted apart (:attr:`leading_hole`): the file was
        emptied or recreated while a writer went on at its old offset, so the lines before it are
        lost and the text after it runs whole to the file's end."""
        runs = [len(m) for m in _NUL_RUN.findall(raw) if len(m) >= HOLE_BYTES]
        if not self._text_seen and raw.startswith(b"\x00"):
            head = len(raw) - len(raw.lstrip(b"\x00"))
            if head >= HOLE_BYTES:
                self.leading_hole += head
                runs.remove(head)
        self.holes += sum(runs)
        return raw.replace(b"\x00", b"")

    def _decode(self, raw: bytes, lineno: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.bad_utf8 += 1
            if self.first_bad_line is None:
                self.first_bad_line = lineno
            return raw.decode("utf-8", "replace")

    def _cr_parts(self, raw: bytes, readline, lineno: int) -> Iterator[bytes]:
        """Split one enormous line on carriage returns, reading on until its newline."""
        buf = raw
        while True:
            *done, buf = buf.split(b"\r")
            yield from (d for d in done if d.strip())
            if buf.endswith(b"\n"):
                break
            if len(buf) >= self.max_line:  # one update longer than the cap: keep its start
                self._cut(lineno, len(buf))
                yield buf[: self.max_line]
                buf = b""
            more = readline(self.max_line)
            if not more:
                break
            buf += more
        if buf.strip():
            yield buf.rstrip(b"\n")

    def _iter_utf16(self, fh) -> Iterator[tuple[int, str]]:
        text = io.TextIOWrapper(fh, encoding=self._encoding, errors="replace", newline="")
        for lineno, line in enumerate(text, 1):
            if len(line) > self.max_line:
                self._cut(lineno, len(line))
                line = line[: self.max_line]
            yield lineno, line.rstrip("\n").rstrip("\r")

    def _cut(self, lineno: int, size: int) -> None:
        self.cut_lines += 1
        self.longest_cut = max(self.longest_cut, size)
        if self.first_cut_line is None:
            self.first_cut_line = lineno

    def _finish(self) -> None:
        if self.name != "-":
            self._fh.close()
        if self._gz is not None and self._gz.capped:
            self.warnings.append(
                f"{self.name}: decompressed past {_size(self._gz.cap)} ({GZ_MAX_RATIO}x the "
                "compressed file, a compression no training log has): the rest was not read"
            )
        if self._snapshot is not None and self._snapshot.capped:  # self.grew
            self.warnings.append(
                f"{self.name}: grew while it was read (still being written?): it was read up to "
                f"its size when the read began, {_size(self._snapshot.cap)}; later lines were not read"
            )
        if self.bad_utf8:
            self.warnings.append(
                f"{self.name}: {self.bad_utf8} line(s) are not valid UTF-8 (first at line {self.first_bad_line}); "
                "they were read with replacement characters"
            )
        if self.leading_hole:
            self.warnings.append(
                f"{self.name}: begins with {self.leading_hole} NUL byte(s) before its first line (the "
                "file was emptied or recreated while a writer went on at its old offset): the run's "
                "start is not in it; from its first line to its end the text is whole"
            )
        if self.holes:
            self.warnings.append(
                f"{self.name}: {self.holes} NUL byte(s) inside the text were skipped (a hole left "
                "by a writer killed while the file was extended, or by jobs appending to one file "
                "on a network file system); lines may be missing there"
            )
        if self.cut_lines:
            self.warnings.append(
                f"{self.name}: {self.cut_lines} line(s) longer than {_size(self.max_line)} (first at line "
                f"{self.first_cut_line}, longest {_size(self.longest_cut)}); only their first "
                f"{_size(self.max_line)} were read"
            )


class _Capped(io.RawIOBase):
    """A raw stream over ``fh`` that ends after ``cap`` bytes (``capped`` tells it did)."""

    def __init__(self, fh, cap: int) -> None:
        self._fh, self.cap, self._left, self.capped = fh, cap, cap, False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._left <= 0:
            self.capped = self.capped or bool(self._fh.read(1))
            return 0
        data = self._fh.read(min(len(b), self._left))
        self._left -= len(data)
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


class _Rewound(io.RawIOBase):
    """A raw stream that first returns ``head`` (bytes already read), then the rest of ``fh``."""

    def __init__(self, head: bytes, fh) -> None:
        self._head, self._fh = head, fh

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._fh.read(len(b))
        b[: len(data)] = data
        return len(data)


def _size(n: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n} bytes"
