"""Label files read by a helper process, while the caller parses the ones read before.

A thread reading ahead shares the interpreter lock with the parsing: each ``open``, ``read``
and ``close`` gives the lock up and must win it back from the busy parser, so on 200,000
small files the thread spent more time waiting for the lock than in the kernel, and the
hand-overs cost a second of CPU. A process of its own (``python -I -S`` running this file:
no site, no package, a few milliseconds to start) reads with no lock to share, and sends
each group back through a pipe as one block of bytes.

Run as a script, this module is that helper; :class:`ReaderProcess` starts and drives it.
The helper reads with :func:`read_files`, which :func:`hbb2obb.io.text.read_blobs` is too, so
the bytes are the same whichever process reads them. Nothing here may import more than the
standard library's ``errno``, ``itertools``, ``os``, ``struct``, ``sys`` and ``time`` at
module level: the helper runs without the package.
"""

from __future__ import annotations

import errno
import itertools
import os
import struct
import sys
import time

_COUNT = struct.Struct("<q")  # a request: the size of its block of paths; a reply: how many files
_READ_SIZE = 1 << 16  # one read for a small file; a short read is the end
_OPEN_AHEAD = 128  # files open at once while reading (well inside the usual limit of 1,024 descriptors)
_SLOW_READ = 50e-6  # seconds: a small file's read this slow waited for the disk (from memory: 1-3 us)
_UNREADABLE = -1  # a reply's length of a file that could not be opened or read
_PIPE_BYTES = 1 << 20  # the pipes' size where the system allows: a group's request or reply in one write


class ReaderGone(Exception):
    """The helper could not be started or stopped answering: the caller reads the files itself."""


def _read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd`` (fewer only at the end of the stream)."""
    parts, left = [], size
    while left:
        part = os.read(fd, left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_files(paths) -> list:
    """The bytes of each file, ``None`` where it cannot be opened or read.

    Each file is read whole (reads of 64 KiB until a short one: a small file takes one). The
    files are opened ``_OPEN_AHEAD`` at a time. Once a read has had to wait for the disk (the
    pages were not in memory: a set read long ago, pages the system moved out), every file
    open is announced to the kernel (``posix_fadvise(WILLNEED)``) before the next is read, so
    the kernel fetches them together instead of one after the other: 20,000 evicted files
    read about 3.5 times faster here. Files in memory are not announced (that cost about a
    sixth of their reading).

    Examples
    --------
    >>> import os
    >>> read_files([os.devnull, os.path.join(os.devnull, "missing.txt"), os.path.dirname(os.devnull)])
    [b'', None, None]
    """
    paths = list(paths)
    blobs = []
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    open_file, read, close, clock = os.open, os.read, os.close, time.perf_counter
    cold = not hasattr(os, "posix_fadvise")  # no way to announce: never look for slow reads
    start = 0
    while start < len(paths):
        handles = []
        try:
            for path in paths[start:start + _OPEN_AHEAD]:
                try:
                    handles.append(open_file(path, flags))
                except OSError as exc:
                    if exc.errno in (errno.EMFILE, errno.ENFILE) and handles:
                        break  # out of descriptors: read the files open, then open this one again
                    handles.append(None)
            if cold:
                _announce(handles)
            for index, handle in enumerate(handles):
                if handle is None:
                    blobs.append(None)
                    continue
                try:
                    if cold:
                        blob = read(handle, _READ_SIZE)
                    else:
                        began = clock()
                        blob = read(handle, _READ_SIZE)
                        if clock() - began > _SLOW_READ:
                            cold = True
                            _announce(handles[index + 1:])
                    if len(blob) == _READ_SIZE:  # a short read of a regular file is its end
                        parts = [blob]
                        while len(parts[-1]) == _READ_SIZE:
                            parts.append(read(handle, _READ_SIZE))
                        blob = b"".join(parts)
                except OSError:
                    blob = None
                blobs.append(blob)
        finally:
            for handle in handles:
                if handle is not None:
                    close(handle)
        start += len(handles)
    return blobs


def _announce(handles: list) -> None:
    """Tell the kernel these open files are about to be read (only a hint: where it cannot, nothing)."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return
    for handle in handles:
        if handle is not None:
            try:
                advise(handle, 0, 0, os.POSIX_FADV_WILLNEED)
            except OSError:
                pass


