"""The input layer and the atomic writer of shared/files.py.

Covers: reading a file, FIFO or stdin gives its exact text; a missing file, a directory, an
unreadable file, a socket, input past the size limit (a regular file refused unread, a FIFO or a
stream after limit + 1 bytes), non-UTF-8 text (the offset of the first bad byte, checked against an
independent oracle) and NUL bytes are each one InvalidInput line naming the input; the limit's
environment variable raises and lowers it and a bad value is named; JSON is parsed with the line of
a syntax error, nesting past MAX_NESTING refused and any malformed text refused (never another
exception); streamed hashing; atomic writes and staged directories leave nothing behind on failure.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import errors, files

INPUTS = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
"""The profile of the input-layer properties: no deadline, so a busy machine never fails them."""
NEWLINE = b"\n"


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("old")
    files.atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_atomic_write_into_a_missing_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput):
        files.atomic_write_text(tmp_path / "missing" / "out.yaml", "x")


def test_a_failing_stage_leaves_the_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    with pytest.raises(RuntimeError), files.staged_directory(target, force=False) as stage:
        (stage / "half.yaml").write_text("x")
        raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_target_needs_force(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    target.mkdir()
    (target / "old.txt").write_text("x")
    with pytest.raises(errors.InvalidInput, match="--force"), files.staged_directory(target, force=False):
        pass
    with files.staged_directory(target, force=True) as stage:
        (stage / "new.txt").write_text("y")
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


# --- reading files ---------------------------------------------------------------------------------


def _refusal(path: Path) -> errors.InvalidInput:
    with pytest.raises(errors.InvalidInput) as caught:
        files.read_text(path)
    assert caught.value.where == str(path)
    assert "\n" not in caught.value.line()
    return caught.value


def test_a_file_reads_as_its_exact_text(tmp_path: Path) -> None:
    text = "name: gpu-operator\nnote: ünïcödé ✓ \r\n\ttabs\n"
    path = tmp_path / "in.yaml"
    path.write_bytes(text.encode("utf-8"))
    assert files.read_text(path) == text
    assert files.read_bytes(path) == text.encode("utf-8")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p, "file does not exist"),
        (lambda p: (p.mkdir(), p)[1], "is a directory, expected a file"),
        (lambda p: (p.mkdir(), p / "inner" / "x.yaml")[1], "file does not exist"),
    ],
    ids=["missing", "directory", "missing-below-a-folder"],
)
def test_a_path_that_is_not_a_readable_file_is_one_line_naming_it(tmp_path: Path, make: Any, reason: str) -> None:
    path = make(tmp_path / "input.yaml")
    assert _refusal(path).message == reason


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode bits say")
def test_an_unreadable_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text("a: 1\n")
    path.chmod(0o000)
    try:
        assert "permission denied" in _refusal(path).message
    finally:
        path.chmod(0o600)


def test_a_file_the_system_will_not_open_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path as chmod 000 for a user that is not root (this suite may run as root)."""
    path = tmp_path / "secret.yaml"
    path.write_text("a: 1\n")

    def refuse(*_args: Any, **_kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)
    assert _refusal(path).message == "permission denied: the file cannot be read"


def test_a_socket_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert _refusal(path).message == "is a socket, expected a file"
    finally:
        server.close()


def test_a_file_past_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.write(b"a: 1\n")
        handle.truncate(50 * 1024 * 1024)
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        reads.append(size)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", counting_read)
    refusal = _refusal(path)
    assert refusal.message == (
        f"input is {50 * 1024 * 1024} bytes, more than the limit of {files.DEFAULT_MAX_INPUT_BYTES} bytes "
        f"(raise it with {files.MAX_INPUT_BYTES_ENV})"
    )
    assert reads == []


def test_the_environment_variable_moves_the_limit_to_the_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "in.txt"
    path.write_text("x" * 100)
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "100")
    assert files.read_text(path) == "x" * 100
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "99")
    assert "more than the limit of 99 bytes" in _refusal(path).message
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, str(60 * 1024 * 1024))
    assert files.max_input_bytes() == 60 * 1024 * 1024


@pytest.mark.parametrize("value", ["lots", "-5", "0", "1.5", "10MB", "\u00b2"])
def test_a_bad_limit_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, value)
    with pytest.raises(errors.InvalidInput) as caught:
        files.max_input_bytes()
    assert caught.value.where == files.MAX_INPUT_BYTES_ENV


