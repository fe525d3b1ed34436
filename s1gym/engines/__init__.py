"""Engines: the games that live outside Python objects (a JVM, a browser, a desktop app) and the seam
tasks stand on to fork them (:mod:`s1gym.engines.base`); what runs at fork and exit is in
:mod:`s1gym.engines.lifecycle`."""
