"""The eval runner: what to run (:mod:`.spec`), where (:mod:`.backends`), one episode
(:mod:`.episode`), the agent's description (:mod:`.agent`) and live progress (:mod:`.progress`)."""

from s1gym.runner.spec import JobSpec, evaluate, make_env, resolve_task

__all__ = ["JobSpec", "evaluate", "make_env", "resolve_task"]
