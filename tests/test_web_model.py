"""Local's fitted web model: the names s1gym.tasks.web.tokens reads off a page, and the shipped model
(s1gym/tasks/web/data/local_web.json, found through the web family's declaration) on a page state recorded
from Chromium (login-user, seed 40000: its first state, and what Lookahead showed there; use-slider, seed
40000: the number shown against the number asked), no browser needed."""

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
    from s1gym.tasks.web.model import WebModel

    model = task_model("MiniWoB login-user")
    assert isinstance(model, WebModel) and model.progress == {} and model.dense == {}
    assert model.provenance["protocol"] == "bench/web_protocol.md"
    assert model.provenance["train_seeds"] == list(range(40000, 40010)) and model.provenance["tasks"] == 108
    local = Local(preload=False)
    # Chromium's Local gave these on the recorded state: the username first, then the password
    assert local.decide(login()).probabilities == pytest.approx(
        [0.0001, 0.9191, 0.0014, 0.0001, 0.0091, 0.0701, 0.0001], abs=1e-4)
    assert local.decide(login(TYPED, "keli", "7KTD")).probabilities == pytest.approx(
        [0.0014, 0.0075, 0.0001, 0.0009, 0.0007, 0.0001, 0.9893], abs=1e-4)
    assert local.decide(ahead(login())).probabilities == pytest.approx(
        [0.0001, 0.9192, 0.0014, 0.0001, 0.0091, 0.0701], abs=1e-4)


#: use-slider seed 40000 as the env printed it after the slider was clicked (it shows 25; 31 is asked), and
#: after six ArrowRight presses (it shows 31)
SLIDER = ('A new use-slider page.\n\nInstruction: Select 31 with the slider and hit Submit.\n\nPage:\n'
          '- text: "{shown}"\n- button "Submit"')
KEYS = ['click box "slider"', 'click button "Submit"', 'press ArrowLeft', 'press ArrowRight', 'press PageUp',
        'press PageDown', 'press Home', 'press End']


def slider(shown: int, presses: int) -> Situation:
    text = SLIDER.format(shown=shown)
    history = (('click box "slider"', "."),) + (("press ArrowRight", "."),) * presses
    return Situation(task="MiniWoB use-slider", observation=text, state_text=text,
                     candidates=tuple(Candidate(m) for m in KEYS), history=history)


def test_the_shown_number_against_the_asked_one_moves_the_slider_then_submits():
    from s1gym.policies import Local
    from s1gym.tasks.web.tokens import candidate_tokens

    rows = candidate_tokens(slider(25, 0))
    gaps = [sorted(t for t in r if t.startswith("gap:")) for r in rows]
    assert gaps == [[], [], ["gap:away|step", "gap:away|step|5-19"], ["gap:toward|step", "gap:toward|step|5-19"],
                    ["gap:toward|page", "gap:toward|page|5-19"], ["gap:away|page", "gap:away|page|5-19"],
                    ["gap:away|end", "gap:away|end|5-19"], ["gap:toward|end", "gap:toward|end|5-19"]]
    assert "nums:open|click:button:submit" in rows[1]
    assert "nums:met|click:button:submit" in candidate_tokens(slider(31, 6))[1]
    local = Local(preload=False)
    assert local.decide(slider(25, 0)).probabilities == pytest.approx(
        [0.002, 0.0028, 0.0026, 0.977, 0.0023, 0.0108, 0.0015, 0.0011], abs=1e-4)
    assert local.decide(slider(31, 6)).probabilities == pytest.approx(  # the asked number is shown: submit
        [0.0017, 0.9822, 0.0006, 0.0072, 0.0018, 0.0029, 0.0021, 0.0015], abs=1e-4)
