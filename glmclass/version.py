"""The package version, on floor 0 so that any module may read it without importing the package
root (``glmclass.__version__`` re-exports it; pyproject.toml reads it from here)."""

__version__ = "0.1.0"
