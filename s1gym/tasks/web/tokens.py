"""A web page situation as feature names: what each move names, set against what the instruction asks.

:func:`candidate_tokens` reads only what a player sees (the instruction, the page's ARIA text, the moves and
the moves played) and gives each move a handful of names: its verb and the role of the element it names
(``vr:click:button``); how the element's name, or the value a move types or selects, matches the
instruction's values (``m:exact`` — the name is one of the instruction's quoted values or a phrase of it,
``m:all`` every word of it is in the instruction, ``m:some``, ``m:none``; ``tv:`` for a typed value, ``tb:``
for the box it goes into); whether the move or the same element was played before; the element's state on
the page (``[checked]``); a submit-like button before or after every instruction value was used; its place
among the moves of its role and whether it is the place the instruction names for that role (``the 3rd
textbox``), and whether such a move is still to play (``ord_pending``); the kind of the move before and
this one's (``seq:click:textbox>type:textbox``, ``seq:press:Control+A>press:Control+C``), the key a press
presses, the same element as the move before, the longest name of its kind when the instruction says
``everything`` or not (``|longest|scope:all``);
whether the page already shows everything the instruction asks (``shown:all|<kind>``); and what the move
does against the instruction, read off the page by :mod:`s1gym.tasks.web.relations` (numbers, dates,
colours, pictures, drags, ranks, labels). Each generic name also appears joined to the task
(``t:<task>|...``) so a task seen in training keeps its own habits while a page never seen is read by the
generic names alone.

With Lookahead (a candidate that carries its ``outcome``), ``out:*`` names say what the move did: the task
ended and succeeded (``out:won``) or gave a reward, an error, no visible change, instruction values the page
shows now and did not before (``out:shows_all`` when it now shows all of them), the asked numbers or month
nearer (``out:closer``, ``out:hit``) or farther, the new moves it opens and how they match, a return to an
earlier state.

The weights are learned (:mod:`s1gym.tasks.web.fit`, protocol bench/web_protocol.md); this module reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from s1gym.core.situation import Candidate, Situation
from s1gym.tasks.web import relations

__all__ = ["candidate_tokens", "instruction", "move_parts", "values"]

_QUOTED = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"[a-z0-9]+")
_TYPE = re.compile(r'^type "(?P<value>.*)" into (?P<role>[a-z]+)(?: "(?P<box>.*?)")?(?: in "(?P<context>.*)")?'
                   r'(?: \(\d+\))?$')
_SELECT = re.compile(r'^select "(?P<value>.*)" in list "(?P<box>.*?)"')
_PICK = re.compile(r'^pick date "(?P<value>.*)" in (?P<role>[a-z]+)(?: "(?P<box>.*?)")?')
_BARE = re.compile(r'^(?P<verb>click|point at) (?P<role>[a-z]+)(?: in "(?P<context>.*?)")?(?: \(\d+\))?$')
_CLICK = re.compile(r'^(?P<verb>click|point at|scroll|highlight|drag) (?:(?P<role>[a-z]+) )?(?:"(?P<name>.*?)")?'
                    r'(?: in "(?P<context>.*?)")?(?: \(\d+\))?(?: (?P<rest>.*))?$')
_TAILED = re.compile(r"^(?P<verb>scroll|drag) (?:the )?(?P<role>[a-z]+)(?:'s [a-z]+)? (?P<rest>[^\"]+)$")
_DIRECTIONS = frozenset({"up", "down", "left", "right", "up-left", "up-right", "down-left", "down-right"})
_SUBMIT = frozenset({"submit", "ok", "search", "login", "next", "go", "done", "send", "reply", "forward",
                     "save", "enter", "confirm", "yes", "no", "close", "cancel"})


def instruction(situation: Situation) -> str:
    """The task's instruction (the observation's ``Instruction:`` line), '' when there is none."""
    for line in situation.state_text.splitlines():
        if line.startswith("Instruction: "):
            return line.removeprefix("Instruction: ")
    return ""


def page_of(text: str) -> str:
    """The page part of a web state text (after ``Page:``), '' when the page is gone (the episode ended)."""
    _, sep, page = text.partition("\nPage:\n")
    return page if sep else ""


def values(utterance: str) -> list[str]:
    """The instruction's values: its quoted strings, else its comma/``and``-separated items after the verb."""
    quoted = [q for q in _QUOTED.findall(utterance) if q.strip()]
    if quoted:
        return quoted
    body = re.sub(r"^\s*\w+\s+", "", utterance.rstrip(". "))
    items = re.split(r",\s*|\s+and\s+|\s+or\s+", body)
    return [i.strip() for i in items if i.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def match(name: str | None, vals: Iterable[str], utterance_words: set[str], haystack: str) -> str:
    """How a name relates to the instruction: exact / phrase / all / some / none (noname when there is no
    name); a word counts as the instruction's when one begins the other (:func:`_said`)."""
    if not name or not name.strip():
        return "noname"
    low = name.strip().lower()
    if any(low == v.strip().lower() for v in vals):
        return "exact"
    ws = words(name)
    if not ws:
        return "noword"
    if f" {' '.join(ws)} " in haystack:
        return "phrase"
    inside = sum(_said(w, utterance_words) for w in ws)
    return "all" if inside == len(ws) else "some" if inside else "none"


def _said(word: str, utterance_words: set[str]) -> bool:
    """The word is the instruction's, or one of 4+ letters begins the other (``italic``/``italics``,
    ``underline``/``underlined``)."""
    if word in utterance_words:
        return True
    return len(word) >= 4 and any(len(u) >= 4 and (u.startswith(word) or word.startswith(u)) for u in utterance_words)


def move_parts(text: str) -> tuple[str, str, str | None, str | None, str | None]:
    """(verb, role, name, typed or selected value, context) of a move as web_page.js names it."""
    m = _TYPE.match(text)
    if m:
        return "type", m["role"], m["box"], m["value"], m["context"]
    m = _SELECT.match(text)
    if m:
        return "select", "list", m["box"], m["value"], None
    m = _PICK.match(text)
    if m:
        return "pick", "date", m["box"], m["value"], None
    m = _BARE.match(text)
    if m:
        return m["verb"].replace(" ", ""), m["role"], None, None, m["context"]
    m = _TAILED.match(text)
    if m and " onto " not in text:  # ``scroll textarea to the bottom``: where it goes as the value
        return m["verb"], m["role"], None, m["rest"], None
    if text.startswith("drag ") and " onto " in text:  # the dragged element, and where it goes as the value
        head, _, target = text.partition(" onto ")
        verb, role, name, _, context = move_parts(head)
        quoted = _QUOTED.findall(target)
        return "drag", role, name, quoted[-1] if quoted else target, context
    if text.startswith("drag ") and text.rsplit(" ", 1)[-1] in _DIRECTIONS:
        verb, role, name, _, context = move_parts(text.rsplit(" ", 1)[0])
        return "drag", role, name, text.rsplit(" ", 1)[-1], context
    if text.startswith("press "):
        return "press", "key", text.removeprefix("press "), None, None
    m = _CLICK.match(text)
    if m:
        verb = m["verb"].replace(" ", "")
        role = m["role"] or ("shape" if m["name"] is None and m["rest"] else "element")
        return verb, role, m["name"], None, m["context"]
    verb = (text.split() or ["?"])[0]
    quoted = _QUOTED.findall(text)
    return verb, "-", quoted[0] if quoted else None, quoted[1] if len(quoted) > 1 else None, None


def _paired(utterance: str, value: str, box: str | None) -> str:
    """Whether the instruction names the box right before the value (``the username "keli"``, ``from: ELP``,
    ``directed by Molina`` for a box "Director": a word of the box or its first four letters) or right
    after it (``drama movies`` for "Movie Genre"): ``yes``; ``other`` when it names another word there;
    '' when the value is not in the instruction or the box has no name."""
    if not box or not words(box):
        return ""
    at = utterance.find(f'"{value}"')
    if at < 0:
        found = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", utterance, re.IGNORECASE) if value.strip() else None
        if found is None:
            return ""
        at = found.start()
    before = words(utterance[:at])[-4:] + words(utterance[at + len(value) + 2:])[:1]  # and the word after
    stems = {w[:4] for w in words(box) if len(w) >= 3}
    hit = set(words(box)) & set(before) or any(b[:4] in stems for b in before if len(b) >= 4)
    return "yes" if hit else "other"


def _states(page: str) -> dict[tuple[str, str], str]:
    """(role, name) -> the bracketed states the page prints for it (``[checked]``, ``[selected]``, ...)."""
    return {(m[1], m[2]): m[3] for m in re.finditer(r'- (\w+) "([^"]*)"((?: \[[^\]]+\])+)', page)}


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "last": -1}


