"""The package version (read by hatch at build time and by ``perfmodel --version``)."""

__version__ = "0.1.0"
