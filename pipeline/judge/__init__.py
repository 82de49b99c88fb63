"""LLM judges of synthesized tasks (SkillSynth's rubric check): `task_judge.judge_task`."""
