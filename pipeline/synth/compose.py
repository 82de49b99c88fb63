"""The offline synthesizer: a sampled skill path → one multi-step terminal task bundle.

Each path step names a category; the composer picks a recipe family of that category that
can read what the previous step produced (inserting small adapters when none can), lets
each family add its input files, requirements, tests and solution lines, and lays the
result out in the Harbor format. Everything is drawn from one `random.Random` seeded by
the seed and the path's skill ids, so the same path and seed always give the same bytes.
"""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace

from pipeline.taxonomy import CATEGORIES, normalize_category
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render as render_toml

from . import layout
from .limits import MAX_STEPS
from .recipes import ADAPTERS, REGISTRY, by_category
from .recipes.base import Artifact, Fragment, Recipe, StepContext, SynthesisError
from .exercise.package import SkillPackage
from .exercise.path_steps import EXERCISE_KINDS, build_exercise_step, exercise_plans, shipped_packages
from .exercise.command_plan import CommandPlan
from .exercise.plan import ExercisePlan
from .skill_fit import NoRecipeError, RepeatedFamilyError, SkillParts, StepFidelity, fitting_tiers, step_fidelity

SYNTH_VERSION = "5"   # 5: command-exercise steps; 4: skill-exercise steps and shipped skill packages
MAX_ADAPTERS = 3
MAX_FAMILY_USES = 2   # steps of one task that may use one family (never two in a row either)


@dataclass(frozen=True)
class PathStep:
    skill_id: str
    skill_name: str
    category: str        # one of pipeline.taxonomy.CATEGORIES; unknown -> "file-operations"
    description: str
    src_anchor: str      # scenario cluster id before the step
    dst_anchor: str      # after
    parts: SkillParts = SkillParts()   # its tools, state kinds, steps and body (none: category only)
    package: SkillPackage | None = None  # its package files (read in the driver), for shipping and exercise


@dataclass
class SynthesizedTask:
    bundle: TaskBundle
    name: str            # "workbench/<slug>"
    category: str
    difficulty: str      # easy | medium | hard
    recipes: list[str]   # recipe family per step
    task_id: str         # see `task_id_for`
    near_dup_key: str    # see `near_duplicate_key`
    fidelity: list[StepFidelity] = field(default_factory=list)   # per composed step
    exercise_gaps: list[str] = field(default_factory=list)   # "<skill>: why no step exercises it"


def step_category(step: PathStep) -> str:
    cat = normalize_category(step.category or "")
    return cat if cat in CATEGORIES else "file-operations"


def _choose(rng: random.Random, cands: list[Recipe], used: list[str], ahead=None) -> Recipe:
    """(The barred families are out already, see `_open_tiers`.) Those after which the next step
    has a family it may still use (`ahead`); then families not used yet in the task when any fits;
    specific families weighted over universal sinks."""
    cands = sorted(cands, key=lambda r: r.name)
    if used:
        cands = [r for r in cands if r.name != used[-1]] or cands
    if ahead is not None and len(cands) > 1:   # first: a next step that may still follow (no dead end)
        cands = [r for r in cands if ahead(r)] or cands
    cands = [r for r in cands if r.name not in used] or cands
    weights = [1 if r.universal else 3 for r in cands]
    return rng.choices(cands, weights)[0]


def _leaves_a_choice(ctx: StepContext, art: Artifact | None, nxt: list[Recipe], used: list[str],
                     nstep: PathStep):
    """Predicate for `_choose`: after a dry run of the family, can a family the next step may still
    use (`_barred`) read what it leaves (directly) and honour that step's skill? Spares the next
    step an adapter or a dead end."""
    def ok(r: Recipe) -> bool:
        trial = ctx.clone()
        try:
            out = r.build(trial, art if art is not None else r.seed(trial)).output
        except SynthesisError:
            return False
        barred = _barred(used + [r.name])
        return any(n.name not in barred and n.accepts(out)
                   and (not nstep.parts.has_evidence or _honours(trial, n, out, nstep)) for n in nxt)
    return ok


def task_title(titles: list[str]) -> str:
    """The heading: the distinct step titles in order ("A, then b, then c"), at most three."""
    distinct = list(dict.fromkeys(titles))
    if len(distinct) > 3:
        distinct = [distinct[0], distinct[1], distinct[-1]]
    return ", then ".join([distinct[0]] + [t[0].lower() + t[1:] for t in distinct[1:]])


