"""The one way in and the one way out for files: bounded, checked reads and atomic writes.

Base module (standard library only; ``yamlio`` parses on top of it). Every file, stdin or stream
the programs read goes through ``read_bytes``/``read_text``/``read_stdin``/``read_stream``, which
refuse, each with one ``InvalidInput`` line naming the input: a missing file, a directory, a file
that cannot be opened, input larger than ``max_input_bytes()`` (a regular file by its size before
anything is read; a pipe, FIFO, device or stdin after at most one byte more than the limit), text
that is not UTF-8 (naming the offset of the first bad byte) and text holding a NUL byte (binary
data). JSON documents are parsed here too (``loads_json``), nested at most ``MAX_NESTING`` levels.
Hashing (``sha256``) streams a file without the size limit, since it holds none of it.

Everything the programs write goes out through ``atomic_write_bytes``/``atomic_write_text`` (a
temporary file in the destination's folder, fsync, rename) or, for a folder of files such as a
bundle, ``staged_directory`` with ``write_staged`` (a temporary folder renamed into place), so a
reader never sees half a file. An output's folder must exist (only caches and generated docs get
theirs created, by ``program_folder``); a missing or unwritable folder, a directory where a file is
expected or a file where a folder is expected is one ``InvalidInput`` line naming the path (exit
2), a full disk one ``DiskFull`` line (exit 9); either way nothing is left half-written.

Left out: parsing YAML (``yamlio``), ConfigMap references (``refs``) and where a program's files
live (``cachedir``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from shared import errors

MAX_INPUT_BYTES_ENV = "AICR_MAX_INPUT_BYTES"
"""The environment variable that sets the input limit in bytes, for all three programs."""
DEFAULT_MAX_INPUT_BYTES = 32 * 1024 * 1024
"""32 MiB. The largest file the programs write is a snapshot: 3.0 MB (JSON) for 10,000 simulated
nodes, 24 MB for 10,000 nodes with EC2-length names and 60 feature-discovery labels each
(tests/test_input_layer.py builds both); a 50 MB input is refused unread."""
MAX_NESTING = 100
"""Deepest nesting of mappings and sequences (or objects and arrays) a document may have.

go-yaml stops at 10,000 (``max_flow_level``/``max_indents`` in ``scannerc.go``), as does Go's
``encoding/json``; Python cannot follow: the YAML composer spends three frames a level and the
round-trip constructor four, against a recursion limit of 1,000, and every reader of the data
recurses again. 100 is twice the deepest document known to the programs (47, the Kubeflow Trainer
TrainJob CRD schema)."""
STDIN = "<stdin>"
STDOUT = "<stdout>"
_CHUNK = 1 << 20
_NEWLINE = b"\n"
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""A full disk, a full quota, and a file past ``RLIMIT_FSIZE``: DiskFull, not bad output."""


