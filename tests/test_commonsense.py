"""Where a thing belongs, from the packaged embedder (s1gym/tasks/twx/commonsense.py), on a synthetic TWC room whose
things no TWC train-fold game shows."""

from __future__ import annotations

import pytest

from s1gym.core import Candidate, Situation
from s1gym.policies.local import model_available

pytestmark = pytest.mark.skipif(not model_available(), reason="needs the packaged all-MiniLM-L6-v2 (s1gym[local])")

ROOM = ("You are in the hallway. In one part of the room you see a shoe cabinet that is closed. There is also a "
        "fridge, that has nothing on it. You also see a bookcase that has a paperback novel on it. In another part "
        "of the room you see a wardrobe, that has nothing on it. There is also a dishwasher that has a pair of "
        "hiking boots on it.")


def situation(inventory: str, moves: list[str]) -> Situation:
    text = (f"Task: Your task is to pick up objects, then place them in their usual locations in the environment."
            f"\n\n{ROOM} \nTo the North you see the kitchen.\n\nInventory: \n  {inventory}")
    return Situation(task="TWC", observation=text, state_text=text, candidates=tuple(Candidate(m) for m in moves))


def test_places_are_read_from_the_room():
    from s1gym.tasks.twx.commonsense import _contents, places_in

    assert places_in(ROOM) == ["shoe cabinet", "fridge", "bookcase", "wardrobe", "dishwasher"]
    assert _contents(ROOM) == {"paperback novel": "bookcase", "pair of hiking boots": "dishwasher"}


def test_the_embedder_ranks_the_right_place_first_for_unseen_things():
    from s1gym.tasks.twx.commonsense import ranks

    places = ["bed", "shoe cabinet", "fridge", "bookcase", "dishwasher", "bathroom cabinet", "wardrobe"]
    best = {thing: min(ranks(thing, places).items(), key=lambda kv: kv[1])[0]
            for thing in ("frozen pizza", "hiking boots", "paperback novel", "winter coat")}
    assert best == {"frozen pizza": "fridge", "hiking boots": "shoe cabinet", "paperback novel": "bookcase",
                    "winter coat": "wardrobe"}


def test_tokens_say_which_put_open_and_take_fit():
    from s1gym.tasks.twx.commonsense import commonsense_tokens

    moves = ["move north", "open shoe cabinet", "put frozen pizza in fridge", "put frozen pizza in wardrobe",
             "take paperback novel", "take pair of hiking boots"]
    rows = commonsense_tokens(situation("a frozen pizza", moves))
    assert rows == [[], ["cs:open+r2+"], ["cs:put+r0"], ["cs:put+r2+"], ["cs:take+from_r0"], ["cs:take+from_r1+"]]
    # nothing held: opening a place is no one's best fit
    assert commonsense_tokens(situation("Your inventory is currently empty.", ["open shoe cabinet"])) == [
        ["cs:open+noheld"]]


def test_the_shipped_twc_model_puts_an_unseen_thing_in_its_place():
    # among the puts alone: the plain model (no Lookahead) may still prefer walking on when an exit is new
    from s1gym.policies import Local

    moves = ["put frozen pizza in bookcase", "put frozen pizza in dishwasher",
             "put frozen pizza in fridge", "put frozen pizza in wardrobe"]
    decision = Local(preload=False).decide(situation("a frozen pizza", moves))
    assert moves[decision.action] == "put frozen pizza in fridge"


PUT_BACK = (("take paperback novel", "You take the paperback novel."),
            ("put paperback novel in bookcase", "You put the paperback novel in the bookcase."),
            ("put frozen pizza in fridge", "You put the frozen pizza in the fridge."),
            ("take frozen pizza", "You take the frozen pizza."))


def test_the_score_change_says_which_puts_were_right():
    # the novel's put raised the score (leave it), the pizza's did not (the fridge is tried for it: the next
    # best untried place, the dishwasher, becomes its r0); no STALL moves without a new best score yet
    from dataclasses import replace

    from s1gym.tasks.twx.commonsense import commonsense_tokens, put_outcomes

    moves = ["put frozen pizza in fridge", "put frozen pizza in dishwasher", "put frozen pizza in wardrobe",
             "take paperback novel", "take pair of hiking boots", "move north"]
    plain = situation("a frozen pizza", moves)
    assert commonsense_tokens(plain) == [["cs:put+r0"], ["cs:put+r1"], ["cs:put+r2+"], ["cs:take+from_r0"],
                                         ["cs:take+from_r1+"], []]
    played = replace(plain, history=PUT_BACK, rewards=(0.125, 0.125, -0.125, 0.125))
    assert put_outcomes(played) == ({"frozen pizza": {"fridge"}}, {"paperback novel": True})
    assert commonsense_tokens(played) == [["sc:put+tried"], ["cs:put+r0"], ["cs:put+r1"],
                                          ["cs:take+from_r0", "sc:take+scored"], ["cs:take+from_r1+"], []]
    # four moves without passing the best score (taking the pizza back only restored it): try the best guess
    stalled = replace(played, history=PUT_BACK + (("move north", "."), ("move south", ".")),
                      rewards=(0.125, 0.125, -0.125, 0.125, 0.0, 0.0))
    assert commonsense_tokens(stalled)[1] == ["cs:put+r0", "sc:put+r0+stalled"]
    assert commonsense_tokens(replace(stalled, rewards=stalled.rewards[:-1] + (0.125,)))[1] == ["cs:put+r0"]
    # a put that earned nothing, not taken back yet: taking the thing again is worth it
    wrong = replace(situation("nothing", ["take frozen pizza"]), history=PUT_BACK[2:3], rewards=(-0.125,))
    assert commonsense_tokens(wrong) == [["sc:take+unscored"]]
    # no rewards aligned with the history (a situation made by hand): the names are the plain ones
    assert commonsense_tokens(replace(played, rewards=())) == commonsense_tokens(plain)
    assert commonsense_tokens(replace(played, rewards=(0.125,))) == commonsense_tokens(plain)