def _adapter_route(ctx: StepContext, art: Artifact, cands: list[Recipe]) -> list[Recipe] | None:
    """Shortest list of adapters after which some candidate accepts the artifact (dry runs)."""
    frontier: list[tuple[list[Recipe], Artifact, StepContext]] = [([], art, ctx)]
    for _ in range(MAX_ADAPTERS):
        nxt = []
        for route, a, c in frontier:
            for ad in sorted(ADAPTERS.values(), key=lambda r: r.name):
                if ad in route or not ad.accepts(a):
                    continue
                trial = c.clone()
                out = ad.build(trial, a).output
                if any(r.accepts(out) for r in cands):
                    return route + [ad]
                nxt.append((route + [ad], out, trial))
        frontier = nxt
    return None


def plan_steps(steps: list[PathStep], exact: bool = False) -> list[tuple[PathStep, str]]:
    """(step, category) for the steps to compose: at most five, at least two (`exact`: just these
    steps, a one-step path left at one: an evolved variant, whose steps were chosen already)."""
    chosen = [(s, step_category(s)) for s in steps[:MAX_STEPS]]
    if len(chosen) == 1 and not exact:
        # a second step of the same category family (a recipe: the same exercise twice says nothing new)
        chosen.append((replace(chosen[0][0], package=None), chosen[0][1]))
    return chosen


def compose(steps: list[PathStep], seed: int, *, force: list[str | None] | None = None, exact: bool = False,
            exercise: bool = True) -> tuple[StepContext, list[tuple[Recipe, list[Recipe], Fragment]]]:
    """Build every step's fragment. `force` pins the family per step (None: drawn); `exact`: see plan_steps;
    `exercise`: a step whose skill's own workflow can run in the task runs it (pipeline.synth.exercise)."""
    if not steps:
        raise SynthesisError("an empty path has no steps to compose")
    key = "|".join(s.skill_id for s in steps)
    planned = plan_steps(steps, exact)
    plans, gaps = exercise_plans(planned, force, exercise)
    tiers_of: list[list[list[Recipe]] | None] = []
    for k, ((s, c), plan) in enumerate(zip(planned, plans)):
        try:   # every unfit skill is reported before any work
            tiers_of.append(None if plan is not None else step_families(s, c))
        except NoRecipeError:
            if not (k == 1 and len(steps) == 1 and plans[0] is not None):
                raise
            planned, plans = planned[:1], plans[:1]   # an exercised one-skill path needs no recipe step
    try:
        ctx, built = _compose_salted(planned, tiers_of, plans, seed, key, force)
    except RepeatedFamilyError:
        if len(steps) != 1 or force:
            raise
        # A one-skill path is doubled into two steps; when only one family can serve both, the
        # skill makes a one-step task rather than the same family twice.
        ctx, built = _compose_salted(planned[:1], tiers_of[:1], plans[:1], seed, key, force)
    ctx.exercise_gaps = list(gaps.values())
    # each connective step says why its skill is not exercised (the Tasks and Synthesis pages show it)
    ctx.fidelity = [replace(f, gap=gaps[f.skill_id].split(": ", 1)[-1]) if f.skill_id in gaps and f.recipe not in EXERCISE_KINDS
                    else f for f in ctx.fidelity]
    return ctx, built


def _compose_salted(planned, tiers_of, plans, seed: int, key: str, force: list[str] | None):
    if not force:
        _check_no_forced_repeat(planned, tiers_of)
    # The data drawn for early steps decides what later families can read; on the rare dead end
    # the whole path is drawn again with a salted seed (still deterministic).
    for salt in range(5):
        try:
            rng = random.Random(f"{seed}|{key}" + (f"|{salt}" if salt else ""))
            return _compose(planned, tiers_of, plans, rng, force)
        except SynthesisError:
            if salt == 4 or force:
                raise
    raise AssertionError("unreachable")


def _barred(used: list[str]) -> set[str]:
    """Families the next step may not use: the previous step's, and those used twice already."""
    return set(used[-1:]) | {f for f in set(used) if used.count(f) >= MAX_FAMILY_USES and f not in EXERCISE_KINDS}


def _sole_family(tiers: list[list[Recipe]] | None) -> str | None:
    if tiers is None:    # an exercise step: no family
        return None
    names = {r.name for t in tiers for r in t}
    return next(iter(names)) if len(names) == 1 else None


