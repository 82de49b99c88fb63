"""A skill-exercise step: the skill's own script, run as its SKILL.md documents it, on the task's input.

The reference solution runs the script from the shipped package (`/skills/<slug>/…`). The tests do
not trust the agent's copy of anything: they carry the script's pristine package code (tests/skill_ref,
copied in only for the sealed test phase), check the inputs are the ones the task gave (checksums),
run the pristine script on them and compare its result with the agent's file (timestamps masked).
So a hand-written look-alike fails, and so does the script run with other settings or other input.
"""
from __future__ import annotations

import hashlib
import re
import shlex

from ..recipes.base import Artifact, Check, Fragment, StepContext
from .inputs import varied_input, vary_number
from .package import SKILL_REF_DIR, SKILLS_ROOT
from .plan import ExercisePlan

RECIPE_NAME = "skill-exercise"
REF_DIR = SKILL_REF_DIR.removeprefix("tests/").strip("/")   # the pristine code the tests run
_TIME = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?"


def _words(text: str) -> str:
    """A skill or script name as prose (no characters a requirement sentence cannot hold)."""
    text = re.sub(r"\s+", " ", re.sub(r"[^A-Za-z0-9 ._+-]+", " ", text)).replace(". ", " ")
    return text.strip(" .") or "skill"


def ref_files(plan: ExercisePlan) -> dict[str, bytes]:
    """tests/ files: the package as shipped (the script, the modules it imports and the data it reads
    beside itself: registries, templates), pristine; its SKILL.md and its own test files stay out
    (they are no tests of this task)."""
    slug = plan.package.slug
    return {f"tests/{REF_DIR}/{slug}/{rel}": data for rel, data in plan.package.files
            if rel == plan.script or (rel != "SKILL.md" and not _is_test_file(rel))}


def _is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or \
        any(part in ("tests", "test") for part in rel.split("/")[:-1])


def build_exercise(ctx: StepContext, plan: ExercisePlan) -> Fragment:
    slug = plan.package.slug
    inv = plan.invocation
    stem = plan.script.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    out_dir = ctx.claim(f"/app/out/{slug}")
    inputs: list[tuple[str, str]] = []          # (path in the container, sha256)
    paths: dict[int, str] = {}
    sample_of = iter(plan.samples)
    files = dict(plan.package.files)
    for i, slot in enumerate(inv.slots):
        if slot.kind in ("input", "stdin"):
            sample = next(sample_of)
            data = varied_input(ctx.rng, files[sample], slot.ext)
            base = re.sub(r"[^A-Za-z0-9._-]+", "_", slot.text.rsplit("/", 1)[-1]) or f"input.{slot.ext}"
            path = ctx.claim(f"/app/input/{slug}/{base}")
            ctx.add_input(path, data)
            inputs.append((path, hashlib.sha256(data).hexdigest()))
            paths[i] = path
    if not inv.prints:      # the script writes its own file: named as SKILL.md names it
        name = next(s for s in inv.slots if s.kind == "output").text.rsplit("/", 1)[-1]
    elif inv.stdout_name:   # what it prints, kept where SKILL.md redirects it
        name = inv.stdout_name.rsplit("/", 1)[-1]
    else:
        name = f"{stem}.{'json' if any('json' in s.lower() for s in inv.settings) else 'txt'}"
    out = f"{out_dir}/{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}"
    args: list[str] = []
    settings: list[str] = []
    stdin = ""
    for i, slot in enumerate(inv.slots):
        if slot.kind == "stdin":
            stdin = paths[i]
        elif slot.kind == "input":
            args.append(paths[i])
        elif slot.kind == "output":
            args.append(out)
        elif slot.kind == "stdout":
            continue
        else:
            after_flag = i > 0 and inv.slots[i - 1].kind == "literal" and inv.slots[i - 1].text.startswith("-")
            value = _varied_value(ctx, slot.text) if after_flag else slot.text
            args.append(value)
            if not (i + 1 < len(inv.slots) and inv.slots[i + 1].kind == "output"):
                settings.append(value)
    runner = ["python3"] if plan.language == "python" else ["bash"]
    script_path = f"{SKILLS_ROOT}/{slug}/{plan.script}"
    line = shlex.join(runner + [script_path] + args)
    if stdin:
        line += f" < {shlex.quote(stdin)}"
    if inv.prints:
        line += f" > {shlex.quote(out)}"
    # A checker may exit 1 when it finds problems: that is its answer, not a failure (a crash is 1 too,
    # and the tests see its traceback in the pristine run).
    solve = f"mkdir -p {shlex.quote(out_dir)}\n{line} || [ $? -eq 1 ]\n"

    skill = _words(plan.skill_name)
    tool = _words(stem)
    given = ", ".join(f"`{p}`" for p, _ in inputs)
    said = _settings_prose(settings)
    with_settings = f" with the settings {said}" if said else ""
    for_what = f" for {given}" if given else ""
    sentence = f"Write `{out}` with what the {skill} skill's {tool} tool gives{for_what}{with_settings}."
    keep = f"Leave the input {'file' if len(inputs) == 1 else 'files'} {given} exactly as given."
    purpose = f" Its {tool} tool: {plan.purpose}" if plan.purpose else ""
    intro = (f"The **{skill}** skill is installed read-only at `{SKILLS_ROOT}/{slug}`; its `SKILL.md` says "
             f"how to use it.{purpose}")
    checks = [Check(sentence, [("skill_result", _result_test(plan, out, inputs, args, stdin, runner))])]
    if inputs:
        checks.append(Check(keep, [("inputs_kept", _inputs_test(inputs))]))
    title = f"Apply the {skill} skill"
    output = Artifact("lines", out, fmt="txt", flavor="skill-output", exact=False, label=_words(stem)[:20])
    return Fragment(title, intro, checks, solve, output)


