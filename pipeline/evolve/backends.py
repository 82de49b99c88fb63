"""Which operator backend evolves a parent: by the provider that built it (offline recipes →
OfflineOperator, LLM-built → LlmOperator through the constructor and its repair loop). The LLM
backend is opened only when a round has an LLM-built parent, and only once."""
from __future__ import annotations

import threading
from collections.abc import Mapping

from pipeline.evolve.models import EvolveOperator, NoVariant
from pipeline.evolve.offline_operator import OfflineOperator
from workbench.sandbox.engine import Engine
from workbench.workspace import Workspace


class Backends:
    """`given`: backends to use instead of opening them, by provider (tests, the demo's replay model)."""

    def __init__(self, ws: Workspace, *, engine: Engine, base_image: str, run_id: str, stop: threading.Event,
                 given: Mapping[str, EvolveOperator] | None = None):
        self.ws, self.engine, self.base_image, self.run_id, self.stop = ws, engine, base_image, run_id, stop
        self._ops: dict[str, EvolveOperator] = dict(given or {})
        self._why: dict[str, str] = {}     # provider -> why it could not be opened
        self._caller = None

    def for_provider(self, provider: str) -> EvolveOperator:
        """The backend, or NoVariant saying why there is none for this provider."""
        if provider in self._ops:
            return self._ops[provider]
        if provider in self._why:
            raise NoVariant(self._why[provider])
        if provider == "offline":
            self._ops[provider] = OfflineOperator(self.ws, base_image=self.base_image)
        elif provider == "llm":
            try:
                self._ops[provider] = self._open_llm()
            except (ImportError, ValueError) as exc:
                self._why[provider] = f"the LLM operators are not available: {exc}"
                raise NoVariant(self._why[provider]) from None
        else:
            self._why[provider] = f"no operator backend for tasks built by provider {provider!r}"
            raise NoVariant(self._why[provider])
        return self._ops[provider]

    def _open_llm(self) -> EvolveOperator:
        from pipeline.evolve.llm_operator import LlmOperator          # the LLM stack loads only when asked for
        from pipeline.synth.llm.calls import LLMCaller
        from pipeline.synth.providers import check_provider
        from workbench.llm.runtime import open_client, workspace_settings
        check_provider(self.ws, "llm")       # ValueError with advice when no endpoint is set
        self._caller = LLMCaller(open_client(self.ws, workspace_settings(self.ws), batch_id=self.run_id))
        return LlmOperator(self._caller, engine=self.engine, base_image=self.base_image, ws=self.ws, stop=self.stop)

    def close(self) -> None:
        if self._caller is not None:
            self._caller.close()
            self._caller = None
