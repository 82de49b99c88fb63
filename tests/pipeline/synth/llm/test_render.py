"""LLM artifacts <-> bundle: the Dockerfile and build context a manifest gives, our own
(weighted) test runner, clear refusals of what cannot be written, the inverse on an offline
bundle, and (Docker) that a rendered bundle builds and verifies with the reward its weights say."""
from __future__ import annotations

import pytest

from pipeline.synth import test_sh
from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.llm.models import EnvManifest, FileSpec, Instruction, Solution, TestsDraft
from pipeline.synth.llm.render import (RenderError, artifacts_from_bundle, bundle_from_artifacts, dockerfile_for,
                                       environment_files, weights_of_test_sh)
from pipeline.synth.llm.render import test_sh_for as runner_sh
from workbench.sandbox.bundle import BundleError
from workbench.sandbox.task_toml import parse as parse_toml

SENTENCE_A = "Write the total of /app/data/n.txt to /app/out/total.txt."
SENTENCE_B = "Copy /etc/wb/greeting.conf to /app/out/greeting.txt."
SENTENCE_C = "Run /app/bin/stamp and save what it prints in /app/out/stamp.txt."

MANIFEST = EnvManifest(
    files=[FileSpec(path="/app/data/n.txt", content="1\n2\n3\n4\n"),
           FileSpec(path="/etc/wb/greeting.conf", content="hello=world\n"),
           FileSpec(path="/app/bin/stamp", content="#!/bin/sh\necho stamped\n", executable=True)],
    setup_commands=["mkdir -p /app/out", "printf 'first\\n' > /app/setup.log\nprintf 'second\\n' >> /app/setup.log"],
    env={"LC_ALL": "C", "WB_GREETING": 'say "hi"'})
INSTRUCTION = Instruction(title="Totals and greetings",
                          text=f"Work in /app.\n\n1. {SENTENCE_A}\n2. {SENTENCE_B}\n3. {SENTENCE_C}\n")
SOLUTION = Solution(solve_sh="#!/bin/bash\nset -e\nmkdir -p /app/out\n"
                             "awk '{s+=$1} END {print s}' /app/data/n.txt > /app/out/total.txt\n"
                             "cp /etc/wb/greeting.conf /app/out/greeting.txt\n/app/bin/stamp > /app/out/stamp.txt")
TESTS_PY = f'''from pathlib import Path


def test_total():
    """{SENTENCE_A}"""
    assert Path("/app/out/total.txt").read_text().strip() == "10"


def test_greeting():
    """{SENTENCE_B}"""
    assert Path("/app/out/greeting.txt").read_text() == "hello=world\\n"


def test_stamp():
    """{SENTENCE_C}"""
    assert Path("/app/out/stamp.txt").read_text().strip() == "stamped"
'''


def _bundle(tests: TestsDraft | None = None, solution: Solution = SOLUTION, manifest: EnvManifest = MANIFEST,
            base_image: str = "workbench/base:test"):
    return bundle_from_artifacts(name="workbench/llm-totals", category="file-operations", difficulty="easy",
                                 manifest=manifest, instruction=INSTRUCTION, solution=solution,
                                 tests=tests or TestsDraft(test_py=TESTS_PY), base_image=base_image,
                                 agent_timeout_sec=60, verifier_timeout_sec=60,
                                 metadata={"path_id": "p1", "seed": 3, "skill_ids": ["s1"]})


def test_dockerfile_from_the_base_with_files_env_chmod_and_setup_in_that_order():
    text = dockerfile_for(MANIFEST, "workbench/base:abc")
    assert text.splitlines() == [
        "FROM workbench/base:abc", "STOPSIGNAL SIGKILL", "WORKDIR /app",
        "COPY app/ /app/", "COPY rootfs/etc/ /etc/",
        'ENV LC_ALL="C"', 'ENV WB_GREETING="say \\"hi\\""',
        "RUN chmod 0755 -- /app/bin/stamp",
        "RUN mkdir -p /app/out",
        # two lines stay one instruction (a newline in the shell form would start a new one)
        'RUN ["/bin/sh", "-c", "printf \'first\\\\n\' > /app/setup.log\\nprintf \'second\\\\n\' >> /app/setup.log"]']
    files = environment_files(MANIFEST, "workbench/base:abc")
    assert sorted(files) == ["Dockerfile", "app/bin/stamp", "app/data/n.txt", "rootfs/etc/wb/greeting.conf"]
    assert files["app/data/n.txt"] == b"1\n2\n3\n4\n"
    # no files at all: no COPY of a folder that is not there
    assert "COPY" not in dockerfile_for(EnvManifest(setup_commands=["true"]), "b")


