import os

import pytest

from tests.helpers import sum_bundle
from workbench.sandbox.bundle import MAX_FILE_BYTES, BundleError, TaskBundle, check_relpath, read_bundle, write_bundle


@pytest.mark.parametrize("bad,why", [
    ("/etc/passwd", "absolute"), ("../escape.txt", "'..'"), ("environment/../../x", "'..'"),
    ("tests/./x", "'.' segments"), ("a\\b", "backslashes"), ("tests//x", "empty"), ("a\x00b", "control"),
])
def test_bad_paths_are_refused_with_the_rule(bad, why):
    with pytest.raises(BundleError) as exc:
        check_relpath(bad)
    assert why in str(exc.value) and repr(bad)[1:-1][:5] in str(exc.value)


def test_traversal_bundle_writes_nothing(tmp_path):
    b = sum_bundle(extra_files={"environment/../../outside.txt": "pwned"})
    dest = tmp_path / "tasks" / "t1"
    with pytest.raises(BundleError, match="'..' is not allowed"):
        write_bundle(b, dest)
    assert not dest.exists()
    assert not (tmp_path / "outside.txt").exists()
    assert not (tmp_path / "tasks").exists() or not any((tmp_path / "tasks").iterdir())   # no temp folder either


def test_caps_and_required_files():
    b = sum_bundle(extra_files={"environment/app/big.bin": b"x" * (MAX_FILE_BYTES + 1)})
    with pytest.raises(BundleError, match="big.bin.*cap"):
        b.validate()
    incomplete = TaskBundle({"instruction.md": "x"})
    with pytest.raises(BundleError, match="lacks task.toml"):
        incomplete.validate()
    clash = sum_bundle(extra_files={"environment/app/numbers.txt/x": "y"})
    with pytest.raises(BundleError, match="is a file"):
        clash.validate()


def test_write_then_read_round_trip_with_modes(tmp_path):
    b = sum_bundle()
    dest = write_bundle(b, tmp_path / "t")
    assert os.stat(dest / "solution/solve.sh").st_mode & 0o111
    assert not os.stat(dest / "instruction.md").st_mode & 0o111
    again = read_bundle(dest)
    assert again.files == b.files and again.content_hash() == b.content_hash()
    # rewriting replaces atomically
    b2 = sum_bundle(numbers="4\n5\n")
    write_bundle(b2, dest)
    assert read_bundle(dest).text("environment/app/numbers.txt") == "4\n5\n"


def test_read_refuses_links_out(tmp_path):
    dest = write_bundle(sum_bundle(), tmp_path / "t")
    (dest / "environment" / "app" / "secret").symlink_to("/etc/shadow")
    with pytest.raises(BundleError, match="links are not allowed.*secret|secret.*links are not allowed"):
        read_bundle(dest)


def test_environment_hash_ignores_everything_but_environment():
    a, b = sum_bundle(), sum_bundle(solve="echo 6 > /app/sum.txt")
    assert a.environment_hash() == b.environment_hash()
    assert a.content_hash() != b.content_hash()
    assert sum_bundle(numbers="9\n").environment_hash() != a.environment_hash()
