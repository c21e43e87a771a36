"""The version of polylab (``polylab.__version__``), importable by any module of the package."""

__version__ = "0.1.0"
