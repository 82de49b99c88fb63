"""SETA-Evol (PAPERS.md §2): variants of tasks by their pass rate, with lineage ids."""