def _fifo_writer(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        try:
            with path.open("wb") as handle:
                handle.write(data)
        except BrokenPipeError:
            pass  # the reader stopped at the limit and closed its end

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_fifo_reads_whole_within_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    writer = _fifo_writer(path, b"a: 1\n" * 1000)
    try:
        assert files.read_text(path) == "a: 1\n" * 1000
    finally:
        writer.join(timeout=60)


def test_a_fifo_that_goes_on_is_refused_after_one_byte_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "1000")
    path = tmp_path / "fifo"
    os.mkfifo(path)
    writer = _fifo_writer(path, b"x" * (4 * 1024 * 1024))
    read: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        chunk = real_read(fd, size)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting_read)
    try:
        assert "input goes on, more than the limit of 1000 bytes" in _refusal(path).message
    finally:
        writer.join(timeout=60)
    assert sum(read) == 1001


# --- text: UTF-8 and NUL --------------------------------------------------------------------------


def _first_bad_byte(data: bytes) -> int | None:
    """The oracle: the shortest prefix that stops being a prefix of valid UTF-8, found byte by byte."""
    decoder_ok = 0
    i = 0
    while i < len(data):
        for width in (1, 2, 3, 4):
            try:
                data[i : i + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            i += width
            decoder_ok = i
            break
        else:
            return decoder_ok
    return None


@INPUTS
@given(data=st.binary(max_size=64) | st.text(max_size=32).map(lambda t: t.encode("utf-8") + b"\xc3"))
def test_the_error_names_the_offset_of_the_first_bad_byte(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    bad, nul = _first_bad_byte(data), data.find(b"\0")
    first = min(o for o in (bad, nul if nul >= 0 else None, len(data) + 1) if o is not None)
    if first > len(data):
        assert files.read_text(path) == data.decode("utf-8")
        return
    message = _refusal(path).message
    line = data[:first].count(NEWLINE) + 1
    assert f"at offset {first} (line {line})" in message
    expected = "binary data: NUL byte" if first == nul else f"not UTF-8 text: byte 0x{data[first]:02x}"
    assert message.startswith(expected)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a: 1\nb: \xff\n", "not UTF-8 text: byte 0xff at offset 8 (line 2)"),
        (b"caf\xc3", "not UTF-8 text: byte 0xc3 at offset 3 (line 1)"),
        (b"\xed\xa0\x80", "not UTF-8 text: byte 0xed at offset 0 (line 1)"),  # an encoded surrogate
        (b"\xc0\xaf", "not UTF-8 text: byte 0xc0 at offset 0 (line 1)"),  # an overlong "/"
        (b"a\n\n\x00b", "binary data: NUL byte at offset 3 (line 3)"),
        (b"\x7fELF\x02\x01\x01\x00", "binary data: NUL byte at offset 7 (line 1)"),
    ],
    ids=["latin-1", "truncated", "surrogate", "overlong", "nul", "elf"],
)
def test_non_utf8_and_binary_text_is_refused_with_offset_and_line(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    assert _refusal(path).message == message


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_stdin_reads_as_text_and_is_checked_like_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, "kind: Snapshot ✓\n".encode())
    assert files.read_stdin() == "kind: Snapshot ✓\n"
    _stdin(monkeypatch, b"kind: \xfe\n")
    with pytest.raises(errors.InvalidInput) as caught:
        files.read_stdin(where="-")
    assert (caught.value.where, caught.value.message) == ("-", "not UTF-8 text: byte 0xfe at offset 6 (line 1)")


def test_stdin_past_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "10")
    _stdin(monkeypatch, b"x" * 11)
    with pytest.raises(errors.InvalidInput, match="more than the limit of 10 bytes") as caught:
        files.read_stdin()
    assert caught.value.where == files.STDIN
    monkeypatch.setattr(sys, "stdin", io.StringIO("y" * 11))  # a text stream without a buffer
    with pytest.raises(errors.InvalidInput, match="more than the limit of 10 bytes"):
        files.read_stdin()


class _Endless(io.RawIOBase):
    """A stream that never ends (``/dev/zero``, a misbehaving server), counting what was taken."""

    def __init__(self) -> None:
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        buffer[:] = b"z" * len(buffer)
        self.taken += len(buffer)
        return len(buffer)


