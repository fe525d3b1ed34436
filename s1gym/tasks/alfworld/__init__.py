"""ALFWorld's text games on the real ALFWorld engine: :mod:`.env` (the env and its snapshot engine),
:mod:`.expert` (alfworld's handcoded expert and Fast Downward's planner), :mod:`.fit` (fitting Local's model,
``python -m s1gym.tasks.alfworld.fit``; its data and the shipped scenes: ``data/README.md``).

Its declaration (tasks, models, views): :mod:`.family`."""
