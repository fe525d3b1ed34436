"""s1race: an example s1gym task family in a package of its own (race to N, a chance-free Nim variant).

Installing the package is all it takes: its metadata names :data:`s1race.family.FAMILY` in the entry-point
group ``s1gym.families``, and s1gym registers ``s1race/Race-v0``, reads its fitted Local model and draws its
replays from there. docs/adding-a-family.md in the s1gym repository walks through this package.
"""
