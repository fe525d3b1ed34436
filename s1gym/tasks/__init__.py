"""The tasks, one folder per family; each family's ``family.py`` declares its gym ids and what the generic
layers read about them (:mod:`s1gym.registration` finds the declarations and registers the ids)."""