def test_bundle_has_the_harbor_layout_our_runner_and_llm_metadata():
    b = _bundle()
    assert sorted(b.files) == ["environment/Dockerfile", "environment/app/bin/stamp", "environment/app/data/n.txt",
                               "environment/rootfs/etc/wb/greeting.conf", "instruction.md", "solution/solve.sh",
                               "task.toml", "tests/test.sh", "tests/test_outputs.py"]
    assert b.text("tests/test.sh") == test_sh.TEST_SH          # no weights: the offline runner, byte for byte
    assert b.text("instruction.md").startswith("# Totals and greetings\n\nWork in /app.")
    assert b.text("solution/solve.sh").endswith("/app/out/stamp.txt\n")
    assert {"solution/solve.sh", "tests/test.sh", "environment/app/bin/stamp"} <= b.executables
    toml = parse_toml(b.text("task.toml"))
    assert (toml.name, toml.metadata.provider, toml.metadata.category, toml.metadata.path_id) == \
        ("workbench/llm-totals", "llm", "file-operations", "p1")
    assert toml.agent_timeout_sec == 60 and toml.description == "Totals and greetings"


@pytest.mark.parametrize("spec,why", [
    (FileSpec(path="app/x", content=""), "must be absolute"),
    (FileSpec(path="/app/../etc/x", content=""), "'..'"),
    (FileSpec(path="/app//x", content=""), "empty"),
    (FileSpec(path="/tests/test_outputs.py", content=""), "may not be placed under"),
    (FileSpec(path="/logs/verifier/reward.txt", content="1"), "may not be placed under"),
    (FileSpec(path="/app", content=""), "working folder"),
])
def test_a_bad_file_path_is_refused_naming_the_file(spec, why):
    with pytest.raises(RenderError) as exc:
        dockerfile_for(EnvManifest(files=[spec]), "b")
    assert "environment: files[0]" in str(exc.value) and why in str(exc.value)


def test_other_manifest_problems_are_refused_with_what_and_where():
    with pytest.raises(RenderError, match=r"image 'python:3.12' is not one we build \(known: base, sci\)"):
        dockerfile_for(EnvManifest(image="python:3.12"), "b", {"sci": "workbench/sci:1"})
    assert dockerfile_for(EnvManifest(image="sci"), "b", {"sci": "workbench/sci:1"}).startswith("FROM workbench/sci:1\n")
    with pytest.raises(RenderError, match=r"files\[1\] \('/app/a'\) appears twice"):
        dockerfile_for(EnvManifest(files=[FileSpec(path="/app/a", content=""), FileSpec(path="/app/a", content="")]), "b")
    with pytest.raises(RenderError, match="env name 'A B'"):
        dockerfile_for(EnvManifest(env={"A B": "x"}), "b")
    with pytest.raises(RenderError, match="env X holds a control character"):
        dockerfile_for(EnvManifest(env={"X": "a\nRUN curl evil"}), "b")
    with pytest.raises(RenderError, match=r"setup_commands\[0\] is empty"):
        dockerfile_for(EnvManifest(setup_commands=["  "]), "b")
    # a file that is also a folder: the bundle's own path rule names it
    with pytest.raises(BundleError, match="parent"):
        _bundle(manifest=EnvManifest(files=[FileSpec(path="/app/a", content="x"), FileSpec(path="/app/a/b", content="y")]))


def test_a_base64_file_is_written_as_its_bytes_and_bad_base64_is_refused():
    spec = FileSpec(path="/app/in/blob.bin", content="AAEC/w==", encoding="base64")
    assert environment_files(EnvManifest(files=[spec]), "b")["app/in/blob.bin"] == bytes([0, 1, 2, 255])
    with pytest.raises(RenderError, match=r"files\[0\] \('/app/in/x'\): content is not valid base64"):
        environment_files(EnvManifest(files=[FileSpec(path="/app/in/x", content="not base64!", encoding="base64")]), "b")


