"""LLM artifacts <-> a Harbor task bundle.

`bundle_from_artifacts` lays the four artifacts an LLM writes (environment manifest,
instruction, solution, tests) out as the offline synthesizer lays out its tasks
(pipeline/synth/layout.py): the Dockerfile `FROM` the base image, `tests/test.sh` our own
runner (never LLM code; with test weights, the reward is the weighted share of passing tests,
computed by that runner from pytest's JUnit XML). `artifacts_from_bundle` is the inverse, so an
offline bundle can be handed to the LLM stages (e.g. as a repair's starting point).

In the build context a manifest file at /app/<rel> lies at `app/<rel>` (as in offline bundles),
any other at `rootfs/<path>`, copied by one COPY per top-level folder.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from pipeline.synth import layout, test_sh
from pipeline.synth.llm.models import EnvManifest, FileSpec, Instruction, Solution, TestsDraft
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render as render_toml


class RenderError(ValueError):
    """An artifact that cannot become a bundle; the message names the artifact, the field and why."""


APP_DIR = "app"         # build-context folder of files under /app (as offline bundles have it)
ROOTFS_DIR = "rootfs"   # build-context folder of files anywhere else
# Where a manifest may not place files: the verifier's folders (a planted reward or test must
# never come from the image) and the kernel's.
FORBIDDEN_ROOTS = ("/tests", "/solution", "/logs", "/proc", "/sys", "/dev")
CHMOD_PREFIX = "chmod 0755 -- "    # the RUN line that marks the manifest's executables
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", re.M)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# --- environment -----------------------------------------------------------------------------

def _clean_path(spec: FileSpec, i: int) -> str:
    where = f"environment: files[{i}] ({spec.path!r})"
    p = spec.path
    if not p.startswith("/"):
        raise RenderError(f"{where}: the path must be absolute")
    if _CONTROL.search(p) or "\\" in p:
        raise RenderError(f"{where}: control characters or backslashes in the path")
    parts = p.split("/")[1:]
    if any(x in ("", ".", "..") for x in parts):
        raise RenderError(f"{where}: empty, '.' or '..' segments are not allowed")
    norm = str(PurePosixPath(p))
    if any(norm == r or norm.startswith(r + "/") for r in FORBIDDEN_ROOTS):
        raise RenderError(f"{where}: files may not be placed under {', '.join(FORBIDDEN_ROOTS)}")
    if norm == "/app":
        raise RenderError(f"{where}: /app is the working folder, not a file")
    return norm


def context_path(abs_path: str) -> str:
    """Where a file of the image lies in the build context (environment/ relative)."""
    if abs_path.startswith("/app/"):
        return f"{APP_DIR}/{abs_path[len('/app/'):]}"
    return f"{ROOTFS_DIR}{abs_path}"


def _files(manifest: EnvManifest) -> dict[str, FileSpec]:
    out: dict[str, FileSpec] = {}
    for i, spec in enumerate(manifest.files):
        path = _clean_path(spec, i)
        if path in out:
            raise RenderError(f"environment: files[{i}] ({spec.path!r}) appears twice")
        out[path] = spec
    return out


def _run_line(cmd: str, i: int) -> str:
    if not cmd.strip():
        raise RenderError(f"environment: setup_commands[{i}] is empty")
    if _CONTROL.search(cmd.replace("\t", " ")):
        # Several lines: the exec form keeps them one instruction (a newline in the shell form
        # would start a new Dockerfile instruction).
        return "RUN " + json.dumps(["/bin/sh", "-c", cmd])
    return f"RUN {cmd}"


def dockerfile_for(manifest: EnvManifest, base_image: str, domain_images: Mapping[str, str] | None = None) -> str:
    """The Dockerfile: FROM the base image ("base") or a known domain image, STOPSIGNAL SIGKILL,
    WORKDIR /app, COPY of the manifest's files, ENV, the executables' chmod, then the setup RUNs.
    Raises RenderError for an unknown image, a bad path, an ENV name or value that cannot be written."""
    images = dict(domain_images or {})
    if manifest.image == "base":
        image = base_image
    elif manifest.image in images:
        image = images[manifest.image]
    else:
        known = ", ".join(["base"] + sorted(images))
        raise RenderError(f"environment: image {manifest.image!r} is not one we build (known: {known})")
    files = _files(manifest)
    lines = [f"FROM {image}", "STOPSIGNAL SIGKILL", "WORKDIR /app"]
    if any(p.startswith("/app/") for p in files):
        lines.append(f"COPY {APP_DIR}/ /app/")
    for top in sorted({p.split("/")[1] for p in files if not p.startswith("/app/")}):
        lines.append(f"COPY {ROOTFS_DIR}/{top}/ /{top}/")
    for k, v in manifest.env.items():
        if not _ENV_NAME.match(k):
            raise RenderError(f"environment: env name {k!r} is not a valid variable name")
        if _CONTROL.search(v):
            raise RenderError(f"environment: env {k} holds a control character or newline")
        lines.append(f"ENV {k}={json.dumps(v)}")
    executables = sorted(p for p, s in files.items() if s.executable)
    if executables:
        # The build context is tarred without modes (workbench.sandbox.box.tar_files), so the
        # executable bit is set in the image.
        lines.append("RUN " + CHMOD_PREFIX + " ".join(_sh_quote(p) for p in executables))
    lines += [_run_line(c, i) for i, c in enumerate(manifest.setup_commands)]
    return "\n".join(lines) + "\n"


def _sh_quote(p: str) -> str:
    return p if re.fullmatch(r"[A-Za-z0-9_./+-]+", p) else "'" + p.replace("'", "'\\''") + "'"


def environment_files(manifest: EnvManifest, base_image: str,
                      domain_images: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """The environment/ folder (paths relative to it): the Dockerfile and the manifest's files."""
    out = {"Dockerfile": dockerfile_for(manifest, base_image, domain_images).encode()}
    for i, (path, spec) in enumerate(_files(manifest).items()):
        out[context_path(path)] = file_bytes(spec, i)
    return out


