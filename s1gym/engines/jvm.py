"""One JVM per process, shared by every TextWorldExpress env and fork.

TextWorldExpress's own ``TextWorldExpressEnv`` launches a JVM per env (and
``clone()`` launches another one and replays: docs/benchmarks.md). Here one py4j
gateway per process hosts any number of game objects (Scala
``PythonInterface`` instances), so making an env or a fork never starts a JVM.

Lifetime: envs :meth:`JVM.retain` / :meth:`JVM.release` it (a reference
count). When the count drops to zero the JVM stays up and warm (a restart
pays class loading and JIT warm-up again, and tests and runners make envs one
after another); it is shut down at interpreter exit (:mod:`s1gym.engines.lifecycle`; the
launcher's ``die_on_exit`` also kills it if Python dies) or explicitly with
:func:`shutdown_jvm`. A process that forks (``os.fork``/multiprocessing)
gets its own JVM on first use in the child: the parent's sockets are not
reused.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from s1gym.engines import lifecycle
from s1gym.errors import S1GymError

#: The oldest Java that runs the TextWorldExpress 1.1.0 jar (its classes are Java 8 bytecode, major 52).
MIN_JAVA = 8

INSTALL_HINT = (
    "install a Java runtime >= {min} and put `java` on PATH, e.g. "
    "`sudo apt-get install openjdk-17-jre-headless` (Debian/Ubuntu), "
    "`brew install openjdk@17` (macOS) or `conda install -c conda-forge openjdk=17`"
)


class JavaNotFoundError(S1GymError, RuntimeError):
    """Java is missing or too old for TextWorldExpress."""


def java_version(java: str) -> int | None:
    """The major version of ``java`` (``java -version``), ``None`` when it cannot be told."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major  # "1.8" means Java 8


def check_java() -> str:
    """The path of a usable ``java``; :class:`JavaNotFoundError` saying how to install one otherwise."""
    java_home = os.environ.get("JAVA_HOME")
    java = shutil.which("java") or (os.path.join(java_home, "bin", "java") if java_home else None)
    if not java or not os.path.exists(java):
        raise JavaNotFoundError(
            "the tasks that run in a JVM need Java but no `java` was found on PATH; " + INSTALL_HINT.format(min=MIN_JAVA)
        )
    version = java_version(java)
    if version is not None and version < MIN_JAVA:
        raise JavaNotFoundError(
            f"the tasks that run in a JVM need Java >= {MIN_JAVA} but {java} is Java {version}; "
            + INSTALL_HINT.format(min=MIN_JAVA)
        )
    return java


#: Seconds a py4j error waits for the JVM process to exit before the JVM counts as alive.
CRASH_WAIT_S = 2.0


#: The deep copier the families' Java helpers share (package ``s1gym.jvm``), compiled with each helper.
DEEP_COPY_SOURCE = Path(__file__).with_name("S1DeepCopy.java")

_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)


def source_package(source: str, default: str = "") -> str:
    """The package a Java source declares (its first ``package`` line), else ``default``."""
    m = _PACKAGE.search(source)
    return m.group(1) if m else default