def _check_no_forced_repeat(planned: list[tuple[PathStep, str]], tiers_of: list[list[list[Recipe]]]) -> None:
    """Fail before any work when no draw can help: skills that fit only one family, the same one,
    on consecutive steps or on more than MAX_FAMILY_USES steps."""
    sole: list[str | None] = [_sole_family(t) for t in tiers_of]
    for k, name in enumerate(sole, 1):
        if name is None:
            continue
        earlier = sole[:k - 1]
        if (earlier and earlier[-1] == name) or earlier.count(name) >= MAX_FAMILY_USES:
            step = planned[k - 1][0]
            raise RepeatedFamilyError(step.skill_name.strip() or step.skill_id, k, [name], earlier)


def step_families(step: PathStep, cat: str) -> list[list[Recipe]]:
    """The families a step may use, best tier first: those sharing tools or state kinds with its
    skill (any category), or, for a skill known by its category only, that category's families.
    Raises NoRecipeError when the skill names tools or kinds that no family works with, or has
    neither and no category of the taxonomy."""
    if not step.parts.has_evidence:
        if normalize_category(step.category or "") not in CATEGORIES:   # nothing to go by: no substitute
            raise NoRecipeError(step.skill_name.strip() or step.skill_id, step.parts, step.category or "none")
        return [by_category(cat)]
    tiers = fitting_tiers(sorted(REGISTRY.values(), key=lambda r: r.name), step.parts, cat)
    if not tiers:
        raise NoRecipeError(step.skill_name.strip() or step.skill_id, step.parts)
    return tiers


def _honours(c: StepContext, recipe: Recipe, art: Artifact | None, step: PathStep) -> bool:
    """Does this family's build, as it would be drawn now, use a tool or a state kind of the skill?
    (A family's profile is the union of several draws; this one draw is what the step would be.)"""
    trial = c.clone()
    try:
        read = art if art is not None else recipe.seed(trial)
        frag = recipe.build(trial, read)
    except SynthesisError:
        return False
    return step_fidelity(0, "", "", recipe, frag.solve, read, frag.output, step.parts).fidelity != "category-only"


def _attempt(c: StepContext, art: Artifact | None, family: list[Recipe], used: list[str],
             nxt: list[Recipe] | None, forced: bool, step: PathStep, nstep: PathStep | None = None
             ) -> tuple[Recipe, list[Recipe], list[Fragment]] | None:
    """On context `c`: the adapters (if any) and a family of `family` that reads `art` (None: the
    first step, which seeds its own input) and, for a skill with evidence, uses some of it."""
    adapters: list[Recipe] = []
    frags: list[Fragment] = []
    if art is not None:
        fits = [r for r in family if r.accepts(art)]
        others = [r for r in family if not used or r.name != used[-1]]
        if fits and not forced and not any(r in others for r in fits) and others:
            # Only the previous step's family reads this artifact: bridge to another one instead.
            adapters = _adapter_route(c, art, others) or []
        if not fits:
            adapters = _adapter_route(c, art, family) or []
            if not adapters:
                return None
        for ad in adapters:
            frag = ad.build(c, art)
            frags.append(frag)
            art = frag.output
    cands = [r for r in family if art is None or r.accepts(art)]
    if forced:
        return cands[0], adapters, frags
    ahead = _leaves_a_choice(c, art, nxt, used, nstep) if nxt else None
    while cands:
        recipe = _choose(c.rng, cands, used, ahead)
        if not step.parts.has_evidence or _honours(c, recipe, art, step):
            return recipe, adapters, frags
        cands = [r for r in cands if r is not recipe]
    return None


def _open_tiers(tiers: list[list[Recipe]], used: list[str], spare: str | None) -> list[list[Recipe]]:
    """The tiers without the barred families (`_barred`), best first; those that also spare the
    next step's only family (`spare`, which that step could not use after this one) come first."""
    barred = _barred(used)
    open_ = [t for t in ([r for r in t if r.name not in barred] for t in tiers) if t]
    sparing = [t for t in ([r for r in t if r.name != spare] for t in open_) if t]
    return sparing + [t for t in open_ if t not in sparing]


