"""MiniWoB++ pages in a real Chromium: :mod:`.env` (the gym envs), :mod:`.engine` (a page as a deterministic
engine; ``web_runtime.js`` its clock and input on the page's side), :mod:`.catalogue` (every page of the
package and its formulation), ``web_page.js`` (what a person could do on the page now), the rule solvers
:mod:`.expert` and :mod:`.rules` over :mod:`.view` (what a solver reads)."""

from s1gym.tasks.web.catalogue import offered

#: gym id -> entry point (imported when the env is made).
TASKS: dict[str, str] = {
    "s1/MiniWoB-v0": "s1gym.tasks.web.env:MiniWoBEnv",
    "s1/Flights-v0": "s1gym.tasks.web.env:FlightsEnv",
}

#: One id per offered page, as BrowserGym's ``browsergym/miniwob.<task>``: ``s1/MiniWoB-<task>-v0`` is
#: ``s1/MiniWoB-v0`` with ``task=<task>``.
ALIASES: dict[str, tuple[str, dict[str, str]]] = {
    f"s1/MiniWoB-{name}-v0": ("s1/MiniWoB-v0", {"task": name}) for name in offered()
}
