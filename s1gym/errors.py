"""One base for every s1gym error: ``except S1GymError`` catches anything s1gym raises on purpose.

Each error also keeps the built-in base its callers already catch (``ValueError`` for bad arguments and
options, ``RuntimeError`` for a broken run, ``ConnectionError``/``TimeoutError``/``OSError`` where the
operating system's meaning applies), so ``except ValueError`` goes on working. Every error lives in the
module that raises it; this module holds the base and :class:`RunError` (raised by every runner layer).
The tree (``tests/test_errors.py`` checks that every exception class of s1gym, its policies and its
wrappers is on it)::

    S1GymError
    ├── TooManyCandidatesError (RuntimeError)     s1gym.core.progress: more legal moves than the task's cap N
    ├── RunError (RuntimeError)                   s1gym.errors: a run cannot start or go on (runner, backends)
    │   └── RayHeadLost                           s1gym.runner.ray_cluster: the Ray head stopped answering mid-job
    ├── EngineCrashed (RuntimeError)              s1gym.errors: an engine process (JVM, browser, desktop) died
    │   ├── BrowserCrashed                        s1gym.engines.chromium: the browser died or hung
    │   ├── CalculatorCrashed (DesktopError)      s1gym.tasks.desktop.engine: the calculator died
    │   └── WorkerCrashed                         s1gym.runner.backends: the process playing it died
    ├── EpisodeError (RuntimeError)               s1gym.runner.episode: a policy broke the contract mid-episode
    ├── JobFolderError (ValueError)               s1gym.jobs.folder: a job folder cannot be used as asked
    ├── JobWriteError (OSError)                   s1gym.jobs.folder: a running job's file cannot be written
    ├── RemoteJobsError (ValueError)              s1gym.jobs.remote: a folder of jobs at a URL cannot be reached
    ├── DataError (ValueError)                    s1gym.datasets: a data file is missing or malformed
    ├── FamilyError (ValueError)                  s1gym.family: a family's declaration is malformed
    ├── ReplayError (ValueError)                  s1gym.reporting.replay.page: a trial cannot be replayed
    ├── ExportError (ValueError)                  s1gym.jobs.export: the episodes cannot be exported as asked
    ├── JavaNotFoundError (RuntimeError)          s1gym.engines.jvm: no Java for the tasks run in a JVM
    ├── ExpertLost (RuntimeError)                 s1gym.tasks.alfworld.expert: the expert names no candidate
    ├── BrowserNotFoundError (FileNotFoundError)  s1gym.engines.chromium: no Chromium or Playwright
    ├── AtspiError (RuntimeError)                 s1gym.tasks.desktop.atspi: the accessibility bus failed
    ├── DesktopError (RuntimeError)               s1gym.tasks.desktop.stack: the desktop session failed
    │   ├── DesktopUnavailable                    no X server, D-Bus or application to run
    │   └── CalculatorCrashed (EngineCrashed)     (above)
    ├── GoalError (ValueError)                    s1gym.tasks.desktop.goals: a calculator goal is malformed
    ├── ArenaFull (RuntimeError)                  s1gym.tasks.robot.arm: MuJoCo's arena ran out under a step
    ├── PolicyError (RuntimeError)                s1gym.policies.errors: a decision model failed
    │   ├── PolicyConfigError (ValueError)        bad options, missing key or extra
    │   ├── PolicyAuthError                       the service refused the key
    │   ├── PolicyRateLimitError                  too many requests
    │   ├── PolicyServerError                     the service failed (5xx)
    │   ├── PolicyConnectionError (ConnectionError)  the service could not be reached
    │   │   └── PolicyTimeoutError (TimeoutError)    no answer in time
    │   ├── PolicyRequestError                    the service rejected the request (4xx)
    │   └── PolicyResponseError                   the answer could not be read
    ├── BackendUnavailable                        s1gym.models.minilm: an embedding backend cannot run here
    ├── WrapperOrderError (ValueError)            s1gym.wrappers: wrappers composed in an order that breaks one
    ├── OracleForkError (ValueError)              s1gym.wrappers: forking a task whose fork reveals the answer
    ├── RequestError                              s1gym.ui.serve: an HTTP error answer (status and body)
    ├── InsecureServeError (ValueError)           s1gym.ui.address: a non-loopback host with no API key
    └── PortError (OSError)                       s1gym.ui.address: the server cannot listen where asked
"""

from __future__ import annotations

from typing import Any

__all__ = ["EngineCrashed", "RunError", "S1GymError"]


class S1GymError(Exception):
    """The base of every error s1gym raises on purpose (see the module docstring for the tree)."""


class RunError(S1GymError, RuntimeError):
    """A run cannot start or go on: unknown task or policy, bad options, a missing extra (Ray)."""


class EngineCrashed(S1GymError, RuntimeError):
    """An engine's process died under an episode: the episode ends, the next one gets a fresh engine.

    ``engine`` names what died (``"TextWorldExpress JVM"``, ``"Chromium"``...), ``seed`` the episode's seed
    and ``step`` the moves played before it died (``None``: during the reset); the message says all three.
    Whoever learns one first fills it in (:meth:`locate`: the env knows the engine and the step, the runner
    the seed). The runner plays an episode whose engine crashed again from its seed (``--retries``)."""

    def __init__(self, message: str, *, engine: str | None = None, seed: int | None = None,
                 step: int | None = None) -> None:
        super().__init__(message)
        self.detail, self.engine, self.seed, self.step = message, engine, seed, step

    def locate(self, *, engine: str | None = None, seed: int | None = None,
               step: int | None = None) -> EngineCrashed:
        """Fill in what is not known yet (never overwrites); returns ``self``."""
        self.engine = self.engine if self.engine is not None else engine
        self.seed = self.seed if self.seed is not None else seed
        self.step = self.step if self.step is not None else step
        return self

    def __str__(self) -> str:
        where = [f"engine {self.engine}"] if self.engine else []
        where += [f"seed {self.seed}"] if self.seed is not None else []
        where += [f"step {self.step}"] if self.step is not None else []
        return f"{self.detail} ({', '.join(where)})" if where else self.detail

    def __reduce__(self) -> Any:  # the fields survive pickling (a worker process, a Ray actor)
        return _rebuild, (type(self), self.detail, self.engine, self.seed, self.step)


def _rebuild(cls: type[EngineCrashed], detail: str, engine: str | None, seed: int | None,
             step: int | None) -> EngineCrashed:
    exc = cls.__new__(cls)
    EngineCrashed.__init__(exc, detail, engine=engine, seed=seed, step=step)
    return exc
