"""Provider name -> Synthesizer, with what the provider holds open for a batch (the LLM
client and its event loop) and closes at the end, whatever happens."""
from __future__ import annotations

import os
from dataclasses import dataclass

from pipeline.synth.offline import OfflineSynthesizer
from pipeline.synth.protocol import PROVIDERS, Synthesizer
from workbench.workspace import Workspace

# The agent timeout of LLM-built tasks (also how long solve.sh may run while they are built):
# a test and demo knob, so a scripted never-ending solution costs seconds, not 300 s a step.
SOLVE_TIMEOUT_ENV = "WORKBENCH_SYNTH_SOLVE_TIMEOUT_S"
NO_ENDPOINT = ("provider 'llm' needs an LLM endpoint: set WORKBENCH_LLM_BASE_URL (an OpenAI-compatible URL) "
               "or configure one on the Settings page; or use --provider offline")


@dataclass
class OpenSynthesizer:
    """A synthesizer ready for one batch; `close()` releases what it holds."""
    synthesizer: Synthesizer
    caller: object | None = None      # pipeline.synth.llm.calls.LLMCaller for provider "llm"

    @property
    def cost_usd(self) -> float:
        """Dollars this process spent on the LLM for the batch (0 offline)."""
        return float(self.caller.client.budget.total.cost_usd) if self.caller is not None else 0.0

    @property
    def cap_usd(self) -> float | None:
        """The spending cap in force (None: uncapped, or offline)."""
        return self.caller.client.budget.cap_usd if self.caller is not None else None

    def close(self) -> None:
        if self.caller is not None:
            self.caller.close()


def check_provider(ws: Workspace, provider: str) -> None:
    """Refuse a provider that cannot run here, with advice, before anything is recorded."""
    if provider not in PROVIDERS:
        raise ValueError(f"provider {provider!r}: choose one of {', '.join(PROVIDERS)}")
    if provider == "llm":
        from workbench.llm.runtime import workspace_settings
        if not workspace_settings(ws).online:
            raise ValueError(NO_ENDPOINT)


def open_synthesizer(ws: Workspace, provider: str, *, base_image: str, run_id: str, concurrency: int,
                     budget_usd: float | None = None, solve_timeout_s: float | None = None,
                     ship_skills: bool = True) -> OpenSynthesizer:
    """The provider's synthesizer for one batch. For "llm": one client for the whole batch
    (calls logged under `batch_id = run_id`, capped by `budget_usd`), with at least as many
    LLM calls in flight as the batch has paths in flight, so the client is never the bottleneck.
    `solve_timeout_s` None: $WORKBENCH_SYNTH_SOLVE_TIMEOUT_S, else the synthesizer's default."""
    check_provider(ws, provider)
    if provider == "offline":
        return OpenSynthesizer(OfflineSynthesizer(base_image, ship_skills=ship_skills))
    from pipeline.synth.llm.calls import LLMCaller
    from pipeline.synth.llm.synthesizer import LLMSynthesizer   # the LLM stack loads only when asked for
    from workbench.llm.runtime import open_client, workspace_settings
    settings = workspace_settings(ws)
    if settings.concurrency < concurrency:
        settings = settings.model_copy(update={"concurrency": concurrency})
    solve_timeout_s = solve_timeout_s if solve_timeout_s is not None else _env_seconds(SOLVE_TIMEOUT_ENV)
    caller = LLMCaller(open_client(ws, settings, budget_usd=budget_usd, batch_id=run_id))
    try:
        return OpenSynthesizer(LLMSynthesizer(caller, model=settings.model, solve_timeout_s=solve_timeout_s,
                                              base_image=base_image), caller)
    except BaseException:
        caller.close()
        raise


def _env_seconds(name: str) -> float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"${name}={text!r}: not a number of seconds") from None
    if not value > 0:
        raise ValueError(f"${name}={text!r}: must be more than 0 seconds")
    return value