def _compose(planned: list[tuple[PathStep, str]], tiers_of: list[list[list[Recipe]] | None],
             plans: list[ExercisePlan | CommandPlan | None], rng: random.Random,
             force: list[str] | None) -> tuple[StepContext, list[tuple[Recipe, list[Recipe], Fragment]]]:
    ctx = StepContext(rng)
    built: list[tuple[Recipe, list[Recipe], Fragment]] = []
    used: list[str] = []
    art: Artifact | None = None
    for k, (step, cat) in enumerate(planned, 1):
        ctx.index, ctx.skill, ctx.skill_tools = k, step.skill_name, step.parts.evidence_tools
        plan = plans[k - 1]
        if plan is not None:
            # The skill's own workflow on inputs of its own: a side branch, so the recipe chain goes
            # on from what the last recipe step left.
            recipe, frag, fid = build_exercise_step(ctx, k, step, plan)
            built.append((recipe, [], frag))
            ctx.fidelity.append(fid)
            used.append(recipe.name)
            continue
        tiers = tiers_of[k - 1]
        forced = bool(force and k <= len(force) and force[k - 1])
        if forced:
            tiers = [[REGISTRY[force[k - 1]]]]
        else:
            spare = _sole_family(tiers_of[k]) if k < len(planned) else None
            tiers = _open_tiers(tiers, used, spare)
            if not tiers:
                raise RepeatedFamilyError(step.skill_name.strip() or step.skill_id, k,
                                          sorted({r.name for t in tiers_of[k - 1] for r in t}), used)
        nxt = [r for t in tiers_of[k] for r in t] if k < len(planned) and tiers_of[k] is not None else None
        nstep = planned[k][0] if k < len(planned) else None
        for family in tiers:   # the best tier that can read what the previous step left
            if _attempt(ctx.clone(), art, family, used, nxt, forced, step, nstep) is not None:
                # the same attempt on the real context: same state, so the same outcome
                recipe, adapters, frags = _attempt(ctx, art, family, used, nxt, forced, step, nstep)
                break
        else:
            what = f"the {art.kind} artifact {art.path} (exact={art.exact}, after {used[-1]})" if art else "a seed"
            readers = sorted({r.name for t in tiers_of[k - 1] for r in t
                              if r.name in _barred(used) and art is not None and r.accepts(art)})
            if readers and not forced:   # the only families that read it may not come again
                raise RepeatedFamilyError(step.skill_name.strip() or step.skill_id, k, readers, used,
                                          reading=f"{art.kind} artifact {art.path}")
            raise SynthesisError(f"step {k} ({cat}): no fitting family accepts {what}")
        if art is None:
            art = recipe.seed(ctx)
        read = art
        art = frags[-1].output if frags else art
        frag = recipe.build(ctx, art)
        out = frag.output
        if out.kind == "records" and len(set(out.table.columns)) != len(out.table.columns):
            raise SynthesisError(f"step {k} ({recipe.name}): duplicate column names {out.table.columns}")
        if adapters:
            frag = Fragment(frag.title, frag.intro, [c for f in frags for c in f.checks] + frag.checks,
                            "\n".join(f.solve for f in frags) + "\n" + frag.solve, frag.output)
        built.append((recipe, adapters, frag))
        ctx.fidelity.append(step_fidelity(k, step.skill_id, step.skill_name, recipe, frag.solve, read, out,
                                          step.parts, step.description))
        used.append(recipe.name)
        art = frag.output
    return ctx, built


def _difficulty(built) -> str:
    score = sum(r.weight for r, _, _ in built) + sum(len(a) for _, a, _ in built)
    if score <= 3:
        return "easy"
    return "medium" if score <= 6 else "hard"


NO_PACKAGES = "no-skill-packages"   # the batch option that changes what a task is made of


def task_id_for(steps: list[PathStep], seed: int, base_image: str, ship_skills: bool = True) -> str:
    """A task's identity: what it is made from (synthesizer version, seed, base image, whether skill
    packages ship, and each step with its scenarios), so a resumed batch finds the tasks it already made."""
    key = "|".join([SYNTH_VERSION, str(seed), base_image] + ([] if ship_skills else [NO_PACKAGES])
                   + [f"{s.src_anchor}>{s.skill_id}>{s.dst_anchor}" for s in steps])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def task_slug(task_id: str, recipes: list[str]) -> str:
    """Recipe families, then the task id: two tasks never share a name (nor an export folder),
    even when their paths differ only in scenarios and so read the same."""
    head = "-".join(dict.fromkeys(recipes))[:60].strip("-")
    return re.sub(r"[^a-z0-9-]+", "-", f"{head}-{task_id[:10]}".lower())


