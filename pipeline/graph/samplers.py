"""The names of the path samplers, in a module light enough for the CLI parser and the
dashboard (the samplers themselves load numba)."""
SAMPLERS = ("inverse-frequency", "random-walk", "single-skill", "random-multi-skill", "coverage-aware")

# Where the coverage-aware sampler looks for pairs already covered: only the paths of the
# batch being drawn, or also every path stored in the workspace.
UNCOVERED_IN = ("batch", "workspace")
