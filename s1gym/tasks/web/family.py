"""The web family's declaration: MiniWoB++ pages and the flight booking in a real Chromium, one id per
offered page (``s1/MiniWoB-<page>-v0``, as BrowserGym's ``browsergym/miniwob.<page>``), all read by one
fitted Local model (``data/local_web.json``)."""

from s1gym.family import Family, Task
from s1gym.tasks.web.catalogue import offered

_PAGE = dict(model="local_web.json", stall_patience=4)

FAMILY = Family(
    name="web",
    package="s1gym.tasks.web",
    doc="MiniWoB++ pages and a flight booking in a real Chromium, driven by Playwright",
    tasks=(
        Task(id="s1/MiniWoB-v0", entry_point="s1gym.tasks.web.env:MiniWoBEnv", **_PAGE),
        Task(id="s1/Flights-v0", entry_point="s1gym.tasks.web.env:FlightsEnv", **_PAGE),
        *(Task(id=f"s1/MiniWoB-{page}-v0", entry_point="s1gym.tasks.web.env:MiniWoBEnv", name=f"MiniWoB {page}",
               options={"task": page}, listed=False, **_PAGE) for page in offered()),
    ),
    models={"web": "s1gym.tasks.web.model:WebModel"},
)