def test_a_stream_that_never_ends_is_read_to_one_byte_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(files.MAX_INPUT_BYTES_ENV, "5000")
    stream = _Endless()
    with pytest.raises(errors.InvalidInput, match="input goes on, more than the limit of 5000 bytes"):
        files.read_stream(stream, where="http://169.254.169.254/maintenance")  # type: ignore[arg-type]
    assert stream.taken == 5001


# --- JSON ---------------------------------------------------------------------------------------


def test_json_parses_and_a_syntax_error_names_the_line() -> None:
    assert files.loads_json('{"a": [1, 2.5, null, true]}') == {"a": [1, 2.5, None, True]}
    with pytest.raises(files.NotJson) as caught:
        files.loads_json('{"a": 1,\n "b": }\n', source="state.json")
    assert caught.value.where == "state.json:2"
    assert caught.value.message == "not JSON: Expecting value at column 7"


@pytest.mark.parametrize("depth", [files.MAX_NESTING + 1, 990, 100_000], ids=["one-past", "near-recursion", "huge"])
def test_json_nested_past_the_limit_is_refused(depth: int) -> None:
    text = "[" * depth + "]" * depth
    with pytest.raises(errors.InvalidInput) as caught:
        files.loads_json(text, source="deep.json")
    assert caught.value.message == f"JSON nested deeper than {files.MAX_NESTING} levels"
    assert not isinstance(caught.value, files.NotJson)


def test_json_nested_to_the_limit_is_read() -> None:
    text = '{"a":' * (files.MAX_NESTING - 1) + "[]" + "}" * (files.MAX_NESTING - 1)
    data = files.loads_json(text)
    assert files.nesting(data) == files.MAX_NESTING


def test_a_json_integer_python_cannot_convert_is_refused() -> None:
    with pytest.raises(errors.InvalidInput, match="not JSON this reader accepts"):
        files.loads_json("1" * 5000)


def test_load_json_reads_through_the_file_checks(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(errors.InvalidInput, match="not UTF-8 text: byte 0xff at offset 7"):
        files.load_json(path)
    path.write_text('{"reported": {}}')
    assert files.load_json(path) == {"reported": {}}


_JSON_PIECES = st.sampled_from(
    ["{", "}", "[", "]", ",", ":", '"', '"k"', "1", "-", "1e", "0x1", "NaN", "true", "nul", "\\", "\\u12", " ", "\n"]
)


@INPUTS
@given(text=st.lists(_JSON_PIECES | st.text(max_size=3), max_size=40).map("".join))
def test_malformed_json_is_refused_with_one_line_or_read(text: str) -> None:
    try:
        data = files.loads_json(text, source="in.json")
    except errors.InvalidInput as exc:
        assert "\n" not in exc.line() and (exc.where or "").startswith("in.json")
        return
    assert json.dumps(data) == json.dumps(json.loads(text))


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_json_constants_python_invents_are_refused(text: str) -> None:
    with pytest.raises(errors.InvalidInput, match="is not a JSON value"):
        files.loads_json(text)


# --- hashing and following ----------------------------------------------------------------------


def test_sha256_streams_the_file_and_refuses_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_bytes(b"x" * (3 * 1024 * 1024 + 7))
    assert files.sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(errors.InvalidInput, match="is a directory"):
        files.sha256(tmp_path)


def test_open_binary_refuses_a_directory_and_opens_a_log(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_bytes(b"line\n")
    with files.open_binary(log) as handle:
        assert handle.read() == b"line\n"
    with pytest.raises(errors.InvalidInput, match="is a directory"):
        files.open_binary(tmp_path)


class _Broken(io.RawIOBase):
    """A response body whose read times out half-way."""

    def __init__(self) -> None:
        self.calls = 0

    def read(self, size: int = -1) -> bytes:
        self.calls += 1
        if self.calls > 1:
            raise TimeoutError("timed out")
        return b"{"


def test_a_failed_read_of_a_network_body_is_unavailable_not_bad_input() -> None:
    with pytest.raises(errors.Unavailable, match="timed out"):
        files.read_stream(_Broken(), where="http://metadata/x", network=True)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidInput, match="timed out"):
        files.read_stream(_Broken(), where="-")  # type: ignore[arg-type]
