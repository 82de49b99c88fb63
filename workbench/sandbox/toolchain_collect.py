"""Runs INSIDE a container of the trusted base image (never one a solution touched): copies
bash, python3 with its standard library, pytest and the modules it imports, the image's
programs (PROGRAM_DIRS: git, tar, zstd, sqlite3, jq... as the image ships them), plus every
shared library they load and the dynamic loader, into OUT (argv[1]) and prints a JSON
manifest of the ELF files (which the host then points at the toolchain's own loader and
libraries). Scripts among the programs get their #! line pointed at the copies (under
ROOT, argv[2]) of their interpreters."""
import json
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile

OUT, ROOT = sys.argv[1], sys.argv[2]
# Copied under OUT at the same path; the tests' PATH and GIT_EXEC_PATH name the copies first.
PROGRAM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/usr/lib/git-core")
DATA_DIRS = ("/usr/share/git-core/templates",)   # git init copies hooks from there
PT_INTERP = 3
# Python's shell=True hard-codes /bin/sh (the container's): the toolchain's stdlib names the copy.
SUBPROCESS_SHELL = "else '/bin/sh')"
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


def needs_loader(path):
    """Whether the 64-bit ELF file names an interpreter (a dynamically linked program)."""
    with open(path, "rb") as fh:
        head = fh.read(64)
        if len(head) < 64 or head[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        for i in range(phnum):
            fh.seek(phoff + i * phentsize)
            if struct.unpack("<I", fh.read(4))[0] == PT_INTERP:
                return True
    return False


def shebang_target(line, copied):
    """The #! line pointed at the copy of its interpreter (None: no copy, leave the script out)."""
    words = line[2:].split()
    if not words or "python" in line:   # the image's Python is not copied: the toolchain's is the one
        return None
    real = os.path.realpath(words[0])
    if real not in copied:
        return None
    return "#!" + " ".join([ROOT + real, *words[1:]]) + "\n"


def copy_programs():
    """The image's programs at the same paths under OUT: ELF files as they are (hard links kept:
    git-core is mostly links to one binary), scripts with their #! line rewritten, links whose
    target was copied as relative links. Returns the dynamically linked ones (OUT-relative)."""
    entries = []
    for d in PROGRAM_DIRS:
        if os.path.isdir(d):
            entries += [os.path.join(d, n) for n in sorted(os.listdir(d))]
    regular = {e for e in entries if os.path.isfile(e) and not os.path.islink(e) and os.access(e, os.X_OK)}
    copied, scripts, programs, inodes = set(), {}, [], {}
    for src in sorted(regular):
        if os.path.basename(src).startswith("python"):
            continue
        with open(src, "rb") as fh:
            head = fh.read(4)
            first = (head + fh.readline()).decode(errors="replace") if head.startswith(b"#!") else ""
        if head == b"\x7fELF" or first:
            copied.add(src)
            if first:
                scripts[src] = first
    for src, first in scripts.items():
        if shebang_target(first, copied) is None:
            copied.discard(src)
    for src in sorted(copied):
        dest = OUT + src
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if src in scripts:
            with open(src, "rb") as fh:
                fh.readline()
                body = fh.read()
            with open(dest, "wb") as out:
                out.write(shebang_target(scripts[src], copied).encode() + body)
            shutil.copymode(src, dest)
            continue
        st = os.stat(src)
        if (st.st_dev, st.st_ino) in inodes:
            os.link(inodes[st.st_dev, st.st_ino], dest)
        else:
            shutil.copy2(src, dest)
            inodes[st.st_dev, st.st_ino] = dest
        if needs_loader(src):   # every link's path: the host patches whichever one it is given
            programs.append(src.lstrip("/"))
    for src in entries:
        if os.path.islink(src) and os.path.realpath(src) in copied:
            dest = OUT + src
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.symlink(os.path.relpath(OUT + os.path.realpath(src), os.path.dirname(dest)), dest)
    for d in DATA_DIRS:
        if os.path.isdir(d):
            shutil.copytree(d, OUT + d, symlinks=True)
    return programs


def point_subprocess_at_copied_sh(path):
    import py_compile
    with open(path) as fh:
        src = fh.read()
    if SUBPROCESS_SHELL not in src:
        sys.exit(f"{path}: no {SUBPROCESS_SHELL!r} to point at the copied sh")
    with open(path, "w") as fh:
        fh.write(src.replace(SUBPROCESS_SHELL, f"else {ROOT + '/usr/bin/sh'!r})"))
    py_compile.compile(path, doraise=True)   # the copied bytecode was of the old source


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
    point_subprocess_at_copied_sh(f"{dest_lib}/subprocess.py")
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
    programs = copy_programs()
    elves = unique_elves()
    libs, loader = ldd([os.path.join(OUT, e) for e in elves])
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
    print(json.dumps({"python": ver, "loader": f"lib/{loader_name}", "elves": unique_elves(),
                      "executables": ["bin/bash", "bin/python3", *programs]}))


def unique_elves():
    """OUT-relative ELF files, one path per inode (patchelf rewrites a file in place, so its
    hard links need no second pass)."""
    seen, out = set(), []
    for d, _, ns in sorted(os.walk(OUT)):
        for n in sorted(ns):
            p = os.path.join(d, n)
            if os.path.islink(p) or not elf(p):
                continue
            st = os.stat(p)
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                out.append(os.path.relpath(p, OUT))
    return out


main()
