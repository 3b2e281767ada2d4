"""The files under a followed run folder, kept between polls (``mlaudit watch PATH --live``).

A live source lists its folders at every poll, so that files and folders created after the
watcher started are followed (the usual order: start the watcher, then the training, whose
writer creates ``events.out.tfevents.*``, ``version_N/metrics.csv`` or ``train.log`` later).
Walking the whole tree each poll (``os.walk``: one ``scandir`` per directory plus a ``stat``
per file) costs in proportion to the tree; :class:`TreeScan` instead ``stat``s each known
directory and lists again only those whose modification time changed (a directory's mtime
changes when an entry is created, removed or renamed in it, not when a file in it grows), so
a poll of an unchanged tree is one ``stat`` per directory.

A directory changed twice within the file system's timestamp granularity could keep the same
mtime: a directory whose mtime is within :data:`RACY_S` of the moment it was listed is listed
again at the next scan (git's "racily clean" rule for its index, applied to directories).

Bounded: at most ``max_dirs`` directories per root (:data:`MAX_DIRS`; a folder deeper or wider
than that is not one run: the rest is skipped with one warning); directories named in ``skip``
(mlaudit's own ``mlaudit/`` output) and symbolic links to directories are not entered (as
``os.walk``'s default).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger("mlaudit.live")

#: Directories scanned per followed root (a run folder; thousands of sub-folders are not one run).
MAX_DIRS = 2000
#: Seconds within which a directory's mtime is too close to its listing to trust (coarse
#: timestamps: 1 s on ext3/HFS+, 2 s on FAT).
RACY_S = 2.0


class TreeScan:
    """Regular files under ``root`` (a directory), re-listing only changed directories.

    :meth:`scan` returns the files (``Path``, sorted by path); after it, :attr:`changed` says
    whether any directory's listing differed from the previous scan (True at the first scan of
    a non-empty tree) and :attr:`listed` how many directories were listed (``scandir``) by it;
    :attr:`generation` counts the scans that saw a change (a caller that scans less often than
    others compares it with the value it saw last).
    A root that does not exist (yet) gives no files.
    """

    def __init__(
        self, root: Path, skip: tuple[str, ...] = ("mlaudit",), max_dirs: int = MAX_DIRS
    ) -> None:
        self.root = Path(root)
        self.skip = skip
        self.max_dirs = max_dirs
        #: dir -> (mtime_ns, listed at (ns, wall), sub-directory names, file paths)
        self._dirs: dict[str, tuple[int, int, list[str], list[Path]]] = {}
        self._out: list[Path] | None = None  # the last result (returned again while unchanged)
        self.changed = False
        self.listed = 0
        self.generation = 0
        self._warned = False

    def _list(self, d: str) -> tuple[list[str], list[Path]] | None:
        subs, files = [], []
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            if e.name not in self.skip:
                                subs.append(e.name)
                        elif e.is_file():  # regular files only: a FIFO would block a read
                            files.append(e.name)
                    except OSError:
                        continue
        except OSError:
            return None
        self.listed += 1
        return sorted(subs), [Path(d, f) for f in sorted(files)]

    def scan(self) -> list[Path]:
        self.changed, self.listed = False, 0
        now_ns = time.time_ns()
        racy_ns = int(RACY_S * 1e9)
        seen: set[str] = set()
        out: list[Path] = []
        stack = [str(self.root)]
        while stack:
            d = stack.pop()
            if len(seen) >= self.max_dirs:
                if not self._warned:
                    log.warning(
                        "%s: more than %d directories; the rest is not followed",
                        self.root,
                        self.max_dirs,
                    )
                    self._warned = True
                break
            try:
                st = os.stat(d)
            except OSError:
                continue
            seen.add(d)
            cached = self._dirs.get(d)
            if (
                cached is not None
                and cached[0] == st.st_mtime_ns
                and st.st_mtime_ns < cached[1] - racy_ns
            ):
                subs, files = cached[2], cached[3]
            else:
                got = self._list(d)
                if got is None:
                    continue
                subs, files = got
                if cached is None or (cached[2], cached[3]) != (subs, files):
                    self.changed = True
                self._dirs[d] = (st.st_mtime_ns, now_ns, subs, files)
            out.extend(files)
            stack.extend(os.path.join(d, s) for s in reversed(subs))
        for d in [d for d in self._dirs if d not in seen]:  # removed (or beyond the bound)
            del self._dirs[d]
            self.changed = True
        self.generation += self.changed
        if self.changed or self._out is None:
            self._out = sorted(out)
        return list(self._out)