def ordinals(utterance: str) -> set[int]:
    """The places the instruction names: ``2nd``, ``third``, ``last`` (-1)."""
    low = utterance.lower()
    found = {int(n) for n in re.findall(r"\b(\d+)(?:st|nd|rd|th)\b", low)}
    return found | {v for w, v in _ORDINALS.items() if re.search(rf"\b{w}\b", low)}


def ordinals_by_word(utterance: str) -> dict[str, set[int]]:
    """The places the instruction names with the word after each (``the 3rd textbox`` -> textbox: {3})."""
    out: dict[str, set[int]] = {}
    low = utterance.lower()
    for n, word in re.findall(r"\b(\d+)(?:st|nd|rd|th)\s+(\w+)", low):
        out.setdefault(word, set()).add(int(n))
    for w, v in _ORDINALS.items():
        for word in re.findall(rf"\b{w}\s+(\w+)", low):
            out.setdefault(word, set()).add(v)
    return out


def _places_for(role: str, by_word: dict[str, set[int]], places: set[int]) -> set[int]:
    """The places the instruction names for this role (``3rd textbox`` for a textbox), else all it names."""
    mine = {p for w, ps in by_word.items() if w[:4] == role[:4] for p in ps}
    return mine or places


def candidate_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, the feature names the web model weighs (see the module docstring)."""
    task = situation.task.removeprefix("MiniWoB ")
    utter = instruction(situation)
    vals = values(utter)
    uwords = set(words(utter))
    haystack = f" {' '.join(words(utter))} "
    page = page_of(situation.state_text)
    states = _states(page)
    played = [m for m, _ in situation.history]
    played_set = set(played)
    times = {m: played.count(m) for m in played_set}
    places = ordinals(utter)
    by_word = ordinals_by_word(utter)
    last = played[-1] if played else None
    used_boxes = {move_parts(m)[2] for m in played if m.startswith(("type ", "select "))}
    used_values = {v.lower() for m in played if (v := move_parts(m)[3])}
    clicked_names = {(move_parts(m)[2] or "").lower() for m in played if m.startswith("click ")}
    done = bool(vals) and all(v.lower() in used_values or v.lower() in clicked_names for v in vals)
    step = min(len(played), 3)
    parts = [move_parts(c.text) for c in situation.candidates]
    facts = relations.read_facts(utter, page, played, uwords)
    shown = _shown(facts, page)
    boxes = _boxes(page)
    peers = [(v, r, n) for v, r, n, *_ in parts]
    before = _kind(*move_parts(last)[:3]) if last else "start"
    scope = "all" if uwords & _ALL_WORDS else "part"
    longest: dict[str, str] = {}  # the longest name among the named moves of each kind (of two or more)
    named: dict[str, int] = {}
    for verb, role, name, *_ in parts:
        k = _kind(verb, role, name)
        named[k] = named.get(k, 0) + bool(name)
        if name and len(name) > len(longest.get(k, "")):
            longest[k] = name
    longest = {k: n for k, n in longest.items() if named[k] > 1}
    last_name = move_parts(last)[2] if last else None
    first_of: dict[str, int] = {}
    last_of: dict[str, int] = {}
    place: list[int] = []  # 1-based place of each move among the moves of its verb and role
    seen: dict[tuple[str, str], int] = {}
    for i, (verb, role, *_rest) in enumerate(parts):
        first_of.setdefault(role, i)
        last_of[role] = i
        seen[(verb, role)] = seen.get((verb, role), 0) + 1
        place.append(seen[(verb, role)])
    asked_at = [_places_for(r, by_word, places) if places else set() for _, r, *_ in parts]
    hits = [bool(a) and (place[i] in a or (-1 in a and place[i] == seen[(v, r)]))
            for i, ((v, r, *_), a) in enumerate(zip(parts, asked_at, strict=True))]
    # a move at a place the instruction names for its role (``the 2nd checkbox``) not played yet
    pending = any(h and c.text not in played_set and any(w[:4] == parts[i][1][:4] for w in by_word)
                  for i, (h, c) in enumerate(zip(hits, situation.candidates, strict=True)))
    rows = []
    for i, c in enumerate(situation.candidates):
        verb, role, name, value, context = parts[i]
        vr = f"vr:{verb}:{role}"
        m_name = match(name, vals, uwords, haystack)
        generic = [f"v:{verb}", vr, f"m:{m_name}", f"{vr}|m:{m_name}", f"step:{step}|{vr}"]
        if value is not None:
            m_value = match(value, vals, uwords, haystack)
            generic += [f"tv:{m_value}", f"{vr}|tv:{m_value}", f"{vr}|tv:{m_value}|tb:{m_name}"]
            if name in used_boxes:
                generic.append(f"{vr}|box_used")
            if value.lower() in used_values:
                generic.append(f"{vr}|value_used")
            pair = _paired(utter, value, name)
            if pair:
                generic += [f"pair:{pair}", f"{vr}|pair:{pair}"]
        if context:
            generic.append(f"ctx:{match(context, vals, uwords, haystack)}")
        if c.text in played_set:
            generic += ["played", f"{vr}|played"] + (["played2+", f"{vr}|played2+"] if times[c.text] > 1 else [])
        if role in uwords or f"{role}s" in uwords:
            generic += ["role_named", f"{vr}|role_named"]
        kind = _kind(verb, role, name)
        generic += [f"seq:{before}>{kind}", f"shown:{shown}|{kind}"]
        if boxes:
            generic.append(f"boxes:{boxes}|{kind}")
        if verb == "press":
            generic.append(f"key:{name}")
        if name and last_name == name:
            generic.append(f"{vr}|same_element")
        if name and name == longest.get(kind):
            generic.append(f"{vr}|longest|scope:{scope}")
        tail = _tail_words(c.text, role) & uwords
        if tail:
            generic.append(f"{vr}|tail_named")
        generic += relations.tokens(facts, c.text, verb, role, name, value, context, peers, kind)
        if places:
            hit = hits[i]
            generic += [f"ord:{'hit' if hit else 'miss'}", f"{vr}|ord:{'hit' if hit else 'miss'}"]
        if by_word:
            generic.append(f"ord_pending:{pending}|{kind}")
        if c.text == last:
            generic.append("last")
        if name and (name.lower() in clicked_names) and verb == "click":
            generic.append(f"{vr}|name_clicked")
        state = states.get((role, name or ""), "")
        for s in ("checked", "selected", "expanded", "pressed", "disabled"):
            if f"[{s}" in state:
                generic += [f"{vr}|{s}", f"{vr}|{s}|m:{m_name}"]
        if name and name.strip().lower() in _SUBMIT:
            generic += [f"submit:{'done' if done else 'pending'}", f"submit:{'done' if done else 'pending'}|{vr}",
                        f"submit|step:{step}"]
        if first_of[role] == i:
            generic.append(f"{vr}|first")
        if last_of[role] == i:
            generic.append(f"{vr}|last")
        tokens = generic + [f"t:{task}|{g}" for g in generic]
        tokens += _outcome_tokens(c, page, vals, uwords, haystack, task, facts, played)
        rows.append(tokens)
    return rows


def _kind(verb: str, role: str, name: str | None) -> str:
    """A move's kind, for the sequence names and what is true of the whole page: the key a press presses;
    else its verb and role, and the name of a button or icon when it is a short word (``click:button:submit``,
    ``click:icon:more``) rather than a value."""
    if verb == "press":
        return f"press:{name}"
    low = (name or "").strip().lower()
    if role in ("button", "icon") and low and len(low) <= 16 and len(low.split()) <= 2 and not any(
            ch.isdigit() for ch in low):
        return f"{verb}:{role}:{low}"
    return f"{verb}:{role}"


_ALL_WORDS = frozenset({"everything", "all", "whole", "entire"})
_TAIL_STOP = frozenset({"click", "point", "at", "scroll", "highlight", "drag", "press", "the", "to", "a", "into",
                        "in", "onto", "s", "of"})


def _tail_words(text: str, role: str) -> set[str]:
    """The words of a move outside its quoted names and numbers (``to the bottom``, ``corner right``)."""
    bare = re.sub(r'"[^"]*"|\(-?\d+(?:,-?\d+)?\)', " ", text)
    return {w for w in words(bare) if w not in _TAIL_STOP and w != role and not w.isdigit()}


_BOX = re.compile(r'^\s*- textbox(?: "[^"]*")?(:.*)?$', re.MULTILINE)


def _boxes(page: str) -> str:
    """Whether the page's text boxes all hold something (``full``), some do (``some``) or none (``empty``);
    '' when it has none."""
    filled = [bool((m[1] or "").strip(": ")) for m in _BOX.finditer(page)]
    if not filled:
        return ""
    return "full" if all(filled) else "some" if any(filled) else "empty"


def _shown(facts: relations.PageFacts, page: str) -> str:
    """Whether the page shows everything the instruction asks for: its numbers (as values), its date and
    its quoted values: ``all``, ``part``, or ``none`` when it asks for none of these."""
    checks = []
    if facts.asked:
        checks.append(all(any(abs(a - s) < 1e-9 for s in facts.shown) for a in facts.asked))
    date = relations.DATE.search(facts.utter)
    if date:
        checks.append(date[0] in page)
    low = page.lower()
    checks += [q.lower() in low for q in _QUOTED.findall(facts.utter) if q.strip()]
    return "none" if not checks else "all" if all(checks) else "part"


def _outcome_tokens(c: Candidate, page: str, vals: list[str], uwords: set[str], haystack: str,
                    task: str, facts: relations.PageFacts, played: list[str]) -> list[str]:
    if c.outcome is None:
        return []
    out = []
    first = c.outcome.split("\n\n", 1)[0]
    if "The task is over: it succeeded" in first:
        out.append("out:won")
    elif "The task is over" in first:
        out.append("out:over")
    if "did not happen" in first:
        out.append("out:error")
    if c.reward:
        out.append("out:reward" if c.reward > 0 else "out:penalty")
    new_page = page_of(c.outcome)
    if new_page and new_page == page:
        out.append("out:same_page")
    low_old, low_new = page.lower(), new_page.lower()
    shown = [v for v in vals if v.strip() and v.lower() in low_new and v.lower() not in low_old]
    if shown:
        out.append("out:shows_value")
    if c.new_actions:
        best = max((match(move_parts(a)[2], vals, uwords, haystack) for a in c.new_actions),
                   key=lambda k: ("none", "noname", "noword", "some", "all", "phrase", "exact").index(k)
                   if k in ("none", "noname", "noword", "some", "all", "phrase", "exact") else 0)
        out += ["out:new", f"out:new|m:{best}"]
    else:
        out.append("out:no_new")
    if new_page:
        after = relations.read_facts(facts.utter, new_page, [*played, c.text], uwords)
        d0, d1 = relations.distance(facts), relations.distance(after)
        if d0 is not None and d1 is not None:
            out.append("out:hit" if d1 == 0 else "out:closer" if d1 < d0 else "out:farther" if d1 > d0
                       else "out:same_distance")
        if _shown(after, new_page) == "all" and _shown(facts, page) != "all":
            out.append("out:shows_all")
    if c.revisits:
        out.append("out:revisit")
    return out + [f"t:{task}|{o}" for o in out if o != "out:revisit"]
