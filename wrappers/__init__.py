"""Policy wrappers (``s1gym.wrappers``)."""
