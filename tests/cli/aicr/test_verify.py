"""``aicr verify`` end to end.

Covers: a fresh bundle passes (exit 0, the count of files); a changed, a deleted and an added file
are all named in one run (exit 1); a folder that is not a bundle or does not exist exits 2 with one
line; a missing argument is a usage error (exit 2); a checksums.txt that is not UTF-8 text or holds
binary data exits 2 with one line naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.recipe import catalog
from tests.bundle import bundles
from tests.recipe import minicatalog


@pytest.fixture()
def bundle_dir(tmp_path: Path) -> Path:
    cat = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    recipe = bundles.write_recipe(tmp_path / "r.yaml", cat=catalog.load_directory(cat), service="eks")
    bundles.make_bundle(recipe, tmp_path / "b", "helmfile", catalog_dir=cat)
    return tmp_path / "b"


def test_a_fresh_bundle_passes(run_cli, bundle_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "verify", str(bundle_dir))
    files = sum(1 for p in bundle_dir.rglob("*") if p.is_file()) - 1
    assert (result.code, result.stdout) == (0, f"Checksums verified ({files} files)\nBundle verification: PASSED\n")


def test_every_changed_missing_and_extra_file_is_named_and_exit_is_1(run_cli, bundle_dir: Path) -> None:  # type: ignore[no-untyped-def]
    (bundle_dir / "helmfile.yaml").write_text("releases: []\n")
    (bundle_dir / "README.md").unlink()
    (bundle_dir / "001-alpha" / "extra.yaml").write_text("x: 1\n")
    result = run_cli("aicr", "verify", str(bundle_dir))
    assert result.code == 1
    assert result.stdout.splitlines()[:3] == [
        "changed: helmfile.yaml",
        "missing: README.md",
        "extra: 001-alpha/extra.yaml",
    ]
    assert result.stdout.splitlines()[3].startswith("Bundle verification: FAILED (1 changed, 1 missing, 1 extra;")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("absent", "bundle directory does not exist"),
        ("empty", "not a bundle: checksums.txt is missing"),
    ],
    ids=["absent", "not-a-bundle"],
)
def test_a_folder_that_is_not_a_bundle_exits_2(run_cli, tmp_path: Path, target: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    result = run_cli("aicr", "verify", str(tmp_path / target))
    assert result.code == 2
    assert result.stderr == f"error: {tmp_path / target}: {message}\n"


def test_a_missing_directory_argument_is_a_usage_error(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "verify")
    assert result.code == 2
    assert result.stderr.startswith("error: Missing argument 'DIRECTORY'")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe garbage\n", "not UTF-8 text: byte 0xff at offset 0 (line 1)"),
        (b"a" * 64 + b"  x\n\0\0\0", "binary data: NUL byte at offset 68 (line 2)"),
    ],
    ids=["not-utf8", "binary"],
)
def test_a_garbage_checksums_file_exits_2_naming_it(run_cli, bundle_dir: Path, content: bytes, message: str) -> None:  # type: ignore[no-untyped-def]
    listing = bundle_dir / "checksums.txt"
    listing.write_bytes(content)
    result = run_cli("aicr", "verify", str(bundle_dir))
    assert (result.code, result.stdout, result.stderr) == (2, "", f"error: {listing}: {message}\n")
