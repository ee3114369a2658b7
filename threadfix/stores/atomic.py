"""Replace a file so that readers see the old bytes or the new ones, never a mix, and nothing is lost.

The recipe (see the reliability notes): resolve a symlink deliberately; refuse a hard-linked file
(replacing one name would silently split it from the other); write a temp file in the same folder with
``O_CREAT|O_EXCL|O_NOFOLLOW`` and mode 0600; copy the original's mode and owner; ``fsync``; check that
the original has not changed since we read it (compare-and-swap on device, inode, size and mtime); take a
Linux write lease when we can, so that a process opening the file meanwhile is noticed; swap the names
(``RENAME_EXCHANGE``) and look at the lease once more, swapping back if someone began opening the original
(or a plain ``rename`` without a lease); ``fsync`` the folder. Any failure before the swap removes the
temp file and leaves the original untouched; a temp file a killed repair leaves behind is removed by a
later repair of that folder once it is a day old.

The new content is streamed: unchanged byte ranges are copied from the original with the kernel's
copy, and only changed threads are written by Python.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from msgspec import Struct

from threadfix.errors import BusyError, StoreError
from threadfix.fileio import write_all
from threadfix.given import nothing_there

TEMP_PREFIX = ".threadfix-"
#: the signals that stop a run (a person's Ctrl-C, a scheduler's timeout) and so must find every temp file known
_INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
_F_GETLEASE = getattr(fcntl, "F_GETLEASE", 1025)
_COPY_CHUNK = 1 << 20
#: a ``.threadfix-*.tmp`` file untouched for this long belongs to no running repair (one that was killed)
STALE_TEMP_SECONDS = 24 * 3600
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2

#: ``THREADFIX_CRASHPOINT=step[:n]`` kills this process (SIGKILL, no clean-up) the n-th time (default: the
#: first) it reaches that write step; the crash tests use it. Read once, here; unset, it costs nothing.
_CRASH_AT = os.environ.get("THREADFIX_CRASHPOINT", "")
#: the signal sent there: KILL (no clean-up, the default) or TERM (a scheduler's timeout, handled as Ctrl-C is)
_CRASH_SIGNAL = os.environ.get("THREADFIX_CRASHPOINT_SIGNAL", "KILL")
_crash_counts: dict[str, int] = {}
_swept: set[Path] = set()


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the body runs, then act at once: for a step whose every half must be known
    (a temp file created and recorded, a file swapped in and marked so), or what an interrupt reports is wrong."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def crashpoint(step: str) -> None:
    """Die (or be told to stop) here if the crash tests asked to (temp-written, temp-synced, before-rename,
    renamed, committed)."""
    if not _CRASH_AT:
        return
    name, _, nth = _CRASH_AT.partition(":")
    if name == step:
        _crash_counts[step] = _crash_counts.get(step, 0) + 1
        if _crash_counts[step] == int(nth or 1):
            os.kill(os.getpid(), signal.Signals[f"SIG{_CRASH_SIGNAL}"])


@functools.cache
def _renameat2() -> Any:
    import ctypes  # here, not at the top: only a repair that writes needs it, and it costs every start-up

    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):  # not Linux, or a libc without it (glibc < 2.28)
        return None


def exchange(a: str, b: str) -> bool:
    """Swap two names atomically (``renameat2(RENAME_EXCHANGE)``); False when this system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), a)


