"""A desktop application as a task: MATE's calculator under Xvfb (:mod:`.calculator`), its goals
(:mod:`.goals`), the app on the engine seam (:mod:`.engine`), the headless desktop (:mod:`.session`;
what it needs from the machine: :mod:`.stack`; its processes as /proc sees them: :mod:`.procfs`) and
the accessibility bus it is read over (:mod:`.atspi`).

Its declaration (tasks, models, views): :mod:`.family`."""
