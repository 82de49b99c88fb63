"""Runs INSIDE a check container on the verifier's toolchain (sent as source, standard library
only): what the tests left behind. `save PATH SKIP_JSON` records every file's (size, mtime)
before the tests; `compare PATH SKIP_JSON` prints, as JSON, the files created, changed or
removed since. Kept inside the container: a listing of every file would not fit through
the exec's output cap, and walking costs ~0.3 s where the daemon's diff took 1.5 s."""
import json
import os
import stat
import sys


def scan(root, skip):
    """{path: [size, mtime_ns]} of every non-folder under root, outside `skip`: prefixes to
    leave out (`skip["prefixes"]`) and parts of paths written on their own (`skip["parts"]`)."""
    out, todo = {}, [root]
    while todo:
        d = todo.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            p = e.path
            if p.startswith(tuple(skip["prefixes"])) or (p + "/").startswith(tuple(skip["prefixes"])) \
                    or any(s in p for s in skip["parts"]):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                todo.append(p)
            else:
                out[p] = [st.st_size, st.st_mtime_ns]
    return out


def traces(before, after):
    """Files created, changed or removed between two scans, sorted."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def main(argv):
    mode, path, skip = argv[1], argv[2], json.loads(argv[3])
    now = scan("/", skip)
    if mode == "save":
        with open(path, "w") as fh:
            json.dump(now, fh)
        print("SAVED", len(now))
        return
    with open(path) as fh:
        before = json.load(fh)
    os.unlink(path)
    print(json.dumps(traces(before, now)[:200]))


if __name__ == "__main__":
    main(sys.argv)
