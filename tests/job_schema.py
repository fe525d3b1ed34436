"""JSON schemas of a job folder's files: the documented field names (Harbor 0.26 + ours).

Tests validate every file a job writes against these, so a renamed or dropped
field fails loudly. Schemas allow extra fields (Harbor's pydantic models
ignore unknown keys too) but require every field the docs name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

NUM = {"type": "number"}
INT = {"type": "integer", "minimum": 0}
STR = {"type": "string"}
TIME = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"}
OPT_TIME = {"anyOf": [TIME, {"type": "null"}]}


def obj(required: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": required, **extra}


SEEDS = {
    "type": "object",
    "required": ["start", "count", "list"],
    "properties": {"start": {"type": "integer"}, "count": {"type": "integer"}, "list": {"type": "array"}},
}
AGENT_CONFIG = obj({"name": STR, "kwargs": {"type": "object"}, "wrappers": {"type": "array", "items": STR}})

JOB_CONFIG = obj(
    {
        "job_name": STR,
        "jobs_dir": STR,
        "n_attempts": INT,
        "orchestrator": obj({"type": {"enum": ["local", "multiprocessing", "ray"]}}),
        "agents": {"type": "array", "items": AGENT_CONFIG, "minItems": 1},
        "tasks": {
            "type": "array",
            "items": obj({"name": STR, "options": {"type": "object"}, "resolved_options": {"type": "object"}}),
            "minItems": 1,
        },
        "seeds": SEEDS,
        "s1gym": obj({"version": STR, "label": STR}),
        # what `s1 rerun` replays and checks (issue 57)
        "spec": obj({"task": STR, "seed": INT, "episodes": INT}),
        "pins": obj({"s1gym": obj({"version": STR}), "python": STR,
                     "packages": {"type": "object", "additionalProperties": STR},
                     "files": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
                     "model_files": {"type": "array", "items": STR}}),
    }
)

EVAL_STATS = obj(
    {
        "n_trials": INT,
        "n_errors": INT,
        "metrics": {"type": "array"},
        "reward_stats": obj({"reward": {"type": "object"}}),
        "exception_stats": {"type": "object"},
    }
)

JOB_RESULT = obj(
    {
        "id": STR,
        "started_at": TIME,
        "finished_at": OPT_TIME,
        "n_total_trials": INT,
        "stats": obj(
            {
                "n_trials": INT,
                "n_errors": INT,
                "n_completed_trials": INT,
                "n_errored_trials": INT,
                "n_input_tokens": INT,
                "n_cache_tokens": INT,
                "n_output_tokens": INT,
                "cost_usd": NUM,
                "evals": {"type": "object", "additionalProperties": EVAL_STATS, "minProperties": 1},
            }
        ),
    }
)

EXCEPTION_INFO = obj(
    {"exception_type": STR, "exception_message": STR, "exception_traceback": STR, "occurred_at": TIME}
)

TRIAL_CONFIG = obj(
    {
        "task": obj({"name": STR, "options": {"type": "object"}, "seed": INT}),
        "trial_name": STR,
        "trials_dir": STR,
        "agent": AGENT_CONFIG,
        "job_id": STR,
    }
)

TRIAL_RESULT = obj(
    {
        "id": STR,
        "task_name": STR,
        "trial_name": STR,
        "trial_uri": STR,
        "task_id": obj({"path": STR}),
        "task_checksum": STR,
        "config": TRIAL_CONFIG,
        "agent_info": obj(
            {
                "name": STR,
                "version": STR,
                "model_info": {"anyOf": [{"type": "null"}, obj({"name": STR, "provider": STR})]},
            }
        ),
        "agent_result": obj(
            {
                "n_input_tokens": INT,
                "n_cache_tokens": INT,
                "n_output_tokens": INT,
                "cost_usd": NUM,
                "metadata": obj(
                    {
                        "n_calls": INT,
                        "n_steps": INT,
                        "won": {"type": "boolean"},
                        "decision_latency_s": {"type": "array", "items": NUM},
                    }
                ),
            }
        ),
        "verifier_result": {
            "anyOf": [
                {"type": "null"},
                obj({"rewards": obj({"reward": {"type": "number", "minimum": 0, "maximum": 1}})}),
            ]
        },
        "exception_info": {"anyOf": [{"type": "null"}, EXCEPTION_INFO]},
        "started_at": TIME,
        "finished_at": TIME,
    },
    # exactly one of a reward and an exception
    oneOf=[
        {"properties": {"verifier_result": {"type": "null"}, "exception_info": EXCEPTION_INFO}},
        {"properties": {"verifier_result": {"type": "object"}, "exception_info": {"type": "null"}}},
    ],
)

USAGE = obj({"calls": INT, "input_tokens": INT, "output_tokens": INT, "cost_usd": NUM, "latency_s": NUM})

TICK_FIELDS = {
    "t": INT,
    "action": INT,
    "move": STR,
    "reward": {"type": ["number", "null"]},
    "score": {"type": ["number", "null"]},
    "latency_s": NUM,
    "usage": USAGE,
    "info": {"type": "object"},
}
#: Format 1 (files written before the compact format): every text and list in place.
TICK_V1 = obj(
    {
        **TICK_FIELDS,
        "observation": STR,
        "candidates": {"type": "array", "items": STR, "minItems": 1},
        "probabilities": {"type": "array", "items": NUM, "minItems": 1},
    }
)
EPISODE_HEAD = {"task": STR, "options": {"type": "object"}, "seed": INT, "policy": STR, "final": {"type": "object"},
                "usage": USAGE}
EPISODE_V1 = obj({**EPISODE_HEAD, "ticks": {"type": "array", "items": TICK_V1}})

#: Format 2 (s1gym.jobs.compact_episode): texts as lists of paragraph ids, lists as ids into ``lists``.
IDS = {"type": "array", "items": INT, "minItems": 1}
TICK_V2 = obj({**TICK_FIELDS, "observation": IDS, "candidates": INT, "probabilities": INT, "clock_s": NUM})
TICK_V2["properties"] |= {"feedback": IDS, "frame": {"type": "string", "pattern": r"^frames/\d{4}\.png$"}}
EPISODE_V2 = obj(
    {
        "format": {"const": 2},
        **EPISODE_HEAD,
        "texts": {"type": "array", "items": STR},
        "lists": {"type": "array", "items": {"type": "array"}},
        "ticks": {"type": "array", "items": TICK_V2},
        "final": obj({"observation": {"anyOf": [IDS, {"type": "null"}]}, "score": {"type": ["number", "null"]}}),
    }
)
EPISODE = {"oneOf": [EPISODE_V2, {"allOf": [EPISODE_V1, {"not": {"required": ["format"]}}]}]}

OPT_NUM = {"type": ["number", "null"]}
SUMMARY = obj(
    {
        "job_name": STR,
        "job_dir": STR,
        "task": STR,
        "policy": STR,
        "wrappers": {"type": "array", "items": STR},
        "seeds": SEEDS,
        "resolved_options": {"type": "object"},
        "agent": {"type": "object"},
        "errors_by_message": {"type": "object"},
        "episodes": INT,
        "scored": INT,
        "errors": INT,
        "mean_score": OPT_NUM,
        "ci95": {"type": "array", "items": OPT_NUM, "minItems": 2, "maxItems": 2},
        "wins": INT,
        "mean_steps": OPT_NUM,
        "median_latency_s": OPT_NUM,
        "mean_latency_s": OPT_NUM,
        "mean_search_s": OPT_NUM,
        "calls": INT,
        "input_tokens": INT,
        "output_tokens": INT,
        "cost_usd": NUM,
        "fitted_on_played": {"type": "array", "items": STR},
    }
)


def validate_job(job_dir: Path) -> int:
    """Validate every JSON file of a job folder; returns how many trials were checked."""
    import json

    def load(p: Path) -> Any:
        return json.loads(p.read_text(encoding="utf-8"))

    jsonschema.validate(load(job_dir / "config.json"), JOB_CONFIG)
    jsonschema.validate(load(job_dir / "result.json"), JOB_RESULT)
    jsonschema.validate(load(job_dir / "summary.json"), SUMMARY)
    n = 0
    for trial in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        jsonschema.validate(load(trial / "config.json"), TRIAL_CONFIG)
        jsonschema.validate(load(trial / "result.json"), TRIAL_RESULT)
        jsonschema.validate(load(trial / "agent" / "episode.json"), EPISODE)
        n += 1
    return n
