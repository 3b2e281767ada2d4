"""TensorBoard plugin for mlaudit: read a log directory at full fidelity, write the verdict as a text summary."""

from .plugin import TensorBoardPlugin

__all__ = ["TensorBoardPlugin"]
