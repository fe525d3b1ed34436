"""How Chat makes a server answer an option number: the constraints a server may honour, tried once.

A free-text reply from a weak model is often not an option at all (Gemma 3 270M on llama.cpp echoes the
prompt template), and a decision that falls back to flat odds is not the model's. So Chat constrains the
reply to the option numbers where the server can, and reads the model's odds of each number from
``logprobs`` where the server sends them (lm-evaluation-harness scores multiple choice by likelihood, never
by parsing). Each server speaks its own dialect:

- ``grammar``: a GBNF grammar (llama.cpp's server, both the C++ ``llama-server`` and ``llama-cpp-python``);
- ``guided_choice``: vLLM's guided decoding over a list of strings;
- ``json_schema``: OpenAI-style structured output (``response_format``) whose one field is an enum;
- ``none``: free text, parsed; the last resort.

:data:`ORDER` is the order in which the first decision tries them. A constraint counts as honoured when
the server answers 200 with a valid option; a 400/422 (an unknown field) or a reply that is not an option
(a server that ignores unknown fields) moves on to the next. The mode a decision reports
(``Decision.info["mode"]``) follows from the constraint and the reply: ``"logprobs"`` (constrained, and
the probabilities read off the answer tokens' ``top_logprobs``), ``"choice"`` (constrained, one-hot on
the answer) or ``"free"`` (parsed text; invalid replies counted in ``info["invalid"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CONSTRAINTS", "ORDER", "answer_text", "constraint_body", "constraint_of_extra_body",
           "server_seconds"]

#: The constraints Chat knows, in the order the first decision tries them (``none`` always works).
ORDER = ("grammar", "guided_choice", "json_schema", "none")
CONSTRAINTS = frozenset({"auto", *ORDER})
#: llama.cpp returns however many alternatives it is asked for; the option digits of a weak model under
#: a template it was not trained on rank around 50-60th (the markup it would rather write comes first),
#: so a grammar request asks for this many when ``top_logprobs`` is lower: fewer leave the numbers unlisted.
GRAMMAR_TOP_LOGPROBS = 200
_SCHEMA_NAME = "option"


def constraint_body(constraint: str, n: int) -> dict[str, Any]:
    """The request fields that restrict the reply to the numbers ``1..n`` under ``constraint``."""
    numbers = [str(k) for k in range(1, n + 1)]
    if constraint == "grammar":
        return {"grammar": "root ::= " + " | ".join(f'"{k}"' for k in numbers)}
    if constraint == "guided_choice":
        return {"guided_choice": numbers}
    if constraint == "json_schema":
        schema = {"type": "object", "properties": {_SCHEMA_NAME: {"type": "integer", "enum": list(range(1, n + 1))}},
                  "required": [_SCHEMA_NAME], "additionalProperties": False}
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "choice", "strict": True, "schema": schema}}}
    return {}


def constraint_of_extra_body(extra_body: Mapping[str, Any]) -> str | None:
    """The constraint a caller's own ``extra_body`` already sets (it wins over Chat's), or None."""
    for key, constraint in (("grammar", "grammar"), ("guided_choice", "guided_choice"),
                            ("response_format", "json_schema")):
        if key in extra_body:
            return constraint
    return None


def answer_text(constraint: str, content: str) -> str:
    """The option number's text in a reply: a structured reply's field, else the reply itself."""
    if constraint == "json_schema":
        import json

        try:
            value = json.loads(content).get(_SCHEMA_NAME)
        except (ValueError, AttributeError):
            return content
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else content
    return content


def server_seconds(data: Mapping[str, Any]) -> float | None:
    """The server's own inference time for a response, when it reports one (llama.cpp's C++
    ``llama-server`` sends ``timings`` with ``prompt_ms`` and ``predicted_ms``; others send nothing)."""
    timings = data.get("timings")
    if not isinstance(timings, Mapping):
        return None
    try:
        return (float(timings.get("prompt_ms") or 0.0) + float(timings.get("predicted_ms") or 0.0)) / 1000.0
    except (TypeError, ValueError):
        return None
