"""The package version (floor 0: read by the package root and by saved results)."""

__version__ = "0.1.0"
