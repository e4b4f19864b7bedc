"""The version of hivewire (one place: the package, the CLI and build-info metrics read it)."""

__version__ = "0.1.0"
