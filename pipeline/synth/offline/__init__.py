"""The offline synthesizer: today's recipe library (`pipeline.synth.compose`) behind the
`Synthesizer` protocol. It makes the bundle only; the batch verifies it (`checks` None)."""
from __future__ import annotations

import time

from pipeline.synth.compose import synthesize_task, task_id_for
from pipeline.synth.protocol import PathContext, SynthOutcome, SynthTools
from pipeline.synth.skill_fit import NoRecipeError


class OfflineSynthesizer:
    provider = "offline"

    def __init__(self, base_image: str, ship_skills: bool = True):
        self.base_image = base_image
        self.ship_skills = ship_skills     # off: no skill package ships, so no step runs a skill's script

    def task_id(self, path: PathContext, seed: int) -> str:
        return task_id_for(path.path_steps, seed, self.base_image, self.ship_skills)

    def synthesize(self, path: PathContext, seed: int, tools: SynthTools) -> SynthOutcome:
        t0 = time.monotonic()
        try:
            task = synthesize_task(path.path_steps, seed, self.base_image, path_id=path.path_id,
                                   ship_skills=self.ship_skills)
        except NoRecipeError as exc:   # a skill no offline family honours: reported, never substituted
            return SynthOutcome(None, error=str(exc), timings={"total_s": time.monotonic() - t0})  # starts with NO_RECIPE
        return SynthOutcome(task, timings={"total_s": time.monotonic() - t0})
