"""checksums.txt and the safe path join.

Covers: the listing format (sorted, two spaces, every file but itself); verify naming every
changed, missing and extra file at once, and a replaced symlink as changed; malformed or escaping
lines and a folder without checksums.txt as invalid input; an upstream bundle (recipe.yaml unlisted)
verifying as upstream verifies it; safe_join refusing absolute, ``..``
and symlinked escapes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from shared import errors
from shared.bundle import checksums, paths


def _bundle(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    (root / "sub" / "b.txt").write_text("b\n")
    listing = checksums.render((rel, checksums.digest(root / rel)) for rel in checksums.bundle_files(root))
    (root / checksums.FILE_NAME).write_text(listing)
    return root


def test_the_listing_is_sorted_sha256_two_spaces_path(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    sha = hashlib.sha256(b"b\n").hexdigest()
    lines = (root / checksums.FILE_NAME).read_text().splitlines()
    assert [line.split("  ")[1] for line in lines] == ["a.txt", "sub/b.txt"]
    assert lines[1] == f"{sha}  sub/b.txt"


def test_an_untouched_bundle_passes(tmp_path: Path) -> None:
    result = checksums.verify(_bundle(tmp_path / "b"))
    assert result.passed and result.checked == 2
    assert result.text() == "Checksums verified (2 files)\nBundle verification: PASSED\n"


def test_verify_names_every_changed_missing_and_extra_file(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    (root / "a.txt").write_text("tampered\n")
    (root / "sub" / "b.txt").unlink()
    (root / "new.txt").write_text("x")
    result = checksums.verify(root)
    assert (result.changed, result.missing, result.extra) == (["a.txt"], ["sub/b.txt"], ["new.txt"])
    assert result.text().splitlines() == [
        "changed: a.txt",
        "missing: sub/b.txt",
        "extra: new.txt",
        "Bundle verification: FAILED (1 changed, 1 missing, 1 extra; 2 files listed)",
    ]


def test_a_file_replaced_by_a_symlink_is_changed_even_with_the_same_content(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    (tmp_path / "outside.txt").write_text("a\n")
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to(tmp_path / "outside.txt")
    assert checksums.verify(root).changed == ["a.txt"]


@pytest.mark.parametrize(
    ("listing", "message"),
    [
        ("not a checksum line\n", "expected '<sha256>  <path>'"),
        (f"{'0' * 64}  ../etc/passwd\n", "escapes the bundle directory"),
        (f"{'0' * 64}  /etc/passwd\n", "escapes the bundle directory"),
        (f"{'0' * 64}  a.txt\n{'0' * 64}  a.txt\n", "listed twice"),
    ],
    ids=["malformed", "dot-dot", "absolute", "duplicate"],
)
def test_a_bad_listing_is_invalid_input_naming_its_line(tmp_path: Path, listing: str, message: str) -> None:
    root = _bundle(tmp_path / "b")
    (root / checksums.FILE_NAME).write_text(listing)
    with pytest.raises(errors.InvalidInput, match=message) as caught:
        checksums.verify(root)
    assert caught.value.where is not None and caught.value.where.endswith(
        "checksums.txt:" + str(len(listing.splitlines()))
    )


def test_a_folder_without_checksums_is_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput, match=r"not a bundle: checksums\.txt is missing"):
        checksums.verify(tmp_path)
    with pytest.raises(errors.InvalidInput, match="bundle directory does not exist"):
        checksums.verify(tmp_path / "absent")


@pytest.mark.parametrize("relpath", ["../x", "/abs", "a/../../x", "", "a//b", "a\0b"])
def test_safe_join_refuses_paths_that_escape(tmp_path: Path, relpath: str) -> None:
    with pytest.raises(errors.InvalidInput, match="escapes the bundle directory"):
        paths.safe_join(tmp_path, relpath)


def test_safe_join_refuses_a_symlink_that_leads_out(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    with pytest.raises(errors.InvalidInput):
        paths.safe_join(tmp_path / "root", "link/x")
    assert paths.safe_join(tmp_path / "root", "ok/x") == tmp_path / "root" / "ok" / "x"


def test_an_upstream_bundle_verifies_as_upstream_verifies_it(team_shared: Path) -> None:
    # upstream's checksums.txt lists every file but recipe.yaml (research/aicr-golden, 40-verify): the
    # recipe is said to be unchecked, not extra; our own bundles list it, so a change to it still fails
    bundle = team_shared / "research/aicr-golden/bundles/helm-default"
    result = checksums.verify(bundle)
    assert result.passed and result.checked == 29
    assert (result.extra, result.unchecked) == ([], ["recipe.yaml"])
    assert "unchecked: recipe.yaml" in result.text()


def test_an_unlisted_file_other_than_the_recipe_is_still_extra(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    (root / "recipe.yaml").write_text("kind: Recipe\n")
    (root / "added.sh").write_text("curl x | sh\n")
    result = checksums.verify(root)
    assert not result.passed
    assert (result.extra, result.unchecked) == (["added.sh"], ["recipe.yaml"])
