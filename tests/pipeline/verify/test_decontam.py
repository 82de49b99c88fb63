import pytest

from pipeline.verify.decontam import N, BenchmarkIndex, check_decontam, ngram_hashes
from tests.helpers import sum_bundle

BENCH_TEXT = ("Your job is to find every log line in the access log that has a status code of five hundred "
              "or more and write their request paths sorted by count to the report file")


def test_shared_14_gram_is_caught_and_13_is_not(tmp_path):
    (tmp_path / "bench" / "task-a").mkdir(parents=True)
    (tmp_path / "bench" / "task-a" / "instruction.md").write_text(BENCH_TEXT)
    (tmp_path / "bench" / "task-a" / "image.png").write_bytes(b"\x89PNG" + b"x" * 100)
    idx = BenchmarkIndex.build(tmp_path / "bench")
    assert idx.files == 1
    words = BENCH_TEXT.split()
    copy14 = sum_bundle()
    copy14.files["instruction.md"] += ("\nNote: " + " ".join(words[3:3 + N]) + ".\n").encode()
    r = check_decontam(copy14, idx)
    assert not r.passed and r.details["matches"][0]["benchmark_file"].endswith("instruction.md")
    assert r.details["matches"][0]["ngram"] == " ".join(words[3:3 + N]).lower()
    copy13 = sum_bundle()
    copy13.files["instruction.md"] += ("\nNote: " + " ".join(words[3:3 + N - 1]) + ".\n").encode()
    assert check_decontam(copy13, idx).passed


def test_no_benchmark_passes_and_says_so():
    r = check_decontam(sum_bundle(), None)
    assert r.passed and "no benchmark folder" in r.reason


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        BenchmarkIndex.build(tmp_path / "nope")


def test_ngrams_are_case_and_punctuation_blind():
    a = ngram_hashes("One, two THREE four five six seven eight nine ten eleven twelve thirteen fourteen")
    b = ngram_hashes("one two three four five six seven eight nine ten eleven twelve thirteen fourteen!")
    assert a.keys() == b.keys() and len(a) == 1