def file_bytes(spec: FileSpec, i: int = 0) -> bytes:
    if spec.encoding == "utf-8":
        return spec.content.encode("utf-8")
    try:
        return base64.b64decode(spec.content, validate=True)
    except (binascii.Error, ValueError):
        raise RenderError(f"environment: files[{i}] ({spec.path!r}): content is not valid base64") from None


# --- tests/test.sh ---------------------------------------------------------------------------

_UNWEIGHTED_REWARD = test_sh.REWARD_LINE
# The weighted share of passing tests, from the JUnit XML pytest wrote (stdlib only; runs on the
# verifier's own python, or the image's under Harbor). A weighted test absent from the XML (not
# collected) earns nothing; a skipped one neither; parametrized cases share their test's weight;
# pytest's own failure (exit code above 1, kept in $rc by test_sh.TEST_SH) gives 0.
_WEIGHTED_REWARD = r'''"${PY[@]}" -I - "$rc" '%(weights)s' > /logs/verifier/reward.txt <<'PYEOF' || echo 0 > /logs/verifier/reward.txt
import json, re, sys, xml.etree.ElementTree as ET
rc, weights = int(sys.argv[1]), json.loads(sys.argv[2])
try:
    cases = list(ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"))
except Exception:
    cases = []
runs = {}
for case in cases:
    name = re.sub(r"\[.*\]$", "", case.get("name", ""))
    runs.setdefault(name, []).append(all(case.find(t) is None for t in ("failure", "error", "skipped")))
names = set(runs) | set(weights)
total = sum(weights.get(n, 1.0) for n in names)
got = sum(weights.get(n, 1.0) * sum(r) / len(r) for n, r in runs.items() if r)
share = got / total if total > 0 and rc in (0, 1) else 0.0
print(("%%.4f" %% share).rstrip("0").rstrip(".") if share < 1 else "1")
PYEOF
'''


def _check_weights(tests: TestsDraft) -> dict[str, float]:
    defined = set(_TEST_DEF.findall(tests.test_py))
    out: dict[str, float] = {}
    for name, w in tests.weights.items():
        if not re.fullmatch(r"test\w*", name):
            raise RenderError(f"tests: weights key {name!r} is not a test function name")
        if name not in defined:
            raise RenderError(f"tests: weights name {name!r}, which tests/test_outputs.py does not define")
        if not isinstance(w, (int, float)) or w != w or w < 0 or w == float("inf"):
            raise RenderError(f"tests: weight of {name} must be a finite number >= 0, not {w!r}")
        out[name] = float(w)
    if out and sum(out.get(n, 1.0) for n in defined | set(out)) <= 0:
        raise RenderError("tests: the weights add up to 0, so no test could earn any reward")
    return out


def test_sh_for(tests: TestsDraft) -> str:
    """Our runner: test_sh.TEST_SH, or with weights its variant that writes the weighted share."""
    weights = _check_weights(tests)
    if not weights:
        return layout.render_test_sh()
    base = layout.render_test_sh()
    if _UNWEIGHTED_REWARD not in base:   # layout's runner changed: the weighted variant must follow
        raise AssertionError("test_sh.TEST_SH no longer ends with the reward line render.py replaces")
    body = _WEIGHTED_REWARD % {"weights": json.dumps(weights, sort_keys=True)}
    return base.replace(_UNWEIGHTED_REWARD, body)


test_sh_for.__test__ = False   # a builder, not a pytest test (its name starts with "test")


def weights_of_test_sh(text: str) -> dict[str, float]:
    """The weights a weighted runner was written with ({} for the plain runner)."""
    m = re.search(r"""^"\$\{PY\[@\]\}" -I - "\$rc" '([^'\n]*)'""", text, re.M)
    return {k: float(v) for k, v in json.loads(m.group(1)).items()} if m else {}


# --- the bundle --------------------------------------------------------------------------------

def instruction_md(instruction: Instruction) -> str:
    text = instruction.text.strip("\n")
    if re.match(r"#\s", text):       # the body brings its own heading
        return text + "\n"
    return f"# {instruction.title.strip()}\n\n{text}\n"


