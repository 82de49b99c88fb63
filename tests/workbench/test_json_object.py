"""One JSON object out of untrusted bytes, or a message that names the source and the place."""
import pytest

from workbench.json_object import JSONObjectError, parse_json_object


def test_an_object_is_returned():
    assert parse_json_object(b'{"a": [1, 2]}', "x.json") == {"a": [1, 2]}


@pytest.mark.parametrize("data, message", [
    (b'{"a": "\xe9"}', r"^x.json: not UTF-8 \(byte 7: invalid continuation byte\)$"),
    (b'{"a": ', r"^x.json: not JSON \(Expecting value at line 1 column 7\)$"),
    (b"[" * 200_000 + b"]" * 200_000, r"^x.json: JSON nested too deeply$"),
    (b"[1, 2]", r"^x.json: a trajectory is a JSON object, this is list$"),
])
def test_bad_bytes_say_what_and_where(data, message):
    with pytest.raises(JSONObjectError, match=message):
        parse_json_object(data, "x.json", kind="a trajectory")
