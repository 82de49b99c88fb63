"""A synthesis run's defaults and bounds, light enough for the CLI parser to import."""
MAX_STEPS = 5             # steps the composer makes of a path; longer paths are cut there
MIN_LEN = 2               # fewest steps a sampled path aims for
DEFAULT_CONCURRENCY = 2   # tasks verified at once when neither the user nor a resumed run says
