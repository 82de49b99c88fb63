"""SkillSynth stage 2: a precondition and a postcondition scenario for each accepted skill."""
