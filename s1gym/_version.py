"""The one version of s1gym: the installed distribution's (pyproject.toml's ``version``), read from its metadata."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("s1gym")
except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
