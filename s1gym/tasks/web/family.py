"""The web family's declaration: MiniWoB++ pages and the flight booking in a real Chromium, one id per
offered page (``s1/MiniWoB-<page>-v0``, as BrowserGym's ``browsergym/miniwob.<page>``), all read by one
fitted Local model (``data/local_web.json``)."""

from s1gym.family import Family, Task
from s1gym.tasks.web.catalogue import offered

_PAGE = dict(model="local_web.json", stall_patience=4)

FAMILY = Family.here(__name__, tasks=(
    Task("s1/MiniWoB-v0", ".env:MiniWoBEnv", **_PAGE),
    Task("s1/Flights-v0", ".env:FlightsEnv", **_PAGE),
    *(Task(f"s1/MiniWoB-{page}-v0", ".env:MiniWoBEnv", name=f"MiniWoB {page}", options={"task": page}, listed=False,
           **_PAGE) for page in offered()),
), models={"web": ".model:WebModel"})
