"""`workbench doctor`: what the sandbox needs, what is missing, and the command that fixes it."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from workbench.config import REPO_ROOT
from workbench.sandbox import base_image


@dataclass
class Finding:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True

    @property
    def state(self) -> str:
        return "ok" if self.ok else ("missing" if self.required else "optional")


def diagnose() -> list[Finding]:
    out: list[Finding] = []
    try:
        import docker
        out.append(Finding("docker SDK", True, f"docker {docker.__version__}"))
    except ImportError:
        out.append(Finding("docker SDK", False, "the `docker` Python package is not installed",
                           "scripts/setup-python.sh (or pip install docker)"))
        return out
    client = None
    if shutil.which("dockerd") is None and shutil.which("docker") is None:
        out.append(Finding("Docker engine", False, "neither docker nor dockerd is installed",
                           "apt-get install -y docker.io && (dockerd > /var/log/dockerd.log 2>&1 &)"))
    else:
        try:
            from workbench.sandbox.engine import connect
            client = connect()
            v = client.version()
            out.append(Finding("Docker engine", True, f"Docker {v.get('Version')} ({v.get('Os')}/{v.get('Arch')}), "
                               f"storage {client.info().get('Driver')}"))
        except Exception as exc:
            out.append(Finding("Docker engine", False, str(exc).split(". Install")[0],
                               "start it: `dockerd > /var/log/dockerd.log 2>&1 &` (or `systemctl start docker`)"))
    tag = base_image.base_image_name()
    if client is not None:
        try:
            client.images.get(tag)
            out.append(Finding("base image", True, f"{tag} present"))
        except Exception:
            out.append(Finding("base image", False, f"{tag} is not in the engine",
                               "workbench images bootstrap" if not os.environ.get(base_image.ENV_BASE_IMAGE)
                               else f"build or load {tag}, or unset {base_image.ENV_BASE_IMAGE}"))
    deb = shutil.which("debootstrap")
    cached = (base_image.cache_dir() / f"base-{base_image.recipe_hash()}.tar").exists()
    out.append(Finding("debootstrap", bool(deb) or cached,
                       deb or ("not installed, but the base rootfs is cached" if cached else "not installed"),
                       "apt-get install -y debootstrap", required=False))
    patchelf = shutil.which("patchelf")
    # The verifier's sealed toolchain is rewritten with patchelf; without it no-op and oracle fail.
    out.append(Finding("patchelf (verifier toolchain)", bool(patchelf), patchelf or "not installed",
                       "apt-get install -y patchelf"))
    harbor = REPO_ROOT / ".harbor-venv" / "bin" / "harbor"
    out.append(Finding("Harbor (for export checks)", harbor.exists(),
                       str(harbor) if harbor.exists() else "no .harbor-venv", "scripts/setup-harbor.sh",
                       required=False))
    return out
