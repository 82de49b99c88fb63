"""A folder written whole: the old copy replaced entirely, nothing left behind on failure."""
import pytest

from workbench.folder_write import write_folder


def test_replaces_an_older_copy_whole_and_sets_modes(tmp_path):
    dest = tmp_path / "out"
    write_folder(dest, {"a.txt": b"old", "gone.txt": b"x"})
    write_folder(dest, {"a.txt": b"new", "sub/run.sh": b"#!/bin/sh\n"},
                 mode_of=lambda rel: 0o755 if rel.endswith(".sh") else 0o644)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == ["a.txt", "sub/run.sh"]
    assert (dest / "a.txt").read_bytes() == b"new" and (dest / "sub/run.sh").stat().st_mode & 0o777 == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["out"]          # no temporary or old copy left


def test_a_failed_write_keeps_the_old_folder_and_leaves_no_temporary(tmp_path):
    dest = tmp_path / "out"
    write_folder(dest, {"a.txt": b"old"})

    def boom(rel):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_folder(dest, {"a.txt": b"new"}, mode_of=boom)
    assert (dest / "a.txt").read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out"]
