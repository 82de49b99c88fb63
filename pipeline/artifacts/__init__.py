"""Typed artifacts a skill consumes and produces, over a controlled vocabulary of state kinds."""
from pipeline.artifacts.extract import ArtifactRef, SkillArtifacts, extract

__all__ = ["ArtifactRef", "SkillArtifacts", "extract"]
