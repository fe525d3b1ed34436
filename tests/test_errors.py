"""One error base: every exception class of s1gym, its policies and its wrappers derives from S1GymError,
keeps its built-in base, and is drawn on the tree in s1gym.errors' docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import s1gym
from s1gym import errors
from s1gym.errors import RunError, S1GymError


def _modules():
    for info in pkgutil.walk_packages(s1gym.__path__, "s1gym."):
        if ".data." in info.name:
            continue
        yield importlib.import_module(info.name)
    for package in ("s1gym.policies", "s1gym.wrappers"):
        pkg = importlib.import_module(package)
        yield pkg
        for info in pkgutil.iter_modules(pkg.__path__, package + "."):
            yield importlib.import_module(info.name)


def _exception_classes():
    found = {}
    for module in _modules():
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_exception_class_derives_from_the_base_and_is_on_the_tree():
    classes = _exception_classes()
    assert len(classes) >= 25, sorted(classes)
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, S1GymError))
    assert not outside, f"not under S1GymError: {outside}"
    tree = errors.__doc__
    missing = sorted(name for name, cls in classes.items() if cls.__name__ not in tree)
    assert not missing, f"not drawn in s1gym.errors' docstring: {missing}"


def test_errors_keep_the_builtin_bases_callers_catch():
    from s1gym.core import TooManyCandidatesError
    from s1gym.engines.browser import BrowserNotFoundError
    from s1gym.jobs import JobFolderError
    from s1gym.policies import PolicyConfigError, PolicyTimeoutError
    from s1gym.ui.serve import PortError
    from s1gym.wrappers import WrapperOrderError

    assert issubclass(RunError, RuntimeError) and issubclass(TooManyCandidatesError, RuntimeError)
    assert issubclass(JobFolderError, ValueError) and issubclass(WrapperOrderError, ValueError)
    assert issubclass(PolicyConfigError, ValueError) and issubclass(PolicyTimeoutError, TimeoutError)
    assert issubclass(BrowserNotFoundError, FileNotFoundError) and issubclass(PortError, OSError)
    with pytest.raises(S1GymError, match="unknown task"):
        from s1gym.runner.spec import resolve_task

        resolve_task("NoSuchTask")
