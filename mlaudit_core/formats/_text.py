"""What a text file says, whatever its encoding, line ends or NUL holes.

The readers sniff a file from its first bytes. The same text reaches them in several byte
forms, and each is read as the text it holds:

* **Encodings**: UTF-8 with or without its byte-order mark; UTF-16 (little or big endian)
  with a byte-order mark (PowerShell's ``Out-File`` and ``>`` redirection write UTF-16LE with
  one) or without one (every other byte NUL, ASCII text); UTF-32 with its mark.
* **Line ends**: LF, CRLF and CR. A text that holds no LF at all ends its lines with CR
  (classic Mac OS files, Windows ``\\r\\r\\n`` written through a second newline translation
  and then stripped of its LFs); in a text that has LFs, a CR inside a line is a terminal
  redraw (a progress bar), left to the console reader.
* **NUL holes**: a run of NUL bytes between text lines is a hole a writer left, not binary
  content: a job killed while the file system extended the file, or several SLURM jobs
  appending to one ``.out`` on a network file system (realworld f12b1-09: 3,235 NULs between
  two lines of a 250 KB ``slurm.out``). The holes are skipped.

A file is binary when, with its NUL runs taken out, more than :data:`MAX_CONTROL` of its
bytes are control characters other than the ones terminals use (tab, line ends, form feed,
backspace, escape), or when its NULs are scattered (more than one NUL run per
:data:`MIN_BYTES_PER_HOLE` bytes of text): a TensorBoard event file, a checkpoint and an
image all fail both tests at once; the text files of the corpora pass them.
"""

from __future__ import annotations

import codecs
import re

#: Most control bytes (outside tab, LF, CR, form feed, vertical tab, backspace and escape) a text
#: may hold, as a share of its bytes: a stray ``\x07`` (bell) or ``\x1a`` (DOS end of file) in a
#: log is text, a TensorBoard record header (lengths and CRCs) is not. Checked on the corpora's
#: text files: the most is 0 (tests/test_formats.py::test_decode_text_*).
MAX_CONTROL = 0.01
#: Fewest text bytes per NUL run: holes are a few per file, a binary record format has a NUL
#: run in every few dozen bytes.
MIN_BYTES_PER_HOLE = 512
_TERMINAL = frozenset(b"\t\n\r\x0b\x0c\x08\x1b")
_CONTROL = bytes(b for b in range(32) if b not in _TERMINAL) + b"\x7f"
_NUL_RUN = re.compile(rb"\x00+")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def encoding(data: bytes) -> tuple[str, int]:
    """The encoding of a file starting with ``data`` and the length of its byte-order mark:
    ``("utf-8", 0)`` for plain bytes, ``("utf-16-le", 2)`` after a UTF-16LE mark, a BOM-less
    UTF-16 text (at least 16 bytes, NUL in at least 90% of the odd or of the even positions
    and in under 10% of the others: ASCII text widened to two bytes)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    if len(data) >= 16 and b"\x00" in data:
        even, odd = data[0::2], data[1::2]
        z_even, z_odd = even.count(0) / len(even), odd.count(0) / len(odd)
        if z_odd >= 0.9 and z_even < 0.1:
            return "utf-16-le", 0
        if z_even >= 0.9 and z_odd < 0.1:
            return "utf-16-be", 0
    return "utf-8", 0


def unholed(data: bytes) -> tuple[bytes, int] | None:
    """``data`` without its NUL holes, and the number of NUL bytes taken out; None when the
    bytes are binary (the module docstring's two tests). A hole between two line ends is taken
    out; a hole inside a line ends that line (the text after it was written elsewhere)."""
    if b"\x00" not in data:
        return None if _binary(data) else (data, 0)
    holes = 0
    runs = 0

    def fill(m: re.Match) -> bytes:
        nonlocal holes, runs
        holes += m.end() - m.start()
        runs += 1
        before = data[m.start() - 1 : m.start()]
        return b"" if before in (b"", b"\n", b"\r") or m.end() == len(data) else b"\n"

    text = _NUL_RUN.sub(fill, data)
    if runs > 1 and len(text) < runs * MIN_BYTES_PER_HOLE:
        return None
    if _binary(text):
        return None
    return text, holes


def _binary(data: bytes) -> bool:
    if not data:
        return False
    control = len(data) - len(data.translate(None, _CONTROL))
    return control > MAX_CONTROL * len(data)


def decode(data: bytes) -> str | None:
    """The text of the bytes ``data`` (a file's first bytes or all of them): decoded from its
    encoding (:func:`encoding`; undecodable bytes replaced), its byte-order mark and NUL holes
    left out; None when it is binary. Line ends are kept as written (:func:`split_lines`)."""
    name, bom = encoding(data)
    if name != "utf-8":
        body = data[bom:]
        width = 4 if name.startswith("utf-32") else 2
        body = body[: len(body) - len(body) % width]  # a read cut inside a character
        text = body.decode(name, "replace")
        clean = unholed(text.encode("utf-8", "replace"))
        return None if clean is None else clean[0].decode("utf-8", "replace")
    clean = unholed(data[bom:])
    if clean is None:
        return None
    return clean[0].decode("utf-8", "replace")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: split at LF (the CRs before it are dropped); a text that holds no LF
    but does hold CRs is split at each CR (its lines end in CR). A line of a text with LFs keeps
    the CRs inside it (terminal redraws). The last line is kept even when it has no line end."""
    if "\n" not in text and "\r" in text:
        lines = text.split("\r")
    else:
        lines = [s.rstrip("\r") for s in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines
