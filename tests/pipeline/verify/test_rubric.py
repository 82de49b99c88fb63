from pipeline.verify.rubric import check_rubric, instruction_sentences
from tests.helpers import SUM_SENTENCE, sum_bundle


def test_a_clean_bundle_passes_and_maps_each_test():
    r = check_rubric(sum_bundle())
    assert r.passed, r.log
    assert r.details["mapped"] == [{"test": "test_sum", "sentence": SUM_SENTENCE}]
    assert r.details["test_count"] == 1 and "tests" not in r.details  # `tests` holds run outcomes only


def test_unmapped_test_and_unmentioned_path_are_named():
    b = sum_bundle(extra_files={"tests/test_outputs.py": (
        'def test_sum():\n    """Check the secret convention."""\n'
        '    assert open("/app/hidden/result.txt").read()\n')})
    r = check_rubric(b)
    assert not r.passed
    assert any("test_sum: docstring 'Check the secret convention.' is not a sentence" in p for p in r.details["problems"])
    assert any("reads /app/hidden/result.txt, which instruction.md never mentions" in p for p in r.details["problems"])


def test_solution_leak_into_instruction_is_caught():
    solve = "awk '{ total += $1 } END { print total }' /app/numbers.txt > /app/sum.txt"
    b = sum_bundle(solve=solve)
    b.files["instruction.md"] += f"\nHint: run `{solve}`.\n".encode()
    r = check_rubric(b)
    assert not r.passed and "gives away the solution" in r.reason


def test_test_files_inside_the_environment_are_caught():
    b = sum_bundle()
    b.files["environment/app/test_outputs.py"] = b.files["tests/test_outputs.py"]
    b.files["environment/Dockerfile"] += b"COPY solution/ /opt/\n"
    problems = check_rubric(b).details["problems"]
    assert any("environment/app/test_outputs.py: has the name of a solution or test file" in p for p in problems)
    assert any("copies solution/ or tests/" in p for p in problems)


def test_sentences_strip_list_markers_and_markdown():
    s = instruction_sentences("1. Write **the** total to `/app/x`. Then stop!\n- Keep it short.")
    assert "write the total to /app/x" in s and "then stop!" in s and "keep it short" in s


def test_broken_python_is_reported():
    b = sum_bundle(extra_files={"tests/test_outputs.py": "def test_x(:\n"})
    r = check_rubric(b)
    assert not r.passed and "tests/test_outputs.py: not valid Python" in r.reason


def test_a_requirement_no_test_checks_is_a_problem_about_the_tests():
    from pipeline.verify.failures import rubric_artifact
    b = sum_bundle(extra_files={"instruction.md": f"# Sum\n\n1. {SUM_SENTENCE}\n2. Keep a log of it in /app/log.txt.\n"})
    r = check_rubric(b)
    (problem,) = [p for p in r.details["problems"] if "no test checks" in p]
    assert "'Keep a log of it in /app/log.txt.'" in problem and rubric_artifact(problem) == "tests"
    # one sentence of a two-sentence requirement, quoted by a test, covers it
    two = sum_bundle(extra_files={"instruction.md": f"# Sum\n\n1. {SUM_SENTENCE} Use any tool you like.\n"})
    assert check_rubric(two).passed, check_rubric(two).log


def test_shipped_inputs_the_tests_read_without_a_checksum_are_reported_not_failed():
    import hashlib
    reads = ('def test_sum():\n    """DOC"""\n    want = sum(int(x) for x in open("/app/numbers.txt"))\n'
             '    assert open("/app/sum.txt").read().strip() == str(want)\n').replace("DOC", SUM_SENTENCE)
    r = check_rubric(sum_bundle(extra_files={"tests/test_outputs.py": reads}))
    assert r.passed and r.details["unchecked_inputs"] == ["/app/numbers.txt"]
    digest = hashlib.sha256(b"1\n2\n3\n").hexdigest()
    checked = reads.replace("    want", f"    assert sha256_of('/app/numbers.txt') == {digest!r}\n    want")
    assert check_rubric(sum_bundle(extra_files={"tests/test_outputs.py": checked})).details["unchecked_inputs"] == []
    # a path only named in a docstring or compared with is not read
    assert check_rubric(sum_bundle()).details["unchecked_inputs"] == []


def test_writes_and_bare_paths_are_no_reads():
    from pipeline.verify.rubric import read_paths
    source = ("from pathlib import Path\nimport shutil\nPath('/a').write_text('x')\nopen('/b', 'w')\nopen('/c')\n"
              "Path('/d').read_bytes()\nPath('/e').open('w')\nshutil.copy('/f', '/g')\nPath('/h').exists()\n")
    assert read_paths(source) == {"/c", "/d", "/f"}
