"""The verifier's own toolchain: bash, python3, pytest and the image's programs out of the
solution's reach.

A solution (later an agent) runs as root in its container and can replace /bin/bash,
/usr/bin/python3, /usr/bin/git, libc or /etc/ld.so.preload, or put a `git` of its own earlier
on PATH. So the tests never run on the container's own binaries: bash, python3 + stdlib +
pytest, the base image's programs (/usr/bin, /usr/sbin, /usr/local/*, /usr/lib/git-core: git,
tar, zstd, sqlite3, jq...; the tests' PATH names these copies before the container's folders,
which still serve what the image lacks: a tool the task asks the agent to write or install),
every shared library they load and the dynamic loader are copied once from the trusted base
image, their ELF interpreter and rpath
rewritten (patchelf) to point at the toolchain's own folder, and the loader's hard-wired
/etc/ld.so.preload path pointed at a file that does not exist. The result lives in a named
Docker volume mounted read-only at a top-level path (a mount point can be neither written,
removed nor renamed without CAP_SYS_ADMIN, which containers lack).
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = "/wb-verifier"
VERSION = 5                          # bump when the layout or the collection changes
COMPLETE_MARK = ".complete"
PRELOAD = b"/etc/ld.so.preload"
# Same length or shorter, NUL-padded: the loader reads a C string. Nothing can exist there.
PRELOAD_NONE = (ROOT + "/none").encode().ljust(len(PRELOAD), b"\0")
COLLECTOR = Path(__file__).with_name("toolchain_collect.py")
# Installed next to the stdlib as the modules `wb_seal` (a pytest plugin) and `wb_strays`.
TOOLCHAIN_MODULES = {"wb_seal.py": Path(__file__).with_name("toolchain_seal.py"),
                     "wb_strays.py": Path(__file__).with_name("toolchain_strays.py")}
# Appended after the toolchain's stdlib and pytest (never before), without .pth processing:
# tests of hand-written tasks may import the image's packages (numpy...), but nothing a
# solution plants there can shadow the stdlib or pytest.
IMAGE_SITE_DIRS = ("/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                   "/usr/local/lib/python3.11/site-packages", "/usr/lib/python3.11/site-packages")
# Variables the dynamic loader, bash or Python act on: an image's ENV (written by the task's
# Dockerfile) must not reach the verifier's processes through them.
UNSAFE_ENV_PREFIXES = ("LD_", "PYTHON", "BASH_FUNC_", "PYTEST_")
UNSAFE_ENV = {"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "GCONV_PATH", "LOCPATH", "GLIBC_TUNABLES",
              "CDPATH", "GLOBIGNORE", "PS4", "HOSTALIASES", "RESOLV_HOST_CONF", "MALLOC_CHECK_",
              "MALLOC_TRACE"}
# Given to every exec of the toolchain, so the loader that starts it sees no planted library.
LOADER_ENV = {"LD_PRELOAD": "", "LD_LIBRARY_PATH": "", "LD_AUDIT": "", "GCONV_PATH": "",
              "GLIBC_TUNABLES": "", "LD_PROFILE": "", "LD_DEBUG": "", "LD_DEBUG_OUTPUT": ""}
BASH = f"{ROOT}/bin/bash"
PYTHON = f"{ROOT}/bin/python3"
PRISTINE_PATH = ":".join(f"{ROOT}{d}" for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"))
PATH = f"{ROOT}/bin:{PRISTINE_PATH}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# git looks for its helpers and hook templates at paths compiled into it (the container's).
PRISTINE_ENV = {"GIT_EXEC_PATH": f"{ROOT}/usr/lib/git-core", "GIT_TEMPLATE_DIR": f"{ROOT}/usr/share/git-core/templates"}

# libc's system() runs the container's /bin/sh (a path compiled into it); in the tests' Python
# os.system goes through subprocess, whose shell is the copy (toolchain_collect.py). Same
# return value: the wait status, as system() gives it.
SYSTEM_ON_COPIED_SH = """
def _system(command):
    import subprocess
    code = subprocess.call(command, shell=True)
    return code << 8 if code >= 0 else -code
