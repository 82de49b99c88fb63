"""Page speed: every dashboard page rendered through AppTest on the demo workspace and on a
large generated one (20,000 skills by default).

Both workspaces are built once and kept on disk (`--cache-dir`, default
/tmp/workbench-page-speed): the large one from generated skill records (ingest, filters,
offline scenarios, a graph built with the hashing embedder, two sample batches, a few
tasks when Docker and the base image are at hand). Delete the folder, or pass `--rebuild`,
to build them again.

Each page is timed
- `cold`: first render in a fresh process that has only Streamlit loaded (imports included):
  the first visit of a page on a server that has not shown it yet;
- `preloaded`: the same once the app's background preload of the pages' imports is done;
and then in this one process after every page has been imported once (a warm server:
Python modules loaded, numba compiled):
- `first`: a new session with Streamlit's caches emptied — the uncached baseline;
- `warm`: a new session (a new browser tab) on the caches the earlier sessions left —
  what the target (≤ 2 s) is about;
- `rerun`: the same session run again (a click on the page).
The pages are those workbench/app.py's navigation lists (all of them, read from the app).
`--quick`: a smoke run (a fresh 100-skill workspace, no demo, one repeat, cold and preloaded
for the first page only); its figures are not measurements.
Times are the best of `--repeat` runs (the machine is shared: single runs scatter by 2-3x). Last line:
`RESULT worst_page_s=… worst_page=… worst_first_s=… worst_cold_s=… speedup_first_vs_warm=… …`.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import time
from pathlib import Path

def _code_dir() -> Path:
    """The checkout whose pages are timed: this one, or `--code DIR` (say, a git worktree of
    an older commit, for a before/after on the same workspaces and the same machine load)."""
    if "--code" in sys.argv:
        return Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
    return Path(__file__).resolve().parent.parent


REPO = _code_dir()
sys.path.insert(0, str(REPO))



def dashboard_pages(repo: Path) -> tuple[str, ...]:
    """Every page the dashboard's navigation lists (workbench/app.py), in its order: read from
    the app itself so that a page added or renamed is timed without this list being kept."""
    import re
    app = repo / "workbench" / "app.py"
    names = re.findall(r'st\.Page\(str\(PAGES / "(\w+)\.py"\)', app.read_text()) if app.exists() else []
    missing = [n for n in names if not (repo / "pages" / f"{n}.py").exists()]
    if not names or missing:
        raise SystemExit(f"cannot list the dashboard's pages from {app}: "
                         + (f"pages named but missing: {missing}" if missing else "no st.Page(...) entries found"))
    return tuple(names)


PAGES = dashboard_pages(REPO)
TARGET_S = 2.0
PRELOAD = (REPO / "pages" / "preload.py").exists()  # absent in versions before it, for a before/after run

# Words for generated skills: categories, their binaries, and syllables for made-up nouns so
# that no two skills share enough word 3-grams to be near-duplicates.
_CATEGORY_TOOLS = {
    "file-operations": ["find", "rsync", "cp", "mv", "ln"], "text-processing": ["sed", "awk", "grep", "tr"],
    "data-processing": ["jq", "csvkit", "python3", "yq"], "databases": ["sqlite3", "psql", "duckdb"],
    "git": ["git"], "archives-compression": ["tar", "gzip", "zip", "xz"],
    "system-administration": ["systemctl", "journalctl", "useradd"], "networking-http": ["curl", "wget", "dig"],
    "security-permissions": ["chmod", "chown", "gpg", "openssl"], "scientific-computing": ["python3", "bc"],
    "software-build-debug": ["make", "gcc", "gdb", "pytest"], "log-analysis": ["awk", "grep", "zcat"],
    "scheduling-automation": ["crontab", "flock", "inotifywait"], "dependency-management": ["pip", "npm"],
}
_SYLLABLES = ["ka", "lo", "mi", "ne", "tor", "vex", "qua", "dri", "sel", "pon", "zu", "har", "bel", "cri",
              "fen", "gal", "jor", "kip", "mur", "nix", "ost", "pra", "rin", "sto", "tum", "vel", "wan", "yor"]
_VERBS = ["collect", "convert", "check", "merge", "split", "index", "rotate", "clean", "audit", "extract",
          "summarise", "repair", "archive", "compare", "validate", "publish"]
_EXTS = ["txt", "csv", "json", "log", "db", "tar.gz", "md", "ini"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def skill_record(i: int, rng: random.Random) -> dict:
    cats = list(_CATEGORY_TOOLS)
    cat = cats[i % len(cats)]
    tool = rng.choice(_CATEGORY_TOOLS[cat])
    w = [_word(rng) for _ in range(8)]
    verb, verb2 = rng.sample(_VERBS, 2)
    src = f"/data/{w[0]}/{w[1]}.{rng.choice(_EXTS)}"
    dst = f"/srv/{w[2]}/{w[3]}-{i}.{rng.choice(_EXTS)}"
    steps = [f"Inspect `{src}` and note the {w[4]} fields with `ls -la {Path(src).parent}`.",
             f"Run `{tool}` to {verb} the {w[5]} entries of `{src}` (option set {i % 11}).",
             f"{verb2.capitalize()} the {w[6]} results and write them to `{dst}`.",
             f"Check that `{dst}` holds {i % 17 + 1} {w[7]} records with `wc -l {dst}`."]
    return {
        "name": f"{tool}-{verb}-{w[0]}-{i}",
        "description": f"{verb.capitalize()} the {w[0]} {w[1]} data with {tool} and {verb2} the {w[2]} "
                       f"output for {w[3]} reports. Use when the {w[4]} {w[5]} need a {verb} pass.",
        "license": "MIT", "metadata": {"category": cat},
        "content": f"# {verb.capitalize()} {w[0]} {w[1]}\n\n## Inputs\n- `{src}`\n\n## Outputs\n- `{dst}`\n\n"
                   "## Steps\n" + "".join(f"{k}. {s}\n" for k, s in enumerate(steps[:rng.randint(2, 4)], 1)),
    }


def write_export(path: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps(skill_record(i, rng)) + "\n")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _tasks(ws, n_paths: int) -> bool:
    """A small verified batch when Docker and the base image are here; False when it could not run."""
    from pipeline.synth.batch import run_synth
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine, SandboxError
    try:
        engine = Engine()
        ready = engine.image_exists(base_image_name())
    except SandboxError:
        ready = False
    if not ready:
        _say("  no Docker engine or base image: no tasks in this workspace")
        return False
    try:
        report = run_synth(ws, n_paths=n_paths, seed=1, concurrency=2, engine=engine)
    except Exception as exc:  # the pages are still worth timing without tasks; retried next run
        _say(f"  synthesis failed ({exc.__class__.__name__}: {exc}); the workspace has no tasks this time")
        return False
    _say(f"  tasks: {report.accepted} of {report.sampled} accepted")
    return True


def build_large(root: Path, n_skills: int, n_tasks: int) -> None:
    from pipeline.graph.build import BuildOptions, build_graph
    from pipeline.graph.sample_run import sample
    from pipeline.ingest.run import ingest
    from pipeline.scenarios.run import infer_offline
    from workbench.workspace import Workspace
    ws = Workspace.open(root)
    export = root / "generated-skills.jsonl"
    steps = [("generate", lambda: write_export(export, n_skills)),
             ("ingest + filters", lambda: ingest(ws, [export])),
             ("offline scenarios", lambda: infer_offline(ws)),
             ("graph (hashing embedder)", lambda: build_graph(ws, BuildOptions(embedder="hashing"))),
             ("sample", lambda: [sample(ws, s, 200, seed=1) for s in ("inverse-frequency", "random-walk")]),
             ("tasks", lambda: _tasks(ws, n_tasks) if n_tasks else False)]
    for name, fn in steps:  # each step once: a build cut short resumes at the step it stopped in
        marker = root / f".page-speed-{name.split()[0]}"
        if marker.exists():
            continue
        t0 = time.perf_counter()
        if fn() is not False:
            marker.write_text(f"{time.perf_counter() - t0:.1f} s")
        _say(f"  {name}: {time.perf_counter() - t0:.1f} s")


def build_demo(root: Path) -> None:
    from workbench.demo_build import ensure_demo
    ensure_demo(str(root))


def ensure_workspace(root: Path, build, rebuild: bool) -> Path:
    """Build (or finish building) a workspace; the builders skip what is already there."""
    if rebuild and root.exists():
        import shutil
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    _say(f"workspace {root}")
    build(root)
    return root


def _clear_caches() -> None:
    import streamlit as st
    st.cache_data.clear()
    st.cache_resource.clear()


_COMPONENTS = None


def _app_test(script: Path):
    """An AppTest that shares one component registry: a server scans the installed packages for
    components once at start, while each new AppTest would scan again (~0.9 s here)."""
    global _COMPONENTS
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(script), default_timeout=300)
    if _COMPONENTS is None:
        from streamlit.components.v2.component_manager import BidiComponentManager
        _COMPONENTS = BidiComponentManager()
        _COMPONENTS.discover_and_register_components(start_file_watching=False)
    at._bidi_component_manager = _COMPONENTS
    return at


def _render(page: str, at=None):
    at = at or _app_test(REPO / "pages" / f"{page}.py")
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        at.run()
    dt = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"page {page} raised: {at.exception[0].message}")
    return at, dt


def cold_first_render(page: str, root: Path, preloaded: bool = False) -> float:
    """The first render of a page in a fresh process that has only Streamlit loaded: what the
    first visitor of a page pays on a server that has not run it yet (imports included).
    `preloaded`: once the app's background preload (pages/preload.py) has finished."""
    import subprocess
    warm_up = "from pages import preload; preload.start().join()" if preloaded else "pass"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"sys.argv = ['x', '--code', {str(REPO)!r}]; import page_speed as ps; "
            "ps._app_test(ps.REPO / 'pages' / 'settings.py'); "  # a server scans components at start
            f"{warm_up}; print(ps._render({page!r})[1])")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, WORKBENCH_HOME=str(root)),
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def time_pages(root: Path, repeat: int, profile_dir: Path | None,
               cold_pages: tuple[str, ...] = PAGES) -> dict[str, dict[str, float]]:
    """`cold_pages`: the pages also timed in fresh processes (cold, preloaded; NaN for the others)."""
    os.environ["WORKBENCH_HOME"] = str(root)
    # fresh processes are the noisiest figure on a shared machine: the best of `repeat`, interleaved
    cold: dict[str, float] = {}
    preloaded: dict[str, float] = {}
    for _ in range(repeat):
        for page in cold_pages:
            cold[page] = min(cold.get(page, float("inf")), cold_first_render(page, root))
            if PRELOAD:
                preloaded[page] = min(preloaded.get(page, float("inf")), cold_first_render(page, root, True))
    for page in PAGES:  # warm the process: imports, numba compilation, the workspace opened
        _render(page)
    out: dict[str, dict[str, float]] = {}
    for page in PAGES:
        first, warm, rerun = [], [], []
        for _ in range(repeat):
            _clear_caches()
            at, dt = _render(page)
            first.append(dt)
            warm.append(_render(page)[1])
            rerun.append(_render(page, at)[1])
        out[page] = {"cold": cold.get(page, float("nan")), "preloaded": preloaded.get(page, float("nan")),
                     "first": min(first), "warm": min(warm), "rerun": min(rerun)}
        if profile_dir is not None:
            _profile(page, root, profile_dir)
    return out


