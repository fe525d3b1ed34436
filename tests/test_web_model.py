"""Local's fitted web model: the names s1gym.tasks.web.tokens reads off a page, and the shipped model
(s1gym/data/local_web.json, found through MiniWoBEnv.local_model) on a page state recorded from Chromium
(login-user, seed 40000: its first state, and what Lookahead showed there), no browser needed."""

from __future__ import annotations

import pytest

from s1gym.core import Candidate, Situation

#: login-user seed 40000's first state as the env printed it (the observation adds the moves)
PAGE = ('A new login-user page.\n\nInstruction: Enter the username "keli" and the password "7KTD" into the text '
        'fields and press login.\n\nPage:\n- paragraph:\n  - text: Username\n  - textbox{u}\n- paragraph:\n'
        '  - text: Password\n  - textbox{p}\n- button "Login"')
MOVES = ['click textbox "Username"', 'type "keli" into textbox "Username"', 'type "7KTD" into textbox "Username"',
         'click textbox "Password"', 'type "keli" into textbox "Password"', 'type "7KTD" into textbox "Password"',
         'click button "Login"']
TYPED = (('type "keli" into textbox "Username"', "."), ('type "7KTD" into textbox "Password"', "."))


def login(history: tuple[tuple[str, str], ...] = (), u: str = "", p: str = "") -> Situation:
    text = PAGE.format(u=f": {u}" if u else "", p=f": {p}" if p else "")
    return Situation(task="MiniWoB login-user", observation=text, state_text=text,
                     candidates=tuple(Candidate(m) for m in MOVES), history=history)


def ahead(situation: Situation) -> Situation:
    """What Lookahead showed on the recorded state: each move's page after it, one new move (press Enter);
    the Login click, which ends the page unsolved, left out."""
    def after(move: str) -> str:
        value = move.split('"')[1] if move.startswith("type") else ""
        box = move.rsplit('"', 2)[1]
        page = PAGE.format(u=f": {value}" if value and box == "Username" else "",
                           p=f": {value}" if value and box == "Password" else "")
        return f"You {move}.\n\n" + page.split("\n\n", 1)[1]

    return situation.with_candidates([Candidate(m, outcome=after(m), new_actions=("press Enter",), reward=0.0,
                                                revisits=0) for m in MOVES[:-1]])


def test_tokens_read_the_instruction_values_and_pair_each_with_its_box():
    from s1gym.tasks.web.tokens import candidate_tokens, move_parts, values

    assert values('Enter the username "keli" and the password "7KTD" into the text fields.') == ["keli", "7KTD"]
    assert values("Select 7KTDo, YsLYp and click Submit.") == ["7KTDo", "YsLYp", "click Submit"]
    assert move_parts('type "keli" into textbox "Username"') == ("type", "textbox", "Username", "keli", None)
    assert move_parts('select "Red" in list "Colour"') == ("select", "list", "Colour", "Red", None)
    assert move_parts('click button "Submit" in "Form" (2)') == ("click", "button", "Submit", None, "Form")
    assert move_parts('drag "s" onto "L"') == ("drag", "element", "s", "L", None)
    assert move_parts('click textbox in "Form" (2)') == ("click", "textbox", None, None, "Form")
    rows = candidate_tokens(login())
    generic = [[t for t in r if not t.startswith("t:")] for r in rows]
    assert all(f"t:login-user|{t}" in rows[i] for i, r in enumerate(generic) for t in r)  # each joined to the task
    assert "pair:yes" in generic[1] and "pair:other" in generic[2]  # "keli" follows "username", "7KTD" does not
    assert "pair:other" in generic[4] and "pair:yes" in generic[5]
    assert "submit:pending" in generic[6] and "submit:done" in candidate_tokens(login(TYPED, "keli", "7KTD"))[6]
    shown = candidate_tokens(ahead(login()))
    assert {"out:new", "out:shows_value"} <= set(shown[1]) and "out:shows_value" not in shown[0]


def test_the_shipped_model_is_found_through_the_task_and_ranks_the_recorded_page():
    from s1gym.policies import Local
    from s1gym.policies.local import task_model
    from s1gym.policies.web_model import WebModel

    model = task_model("MiniWoB login-user")
    assert isinstance(model, WebModel) and model.progress == {} and model.dense == {}
    assert model.provenance["protocol"] == "bench/web_protocol.md"
    assert model.provenance["train_seeds"] == [40000, 40001, 40002] and model.provenance["tasks"] == 108
    local = Local(preload=False)
    # Chromium's Local gave these on the recorded state: the username first, then the password
    assert local.decide(login()).probabilities == pytest.approx(
        [0.0005, 0.6786, 0.0266, 0.0006, 0.0266, 0.2664, 0.0006], abs=1e-4)
    assert local.decide(login(TYPED, "keli", "7KTD")).probabilities == pytest.approx(
        [0.003, 0.0189, 0.0036, 0.0036, 0.0036, 0.0062, 0.961], abs=1e-4)
    assert local.decide(ahead(login())).probabilities == pytest.approx(
        [0.0004, 0.6792, 0.0266, 0.0005, 0.0266, 0.2666], abs=1e-4)