os.system = _system
"""

_lock = threading.Lock()
_ready: dict[str, str] = {}


class ToolchainError(RuntimeError):
    """The toolchain could not be made; the message says what to install or fix."""


@dataclass(frozen=True)
class Toolchain:
    volume: str

    def mount(self):
        """The read-only mount every check container gets."""
        from docker.types import Mount
        return Mount(target=ROOT, source=self.volume, type="volume", read_only=True)


def check_mounted(engine, container_id: str, volume: str) -> None:
    """Raise ToolchainError unless ROOT in the started container is our read-only mount itself.
    An image may ship its own ROOT as a link: Docker then mounts the toolchain where the link
    points, and a solution could replace the link with a toolchain of its own. Asked of the
    daemon before any solution runs; a real mount point cannot be removed or renamed later."""
    import base64
    api = engine.client.api
    mounts = api.inspect_container(container_id).get("Mounts") or []
    if not any(m.get("Destination") == ROOT and m.get("Name") == volume and not m.get("RW") for m in mounts):
        raise ToolchainError(f"{ROOT} is not mounted read-only from {volume}")
    res = api.head(api._url("/containers/{0}/archive", container_id), params={"path": ROOT})
    stat = json.loads(base64.b64decode(res.headers.get("X-Docker-Container-Path-Stat", "") or "e30="))
    if res.status_code != 200 or stat.get("linkTarget"):
        raise ToolchainError(f"the environment has its own {ROOT} (a link to {stat.get('linkTarget') or '?'}); "
                             "that path is the verifier's")


def python_argv(code: str, *args: str) -> list[str]:
    """argv running `code` on the toolchain's Python, isolated (-I: no PYTHON* variables, no
    user site, no current folder on sys.path) and without site (-S: no .pth files at all)."""
    return [PYTHON, "-I", "-S", "-c", code, *args]


def clean_env(image_env: list[str] | None) -> dict[str, str]:
    """The environment the tests get: the image's own ENV (read from the daemon, not from the
    container) less everything that can make bash, Python, pytest or the loader run other code."""
    env: dict[str, str] = {}
    for item in image_env or []:
        key, _, value = item.partition("=")
        if key.startswith(UNSAFE_ENV_PREFIXES) or key in UNSAFE_ENV:
            continue
        env[key] = value
    env.update({"PATH": PATH, **PRISTINE_ENV, "HOME": env.get("HOME", "/root") or "/root", "LANG": env.get("LANG", "C.UTF-8"),
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "WB_SEAL": "1",
                # No ini file above /tests (a planted /pytest.ini or /conftest.py) is read.
                "PYTEST_ADDOPTS": "-c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider"})
    return env


def volume_name(base_image_id: str) -> str:
    return f"workbench-toolchain-{base_image_id.split(':')[-1][:16]}-v{VERSION}"


def ensure(engine, base_image: str | None = None) -> Toolchain:
    """The toolchain volume for the base image, built on first use (a few seconds)."""
    from workbench.sandbox.base_image import base_image_name
    import docker.errors
    base_image = base_image or base_image_name()
    try:
        image_id = engine.client.images.get(base_image).id
    except docker.errors.ImageNotFound:
        raise ToolchainError(f"base image {base_image} is missing: run `workbench images bootstrap`") from None
    name = volume_name(image_id)
    with _lock:
        if name in _ready:
            return Toolchain(name)
        if not _is_complete(engine, name, base_image):
            _build(engine, name, base_image)
        _ready[name] = name
    return Toolchain(name)


def _is_complete(engine, name: str, base_image: str) -> bool:
    import docker.errors
    try:
        engine.client.volumes.get(name)
    except docker.errors.NotFound:
        return False
    c = engine.client.containers.create(base_image, command=["true"], network_mode="none",
                                        volumes={name: {"bind": ROOT, "mode": "ro"}},
                                        labels={"workbench.toolchain": "probe"})
    try:
        c.get_archive(f"{ROOT}/{COMPLETE_MARK}")
        return True
    except docker.errors.NotFound:
        return False
    finally:
        c.remove(force=True)


def _build(engine, name: str, base_image: str) -> None:
    if shutil.which("patchelf") is None:
        raise ToolchainError("patchelf is not installed: run `apt-get install -y patchelf` "
                             "(scripts/setup-system.sh does it)")
    client = engine.client
    c = client.containers.create(base_image, command=["sleep", "300"], network_mode="none",
                                 labels={"workbench.toolchain": "collect"})
    try:
        c.start()
        _put(c, "/tmp", {"collect.py": COLLECTOR.read_bytes()})
        res = c.exec_run(["python3", "/tmp/collect.py", "/tmp/toolchain", ROOT], demux=True)
        out, err = res.output
        if res.exit_code != 0:
            raise ToolchainError(f"collecting the toolchain from {base_image} failed (exit {res.exit_code}): "
                                 f"{(err or b'').decode(errors='replace')[-1500:]}")
        manifest = json.loads((out or b"").decode().strip().splitlines()[-1])
        bits, _ = c.get_archive("/tmp/toolchain")
        with tempfile.TemporaryDirectory(prefix="workbench-toolchain-") as tmp:
            with tarfile.open(fileobj=io.BytesIO(b"".join(bits))) as tar:
                tar.extractall(tmp, filter="tar")
            tree = Path(tmp) / "toolchain"
            _rewrite(tree, manifest)
            payload = _tar_tree(tree)
    finally:
        c.remove(force=True)
    try:
        client.volumes.get(name).remove(force=True)   # an incomplete one from a killed build
    except Exception:
        pass
    client.volumes.create(name, labels={"workbench.toolchain": "1"})
    filler = client.containers.create(base_image, command=["true"], network_mode="none",
                                      volumes={name: {"bind": ROOT, "mode": "rw"}},
                                      labels={"workbench.toolchain": "fill"})
    try:
        filler.put_archive(ROOT, payload)
        _put(filler, ROOT, {COMPLETE_MARK: b"1\n"})   # last: a half-filled volume is never used
    finally:
        filler.remove(force=True)
    _drop_older(client, name)


def _drop_older(client, name: str) -> None:
    """Older toolchain versions of the same base image; one still mounted somewhere stays."""
    prefix = name.rsplit("-v", 1)[0] + "-v"
    for vol in client.volumes.list(filters={"label": "workbench.toolchain=1"}):
        if vol.name.startswith(prefix) and vol.name != name:
            try:
                vol.remove()
            except Exception:
                pass


def _rewrite(tree: Path, manifest: dict) -> None:
    """Point every ELF file at the toolchain's own loader and libraries, blind the loader to
    /etc/ld.so.preload, and add the entry points (python, pytest) and sitecustomize."""
    loader = tree / manifest["loader"]
    data = loader.read_bytes()
    if PRELOAD not in data:
        raise ToolchainError(f"{manifest['loader']}: no {PRELOAD.decode()} string to disable")
    loader.write_bytes(data.replace(PRELOAD, PRELOAD_NONE))
    executables = set(manifest["executables"])

    def patch(rel: str) -> str | None:
        path = tree / rel
        os.chmod(path, os.stat(path).st_mode | 0o200)
        cmd = ["patchelf", "--force-rpath", "--set-rpath", f"{ROOT}/lib"]
        if rel in executables:
            cmd += ["--set-interpreter", f"{ROOT}/{manifest['loader']}"]
        proc = subprocess.run(cmd + [str(path)], capture_output=True, text=True)
        return None if proc.returncode == 0 else f"patchelf failed on {rel}: {proc.stderr.strip()[-500:]}"

    # About a thousand files once the image's programs are in: a pool keeps the build in seconds.
    with ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        errors = [e for e in pool.map(patch, [r for r in manifest["elves"] if r != manifest["loader"]]) if e]
    if errors:
        raise ToolchainError(errors[0])
    (tree / "bin" / "pytest").write_text(f"#!{PYTHON} -I\nimport sys\nimport pytest\nsys.exit(pytest.console_main())\n")
    (tree / "bin" / "pytest").chmod(0o755)
    (tree / "bin" / "python").symlink_to("python3")
    lib = tree / "lib" / manifest["python"]
    for name, src in TOOLCHAIN_MODULES.items():
        shutil.copy(src, lib / name)
    dirs = ", ".join(repr(d) for d in IMAGE_SITE_DIRS)
    # Only the toolchain's Python loads the seal plugin (an image's pytest has no wb_seal).
    (lib / "sitecustomize.py").write_text(
        "import os\nimport sys\n" + f"sys.path.extend(d for d in ({dirs},) if d not in sys.path)\n"
        "if os.environ.get('WB_SEAL') == '1' and '-p wb_seal' not in os.environ.get('PYTEST_ADDOPTS', ''):\n"
        "    os.environ['PYTEST_ADDOPTS'] = os.environ.get('PYTEST_ADDOPTS', '') + ' -p wb_seal'\n" + SYSTEM_ON_COPIED_SH)


def _tar_tree(tree: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for p in sorted(tree.iterdir()):
            tar.add(p, arcname=p.name)
    return buf.getvalue()


def _put(container, dest: str, files: dict[str, bytes]) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    container.put_archive(dest, buf.getvalue())
