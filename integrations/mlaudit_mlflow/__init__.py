"""MLflow plugin for mlaudit: load a run (server, sqlite:///, file store), write the verdict back."""

from .plugin import MlflowPlugin

__all__ = ["MlflowPlugin"]
