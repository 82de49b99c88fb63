#!/usr/bin/env python3
"""Report weak, duplicate or badly protected keys in users' authorized_keys files."""
import os
import pwd
import stat
import subprocess
import tempfile
from collections import defaultdict

NOLOGIN = ("nologin", "false", "sync")


def key_info(line):
    """Return (bits, fingerprint, type) using ssh-keygen, or None if unparsable."""
    with tempfile.NamedTemporaryFile("w", suffix=".pub") as tmp:
        tmp.write(line + "\n")
        tmp.flush()
        res = subprocess.run(["ssh-keygen", "-lf", tmp.name], capture_output=True, text=True)
    if res.returncode != 0:
        return None
    parts = res.stdout.split()
    return int(parts[0]), parts[1], parts[-1].strip("()")


def key_fields(line):
    """Strip leading options; return the 'type base64 [comment]' part."""
    for i, tok in enumerate(line.split()):
        if tok.startswith(("ssh-", "ecdsa-", "sk-")):
            return " ".join(line.split()[i:])
    return None


def main():
    seen = defaultdict(list)
    for pw in pwd.getpwall():
        if pw.pw_shell.endswith(NOLOGIN) and pw.pw_name != "root":
            continue
        path = os.path.join(pw.pw_dir, ".ssh", "authorized_keys")
        if not os.path.isfile(path):
            continue
        for p in (os.path.dirname(path), path):
            st = os.stat(p)
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or st.st_uid not in (pw.pw_uid, 0):
                print(f"{pw.pw_name}: unsafe owner/mode on {p} ({oct(st.st_mode & 0o777)})")
        with open(path, errors="replace") as fh:
            for n, raw in enumerate(fh, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                key = key_fields(line)
                info = key_info(key) if key else None
                if info is None:
                    print(f"{pw.pw_name}: line {n} unparsable")
                    continue
                bits, fp, ktype = info
                if ktype == "DSA" or (ktype == "RSA" and bits < 3072):
                    print(f"{pw.pw_name}: line {n} {ktype} {bits} bits (weak)")
                if len(key.split()) < 3:
                    print(f"{pw.pw_name}: line {n} has no comment ({fp})")
                seen[fp].append(f"{pw.pw_name}:{n}")
    for fp, where in seen.items():
        if len(where) > 1:
            print(f"duplicate key {fp} at {', '.join(where)}")


if __name__ == "__main__":
    main()