def max_input_bytes() -> int:
    """The input limit: ``$AICR_MAX_INPUT_BYTES`` when set, else ``DEFAULT_MAX_INPUT_BYTES``."""
    raw = os.environ.get(MAX_INPUT_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise errors.InvalidInput(f"expected a positive whole number of bytes, got {raw!r}", where=MAX_INPUT_BYTES_ENV)
    return int(raw)


def _too_large(limit: int, *, size: int | None = None) -> str:
    amount = f"is {size} bytes" if size is not None else "goes on"
    return f"input {amount}, more than the limit of {limit} bytes (raise it with {MAX_INPUT_BYTES_ENV})"


def _open(path: Path) -> int:
    """A read-only descriptor for ``path``; every way it can fail is one InvalidInput."""
    where = str(path)
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise errors.InvalidInput("file does not exist", where=where) from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read: {exc.strerror or exc}", where=where) from None
    if stat.S_ISDIR(status.st_mode):
        raise errors.InvalidInput("is a directory, expected a file", where=where)
    if stat.S_ISSOCK(status.st_mode):
        raise errors.InvalidInput("is a socket, expected a file", where=where)
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except PermissionError:
        raise errors.InvalidInput("permission denied: the file cannot be read", where=where) from None
    except FileNotFoundError:
        raise errors.InvalidInput("file does not exist", where=where) from None
    except OSError as exc:
        raise errors.InvalidInput(f"cannot read: {exc.strerror or exc}", where=where) from None


def _read_fd(fd: int, *, where: str, limit: int) -> bytes:
    status = os.fstat(fd)
    if stat.S_ISDIR(status.st_mode):
        raise errors.InvalidInput("is a directory, expected a file", where=where)
    if stat.S_ISREG(status.st_mode) and status.st_size > limit:
        raise errors.InvalidInput(_too_large(limit, size=status.st_size), where=where)
    return _read_limited(lambda size: os.read(fd, size), where=where, limit=limit)


def _read_limited(
    read: Callable[[int], bytes], *, where: str, limit: int, failure: type[errors.ToolError] = errors.InvalidInput
) -> bytes:
    """Everything ``read`` gives, in chunks, refused once it passes ``limit`` (so a pipe cannot grow past it)."""
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        try:
            chunk = read(min(left, _CHUNK))
        except OSError as exc:
            raise failure(f"cannot read: {exc.strerror or exc}", where=where) from None
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        raise errors.InvalidInput(_too_large(limit), where=where)
    return b"".join(chunks)


def read_bytes(path: Path) -> bytes:
    """The whole content of a file, FIFO or device, at most ``max_input_bytes()``; InvalidInput otherwise."""
    limit = max_input_bytes()
    fd = _open(path)
    try:
        return _read_fd(fd, where=str(path), limit=limit)
    finally:
        os.close(fd)


def read_stream(stream: BinaryIO, *, where: str, network: bool = False) -> bytes:
    """All of a binary stream (stdin, a pipe, an HTTP response), refused past ``max_input_bytes()``.

    ``network``: the stream is a response body, so a read that fails (a timeout, a reset) is the
    service being unavailable (exit 6), not bad input.
    """
    failure = errors.Unavailable if network else errors.InvalidInput
    return _read_limited(stream.read, where=where, limit=max_input_bytes(), failure=failure)


def decode(data: bytes, *, where: str) -> str:
    """UTF-8 text without NUL bytes; otherwise InvalidInput naming the offset of the first bad byte."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not 0 <= nul < exc.start:
            bad = data[exc.start]
            raise errors.InvalidInput(
                f"not UTF-8 text: byte 0x{bad:02x} at offset {exc.start} ({_line_of(data, exc.start)})", where=where
            ) from None
    if nul >= 0:
        raise errors.InvalidInput(f"binary data: NUL byte at offset {nul} ({_line_of(data, nul)})", where=where)
    return text


def _line_of(data: bytes, offset: int) -> str:
    return f"line {data.count(_NEWLINE, 0, offset) + 1}"


def read_text(path: Path) -> str:
    """A file as UTF-8 text, through every check of ``read_bytes`` and ``decode``."""
    return decode(read_bytes(path), where=str(path))


def read_stdin_bytes(*, where: str = STDIN) -> bytes:
    """Standard input as bytes, bounded like a file."""
    stream = sys.stdin
    if stream is None:
        raise errors.InvalidInput("standard input is closed", where=where)
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return read_stream(buffer, where=where)
    # A text stream without a buffer (an embedding program's StringIO): bounded in characters.
    limit = max_input_bytes()
    text = stream.read(limit + 1)
    if len(text) > limit:
        raise errors.InvalidInput(_too_large(limit), where=where)
    return text.encode("utf-8", "surrogateescape")


def read_stdin(*, where: str = STDIN) -> str:
    """Standard input as UTF-8 text, bounded and checked like a file."""
    return decode(read_stdin_bytes(where=where), where=where)


def sha256(path: Path) -> str:
    """The hex SHA-256 of a file, streamed (no size limit: nothing is kept); unreadable → InvalidInput."""
    fd = _open(path)
    digest = hashlib.sha256()
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise errors.InvalidInput("is a directory, expected a file", where=str(path))
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError as exc:
                raise errors.InvalidInput(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)
    finally:
        os.close(fd)


def open_binary(path: Path) -> BinaryIO:
    """An open binary handle for a reader that follows a growing file itself (a log tail).

    The same refusals as ``read_bytes`` except the size limit, which such a reader applies per read.
    """
    return os.fdopen(_open(path), "rb")


class NotJson(errors.InvalidInput):
    """Text that is not one JSON document (a reader may then try another form, e.g. NDJSON)."""


def loads_json(text: str, *, source: str = "<input>") -> Any:
    """Parse one JSON document; InvalidInput names ``source:line`` and refuses nesting past ``MAX_NESTING``."""
    limit = max_input_bytes()
    if len(text) > limit:
        raise errors.InvalidInput(_too_large(limit, size=len(text.encode("utf-8", "surrogatepass"))), where=source)
    too_deep = f"JSON nested deeper than {MAX_NESTING} levels"
    try:
        data = json.loads(text, parse_constant=_not_a_json_number)
    except json.JSONDecodeError as exc:
        raise NotJson(f"not JSON: {exc.msg} at column {exc.colno}", where=f"{source}:{exc.lineno}") from None
    except RecursionError:
        raise errors.InvalidInput(too_deep, where=source) from None
    except ValueError as exc:  # NaN/Infinity, or an integer past Python's 4,300-digit conversion limit
        raise errors.InvalidInput(f"not JSON this reader accepts: {exc}", where=source) from None
    if nesting(data) > MAX_NESTING:
        raise errors.InvalidInput(too_deep, where=source)
    return data


def _not_a_json_number(name: str) -> Any:
    # Python reads NaN and Infinity; JSON (RFC 8259) and Go's encoding/json do not.
    raise ValueError(f"{name} is not a JSON value")


def load_json(path: Path) -> Any:
    """Read and parse a JSON file through every check of ``read_text`` and ``loads_json``."""
    return loads_json(read_text(path), source=str(path))


def nesting(data: Any) -> int:
    """How deep mappings and sequences nest in plain data (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            return deepest
        stack.extend((child, depth) for child in children if isinstance(child, dict | list))
    return deepest


def _write_failure(exc: OSError, *, where: str) -> errors.ToolError:
    """One line for a write that failed: a full disk is DiskFull (exit 9), anything else bad output (exit 2)."""
    reason = exc.strerror or str(exc)
    if exc.errno in FULL:
        return errors.DiskFull(f"cannot write: {reason} (nothing was written)", where=where)
    return errors.InvalidInput(f"cannot write: {reason} (nothing was written)", where=where)


def _output_folder(path: Path) -> Path:
    """The existing folder ``path`` goes in; outputs never create folders, so a typo is not a new tree."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        status = os.stat(folder)
    except FileNotFoundError:
        raise errors.InvalidInput("output folder does not exist", where=str(folder)) from None
    except NotADirectoryError:
        raise errors.InvalidInput("output folder is inside a file, not a directory", where=str(folder)) from None
    except OSError as exc:
        raise _write_failure(exc, where=str(folder)) from None
    if not stat.S_ISDIR(status.st_mode):
        raise errors.InvalidInput("is a file, expected an output folder", where=str(folder))
    return folder


def _existing_mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # the folder is checked, and named, on its own
        return None
    except OSError as exc:
        raise _write_failure(exc, where=str(path)) from None


def _sync_folder(folder: Path) -> None:
    """Make a rename durable; a folder that cannot be opened for that (some network filesystems) is left."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def check_output(path: Path, *, probe: bool = False) -> None:
    """Refuse, before any work, an output ``atomic_write_bytes`` would refuse: a missing folder or a directory.

    ``probe`` also creates and removes an empty temporary file in the folder, so an unwritable
    folder (a read-only mount, which mode bits do not show to root) is refused before the work too.
    """
    folder = _output_folder(path)
    existing = _existing_mode(path)
    if existing is not None and stat.S_ISDIR(existing):
        raise errors.InvalidInput("is a directory, expected a file", where=str(path))
    if probe:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise _write_failure(exc, where=str(path)) from None
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path``: a temporary file in the same folder, fsync, rename.

    The folder must exist. A folder that cannot be written, a directory at ``path`` or a missing
    folder is InvalidInput (exit 2); a full disk or file-size limit is DiskFull (exit 9). Either way
    the temporary file is removed and ``path`` keeps what it held. A device or FIFO at ``path``
    (``-o /dev/null``, a pipe) is written in place: it cannot be replaced and holds no half file.
    """
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    check_output(path)
    folder = _output_folder(path)
    existing = _existing_mode(path)
    if existing is not None and (stat.S_ISCHR(existing) or stat.S_ISFIFO(existing)):
        _write_in_place(path, data)
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _write_failure(exc, where=str(path)) from None
    try:
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except OSError as exc:
            raise _write_failure(exc, where=str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)


def _write_in_place(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise _write_failure(exc, where=str(path)) from None
    try:
        _write_all(fd, data)
    except OSError as exc:
        raise _write_failure(exc, where=str(path)) from None
    finally:
        os.close(fd)


def silence_stdout() -> None:
    """Point a real stdout at /dev/null, so the interpreter's last flush of what did not fit fails no more.

    For a stdout that hit a full disk (``shared.cli`` reports it); a stream without a descriptor
    (a test's capture) is left alone."""
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    """``atomic_write_bytes`` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def program_folder(path: Path) -> Path:
    """Create (with parents) a folder the program owns: a cache, or generated docs of a build tool.

    Only such folders are created; an output's folder must already exist."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_failure(exc, where=str(path)) from None
    return path


def write_staged(path: Path, data: str | bytes, *, mode: int = 0o644) -> None:
    """Write one file of a folder being staged by ``staged_directory`` (creating its subfolders).

    No rename per file: the whole folder is renamed into place at the end. OSError is left to
    ``staged_directory``, which names the output and removes the staging folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    try:
        _write_all(fd, data.encode("utf-8") if isinstance(data, str) else data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, mode)


@contextlib.contextmanager
def staged_directory(target: Path, *, force: bool) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``target`` that replaces it only if the block succeeds.

    Without ``force`` an existing non-empty ``target`` is refused before anything is written; so
    are a missing or unwritable parent and a file at ``target`` (exit 2). A write that fails in the
    block, a full disk included (exit 9), removes the staging folder and leaves ``target`` as it was.
    """
    existing = _existing_mode(target)
    if existing is not None and not stat.S_ISDIR(existing):
        raise errors.InvalidInput("output exists and is not a directory", where=str(target))
    if existing is not None and any(target.iterdir()) and not force:
        raise errors.InvalidInput("output directory is not empty (use --force to replace it)", where=str(target))
    parent = _output_folder(target)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    except OSError as exc:
        raise _write_failure(exc, where=str(target)) from None
    try:
        try:
            yield staging
        except OSError as exc:
            raise _write_failure(exc, where=str(target)) from None
        _sync_folder(staging)
        _swap_in(staging, target, parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _sync_folder(parent)


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """Yield a private temporary folder (mode 0700) that is removed, with all it holds, when the block ends.

    For work that has to touch the disk but must leave nothing behind: a bundle rendered only to be
    pushed to a registry, an artifact pulled only to be verified. A write that fails in the block
    is one line naming the folder (a full disk is ``DiskFull``, exit 9)."""
    try:
        folder = Path(tempfile.mkdtemp(prefix=prefix))
    except OSError as exc:
        raise _write_failure(exc, where=tempfile.gettempdir()) from None
    try:
        yield folder
    except OSError as exc:
        raise _write_failure(exc, where=str(folder)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _swap_in(staging: Path, target: Path, parent: Path) -> None:
    """Rename ``staging`` to ``target``, moving an existing ``target`` aside first and removing it after."""
    try:
        if not target.exists():
            os.replace(staging, target)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=parent))
        try:
            os.replace(target, old / "x")
            os.replace(staging, target)
        except OSError:
            if (old / "x").exists() and not target.exists():
                os.replace(old / "x", target)
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise _write_failure(exc, where=str(target)) from None
