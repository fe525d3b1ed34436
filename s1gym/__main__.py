"""``python -m s1gym`` is the ``s1`` command."""

from s1gym.ui.cli import main

if __name__ == "__main__":  # importing the module (as tools that walk the package do) runs nothing
    raise SystemExit(main())
