from analysis.display import short, text_or_missing


def test_missing_values_read_as_a_dash_not_nan():
    assert text_or_missing(float("nan")) == "—" and text_or_missing(None) == "—" and text_or_missing("") == "—"
    assert text_or_missing("wb-env:0123") == "wb-env:0123" and text_or_missing(0) == "0"
    assert short(float("nan")) == "" and short("a  b\nc") == "a b c"