_PROFILED = """import cProfile, pstats, runpy
prof = cProfile.Profile()
prof.enable()
try:
    runpy.run_path({page!r}, run_name="__main__")
finally:
    prof.disable()
    with open({out!r}, "w") as fh:
        pstats.Stats(prof, stream=fh).sort_stats("cumulative").print_stats(60)
"""


def _profile(page: str, root: Path, profile_dir: Path) -> None:
    """cProfile of an uncached first render inside the script thread (top 60 by cumulative time)."""
    profile_dir.mkdir(parents=True, exist_ok=True)
    script = profile_dir / f"_profiled_{page}.py"
    script.write_text(_PROFILED.format(page=str(REPO / "pages" / f"{page}.py"),
                                       out=str(profile_dir / f"{root.name}-{page}.txt")))
    _clear_caches()
    at = _app_test(script)
    with contextlib.redirect_stderr(io.StringIO()):
        at.run()
    script.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/workbench-page-speed"))
    ap.add_argument("--skills", type=int, default=20_000)
    ap.add_argument("--tasks", type=int, default=6, help="paths of the synthesis batch in the large workspace")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--only", choices=["demo", "large"], help="time one workspace only")
    ap.add_argument("--profile", type=Path, help="write a cProfile of each page's first render here")
    ap.add_argument("--code", type=Path, help="time the pages of this checkout instead (read before the imports)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: a fresh 100-skill generated workspace only (no tasks, no demo build: it needs "
                         "Docker for minutes), one repeat, fresh-process renders of the first page only")
    args = ap.parse_args()
    if args.quick:
        import tempfile
        args.only, args.skills, args.tasks, args.repeat = "large", 100, 0, 1
        args.cache_dir = Path(tempfile.mkdtemp(prefix="page-speed-quick-"))
    workspaces = {}
    if args.only in (None, "demo"):
        workspaces["demo"] = ensure_workspace(args.cache_dir / "demo", build_demo, args.rebuild)
    if args.only in (None, "large"):
        workspaces[f"{args.skills / 1000:g}k"] = ensure_workspace(
            args.cache_dir / f"large-{args.skills}", lambda r: build_large(r, args.skills, args.tasks), args.rebuild)
    try:
        cold_pages = PAGES[:1] if args.quick else PAGES   # each fresh process costs seconds of imports
        results = {name: time_pages(root, args.repeat, args.profile, cold_pages) for name, root in workspaces.items()}
    finally:
        if args.quick:
            import shutil
            shutil.rmtree(args.cache_dir, ignore_errors=True)
    print(f"{'workspace':<10} {'page':<11} {'cold s':>7} {'preloaded s':>11} {'first s':>8} {'warm s':>8} "
          f"{'rerun s':>8} {'first/warm':>10}")
    for name, pages in results.items():
        for page, t in pages.items():
            flag = "" if t["warm"] <= TARGET_S else "  over target"
            print(f"{name:<10} {page:<11} {t['cold']:7.2f} {t['preloaded']:11.2f} {t['first']:8.2f} "
                  f"{t['warm']:8.2f} {t['rerun']:8.2f} {t['first'] / t['warm']:10.1f}{flag}")
    rows = {f"{name}/{page}": t for name, pages in results.items() for page, t in pages.items()}

    def worst(kind: str) -> str:
        timed = [k for k in rows if rows[k][kind] == rows[k][kind]] or list(rows)   # NaN: not timed
        page = max(timed, key=lambda k: rows[k][kind])
        return f"worst_{kind}_s={rows[page][kind]:.2f} worst_{kind}_page={page}"
    warm_page = max(rows, key=lambda k: rows[k]["warm"])
    ratio = sum(t["first"] for t in rows.values()) / sum(t["warm"] for t in rows.values())
    over = sum(1 for t in rows.values() if t["warm"] > TARGET_S)
    kinds = ["first", "cold"] + (["preloaded"] if PRELOAD else [])
    print(f"RESULT worst_page_s={rows[warm_page]['warm']:.2f} worst_page={warm_page} "
          + " ".join(worst(k) for k in kinds)
          + f" speedup_first_vs_warm={ratio:.1f} pages_over_target={over} target_s={TARGET_S} "
          f"code={REPO} load1={os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
