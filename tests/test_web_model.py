"""Local's fitted web model: the names s1gym.tasks.web.tokens reads off a page, and the shipped model
(s1gym/data/local_web.json, found through MiniWoBEnv.local_model) on hand-written pages no browser draws."""

from __future__ import annotations

from s1gym.core import Candidate, Situation

LOGIN = ('Instruction: Enter the username "keli" and the password "7KTD" into the text fields and press login.'
         '\n\nPage:\n- paragraph:\n  - text: Username\n  - textbox{u}\n- paragraph:\n  - text: Password\n'
         '  - textbox{p}\n- button "Login"')
LOGIN_MOVES = ['click textbox "Username"', 'type "keli" into textbox "Username"', 'type "7KTD" into textbox "Username"',
               'click textbox "Password"', 'type "keli" into textbox "Password"',
               'type "7KTD" into textbox "Password"', 'click button "Login"']


def login(history: tuple[tuple[str, str], ...] = (), u: str = "", p: str = "") -> Situation:
    text = LOGIN.format(u=f": {u}" if u else "", p=f": {p}" if p else "")
    return Situation(task="MiniWoB login-user", observation=text, state_text=text,
                     candidates=tuple(Candidate(m) for m in LOGIN_MOVES), history=history)


def test_values_and_moves_are_read_off_the_instruction():
    from s1gym.tasks.web.tokens import move_parts, values

    assert values('Enter the username "keli" and the password "7KTD" into the text fields.') == ["keli", "7KTD"]
    assert values("Select 7KTDo, YsLYp and click Submit.") == ["7KTDo", "YsLYp", "click Submit"]
    assert move_parts('type "keli" into textbox "Username"') == ("type", "textbox", "Username", "keli", None)
    assert move_parts('select "Red" in list "Colour"') == ("select", "list", "Colour", "Red", None)
    assert move_parts('click button "Submit" in "Form" (2)') == ("click", "button", "Submit", None, "Form")
    assert move_parts("press Enter") == ("press", "key", "Enter", None, None)
    assert move_parts('pick date "11/14/2016" in textbox "Date"') == ("pick", "date", "Date", "11/14/2016", None)
    assert move_parts('drag "s" onto "L"') == ("drag", "element", "s", "L", None)
    assert move_parts('click textbox in "Form" (2)') == ("click", "textbox", None, None, "Form")


def test_tokens_pair_a_typed_value_with_the_box_the_instruction_names():
    from s1gym.tasks.web.tokens import candidate_tokens

    rows = candidate_tokens(login())
    generic = [[t for t in r if not t.startswith("t:")] for r in rows]
    assert "pair:yes" in generic[1] and "pair:other" in generic[2]  # "keli" follows "username", "7KTD" does not
    assert "pair:other" in generic[4] and "pair:yes" in generic[5]
    assert "submit:pending" in generic[6]
    assert all(f"t:login-user|{t}" in rows[i] for i, r in enumerate(generic) for t in r)  # each joined to the task
    done = login((('type "keli" into textbox "Username"', "."), ('type "7KTD" into textbox "Password"', ".")),
                 u="keli", p="7KTD")
    assert "submit:done" in candidate_tokens(done)[6]


def test_lookahead_tokens_say_what_the_move_did():
    from s1gym.tasks.web.tokens import candidate_tokens

    s = login()
    won = Candidate('click button "Login"', outcome="You click button \"Login\". The task is over: it succeeded "
                    "(reward +1.00).", reward=1.0)
    same = Candidate('click textbox "Username"', outcome="You click textbox.\n\n" + s.state_text, revisits=1)
    rows = candidate_tokens(s.with_candidates([won, same]))
    assert {"out:won", "out:reward", "out:no_new"} <= set(rows[0])
    assert {"out:same_page", "out:revisit", "out:no_new"} <= set(rows[1]) and "out:won" not in rows[1]


def test_local_finds_the_shipped_web_model_through_the_task_class():
    from s1gym.policies.local import task_model
    from s1gym.policies.web_model import WebModel

    model = task_model("MiniWoB login-user")
    assert isinstance(model, WebModel)
    assert model.provenance["protocol"] == "bench/web_protocol.md" and model.provenance["tasks"] == 108


def test_the_shipped_model_types_each_value_into_its_box_then_logs_in():
    from s1gym.policies import Local

    local = Local(preload=False)
    first = local.decide(login())
    assert LOGIN_MOVES[first.action] in ('type "keli" into textbox "Username"', 'type "7KTD" into textbox "Password"')
    done = login((('type "keli" into textbox "Username"', "."), ('type "7KTD" into textbox "Password"', ".")),
                 u="keli", p="7KTD")
    assert LOGIN_MOVES[local.decide(done).action] == 'click button "Login"'
