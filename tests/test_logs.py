"""Logging: stderr only, text or JSON, and credentials redacted even in debug tracebacks."""

from __future__ import annotations

import json
import logging

import pytest

from shared import logs


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer abc.def-123", "abc.def-123"),
        ("token=s3cr3t-value next", "s3cr3t-value"),
        ('{"client-key-data": "LS0tLS1CRUdJTg=="}', "LS0tLS1CRUdJTg=="),
        ("password: hunter2", "hunter2"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE"),
    ],
)
def test_credentials_are_redacted(text: str, secret: str) -> None:
    out = logs.redact(text)
    assert secret not in out and logs.REDACTED in out


def test_json_logs_are_one_object_per_line_with_fields(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("aicr", debug=False, log_json=True)
    logging.getLogger("shared.test").info("built recipe", extra={"components": 3, "token": "Bearer zzz"})
    record = json.loads(capsys.readouterr().err.strip())
    assert record["msg"] == "built recipe" and record["components"] == 3 and record["program"] == "aicr"
    assert "zzz" not in json.dumps(record)


def test_text_logs_name_the_program_and_fields(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("nvsentinel", debug=False, log_json=False)
    logging.getLogger("shared.test").warning("node quarantined", extra={"node": "node-003"})
    assert capsys.readouterr().err == "[nvsentinel] warning: node quarantined: node=node-003\n"


def test_library_debug_lines_appear_only_with_debug(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("aicr", debug=False, log_json=False)
    logging.getLogger("shared.test").debug("hidden")
    assert capsys.readouterr().err == ""
    logs.configure("aicr", debug=True, log_json=False)
    logging.getLogger("shared.test").debug("shown")
    assert "shown" in capsys.readouterr().err
