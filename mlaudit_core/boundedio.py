"""Reading run files that a hostile or careless run folder may have replaced: regular files
only, with a byte budget.

A run folder is run-controlled: ``logs/debug.log`` may be a link to ``/dev/zero`` (a read to
EOF never ends: break-it pass 3 read 3 GB in 25 s) or a FIFO (``open`` blocks until a writer
comes, forever). :func:`read_regular` opens without blocking (``O_NONBLOCK``, which a regular
file ignores), checks with ``fstat`` on the open descriptor that it is a regular file (after
symlinks: W&B's own ``debug.log`` links into its cache are fine) and reads at most ``limit``
bytes, from the start or the end.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: The default budget of one file: 256 MiB (a W&B ``.wandb`` file of a long run is tens of
#: MiB; a console log over this is read up to it and the rest said missing by the reader).
DEFAULT_LIMIT = 256 << 20


class NotRegularFile(OSError):
    """``path`` is a device, FIFO, socket or directory (after symlinks)."""


def read_regular(
    path: str | os.PathLike, limit: int = DEFAULT_LIMIT, *, tail: bool = False
) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``: its first bytes, or with ``tail``
    its last ones.

    Raises:
        NotRegularFile: ``path`` is not a regular file (a FIFO, ``/dev/zero``, a socket...).
        OSError: it cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            if tail and st.st_size > limit:
                fh.seek(st.st_size - limit)
            return fh.read(limit)
    finally:
        os.close(fd)


def read_regular_text(
    path: str | os.PathLike, limit: int = DEFAULT_LIMIT, *, tail: bool = False
) -> str:
    """:func:`read_regular` decoded as UTF-8 (invalid bytes replaced)."""
    return read_regular(path, limit, tail=tail).decode("utf-8", "replace")


def is_regular(path: str | os.PathLike) -> bool:
    """Whether ``path`` (after symlinks) is a regular file; False when it cannot be stat'ed."""
    try:
        return stat.S_ISREG(Path(path).stat().st_mode)
    except OSError:
        return False
