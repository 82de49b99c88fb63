"""`workbench images bootstrap`: a local base image for machines that reach no registry.

debootstrap makes a minimal Debian root file system with the tools task recipes use, and
`docker import` turns it into an image. The image is tagged by a hash of the recipe (suite,
package list, mirror-independent), so an unchanged recipe is never built twice; the rootfs
tarball is also kept in a cache folder so a wiped Docker store re-imports in seconds.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

BASE_REPOSITORY = "workbench/base"
ENV_BASE_IMAGE = "WORKBENCH_BASE_IMAGE"
ENV_IMAGE_CACHE = "WORKBENCH_IMAGE_CACHE"
DEFAULT_CACHE = Path("/var/cache/workbench")
SUITE = "bookworm"
# What task recipes and verifiers run with. Changing this list changes the image tag.
PACKAGES = (
    "bash", "coreutils", "findutils", "grep", "sed", "gawk", "diffutils", "patch", "procps",
    "tar", "gzip", "bzip2", "xz-utils", "zip", "unzip", "file", "less", "ca-certificates",
    "python3", "python3-pytest", "git", "jq", "sqlite3", "make", "tmux", "bc", "cron",
    # What real terminal skills run most that works offline (issue 12): zstd, curl on loopback,
    # openssl / gpg on local keys, setfacl / getfacl, ss / ip, logrotate. debootstrap adds no Recommends.
    "zstd", "curl", "openssl", "gnupg", "acl", "iproute2", "logrotate",
)
RECIPE_VERSION = 1
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def recipe_hash() -> str:
    text = f"v{RECIPE_VERSION}|{SUITE}|minbase|{','.join(sorted(PACKAGES))}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def recipe_tag() -> str:
    return f"{BASE_REPOSITORY}:{recipe_hash()}"


def base_image_name() -> str:
    """The image task Dockerfiles start FROM: `WORKBENCH_BASE_IMAGE`, else the bootstrapped one."""
    return os.environ.get(ENV_BASE_IMAGE) or recipe_tag()


def cache_dir() -> Path:
    return Path(os.environ.get(ENV_IMAGE_CACHE) or DEFAULT_CACHE)


def apt_mirror(sources_dir: Path = Path("/etc/apt")) -> str:
    """The Debian mirror this machine's apt uses (so debootstrap goes where apt may go)."""
    candidates = sorted((sources_dir / "sources.list.d").glob("*.sources")) + [sources_dir / "sources.list"]
    for f in candidates:
        try:
            text = f.read_text()
        except OSError:
            continue
        for m in re.finditer(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            uri = m.group(1).rstrip("/")
            if uri.endswith("/debian"):
                return uri
    return DEFAULT_MIRROR


@dataclass
class BootstrapReport:
    tag: str
    action: str            # present | imported-from-cache | built
    seconds: float
    tarball: str | None


def bootstrap(client, log: Callable[[str], None] = print, force: bool = False,
              mirror: str | None = None) -> BootstrapReport:
    """Make sure the base image exists; build it with debootstrap when it does not."""
    import time

    import docker.errors

    t0 = time.monotonic()
    tag = recipe_tag()
    if not force:
        try:
            client.images.get(tag)
            _tag_latest(client, tag)
            return BootstrapReport(tag, "present", time.monotonic() - t0, None)
        except docker.errors.ImageNotFound:
            pass
    tarball = cache_dir() / f"base-{recipe_hash()}.tar"
    action = "imported-from-cache"
    if force or not tarball.exists():
        if shutil.which("debootstrap") is None:
            raise RuntimeError("debootstrap is not installed: run `apt-get install -y debootstrap` (as root)")
        if os.geteuid() != 0:
            raise RuntimeError("debootstrap needs root: run `workbench images bootstrap` as root")
        _debootstrap_to_tarball(tarball, mirror or apt_mirror(), log)
        action = "built"
    log(f"importing {tarball} as {tag}")
    # import_image_from_stream breaks on large chunked uploads; the file variant does not.
    client.api.import_image_from_file(str(tarball), repository=BASE_REPOSITORY, tag=recipe_hash(),
                                      changes=['CMD ["bash"]', "WORKDIR /app", "ENV LANG=C.UTF-8"])
    client.images.get(tag)   # raises when the import silently failed
    _tag_latest(client, tag)
    return BootstrapReport(tag, action, time.monotonic() - t0, str(tarball))


def _tag_latest(client, tag: str) -> None:
    client.images.get(tag).tag(BASE_REPOSITORY, "latest")


def _debootstrap_to_tarball(tarball: Path, mirror: str, log: Callable[[str], None]) -> None:
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="workbench-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root), mirror]
        log("running " + " ".join(cmd) + " (about 3 minutes)")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-3000:]
            raise RuntimeError(f"debootstrap failed with exit code {proc.returncode}:\n{tail}")
        # The apt lists and caches are not needed in task containers.
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for p in (root / junk).glob("*"):
                if p.is_file():
                    p.unlink()
        (root / "app").mkdir(exist_ok=True)
        partial = tarball.with_suffix(".partial")
        log(f"packing root file system into {tarball}")
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), "."], check=True)
        partial.replace(tarball)
