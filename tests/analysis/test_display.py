from analysis.display import short, text_or_missing, workbench_command


def test_missing_values_read_as_a_dash_not_nan():
    assert text_or_missing(float("nan")) == "—" and text_or_missing(None) == "—" and text_or_missing("") == "—"
    assert text_or_missing("wb-env:0123") == "wb-env:0123" and text_or_missing(0) == "0"
    assert short(float("nan")) == "" and short("a  b\nc") == "a b c"


def test_commands_name_the_workspace_after_their_subcommand():
    assert workbench_command("scenarios infer") == "workbench scenarios infer"
    assert workbench_command("scenarios infer", "/w s") == "workbench scenarios infer --workspace '/w s'"
    assert workbench_command("synth --resume --run-id r1", "/w") == "workbench synth --workspace /w --resume --run-id r1"
