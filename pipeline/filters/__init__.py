"""SkillSynth stage 1: keep skills that run in a terminal, have a workflow and are safe."""