def test_weights_give_a_weighted_runner_and_bad_weights_are_refused():
    tests = TestsDraft(test_py=TESTS_PY, weights={"test_total": 2, "test_stamp": 0.5})
    sh = runner_sh(tests)
    assert sh != test_sh.TEST_SH and "junit.xml" in sh and "exit 0" in sh
    assert weights_of_test_sh(sh) == {"test_total": 2.0, "test_stamp": 0.5}
    assert weights_of_test_sh(test_sh.TEST_SH) == {}
    with pytest.raises(RenderError, match="weights name 'test_nothing', which tests/test_outputs.py does not define"):
        runner_sh(TestsDraft(test_py=TESTS_PY, weights={"test_nothing": 1}))
    with pytest.raises(RenderError, match="is not a test function name"):
        runner_sh(TestsDraft(test_py=TESTS_PY, weights={"x'; rm -rf /": 1}))
    with pytest.raises(RenderError, match="finite number >= 0"):
        runner_sh(TestsDraft(test_py=TESTS_PY, weights={"test_total": -1}))
    with pytest.raises(RenderError, match="add up to 0"):
        runner_sh(TestsDraft(test_py=TESTS_PY, weights={"test_total": 0, "test_greeting": 0, "test_stamp": 0}))


def test_the_inverse_gives_back_the_artifacts():
    tests = TestsDraft(test_py=TESTS_PY, weights={"test_total": 2})
    manifest, instruction, solution, back = artifacts_from_bundle(_bundle(tests))
    assert sorted(manifest.files, key=lambda f: f.path) == sorted(MANIFEST.files, key=lambda f: f.path)
    assert (manifest.setup_commands, manifest.env, manifest.image) == (MANIFEST.setup_commands, MANIFEST.env, "base")
    assert instruction.title == INSTRUCTION.title and instruction.text == INSTRUCTION.text.strip("\n")
    assert solution.solve_sh == SOLUTION.solve_sh + "\n"
    assert back == tests


@pytest.mark.parametrize("families,what", [(["group-aggregate", "git-history-authors"], "setup"),
                                            (["archive-extract-verify", "checksum-audit"], "binary")])
def test_an_offline_bundle_becomes_artifacts_that_render_to_the_same_environment(families, what):
    steps = [PathStep(f"s{k}", n, R.REGISTRY[n].category, "", f"a{k}", f"a{k + 1}") for k, n in enumerate(families)]
    task = synthesize_task(steps, 2, "workbench/base:x", force=families)
    manifest, instruction, solution, tests = artifacts_from_bundle(task.bundle)
    assert manifest.files and all(f.path.startswith("/app/") for f in manifest.files)
    if what == "setup":
        assert manifest.setup_commands                    # git's RUN lines came along
    else:                                                 # an archive travels as base64
        assert any(f.encoding == "base64" for f in manifest.files)
    again = bundle_from_artifacts(name=task.name, category=task.category, difficulty=task.difficulty,
                                  manifest=manifest, instruction=instruction, solution=solution, tests=tests,
                                  base_image="workbench/base:x")
    assert again.under("environment") == task.bundle.under("environment")
    for path in ("instruction.md", "solution/solve.sh", "tests/test.sh", "tests/test_outputs.py"):
        assert again.files[path] == task.bundle.files[path], path


def test_a_dockerfile_with_an_instruction_we_never_write_is_refused_with_its_line():
    b = _bundle()
    b.files["environment/Dockerfile"] += b"ADD https://example.com/x /x\n"
    with pytest.raises(RenderError, match=r"environment/Dockerfile line \d+: ADD is not an instruction we write"):
        artifacts_from_bundle(b)


@pytest.mark.docker
def test_rendered_bundle_builds_and_its_weighted_reward_is_the_share_of_passing_tests():
    from pipeline.verify.run import verify_bundle
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Engine
    engine = Engine()
    weights = {"test_total": 2, "test_greeting": 1, "test_stamp": 1}
    good = _bundle(TestsDraft(test_py=TESTS_PY, weights=weights), base_image=base_image_name())
    checks = {c.name: c for c in verify_bundle(good, engine=engine)}
    assert all(c.passed for c in checks.values()), {n: c.reason for n, c in checks.items()}
    assert checks["oracle"].details["reward"] == 1.0 and checks["noop"].details["reward"] == 0.0
    # The stamp goes wrong: 3 of 4 weight units pass (the rootfs file and the env were there).
    half = Solution(solve_sh=SOLUTION.solve_sh.replace("/app/bin/stamp >", "echo wrong >"))
    checks = {c.name: c for c in verify_bundle(_bundle(TestsDraft(test_py=TESTS_PY, weights=weights), half,
                                                       base_image=base_image_name()), engine=engine)}
    assert checks["build"].details["cached"] is True             # same environment, same image
    assert not checks["oracle"].passed and checks["oracle"].details["reward"] == 0.75
