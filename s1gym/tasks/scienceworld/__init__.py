"""ScienceWorld (``s1/ScienceWorld-v0``): the 30 science-experiment task types of the ``scienceworld`` package
on its own JVM, with a short candidate list, replay forks and the gold path as expert."""