def serve(requests: int = 0, replies: int = 1) -> None:
    """The helper's loop: a block of NUL-separated paths in, their lengths and bytes out, until end of input.

    A request is its block's size (``<q``) and the block; a reply is the number of files
    (``<q``), their lengths (``<q`` each) and their bytes, one after the other.
    """
    while True:
        head = _read_exactly(requests, _COUNT.size)
        if len(head) < _COUNT.size:
            return  # the caller closed the pipe: done
        (size,) = _COUNT.unpack(head)
        block = _read_exactly(requests, size)
        if len(block) < size:
            return
        blobs = read_files(block.split(b"\0"))
        lengths = [_UNREADABLE if blob is None else len(blob) for blob in blobs]
        _write_all(replies, _COUNT.pack(len(lengths)) + struct.pack(f"<{len(lengths)}q", *lengths))
        _write_all(replies, b"".join([blob for blob in blobs if blob is not None]))


class ReaderProcess:
    """The helper process, one group of files at a time: :meth:`submit` the paths, then :meth:`collect` their bytes.

    Any failure to start, write or read raises :class:`ReaderGone` (and stops the helper):
    the caller then reads the files itself, so the bytes it gets never depend on the helper.
    :meth:`close` ends the helper and waits for it; no helper outlives its reader.
    """

    def __init__(self):
        import subprocess

        # an embedding program (a GUI, a server) may be sys.executable: start only what is plainly Python
        if not os.path.basename(sys.executable or "").lower().startswith(("python", "pypy")):
            raise ReaderGone("no Python interpreter to start")
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, close_fds=True)
        except (OSError, ValueError) as exc:
            raise ReaderGone(str(exc)) from None
        self._pending = None
        for pipe in (self._process.stdin, self._process.stdout):  # a group's paths, its reply: one write each
            self._widen_pipe(pipe.fileno())

    @staticmethod
    def _widen_pipe(fd: int) -> None:
        try:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass  # a smaller pipe only means the bytes go over in more pieces

    def submit(self, paths: list) -> None:
        """Have the helper read ``paths`` (strings, at least one); :meth:`collect` returns their bytes."""
        encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
        try:
            block = "\0".join(paths).encode(encoding, errors)
        except UnicodeError:
            raise ReaderGone("a path the file system cannot spell") from None
        if not paths or block.count(b"\0") != len(paths) - 1:
            raise ReaderGone("no paths, or a path the pipe cannot carry (a NUL in it): read them here")
        try:
            _write_all(self._process.stdin.fileno(), _COUNT.pack(len(block)) + block)
        except (OSError, ValueError) as exc:
            self.close()
            raise ReaderGone(str(exc)) from None
        self._pending = len(paths)

    def collect(self) -> list:
        """The bytes of each path of the last :meth:`submit`, ``None`` where the file cannot be read."""
        expected, self._pending = self._pending, None
        try:
            fd = self._process.stdout.fileno()
            head = _read_exactly(fd, _COUNT.size)
            if len(head) < _COUNT.size or _COUNT.unpack(head)[0] != expected:
                raise ReaderGone("the helper stopped")
            lengths = struct.unpack(f"<{expected}q", _read_exactly(fd, _COUNT.size * expected))
            total = sum(lengths) + lengths.count(_UNREADABLE)  # every unreadable file counted -1
            data = _read_exactly(fd, total)
            if len(data) < total:
                raise ReaderGone("the helper stopped")
        except (OSError, ValueError, struct.error, ReaderGone) as exc:
            self.close()
            raise ReaderGone(str(exc)) from None
        if _UNREADABLE not in lengths:
            ends = list(itertools.accumulate(lengths))
            return [data[start:end] for start, end in zip([0] + ends, ends)]
        blobs, start = [], 0
        for length in lengths:
            if length == _UNREADABLE:
                blobs.append(None)
            else:
                blobs.append(data[start:start + length])
                start += length
        return blobs

    def close(self) -> None:
        """End the helper (it stops at the end of its input) and wait for it."""
        process = self._process
        for pipe in (process.stdin, process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            process.wait(timeout=2)
        except Exception:  # noqa: BLE001 - whatever keeps it alive, it must not outlive the reader
            process.kill()
            process.wait()


if __name__ == "__main__":
    try:
        serve()
    except BaseException:  # noqa: BLE001 - the caller reads the files itself; the helper says nothing
        os._exit(1)
