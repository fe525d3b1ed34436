"""The card and board games' declaration: Blackjack, 2048 and the Millionaire quiz, their fitted Local
models, their replay views (:mod:`.views`) and their states as numbers for RL (:mod:`.features`)."""

from s1gym.family import Family, Task

FAMILY = Family.here(__name__, tasks=(
    Task("s1/Blackjack-v0", ".blackjack:BlackjackEnv", model="local_blackjack.json", view=".views:view_blackjack",
         features=".features:HAND"),
    Task("s1/2048-v0", ".game2048:Game2048Env", model="local_2048.json", stall_patience=6, view=".views:view_2048",
         features=".features:BOARD"),
    Task("s1/Millionaire-v0", ".millionaire:MillionaireEnv", view=".views:view_millionaire"),
), models={"blackjack": ".model:BlackjackModel", "2048": ".model:BoardModel"})