def _settings_prose(settings: list[str]) -> str:
    """`--model time-decay --json` as `model` = time-decay and `json` on: what to set, in the skill's
    own option names, never the command line itself (the agent finds the flags in SKILL.md)."""
    out: list[str] = []
    i = 0
    while i < len(settings):
        w = settings[i]
        if w.startswith("-"):
            name = w.lstrip("-")
            values = []
            while i + 1 < len(settings) and not settings[i + 1].startswith("-"):
                values.append(settings[i + 1])
                i += 1
            out.append(f"`{name}` = {' '.join(values)}" if values else f"`{name}` on")
        else:
            out.append(f"value {w}")
        i += 1
    return ", ".join(out[:-1]) + (" and " if len(out) > 1 else "") + out[-1] if out else ""


def _varied_value(ctx: StepContext, text: str) -> str:
    """A documented number (`--cvr 0.05`, `--top 10`) drawn anew per task, in the same form; else as written."""
    if re.fullmatch(r"[1-9]\d{0,5}", text):
        return str(vary_number(ctx.rng, int(text)))
    if re.fullmatch(r"\d+\.\d+", text):
        decimals = len(text.split(".")[1])
        return f"{min(float(text) * ctx.rng.uniform(0.6, 1.5), 0.99 if float(text) < 1 else 1e9):.{decimals}f}"
    return text


def _inputs_test(inputs: list[tuple[str, str]]) -> str:
    return "\n".join([f"for path, digest in {inputs!r}:",
                      "    assert Path(path).is_file(), f'{path} is gone'",
                      "    assert sha256_of(path) == digest, f'{path} was changed: the result must come from the input as given'"])


def _result_test(plan: ExercisePlan, out: str, inputs, args: list[str], stdin: str, runner: list[str]) -> str:
    slug = plan.package.slug
    python = plan.language == "python"
    return f'''import sys
ref = Path(__file__).resolve().parent / {REF_DIR!r} / {slug!r}
out = Path({out!r})
assert out.is_file(), f"{{out}} was not written"
for path, digest in {inputs!r}:
    assert sha256_of(path) == digest, f"{{path}} was changed: the result must come from the input as given"
runner = {"[sys.executable, '-E', '-s']" if python else repr(runner)}
with tempfile.TemporaryDirectory() as tmp:
    mine = str(Path(tmp) / out.name)
    args = [mine if a == str(out) else a for a in {args!r}]
    feed = open({stdin!r}, "rb") if {stdin!r} else subprocess.DEVNULL
    try:
        proc = subprocess.run(runner + [str(ref / {plan.script!r})] + args, cwd=tmp, stdin=feed,
                              capture_output=True, text=True, errors="replace", timeout=120)
    finally:
        if feed is not subprocess.DEVNULL:
            feed.close()
    assert proc.returncode in (0, 1) and "Traceback (most recent call last)" not in proc.stderr, (
        f"the skill's own script failed on this input (exit {{proc.returncode}}): {{proc.stderr[-800:]}}")
    want = proc.stdout if {plan.invocation.prints!r} else Path(mine).read_text(errors="replace")

    def norm(text):
        text = text.replace(str(ref), {f"{SKILLS_ROOT}/{slug}"!r}).replace(tmp, str(out.parent))
        text = re.sub({_TIME!r}, "<time>", text)
        return "\\n".join(line.rstrip() for line in text.strip().splitlines())

    assert norm(want), "the skill's own script gave no result on this input: nothing to compare with"
    got = norm(out.read_text(errors="replace"))
    assert got == norm(want), (f"{{out}} is not what the skill's script gives for this input "
                               f"({{len(got)}} characters, expected {{len(norm(want))}})")
'''
