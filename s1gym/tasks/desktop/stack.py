"""The desktop stack: what a desktop session needs from the machine, and the errors a desktop raises.

:func:`missing` lists what the machine lacks (programs, the AT-SPI files, Python modules; ``bash
scripts/setup.sh`` installs them) and :func:`require` turns that list into :class:`DesktopUnavailable`
naming the setup command.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from importlib.util import find_spec
from pathlib import Path

from s1gym.errors import S1GymError

__all__ = ["DesktopError", "DesktopUnavailable", "missing", "require"]

#: Programs a session runs, with the Debian package that ships each.
PROGRAMS: dict[str, str] = {"Xvfb": "xvfb", "dbus-daemon": "dbus-daemon"}
#: The accessibility bus launcher the session D-Bus activates (Debian's path).
ATSPI_FILES: dict[str, str] = {
    "/usr/libexec/at-spi-bus-launcher": "at-spi2-core",
    "/usr/share/dbus-1/services/org.a11y.Bus.service": "at-spi2-core",
}
#: Python modules the desktop tasks use (the ``desktop`` extra).
MODULES: dict[str, str] = {"jeepney": "jeepney", "PIL": "Pillow"}
SETUP_HINT = "run `bash scripts/setup.sh` (or: apt-get install {apt}; pip install 's1gym[desktop]')"


class DesktopError(S1GymError, RuntimeError):
    """A desktop process failed to start or died."""


class DesktopUnavailable(DesktopError):
    """The machine lacks the desktop stack (a program, an apt package or a Python module)."""


def missing(programs: Mapping[str, str] | None = None) -> list[str]:
    """What this machine lacks for a desktop session running ``programs`` (name -> apt package), as
    ``"what (package)"`` strings; empty when everything is there."""
    out = []
    for prog, pkg in {**PROGRAMS, **(programs or {})}.items():
        if shutil.which(prog) is None:
            out.append(f"{prog} ({pkg})")
    for path, pkg in ATSPI_FILES.items():
        if not Path(path).exists():
            out.append(f"{path} ({pkg})")
    for module, dist in MODULES.items():
        if find_spec(module) is None:
            out.append(f"Python module {module} ({dist})")
    return out


def require(what: str, programs: Mapping[str, str] | None = None) -> None:
    """Raise :class:`DesktopUnavailable` naming the missing pieces and the setup command."""
    lacking = missing(programs)
    if lacking:
        apt = " ".join(sorted({*PROGRAMS.values(), "at-spi2-core", *(programs or {}).values()}))
        raise DesktopUnavailable(
            f"{what} needs a headless desktop stack; this machine lacks {', '.join(lacking)}. "
            + SETUP_HINT.format(apt=apt)
        )

