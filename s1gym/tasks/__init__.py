"""The tasks, one folder per family; each family's ``TASKS`` names its gym ids and entry points
(:mod:`s1gym.registration` registers them all)."""