def bundle_from_artifacts(*, name: str, category: str, difficulty: str, manifest: EnvManifest,
                          instruction: Instruction, solution: Solution, tests: TestsDraft, base_image: str,
                          agent_timeout_sec: float = 600.0, verifier_timeout_sec: float = 180.0,
                          metadata: Mapping | None = None, domain_images: Mapping[str, str] | None = None
                          ) -> TaskBundle:
    """The task bundle of four LLM artifacts. `metadata`: further TaskMetadata fields (path_id,
    seed, skill_ids, recipes, skill_fidelity, ...); provider defaults to "llm".
    Raises RenderError (what and where) or BundleError (a path rule) before anything is written."""
    meta = TaskMetadata(**{"provider": "llm", **dict(metadata or {}), "category": category, "difficulty": difficulty})
    toml = render_toml(TaskToml(name=name, description=instruction.title.strip(), metadata=meta,
                                agent_timeout_sec=float(agent_timeout_sec),
                                verifier_timeout_sec=float(verifier_timeout_sec)))
    solve = solution.solve_sh if solution.solve_sh.endswith("\n") else solution.solve_sh + "\n"
    test_py = tests.test_py if tests.test_py.endswith("\n") else tests.test_py + "\n"
    files: dict[str, bytes | str] = {
        "instruction.md": instruction_md(instruction),
        "task.toml": toml,
        "solution/solve.sh": solve,
        "tests/test.sh": test_sh_for(tests),
        "tests/test_outputs.py": test_py,
    }
    for rel, data in environment_files(manifest, base_image, domain_images).items():
        files[f"environment/{rel}"] = data
    executables = {"solution/solve.sh", "tests/test.sh"} | {
        f"environment/{context_path(str(PurePosixPath(s.path)))}" for s in manifest.files if s.executable}
    bundle = TaskBundle(files, executables)
    bundle.validate()
    return bundle


# --- the inverse -------------------------------------------------------------------------------

def _dockerfile_parts(text: str) -> tuple[list[tuple[str, str]], list[str], dict[str, str], set[str]]:
    """(COPY src -> dest pairs, setup commands, env, executable paths) of a Dockerfile we wrote."""
    copies, runs, env, executables = [], [], {}, set()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word, rest = word.upper(), rest.strip()
        if word in ("FROM", "STOPSIGNAL", "WORKDIR"):
            continue
        if word == "COPY":
            parts = rest.split()
            if len(parts) != 2:
                raise RenderError(f"environment/Dockerfile line {n}: COPY of one folder expected, got {rest!r}")
            copies.append((parts[0].rstrip("/"), parts[1].rstrip("/")))
        elif word == "ENV":
            k, eq, v = rest.partition("=")
            if not eq or not _ENV_NAME.match(k):
                raise RenderError(f"environment/Dockerfile line {n}: ENV NAME=value expected, got {rest!r}")
            env[k] = json.loads(v) if v.startswith('"') else v
        elif word == "RUN":
            if rest.startswith("["):
                form = json.loads(rest)
                cmd = form[2] if len(form) == 3 and form[:2] == ["/bin/sh", "-c"] else " ".join(form)
            else:
                cmd = rest
            if cmd.startswith(CHMOD_PREFIX):
                executables.update(p.strip("'") for p in cmd[len(CHMOD_PREFIX):].split())
            else:
                runs.append(cmd)
        else:
            raise RenderError(f"environment/Dockerfile line {n}: {word} is not an instruction we write")
    return copies, runs, env, executables


def artifacts_from_bundle(bundle: TaskBundle) -> tuple[EnvManifest, Instruction, Solution, TestsDraft]:
    """The four artifacts of a bundle (offline or LLM-made): the Dockerfile's RUN and ENV lines
    and the files its COPY lines bring in become the manifest."""
    copies, runs, env, executables = _dockerfile_parts(bundle.text("environment/Dockerfile"))
    env_files = bundle.under("environment")
    specs: list[FileSpec] = []
    for rel in sorted(env_files):
        if rel == "Dockerfile":
            continue
        dest = next((d + "/" + rel[len(s) + 1:] for s, d in copies if rel.startswith(s + "/")), None)
        if dest is None:
            raise RenderError(f"environment/{rel}: no COPY line of the Dockerfile brings it into the image")
        data = env_files[rel]
        try:
            content, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:   # a binary fixture (an archive, an image)
            content, encoding = base64.b64encode(data).decode("ascii"), "base64"
        specs.append(FileSpec(path=dest, content=content, encoding=encoding,
                              executable=dest in executables or f"environment/{rel}" in bundle.executables))
    manifest = EnvManifest(image="base", files=specs, setup_commands=runs, env=env)
    text = bundle.text("instruction.md").strip("\n")
    m = re.match(r"#\s+(.+)\n+", text)
    title, body = (m.group(1).strip(), text[m.end():]) if m else (text.splitlines()[0][:80], text)
    instruction = Instruction(title=title, text=body.strip("\n"))
    solution = Solution(solve_sh=bundle.text("solution/solve.sh"))
    tests = TestsDraft(test_py=bundle.text("tests/test_outputs.py"),
                       weights=weights_of_test_sh(bundle.text("tests/test.sh")))
    return manifest, instruction, solution, tests
