#!/usr/bin/env python3
"""Report declared-but-unused and imported-but-undeclared Python dependencies."""
import argparse
import ast
import importlib.metadata as md
import pathlib
import re
import sys


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_requirements(path):
    names = set()
    for raw in pathlib.Path(path).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        if m:
            names.add(normalise(m.group(0)))
    return names


def imported_modules(src_dirs):
    mods, local = set(), set()
    for src in src_dirs:
        root = pathlib.Path(src)
        for child in root.iterdir():
            if child.is_dir() and (child / "__init__.py").exists():
                local.add(child.name)
            elif child.suffix == ".py":
                local.add(child.stem)
        for py in root.rglob("*.py"):
            try:
                tree = ast.parse(py.read_text(encoding="utf-8", errors="replace"), str(py))
            except SyntaxError as exc:
                print(f"warning: cannot parse {py}: {exc}", file=sys.stderr)
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    mods.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods.add(node.module.split(".")[0])
    return mods - local - set(sys.stdlib_module_names) - {"__future__"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True)
    ap.add_argument("--requirements", required=True)
    args = ap.parse_args()

    declared = declared_requirements(args.requirements)
    modules = imported_modules(args.src)
    mod_to_dists = md.packages_distributions()

    used_dists = set()
    undeclared = []
    for mod in sorted(modules):
        dists = [normalise(d) for d in mod_to_dists.get(mod, [])]
        if not dists:
            undeclared.append(f"{mod} (not installed)")
            continue
        used_dists.update(dists)
        if not declared.intersection(dists):
            undeclared.append(f"{mod} (installed as {', '.join(mod_to_dists[mod])})")

    unused = sorted(declared - used_dists)
    print("unused:     " + (", ".join(unused) or "-"))
    print("undeclared: " + (", ".join(undeclared) or "-"))
    return 1 if unused or undeclared else 0


if __name__ == "__main__":
    sys.exit(main())
