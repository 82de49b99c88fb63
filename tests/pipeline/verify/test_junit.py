from pipeline.verify.junit import parse_ctrf, parse_junit

XML = b"""<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="t" name="test_a"/>
<testcase classname="t" name="test_b"><failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="t" name="test_c"><error message="fixture broke"/></testcase>
<testcase classname="t" name="test_d"><skipped message="later"/></testcase>
</testsuite></testsuites>"""


def test_outcomes_and_messages():
    got = parse_junit(XML)
    assert [(t["name"], t["outcome"]) for t in got] == [
        ("test_a", "passed"), ("test_b", "failed"), ("test_c", "error"), ("test_d", "skipped")]
    assert got[1]["message"] == "assert 1 == 2"


def test_garbage_gives_nothing():
    assert parse_junit(b"<not xml") == [] and parse_junit(None) == [] and parse_junit(b"x" * (3 << 20)) == []


def test_ctrf_reports_give_the_same_shape():
    data = (b'{"results": {"tests": [{"name": "a", "status": "passed"}, {"name": "b", "status": "failed", '
            b'"message": "boom"}, {"name": "c", "status": "pending"}, {"name": "d", "status": "other"}]}}')
    got = parse_ctrf(data)
    assert [(t["name"], t["outcome"]) for t in got] == [("a", "passed"), ("b", "failed"), ("c", "skipped"), ("d", "error")]
    assert got[1]["message"] == "boom" and parse_ctrf(b"{}") == [] and parse_ctrf(b"nope") == []
