"""The family registry's own rules: what a clash of declarations does, and ids resolved by every spelling."""

from __future__ import annotations

import pytest

from s1gym import registration
from s1gym.family import Family, FamilyError, Task


def test_an_id_declared_twice_keeps_the_first_family_and_says_so():
    clash = Family(name="clash", package="toy_tasks", tasks=(Task("s1/Blackjack-v0", "toy_tasks:GraphTask"),))
    try:
        with pytest.warns(UserWarning, match=r"s1/Blackjack-v0 is declared by the families 'games' and 'clash'"):
            registration.add_family(clash)
        assert registration.task_named("Blackjack")[0].name == "games"
    finally:
        registration.remove_family("clash")


def test_relative_references_resolve_against_the_family_package():
    family = Family.here("s1gym.tasks.games.family", tasks=(
        Task("s1/Blackjack-v0", ".blackjack:BlackjackEnv", view=".views:view_blackjack"),))
    assert (family.name, family.package) == ("games", "s1gym.tasks.games")
    assert family.tasks[0].entry_point == "s1gym.tasks.games.blackjack:BlackjackEnv"
    assert family.tasks[0].view == "s1gym.tasks.games.views:view_blackjack"


@pytest.mark.parametrize("spelling", ["s1/CookingWorld-v0", "CookingWorld-v0", "cookingworld", "s1gym:s1/CookingWorld-v0"])
def test_an_id_resolves_from_every_spelling(spelling):
    assert registration.resolve_id(spelling) == "s1/CookingWorld-v0"


def test_an_unknown_task_names_the_known_ones_and_a_bad_reference_is_refused():
    with pytest.raises(ValueError, match="unknown task 'NoSuchTask'; known tasks: .*CookingWorld"):
        registration.resolve_id("NoSuchTask")
    with pytest.raises(FamilyError, match="'no_colon_here' is not a 'module:attr' reference"):
        registration.resolve("no_colon_here")
