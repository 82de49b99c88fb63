"""The names of the path samplers, in a module light enough for the CLI parser and the
dashboard (the samplers themselves load numba)."""
SAMPLERS = ("inverse-frequency", "random-walk", "single-skill", "random-multi-skill")
