"""Static checks of what an LLM wrote, before anything of it is built or run.

Each check returns `Failure`s (pipeline.verify.failures) with a `guard.<what>` check name, the
artifact at fault and a reason that says what is wrong and where (the field, or the file and
line), so the repair stage of that artifact gets told exactly what to change. They catch what
would only fail later and slower (a build that pulls from a registry, tests that import
modules the verifier lacks) or never clearly (an instruction naming files nobody made).
Anything subtler is left to the build, the runs and the verifier.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import PurePosixPath

from pipeline import python_source
from pipeline.synth.llm import render
from pipeline.synth.llm.models import EnvManifest
from pipeline.synth.llm.shell_scan import commands, logical_lines, network_uses, strip_wrappers
from pipeline.synth.llm.state import ContainerState
from pipeline.verify.failures import Failure

IMAGE = "guard.image"
NETWORK = "guard.network"
PATH = "guard.path"
SIZE = "guard.size"
FILE = "guard.file"
SOLUTION = "guard.solution"
TESTS_SYNTAX = "guard.tests_syntax"
TESTS_IMPORT = "guard.tests_import"
TESTS_NONE = "guard.tests_none"
TESTS_FIXTURE = "guard.tests_fixture"
INSTRUCTION_PATHS = "guard.instruction_paths"

SOLVE = "solution/solve.sh"
TESTS_FILE = "tests/test_outputs.py"
INSTRUCTION_FILE = "instruction.md"

# Where a manifest may put files (render.FORBIDDEN_ROOTS are refused there as well), and the
# files under them that would change how every process of the image starts or logs in.
FILE_ROOTS = ("/app", "/etc", "/srv", "/opt", "/home", "/root", "/var", "/usr/local", "/data", "/mnt", "/tmp")
SYSTEM_FILES = ("/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/shadow",
                "/etc/group", "/etc/sudoers", "/etc/profile", "/etc/bash.bashrc", "/etc/environment")
MAX_MANIFEST_BYTES = 8 * 1024 * 1024
# The verifier runs the base image's python3 (workbench.sandbox.toolchain): its stdlib and pytest.
# Measured there (Debian bookworm, 3.11): these stdlib names do not import (separate packages, Windows).
VERIFIER_LACKS = frozenset({"ensurepip", "idlelib", "lib2to3", "msilib", "msvcrt", "nt", "tkinter", "turtle",
                            "turtledemo", "winreg", "winsound"})
VERIFIER_MODULES = (frozenset(sys.stdlib_module_names) - VERIFIER_LACKS) | {"pytest", "_pytest"}
PYTEST_FIXTURES = frozenset({"tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "capsys", "capsysbinary",
                             "capfd", "capfdbinary", "caplog", "monkeypatch", "request", "recwarn", "pytestconfig",
                             "cache", "record_property", "record_testsuite_property", "doctest_namespace"})
_LOOP_FOREVER = re.compile(r"^\s*(?:while\s+(?:true|:|\[\s*1\s*\])|until\s+false|for\s*\(\(\s*;\s*;\s*\)\))\b")
_LOOP_EXIT = re.compile(r"\b(?:break|exit|return)\b")
# A sentence that only asks to leave a path alone: naming a path the environment lacks there
# cannot mislead a solver (the offline layout's note about /app/input, say).
_KEEP_AS_IS = re.compile(r"\b(?:(?:do not|don't|never|leave|keep|without)\b.{0,80}?\b(?:edit|modify|modifying|change|"
                         r"changing|alter|remove|removing|delete|touch|unchanged|intact|untouched)"
                         r"|(?:stays?|remains?)\s+(?:as (?:it is|they are)|unchanged|intact|untouched))\b", re.I)
_INSTR_PATH = re.compile(r"(?<![\w/.~-])(/app(?:/[^\s`'\"()<>\[\]{},;|]*)?)")


# --- environment -----------------------------------------------------------------------------

def check_manifest(manifest: EnvManifest, allowed_images: set[str]) -> list[Failure]:
    """The image is one we build; no setup command fetches from a network or a registry (the
    build has no network); files lie under FILE_ROOTS, never over SYSTEM_FILES, paths clean."""
    out: list[Failure] = []
    if manifest.image not in allowed_images:
        out.append(_env(IMAGE, f"environment: image {manifest.image!r} is not one we build (allowed: "
                               f"{', '.join(sorted(allowed_images))}); no registry can be reached, so start FROM one of those"))
    for i, cmd in enumerate(manifest.setup_commands):
        for found in network_uses(cmd):
            out.append(_env(NETWORK, f"environment: setup_commands[{i}] {_short(cmd)!r} {found.what}; the build has "
                                     "no network: put what is needed in `files`, or use what the base image has",
                            evidence=[cmd[:300]]))
    total = 0
    for i, spec in enumerate(manifest.files):
        try:
            total += len(render.file_bytes(spec, i))
        except render.RenderError as exc:          # base64 that does not decode
            out.append(_env(FILE, str(exc)))
        problem = _file_path_problem(spec, i)
        if problem:
            out.append(_env(PATH, problem))
    if total > MAX_MANIFEST_BYTES:
        out.append(_env(SIZE, f"environment: the files hold {total // 2**20} MiB, over the "
                              f"{MAX_MANIFEST_BYTES // 2**20} MiB a manifest may carry; generate big fixtures with a setup command"))
    return out


def _file_path_problem(spec, i: int) -> str:
    try:
        norm = render._clean_path(spec, i)      # absolute, no '..' / empty segments, not the verifier's folders
    except render.RenderError as exc:
        return str(exc)
    where = f"environment: files[{i}] ({spec.path!r})"
    if not any(norm == r or norm.startswith(r + "/") for r in FILE_ROOTS):
        return f"{where}: files go under {', '.join(FILE_ROOTS)}, not into the system's own folders"
    if any(norm == s or norm.startswith(s + "/") for s in SYSTEM_FILES):
        return f"{where}: would replace {norm}, which changes how every process in the image starts"
    return ""


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


def _env(check: str, reason: str, evidence: list[str] | None = None) -> Failure:
    return Failure(check=check, artifact="environment", reason=reason, evidence=evidence or [])


# --- solution --------------------------------------------------------------------------------

def check_solution(solve_sh: str) -> list[Failure]:
    """Obvious problems only (bash -n and the run come later): empty, not bash, wrapped in a
    markdown fence, CRLF line ends, network or registry use, a wait that never ends."""
    def fail(line: int | None, what: str, check: str = SOLUTION) -> Failure:
        where = f"{SOLVE} line {line}" if line else SOLVE
        return Failure(check=check, artifact="solution", reason=f"{where}: {what}")
    lines = solve_sh.splitlines()
    if "\x00" in solve_sh:
        return [fail(None, "holds NUL bytes: not a shell script")]
    if not [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]:
        return [fail(None, "has no command (only blank lines and comments)")]
    out: list[Failure] = []
    if lines and lines[0].startswith("#!") and not re.search(r"\b(bash|sh)\b", lines[0]):
        out.append(fail(1, f"starts with {lines[0]!r}, but solve.sh is run with bash: write it in bash"))
    if "\r\n" in solve_sh:
        out.append(fail(1 + solve_sh[:solve_sh.index("\r\n")].count("\n"),
                        "has Windows (CRLF) line ends; bash would read the \\r as part of each command"))
    for n, ln in enumerate(lines, 1):
        if ln.lstrip().startswith("```"):
            out.append(fail(n, "holds a markdown code fence (```): give the script itself, not markdown"))
            break
    for found in network_uses(solve_sh):
        out.append(fail(found.line, f"{found.what}; the task runs without network", NETWORK))
    has_exit = bool(_LOOP_EXIT.search(solve_sh))
    for n, text in logical_lines(solve_sh):
        if _LOOP_FOREVER.search(text) and not has_exit:
            out.append(fail(n, "loops forever (no break, exit or return anywhere), so solve.sh never ends"))
        for argv in commands(text):
            core = strip_wrappers(argv)
            if len(core) < len(argv) and "timeout" in (PurePosixPath(a).name for a in argv[:len(argv) - len(core)]):
                continue                                  # bounded by timeout(1)
            prog = PurePosixPath(core[0]).name if core else ""
            if prog == "sleep" and any(a in ("infinity", "inf") for a in core[1:]):
                out.append(fail(n, "sleeps forever (sleep infinity), so solve.sh never ends"))
            if prog == "tail" and any(a in ("-f", "-F", "--follow") or a.startswith("--follow=") for a in core[1:]):
                out.append(fail(n, "follows a file (tail -f), which never ends"))
    return out


# --- tests -----------------------------------------------------------------------------------

def check_tests(test_py: str, image_modules: frozenset[str] | set[str] = frozenset()) -> list[Failure]:
    """Valid Python; imports only what the verifier has (stdlib + pytest, plus `image_modules`:
    packages a domain image installs, which the verifier's path reaches); at least one test
    function; every test argument a fixture pytest or the file provides."""
    try:
        tree = python_source.parse(test_py, filename=TESTS_FILE)
    except SyntaxError as exc:
        return [_tests(TESTS_SYNTAX, f"{TESTS_FILE} line {exc.lineno}: not valid Python ({exc.msg})",
                       [exc.text.rstrip()] if exc.text else [])]
    out = [_tests(TESTS_IMPORT, f"{TESTS_FILE} line {line}: {what}; the verifier's python3 has the standard "
                                "library and pytest only (check files and outputs with those)")
           for line, what in _foreign_imports(tree, VERIFIER_MODULES | set(image_modules))]
    tests = _test_functions(tree)
    if not tests:
        out.append(_tests(TESTS_NONE, f"{TESTS_FILE}: defines no test function (def test_...), so pytest "
                                      "collects nothing and the task could never be passed"))
    seen: dict[str, int] = {}
    fixtures = PYTEST_FIXTURES | _file_fixtures(tree)
    for fn in tests:
        if fn.name in seen:
            out.append(_tests(TESTS_NONE, f"{TESTS_FILE} line {fn.lineno}: {fn.name} is defined again "
                                          f"(first at line {seen[fn.name]}), so the first never runs"))
        seen.setdefault(fn.name, fn.lineno)
        params = _parametrized(fn)
        if params is None:
            continue
        skip = 1 if _is_method(tree, fn) else 0
        unknown = [a.arg for a in fn.args.args[skip:] if a.arg not in fixtures | params]
        if unknown:
            out.append(_tests(TESTS_FIXTURE, f"{TESTS_FILE} line {fn.lineno}: {fn.name} takes {', '.join(unknown)}, "
                                             "which no fixture provides (pytest would error, not test)"))
    return out


def _tests(check: str, reason: str, evidence: list[str] | None = None) -> Failure:
    return Failure(check=check, artifact="tests", reason=reason, evidence=evidence or [])


def _foreign_imports(tree: ast.AST, known: frozenset[str]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, f"imports {a.name}, which the verifier lacks") for a in node.names
                    if a.name.split(".")[0] not in known]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                out.append((node.lineno, f"relative import (from {'.' * node.level}{node.module or ''}); "
                                         "tests/ is not a package"))
            elif node.module and node.module.split(".")[0] not in known:
                out.append((node.lineno, f"imports from {node.module}, which the verifier lacks"))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            name, mod = _call_name(node.func), node.args[0].value
            if name in ("importlib.import_module", "import_module", "__import__") \
                    and mod.split(".")[0] not in known:
                out.append((node.lineno, f"imports {mod} at run time, which the verifier lacks"))
            elif name == "pytest.importorskip" and mod.split(".")[0] not in known:
                out.append((node.lineno, f"importorskip({mod!r}) skips the test, since the verifier lacks {mod}"))
    return out


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_call_name(func.value)}.{func.attr}"
    return ""


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    fns = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name.startswith("Test"):
            fns += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name.startswith("test")]
    return fns


def _is_method(tree: ast.Module, fn: ast.AST) -> bool:
    return any(isinstance(c, ast.ClassDef) and fn in c.body for c in tree.body)


def _file_fixtures(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "fixture" in ast.unparse(d) for d in node.decorator_list):
            names.add(node.name)
    return names


def _parametrized(fn: ast.FunctionDef) -> set[str] | None:
    """Argument names its parametrize marks give; None when they cannot be read statically."""
    names: set[str] = set()
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and _call_name(d.func).endswith("parametrize"):
            first = d.args[0] if d.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names |= {n.strip() for n in first.value.split(",")}
            elif isinstance(first, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in first.elts):
                names |= {str(e.value) for e in first.elts}
            else:
                return None
        elif "usefixtures" in ast.unparse(d) or "indirect" in ast.unparse(d):
            return None
    return names


# --- instruction -----------------------------------------------------------------------------

def check_instruction(text: str, state: ContainerState, produced: set[str], solution: str = "") -> list[Failure]:
    """Paths under the state's roots that the instruction names must exist in the container
    before the solution runs, or be produced by it (`produced`: the paths it created, changed or
    deleted), or be named by the solution's own text (`solution`: solve.sh; a pid file or a log
    that a daemon or cron job it sets up writes later); a glob or a folder counts when something
    under it does."""
    produced = set(produced) | {m.group(1).rstrip(".,:;!?*/") for m in _INSTR_PATH.finditer(solution)}
    missing: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in _INSTR_PATH.finditer(line):
            path = m.group(1).rstrip(".,:;!?*")
            if not path or re.search(r"[<>{}$]", path) or path in state.roots or _keep_as_is(line, m.start()):
                continue
            if not _known(path, state, produced):
                missing.append(f"{path} (line {n})")
    if not missing:
        return []
    missing = list(dict.fromkeys(missing))
    return [Failure(check=INSTRUCTION_PATHS, artifact="instruction",
                    reason=f"{INSTRUCTION_FILE} names {len(missing)} path(s) that neither exist in the environment nor "
                           f"are produced by the reference solution: {', '.join(missing[:10])}",
                    evidence=missing)]


def _keep_as_is(line: str, at: int) -> bool:
    """Whether the sentence around position `at` only asks to leave things unchanged."""
    start = max(line.rfind(". ", 0, at), line.rfind("; ", 0, at)) + 1
    ends = [i for i in (line.find(". ", at), line.find("; ", at)) if i >= 0]
    return bool(_KEEP_AS_IS.search(line[start:min(ends) if ends else len(line)]))


def _known(path: str, state: ContainerState, produced: set[str]) -> bool:
    if any(ch in path for ch in "*?["):                 # a glob: the folder before it must be there
        path = path[:min(path.index(ch) for ch in "*?[" if ch in path)].rsplit("/", 1)[0] or "/"
    path = path.rstrip("/") or "/"
    if state.exists(path) or any(p == path or p.startswith(path + "/") for p in produced):
        return True
    if state.truncated:                                # cut tree: under a listed folder it may exist
        parent = str(PurePosixPath(path).parent)
        return parent in state.files and state.files[parent].kind == "dir"
    return False