class Fingerprint(Struct, frozen=True):
    """What must not change between reading a file and replacing it."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Fingerprint:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _refuse_a_stream(st: os.stat_result, path: Path) -> None:
    """A pipe, a socket or a device (``<(command)``'s ``/dev/fd/63``) is read once: a repair copies the file's
    unchanged bytes from it again, so it cannot write one; stdin can (the document is held whole)."""
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        raise StoreError("is a pipe, a socket or a device, whose bytes cannot be read again to write the repair; "
                         "give it as stdin (threadfix repair - < it), which writes the repaired document to stdout",
                         str(path))


def resolve_target(path: Path) -> Path:
    """The real file to replace: a symlink is followed on purpose (the link itself stays a link)."""
    try:
        st = os.stat(path)  # (not the real path's: a pipe's, /dev/fd/N's, names nothing the system can stat)
    except FileNotFoundError:
        raise StoreError(nothing_there(str(path)), str(path)) from None
    _refuse_a_stream(st, path)
    if not stat.S_ISREG(st.st_mode):
        raise StoreError("not a regular file", str(path))
    real = Path(os.path.realpath(path))
    if st.st_nlink > 1:
        raise StoreError(f"has {st.st_nlink} hard links; replacing it would split them (copy it first)", str(path))
    return real


class LeaseWatch:
    """A write lease on the original while we replace it: granted only when no other process has it open.

    If someone opens the file while we hold it, the kernel tells us (SIGIO) and holds their open for a
    while; we then give up instead of renaming over bytes they may be about to write.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.broken = False
        self._previous = None

    def acquire(self) -> bool:
        """True when a lease is held; False when leases are not available here (then CAS alone guards)."""
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return False
        try:
            self._previous = signal.signal(signal.SIGIO, self._on_break)
        except ValueError:  # not the main thread: no signals, no lease
            self._close()
            return False
        try:
            fcntl.fcntl(self.fd, _F_SETLEASE, fcntl.F_WRLCK)
        except OSError as exc:
            self.release()
            if exc.errno in (errno.EAGAIN, errno.EBUSY):
                raise BusyError("another process has the file open; try again when it is closed",
                                str(self.path)) from None
            return False  # EINVAL (filesystem without leases), EACCES (not the owner): fall back to CAS
        return True

    def _on_break(self, signum: int, frame: object) -> None:
        self.broken = True

    def intact(self) -> bool:
        """Still ours: nobody has started opening the file. Asks the kernel, which knows at once (the
        SIGIO handler runs only at Python's next check)."""
        if self.broken or self.fd is None:
            return False
        try:
            return fcntl.fcntl(self.fd, _F_GETLEASE) == fcntl.F_WRLCK
        except OSError:
            return False

    def release(self) -> None:
        if self.fd is not None:
            try:
                fcntl.fcntl(self.fd, _F_SETLEASE, fcntl.F_UNLCK)
            except OSError:
                pass
        self._close()
        if self._previous is not None:
            signal.signal(signal.SIGIO, self._previous)
            self._previous = None

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Rewriter:
    """Streams a new version of ``source`` into a temp file beside it, then swaps it in atomically.

    Call :meth:`splice` for each changed byte range in increasing order, then :meth:`commit`; or
    :meth:`abort`. Nothing is created until the first splice.
    """

    def __init__(self, source: Path, expected: Fingerprint, dest: Path | None = None) -> None:
        #: ``dest`` writes elsewhere (``-o``): the source is only read, never replaced
        self.dest = dest
        # (in place, the source is the target: its real path resolved once, not once for each)
        self.target = resolve_target(source) if dest is None else _new_target(dest)
        if dest is not None:
            try:
                _refuse_a_stream(os.stat(source), source)
            except FileNotFoundError:
                pass  # (the read that comes says it is gone)
        self.source = self.target if dest is None else Path(os.path.realpath(source))
        self.display = str(source) if dest is None else str(dest)
        self.expected = expected
        self._src: BinaryIO | None = None
        self._tmp_fd: int | None = None
        self._tmp_path: str | None = None
        self._pos = 0
        self.changed = False
        #: the new version is in place (set with the rename itself: an interrupt after it reports it written)
        self.swapped = False

    def _open(self) -> None:
        folder = self.target.parent
        try:
            with interrupts_held():  # (an interrupt in between would leave a temp file abort does not know of)
                self._tmp_fd, self._tmp_path = create_temp(folder)
        except PermissionError:
            raise StoreError("the folder is not writable, so the file cannot be replaced atomically",
                             self.display) from None
        # unbuffered: it is only copied from, by the kernel (a buffered reader costs a file two more system calls)
        self._src = open(self.source, "rb", buffering=0)  # noqa: SIM115 - closed in commit/abort
        if Fingerprint.of(os.fstat(self._src.fileno())) != self.expected:
            raise BusyError("changed while threadfix was reading it; nothing was written", self.display)

    def splice(self, start: int, end: int, data: bytes) -> None:
        """Replace original bytes [start, end) with ``data``; bytes before ``start`` are copied as they are."""
        try:
            if self._tmp_fd is None:
                self._open()
            self._copy_until(start)
            write_all(self._tmp_fd, data)
        except OSError as exc:  # disk full, I/O error, read-only: the original is untouched
            self.abort()
            raise StoreError(describe_os_error(exc), self.display) from None
        self._pos = end
        self.changed = True

    def _copy_until(self, offset: int) -> None:
        assert self._src is not None and self._tmp_fd is not None
        remaining = offset - self._pos
        src = self._src.fileno()
        while remaining > 0:
            try:
                sent = os.copy_file_range(src, self._tmp_fd, min(remaining, 1 << 30), self._pos)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                sent = self._copy_slowly(remaining)
            if sent == 0:
                raise BusyError("shrank while threadfix was reading it; nothing was written", self.display)
            self._pos += sent
            remaining -= sent

    def _copy_slowly(self, remaining: int) -> int:
        assert self._src is not None and self._tmp_fd is not None
        self._src.seek(self._pos)
        chunk = self._src.read(min(remaining, _COPY_CHUNK))
        write_all(self._tmp_fd, chunk)
        return len(chunk)

    def commit(self, always: bool = False) -> bool:
        """Swap the new version in; False when nothing was spliced (the original is left alone).

        ``always`` writes the destination even when nothing changed (``-o`` always gets a file).
        """
        if self._tmp_fd is None:
            if not always:
                return False
            try:
                self._open()
            except OSError as exc:
                self.abort()
                raise StoreError(describe_os_error(exc), self.display) from None
        if self.dest is not None:
            return self._commit_elsewhere()
        try:
            self.finish()
            self.sync()
            self.swap_in()
        finally:
            self.abort()
        self.sync_folder()
        crashpoint("committed")
        return True

    # The steps of :meth:`commit`, in order, for a caller that commits many files together (a folder's batch:
    # every temp file finished, then all synced, then each swapped in, then their folder synced once). Each
    # step that fails removes the temp file and raises StoreError (BusyError: someone changed the original).

    def finish(self) -> None:
        """Copy what is left of the original into the temp file and give it the original's mode and owner; the
        original is closed (a write lease is refused while any descriptor of it, ours included, is open)."""
        try:
            self._copy_until(self.expected.size)
            crashpoint("temp-written")
            original = os.fstat(self._src.fileno())
            self._src.close()
            self._src = None
            _match_metadata(self._tmp_fd, original, self.display)
        except OSError as exc:
            self.abort()
            raise StoreError(describe_os_error(exc), self.display) from None
        except BaseException:
            self.abort()
            raise

    def sync(self) -> None:
        """Make the finished temp file durable (nothing is swapped in before it is)."""
        try:
            os.fsync(self._tmp_fd)
        except OSError as exc:
            self.synced(exc)
        self.synced(None)

    def synced(self, error: OSError | None) -> None:
        """The temp file was synced (by :func:`sync_temps`, with many others): ``error`` is why it could not be."""
        if error is not None:
            self.abort()
            raise StoreError(describe_os_error(error), self.display) from None
        crashpoint("temp-synced")

    def swap_in(self) -> None:
        """Compare and swap: put the synced temp file in place of the original, unless the original changed since
        it was read or someone opened it meanwhile (BusyError; the temp file is removed, the original untouched)."""
        lease = LeaseWatch(self.target)
        try:
            leased = lease.acquire()
            now = os.stat(self.target, follow_symlinks=False)
            if Fingerprint.of(now) != self.expected:
                raise BusyError("changed while threadfix was working on it; nothing was written", self.display)
            if leased and not lease.intact():
                raise BusyError("another process opened it while threadfix was replacing it; nothing was written",
                                self.display)
            crashpoint("before-rename")
            self._swap(lease if leased else None)
            crashpoint("renamed")
        except OSError as exc:
            raise StoreError(describe_os_error(exc), self.display) from None
        finally:
            lease.release()
            self.abort()

    def sync_folder(self) -> None:
        """Make the swap durable: sync the folder (once for many files of one folder: see :func:`fsync_folder`)."""
        try:
            fsync_folder(self.target.parent)
        except OSError as exc:
            raise StoreError(folder_unsynced(exc), self.display) from None

    def _swap(self, lease: LeaseWatch | None) -> None:
        """Put the temp file in place of the original.

        With a lease: swap the two names, look again, and swap back if someone began opening the original
        meanwhile. Such an open waits for our lease and then goes on with the inode it looked up, the one
        swapped out, so whatever it wrote would be lost; swapped back, it lands in the file. Without a
        lease or RENAME_EXCHANGE: a plain rename, guarded only by the compare-and-swap just before it.
        """
        assert self._tmp_path is not None
        with interrupts_held():  # (an interrupt once the new file is in place must find it marked so)
            if lease is not None and exchange(self._tmp_path, str(self.target)):
                if not lease.intact():
                    exchange(self._tmp_path, str(self.target))  # the original is back; abort() removes ours
                    raise BusyError("another process opened it while threadfix was replacing it; nothing was "
                                    "written", self.display)
                self.swapped = True
                _remove(self._tmp_path)  # now the original's inode, which nobody has open
            else:
                os.replace(self._tmp_path, self.target)
                self.swapped = True
            self._tmp_path = None

    def _commit_elsewhere(self) -> bool:
        try:
            self._copy_until(self.expected.size)
            os.fchmod(self._tmp_fd, stat.S_IMODE(os.fstat(self._src.fileno()).st_mode))
            os.fsync(self._tmp_fd)
            with interrupts_held():
                os.replace(self._tmp_path, self.target)
                self.swapped, self._tmp_path = True, None
            fsync_folder(self.target.parent)
        except OSError as exc:
            raise StoreError(describe_os_error(exc), self.display) from None
        finally:
            self.abort()
        return True

    def abort(self) -> None:
        """Close everything and remove the temp file if it is still there."""
        if self._tmp_fd is not None:
            os.close(self._tmp_fd)
            self._tmp_fd = None
        if self._src is not None:
            self._src.close()
            self._src = None
        if self._tmp_path is not None:
            _remove(self._tmp_path)
            self._tmp_path = None


#: threads that sync a batch's temp files: syncs in flight together share the filesystem's journal commits, where
#: one after another each waits for its own (28 files of 16 KB on ext4: 7-27 ms against 40-80 ms on a busy disk)
SYNC_THREADS = 8


def sync_temps(rewriters: list[Rewriter], meanwhile: Callable[[], Any] | None = None) -> list[OSError | None]:
    """``fsync`` the finished temp files of ``rewriters`` at once, in a few threads, and run ``meanwhile`` (the
    journal's append) in this one as they do; what each sync raised, in order (each rewriter's :meth:`synced`
    says it). Ctrl-C and SIGTERM wait until every sync is done: a temp file must not be closed under a thread.

    The threads are the interpreter's own (``_thread``): a ``threading.Thread`` costs its module's import and, at
    each start, a wait until the new thread runs, a switch away and back for each of them on a busy machine
    (issue #28); a lock released at the end of each thread's share is all the joining this needs."""
    fds = [rewriter._tmp_fd for rewriter in rewriters]
    errors: list[OSError | None] = [None] * len(fds)
    threads = min(SYNC_THREADS, len(fds))

    def work(first: int, done: Any = None) -> None:
        try:
            for at in range(first, len(fds), threads):
                try:
                    os.fsync(fds[at])
                except OSError as exc:
                    errors[at] = exc
        finally:
            if done is not None:
                done.release()

    if threads <= 1:
        work(0)
        if meanwhile is not None:
            meanwhile()
        return errors
    import _thread  # (built in: nothing to load)

    with interrupts_held():  # (the threads start with the signals blocked, so only this thread takes them)
        running = []
        try:
            for first in range(threads):
                done = _thread.allocate_lock()
                done.acquire()
                try:
                    _thread.start_new_thread(work, (first, done))
                except RuntimeError:  # no thread to be had (a process at its limit): this share here, in turn
                    work(first)
                    continue
                running.append(done)
            if meanwhile is not None:
                meanwhile()
        finally:
            for done in running:
                done.acquire()
    return errors


def temp_token() -> str:
    """The random part of a temp file's name (tests replace it to plant a link at a known name)."""
    return os.urandom(6).hex()


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def create_temp(folder: Path) -> tuple[int, str]:
    """A new ``.threadfix-*.tmp`` file in ``folder``, mode 0600, never through a planted link (what
    ``tempfile.mkstemp`` does, without importing it for every repair that writes)."""
    for _ in range(100):
        name = os.path.join(folder, f"{TEMP_PREFIX}{temp_token()}.tmp")
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def _remove(temp: str) -> None:
    """Remove a temp file; one that cannot be (an I/O error) is left for the stale sweep, not raised."""
    try:
        os.unlink(temp)
    except OSError:
        pass


def remove_stale_temps(folder: Path) -> None:
    """Delete ``.threadfix-*.tmp`` files a killed repair left in ``folder``, once no running one can own them.

    A fresh one may belong to a repair running now, so it is left alone (``repair`` never lists temp files
    as stores). Whatever a stray holds is also in the journal, which is synced before any store changes.
    Each folder is looked at once per process.
    """
    if folder in _swept:
        return
    _swept.add(folder)
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(".tmp"):
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                pass


def _new_target(dest: Path) -> Path:
    """A destination for ``-o``: a new or regular file, never a link or a folder."""
    if dest.is_symlink() or (dest.exists() and not dest.is_file()):
        raise StoreError("exists and is not a regular file; refusing to replace it", str(dest))
    return Path(os.path.abspath(dest))


def _match_metadata(fd: int, original: os.stat_result, where: str) -> None:
    """Give the new file the original's permissions and, when we may, its owner."""
    os.fchmod(fd, stat.S_IMODE(original.st_mode))
    if (original.st_uid, original.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, original.st_uid, original.st_gid)
        except PermissionError:
            raise StoreError("is owned by another user; run threadfix as that user", where) from None


def fsync_folder(folder: Path) -> None:
    """Make a rename durable: it is atomic at once, but only durable once the folder is synced."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def folder_unsynced(exc: OSError) -> str:
    """What a file swapped in says when its folder could not be synced after it."""
    return (f"was replaced, but syncing its folder failed ({describe_os_error(exc)}); the change may not survive a "
            "power cut")


def describe_os_error(exc: OSError) -> str:
    """An OSError as a short lower-case phrase (``no space left on device``)."""
    text = os.strerror(exc.errno) if exc.errno else str(exc)
    return text[:1].lower() + text[1:]
