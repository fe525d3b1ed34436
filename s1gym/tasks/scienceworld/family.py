"""ScienceWorld's declaration: ``s1/ScienceWorld-v0``, its 30 task types selected by the ``task=`` option
(:data:`.env.TASKS`, ScienceWorld's own names), with its fitted Local model and progress estimate
(``data/local_scienceworld.json``)."""

from s1gym.family import Family, Task

# Local's fitted model and Search's progress estimate: data/local_scienceworld.json
# (python -m s1gym.tasks.scienceworld.fit)
FAMILY = Family.here(__name__, tasks=(
    Task("s1/ScienceWorld-v0", ".env:ScienceWorldEnv", stall_patience=10, model="local_scienceworld.json",
         progress_tokens=".tokens:progress_tokens"),
), models={"scienceworld": ".model:ScienceWorldModel"},
   doc="ScienceWorld's 30 elementary-science task types on its own JVM (the scienceworld package)")