def compile_helper(sources: Sequence[Path], classpath: str, package: str, name: str, without: str) -> str | None:
    """The folder holding ``sources`` (Java) compiled against ``classpath``, compiled now with ``javac`` into
    s1gym's cache (``$S1GYM_CACHE/java/<name>-<hash of the sources, classpath and javac>``) unless already
    there; ``None`` with one warning (``without``: what the caller does then) when there is no ``javac`` or it
    fails. Each source's classes go to its own package's folder (the one it declares; ``package`` for a
    source that declares none), so a family's helper compiles with the shared copier
    (:data:`DEEP_COPY_SOURCE`, package ``s1gym.jvm``). A family's engine puts the folder on its JVM's
    classpath."""
    import hashlib
    import logging
    import tempfile

    from s1gym.datasets import cache_root

    log = logging.getLogger(__name__)
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"], "bin", "javac")
        javac = str(candidate) if candidate.exists() else None
    if javac is None:
        log.warning("s1gym: no javac on PATH, so %s; install a JDK (e.g. `sudo apt-get install "
                    "openjdk-17-jdk-headless`)", without)
        return None
    told = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60, check=False)
    texts = [path.read_bytes() for path in sources]
    stamp = b"".join(texts) + classpath.encode() + (told.stdout + told.stderr).encode()
    digest = hashlib.sha256(stamp).hexdigest()[:16]
    folder = cache_root() / "java" / f"{name}-{digest}"
    classes = [Path(*filter(None, source_package(text.decode("utf-8", "replace"), package).split(".")),
                    path.with_suffix(".class").name) for path, text in zip(sources, texts, strict=True)]
    if all((folder / c).is_file() for c in classes):
        return str(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=folder.parent))
    try:
        command = [javac, "-nowarn", "-XDignore.symbol.file", "-cp", classpath, "-d", str(tmp), *map(str, sources)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            log.warning("s1gym: compiling %s failed, so %s:\n%s", " and ".join(p.name for p in sources), without,
                        done.stderr.strip())
            return None
        try:
            os.replace(tmp, folder)  # atomic: another process compiling at the same time wins or loses whole
        except OSError:
            if not all((folder / c).is_file() for c in classes):
                raise
        return str(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class JVM:
    """A py4j gateway to a JVM running the TextWorldExpress jar."""

    def __init__(self, classpath: str, cwd: str) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        java = check_java()
        try:
            port, proc = launch_gateway(
                classpath=classpath, die_on_exit=True, cwd=cwd, javaopts=["-Xverify:none"],
                java_path=java, return_proc=True,
            )
        except Exception as exc:  # the launcher reports a dead JVM as a bare error
            raise JavaNotFoundError(
                f"could not start the JVM with {java} ({exc}); " + INSTALL_HINT.format(min=MIN_JAVA)
            ) from exc
        self.process = proc
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(auto_field=True, port=port), java_process=proc)
        self.pid = os.getpid()
        self.refs = 0
        self.lock = threading.RLock()
        #: Per-JVM caches owned by the users of the gateway (e.g. game generators).
        self.cache: dict[Any, Any] = {}
        self.closed = False

    @property
    def jvm(self):
        return self.gateway.jvm

    def alive(self) -> bool:
        """True while the JVM process runs (a killed JVM leaves a gateway that only refuses connections)."""
        return not self.closed and self.process.poll() is None

    def _forget_dead_gateway(self) -> None:
        """A dead JVM's gateway sends nothing more: its proxies' finalizers (which would each try to connect,
        be refused and log a traceback) become no-ops and its sockets are closed without a goodbye."""
        client = self.gateway._gateway_client
        client.garbage_collect_object = lambda *args, **kwargs: None
        try:
            client.close()
        except Exception:  # noqa: BLE001 - the sockets of a dead peer may fail to close; they are gone anyway
            pass

    def crashed(self, exc: BaseException) -> bool:
        """Whether ``exc`` (raised by a call through this gateway) means this JVM is gone. A killed JVM's
        socket closes a moment before its process is reaped, so its exit is awaited briefly; a gateway that
        cannot be reached while the process runs is shut down (the next :func:`get_jvm` starts another)."""
        from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError

        if not self.alive():
            return True
        if not isinstance(exc, Py4JError) or isinstance(exc, Py4JJavaError):
            return False  # a Java exception (the JVM answered) or no py4j error at all
        try:
            self.process.wait(timeout=CRASH_WAIT_S)
        except subprocess.TimeoutExpired:
            if not isinstance(exc, Py4JNetworkError):
                return False
            self.shutdown()
        return True

    def retain(self) -> None:
        with self.lock:
            self.refs += 1

    def release(self) -> None:
        with self.lock:
            self.refs = max(0, self.refs - 1)

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.process.poll() is not None:
            self._forget_dead_gateway()
            return
        try:
            self.gateway.shutdown()
        except Exception:
            pass
        try:
            if self.process.poll() is None:
                self.process.stdin.write(b"\n")  # py4j's launcher exits on a newline (py4j issue 320)
                self.process.stdin.flush()
                self.process.wait(timeout=5)
        except Exception:
            try:
                self.process.kill()
            except Exception:
                pass


_lock = threading.Lock()
_current: JVM | None = None


def get_jvm(classpath: str, cwd: str) -> JVM:
    """The process's JVM, started on first use (again after ``os.fork``, :func:`shutdown_jvm` or the JVM's
    death: a dead JVM is dropped, with its cached game generators, and a fresh one started)."""
    global _current
    jvm = _current
    if jvm is not None and jvm.pid == os.getpid() and jvm.alive():
        return jvm
    with _lock:
        if _current is not None and _current.pid == os.getpid() and not _current.alive():
            _current.shutdown()  # closes the dead gateway's sockets
        if _current is None or _current.pid != os.getpid() or not _current.alive():
            _current = JVM(classpath, cwd)
        return _current


def current_jvm() -> JVM | None:
    """The live JVM of this process, if one was started."""
    jvm = _current
    return jvm if jvm is not None and jvm.pid == os.getpid() and jvm.alive() else None


def shutdown_jvm() -> None:
    """Stop this process's JVM now (envs still open re-start one and replay their games on next use)."""
    global _current
    with _lock:
        jvm, _current = _current, None
    if jvm is not None and jvm.pid == os.getpid():
        jvm.shutdown()


lifecycle.at_exit("jvm", shutdown_jvm)


@lifecycle.at_fork_in_child
def _leave_the_parents_jvm_alone() -> None:
    """In a forked child, the proxies of the parent's Java objects never talk to the parent's JVM.

    py4j frees a Java object when its Python proxy is collected, by a command on its gateway's socket; a
    child collecting the proxies it inherited wrote on the parent's socket and could read the parent's
    reply, and the parent then waited for it forever (``gym.make_vec(..., vectorization_mode="async")``
    hung in the suite twice, the parent inside ``garbage_collect_object``). The child has its own JVM."""
    jvm = _current
    if jvm is not None and jvm.pid != os.getpid():
        jvm.gateway._gateway_client.garbage_collect_object = lambda *args, **kwargs: None
