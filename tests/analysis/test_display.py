from analysis.display import plain_log, short, text_or_missing, workbench_command


def test_missing_values_read_as_a_dash_not_nan():
    assert text_or_missing(float("nan")) == "—" and text_or_missing(None) == "—" and text_or_missing("") == "—"
    assert text_or_missing("wb-env:0123") == "wb-env:0123" and text_or_missing(0) == "0"
    assert short(float("nan")) == "" and short("a  b\nc") == "a b c"


def test_commands_name_the_workspace_after_their_subcommand():
    assert workbench_command("scenarios infer") == "workbench scenarios infer"
    assert workbench_command("scenarios infer", "/w s") == "workbench scenarios infer --workspace '/w s'"
    assert workbench_command("synth --resume --run-id r1", "/w") == "workbench synth --workspace /w --resume --run-id r1"


def test_a_log_reads_without_the_colour_codes_dockers_builder_puts_in_it():
    # a RUN step's stderr as the legacy builder streams it
    log = " ---> Running in 030bac288665\n\x1b[91mcp: \x1b[0m\x1b[91mcannot stat 'x'\n\x1b[0mRemoving\x1b(B\x1bM"
    assert plain_log(log) == " ---> Running in 030bac288665\ncp: cannot stat 'x'\nRemoving"
    assert plain_log("[1/3] plain text [ok]") == "[1/3] plain text [ok]"
    assert plain_log(None) == plain_log(float("nan")) == ""
