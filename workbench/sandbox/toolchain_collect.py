"""Runs INSIDE a container of the trusted base image (never one a solution touched): copies
bash, python3 with its standard library, pytest and the modules it imports, plus every
shared library they load and the dynamic loader, into OUT (argv[1]) and prints a JSON
manifest of the ELF files (which the host then points at the toolchain's own loader)."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

OUT = sys.argv[1]
STDLIB_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
               "dist-packages", "config-3.11-x86_64-linux-gnu", "pydoc_data"}
EXTRA_LIBS = ("libgcc_s.so.1",)   # glibc dlopens it (thread cancellation, backtraces)


def elf(path):
    with open(path, "rb") as fh:
        return fh.read(4) == b"\x7fELF"


def ldd(paths):
    """{soname: real path} of every shared library the files need, and the loader."""
    libs, loader = {}, None
    for p in paths:
        out = subprocess.run(["ldd", p], capture_output=True, text=True).stdout
        for line in out.splitlines():
            line = line.strip()
            if "=>" in line:
                name, _, rest = line.partition("=>")
                target = rest.split("(")[0].strip()
                if target.startswith("/"):
                    libs[name.strip()] = os.path.realpath(target)
            elif line.startswith("/"):
                loader = line.split()[0]
    return libs, loader


def main():
    os.makedirs(f"{OUT}/bin")
    os.makedirs(f"{OUT}/lib")
    python = os.path.realpath(sys.executable)
    bash = os.path.realpath(shutil.which("bash"))
    shutil.copy2(python, f"{OUT}/bin/python3")
    shutil.copy2(bash, f"{OUT}/bin/bash")
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    stdlib = sysconfig.get_paths()["stdlib"]
    dest_lib = f"{OUT}/lib/{ver}"
    shutil.copytree(stdlib, dest_lib, symlinks=False,
                    ignore=lambda d, names: [n for n in names if d == stdlib and n in STDLIB_SKIP])
    dynload = os.path.join(stdlib, "lib-dynload")
    if not os.path.isdir(dynload):   # some builds keep it elsewhere
        dynload = sysconfig.get_config_var("DESTSHARED")
        shutil.copytree(dynload, f"{dest_lib}/lib-dynload")
    # pytest and exactly the third-party modules a real run imports, next to the stdlib
    # (always on sys.path, whatever site.py makes of the toolchain's prefix).
    with tempfile.TemporaryDirectory() as tmp:
        with open(f"{tmp}/test_probe.py", "w") as fh:
            fh.write("def test_probe():\n    assert True\n")
        import pytest
        pytest.main(["-q", "-p", "no:cacheprovider", f"--junitxml={tmp}/j.xml", tmp])
    site_dirs = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    tops = set()
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None) or ""
        for sd in site_dirs:
            if f.startswith(sd + "/"):
                tops.add((sd, f[len(sd) + 1:].split("/")[0]))
    for sd, top in sorted(tops):
        src = os.path.join(sd, top)
        if os.path.isdir(src):
            shutil.copytree(src, f"{dest_lib}/{top}", dirs_exist_ok=True)
        else:
            shutil.copy2(src, f"{dest_lib}/{top}")
    elves = [os.path.join(d, n) for d, _, ns in os.walk(OUT) for n in ns
             if not os.path.islink(os.path.join(d, n)) and elf(os.path.join(d, n))]
    libs, loader = ldd(elves)
    for extra in EXTRA_LIBS:
        for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib", "/usr/lib"):
            if os.path.exists(f"{d}/{extra}"):
                libs.setdefault(extra, os.path.realpath(f"{d}/{extra}"))
                break
    more, _ = ldd(list(libs.values()))
    libs.update(more)
    for soname, real in libs.items():
        shutil.copy2(real, f"{OUT}/lib/{soname}")
    loader_name = os.path.basename(loader)
    shutil.copy2(os.path.realpath(loader), f"{OUT}/lib/{loader_name}")
    elves = sorted(os.path.relpath(os.path.join(d, n), OUT) for d, _, ns in os.walk(OUT) for n in ns
                   if elf(os.path.join(d, n)))
    print(json.dumps({"python": ver, "loader": f"lib/{loader_name}", "elves": elves,
                      "executables": ["bin/bash", "bin/python3"]}))


main()
