"""Typed artifacts a skill consumes and produces (extract.py), over a controlled vocabulary of
machine-state kinds (vocabulary.py). Import from the modules: ``from pipeline.artifacts.extract import extract``."""
