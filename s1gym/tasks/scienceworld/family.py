"""ScienceWorld's declaration: ``s1/ScienceWorld-v0``, its 30 task types selected by the ``task=`` option
(:data:`.env.TASKS`, ScienceWorld's own names)."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/ScienceWorld-v0", ".env:ScienceWorldEnv", stall_patience=10),
), doc="ScienceWorld's 30 elementary-science task types on its own JVM (the scienceworld package)")
