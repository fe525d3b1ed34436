"""Every MiniWoB++ task the ``miniwob`` package ships, and how s1gym offers it (provisional)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class WebTask:
    name: str
    max_candidates: int = 64
    max_steps: int = 10
    about: str = ""
    #: why the task is not offered (empty: it is)
    unsupported: str = ""
    #: an in-document restart gives the same page as a fresh load
    restarts: bool = True
    #: the instruction's fields whose values are typed (None: all)
    typed: tuple[str, ...] | None = None

    def typed_fields(self, fields: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(k, v) for k, v in fields if self.typed is None or k in self.typed]


def package_pages() -> list[str]:
    from miniwob.selenium_instance import HTML_DIR

    return sorted(p.stem for p in (Path(HTML_DIR) / "miniwob").glob("*.html"))


CATALOGUE: dict[str, WebTask] = {name: WebTask(name) for name in package_pages()}
