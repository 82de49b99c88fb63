"""Write a folder whole: files into a temporary sibling, then swapped in for any older copy, so
a reader (or a batch killed half-way) sees the old folder or the new one, never a mix."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path


def write_folder(dest: Path, files: Mapping[str, bytes], *, mode_of: Callable[[str], int] | None = None) -> Path:
    """`files`: relative path -> bytes (the caller has checked the paths); `mode_of(path)`: the
    permission bits of each file (default: left as created)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if mode_of is not None:
                target.chmod(mode_of(rel))
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}-{tmp.name[-8:]}")
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