def near_duplicate_key(built) -> str:
    """Same recipe chain (adapters included) and same step text, numbers aside: the mark of
    tasks that read as one although made from different paths (the skills list is left out)."""
    parts = []
    for recipe, adapters, frag in built:
        text = " ".join([frag.title, frag.intro] + [c.sentence for c in frag.checks])
        text = re.sub(r"\d+(\.\d+)?", "#", re.sub(r"\s+", " ", text).strip().lower())
        parts.append("+".join([a.name for a in adapters] + [recipe.name]) + ":" + text)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def synthesize_task(steps: list[PathStep], seed: int, base_image: str, path_id: str = "",
                    *, force: list[str | None] | None = None, variant: dict | None = None,
                    ship_skills: bool = True) -> SynthesizedTask:
    """`variant`: an evolved variant's identity (pipeline/evolve/offline_operator): its `task_id` and
    `name` instead of the hash of its steps, and `lineage` (parent_id, operator, steps) for task.toml;
    its steps are composed exactly (plan_steps). `ship_skills`: the claimed skills' packages travel
    with the task under /skills (off: no package, and so no step can run a skill's own script)."""
    ctx, built = compose(steps, seed, force=force, exact=variant is not None, exercise=ship_skills)
    planned = plan_steps(steps, exact=variant is not None)
    recipes = [r.name for r, _, _ in built]
    task_id = variant["task_id"] if variant else task_id_for(steps, seed, base_image, ship_skills)
    name = variant["name"] if variant else f"workbench/{task_slug(task_id, recipes)}"
    category = planned[0][1]
    difficulty = _difficulty(built)

    skills = layout.claimed_skills([s for s, _ in planned], [c for _, c in planned], ctx.fidelity)
    titles = [f.title for _, _, f in built]
    title = task_title(titles)
    sections = [(f.title, f.intro, f.checks) for _, _, f in built]
    existing = {f"/app/{rel}" for rel in ctx.env} | {p for run in ctx.docker_run for p in re.findall(r"/app/[^\s;&|]+", run)}
    packages = shipped_packages([s for s, _ in planned], ctx) if ship_skills else []
    instruction = layout.render_instruction(title, skills, sections, key=task_id, existing=existing,
                                            packages=[p.root for p in packages])

    # solution/solve.sh
    solve = ["#!/bin/bash", "set -euo pipefail", "export LC_ALL=C", "cd /app", ""]
    for k, (recipe, adapters, frag) in enumerate(built, 1):
        names = "+".join([a.name for a in adapters] + [recipe.name])
        solve += [f"# --- step {k} ({names}) ---", frag.solve.strip("\n"), "cd /app", ""]

    tests = layout.render_tests(name, SYNTH_VERSION, [f.checks for _, _, f in built])

    scenario_ids = list(dict.fromkeys(a for s, _ in planned for a in (s.src_anchor, s.dst_anchor) if a))
    tags = list(dict.fromkeys(recipes + [a.name for _, ads, _ in built for a in ads] + [c for _, c in planned]))
    meta = TaskMetadata(category=category, difficulty=difficulty, tags=tags, scenario_ids=scenario_ids,
                        skill_ids=list(dict.fromkeys(s.skill_id for s, _ in planned)), recipes=recipes,
                        path_id=path_id, seed=seed, provider="offline",
                        skill_fidelity=[f.as_dict() for f in ctx.fidelity],
                        skill_packages=[p.root for p in packages],
                        exercise_gaps=list(ctx.exercise_gaps) or None, **(variant or {}).get("lineage", {}))
    toml = render_toml(TaskToml(name=name, description=f"{title} ({len(built)} steps, offline recipes)",
                                metadata=meta, agent_timeout_sec=float(300 + 300 * len(built)),
                                verifier_timeout_sec=180.0))

    files: dict[str, bytes | str] = {
        "instruction.md": instruction,
        "task.toml": toml,
        "environment/Dockerfile": layout.render_dockerfile(base_image, ctx.docker_run, skills=bool(packages)),
        "solution/solve.sh": "\n".join(solve) + "\n",
        "tests/test.sh": layout.render_test_sh(),
        "tests/test_outputs.py": tests,
    }
    for rel in sorted(ctx.env):
        files[f"environment/app/{rel}"] = ctx.env[rel]
    for pkg in packages:
        for rel, data in pkg.files:
            files[f"environment/skills/{pkg.slug}/{rel}"] = data
    files.update(ctx.test_files)
    executables = {f"environment/app/{r}" for r in ctx.executables} | {"solution/solve.sh", "tests/test.sh"}
    bundle = TaskBundle(files, executables)
    bundle.validate()
    return SynthesizedTask(bundle=bundle, name=name, category=category, difficulty=difficulty, recipes=recipes,
                           task_id=task_id, near_dup_key=near_duplicate_key(built), fidelity=list(ctx.fidelity),
                           exercise_gaps=list(ctx.exercise_gaps))
