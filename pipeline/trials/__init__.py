"""One trial = fresh container of the task image → agent → tests copied in → verifier →
reward and per-test outcomes → container removed. Checks and rollouts both use it."""
