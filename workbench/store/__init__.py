"""The workspace's DuckDB store: connections, migrations and repositories."""
from workbench.store.connection import Database, WorkspaceBusyError

__all__ = ["Database", "WorkspaceBusyError"]
