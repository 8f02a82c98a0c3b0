# shellcheck shell=bash
# Shared helpers for scripts/test, scripts/sweep and the benchmarks in bench/.
# Source it from bash (`source "$(dirname "$0")/lib.sh"`); it sets no shell
# options of its own.
#
#   log MSG... / die MSG...         messages on stderr ("==> ..."), die exits 1
#   as_root CMD...                  run as root (directly, or `sudo -n`), or die
#   apt_install PKG...              apt-get update (once) + install -y
#   ensure_cmd BIN PKG              install Debian package PKG unless BIN exists
#   ensure_redis                    redis-server, redis-cli, redis-benchmark
#   ensure_nutcracker               nutcracker (twemproxy), for tests/proxy.rs
#   ensure_hdrhistogram_java        java and HdrHistogram's jar, for tests/outputs.rs
#   free_port                       print a free TCP port on 127.0.0.1
#   start_redis PORT [ARGS...]      start redis-server in the background,
#                                   wait for PING, print its pid
#   start_redis_free [ARGS...]      same on a free port (retries), prints
#                                   "PORT PID"
#   stop_redis PID [PORT]           SIGKILL it, wait, remove its directory
#   on_exit CMD...                  run CMD at exit (LIFO); needs
#   install_cleanup_trap            (sets the EXIT/INT/TERM traps once)
#   raise_nofile N                  make `ulimit -n` at least N in this shell
#                                   (and so in what it starts), or die

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# Runs a command as root: directly when we are root, through a
# non-interactive sudo when that works, otherwise fails with a clear message.
as_root() {
    if [[ ${EUID:-$(id -u)} -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        die "need root to run '$*' (not root, and no password-less sudo); install it by hand"
    fi
}

_APT_UPDATED=0
# apt-get install -y PKG... (after one apt-get update per shell). Services that
# the packages ship are not started (a temporary policy-rc.d, unless the
# machine already has one).
apt_install() {
    command -v apt-get >/dev/null 2>&1 ||
        die "apt-get not found: install these Debian packages by hand: $*"
    export DEBIAN_FRONTEND=noninteractive
    if [[ $_APT_UPDATED -eq 0 ]]; then
        log "apt-get update"
        as_root apt-get update -qq || die "apt-get update failed"
        _APT_UPDATED=1
    fi
    local made_policy=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d' &&
            made_policy=1
    fi
    log "apt-get install -y $*"
    local rc=0
    as_root apt-get install -y -qq --no-install-recommends "$@" || rc=$?
    if [[ $made_policy -eq 1 ]]; then
        as_root rm -f /usr/sbin/policy-rc.d || true
    fi
    [[ $rc -eq 0 ]] || die "apt-get install $* failed (exit $rc)"
}

# ensure_cmd BIN PKG: installs Debian package PKG if BIN is not found.
ensure_cmd() {
    local bin=$1 pkg=$2
    if ! command -v "$bin" >/dev/null 2>&1; then
        apt_install "$pkg"
        command -v "$bin" >/dev/null 2>&1 || die "$pkg installed but $bin is still not on PATH"
    fi
}

# Makes sure redis-server (package redis-server) and redis-cli and
# redis-benchmark (package redis-tools) exist; installs what is missing.
ensure_redis() {
    local pkgs=()
    command -v redis-server >/dev/null 2>&1 || pkgs+=(redis-server)
    if ! command -v redis-cli >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
        pkgs+=(redis-tools)
    fi
    if [[ ${#pkgs[@]} -gt 0 ]]; then
        apt_install "${pkgs[@]}"
    fi
    local b
    for b in redis-server redis-cli redis-benchmark; do
        command -v "$b" >/dev/null 2>&1 || die "$b still missing after installing ${pkgs[*]}"
    done
}

# Makes sure nutcracker (twemproxy, Debian package nutcracker) exists; the
# proxy tests start their own with a generated config (the package's service is
# not started). Debian installs it in /usr/sbin.
ensure_nutcracker() {
    if ! command -v nutcracker >/dev/null 2>&1 && [[ ! -x /usr/sbin/nutcracker ]]; then
        apt_install nutcracker
    fi
    command -v nutcracker >/dev/null 2>&1 || [[ -x /usr/sbin/nutcracker ]] ||
        die "nutcracker still missing after installing package nutcracker"
}

# Makes sure HdrHistogram's Java library (Debian package libhdrhistogram-java,
# /usr/share/java/hdrhistogram.jar) and a java to run it (default-jre-headless)
# exist: tests/outputs.rs reads a run's .hlog with its HistogramLogProcessor.
HDRHISTOGRAM_JAR=/usr/share/java/hdrhistogram.jar
ensure_hdrhistogram_java() {
    local pkgs=()
    command -v java >/dev/null 2>&1 || pkgs+=(default-jre-headless)
    [[ -f $HDRHISTOGRAM_JAR ]] || pkgs+=(libhdrhistogram-java)
    if [[ ${#pkgs[@]} -gt 0 ]]; then
        apt_install "${pkgs[@]}"
    fi
    command -v java >/dev/null 2>&1 || die "java still missing after installing ${pkgs[*]}"
    [[ -f $HDRHISTOGRAM_JAR ]] ||
        die "$HDRHISTOGRAM_JAR still missing after installing ${pkgs[*]}"
}

# Prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The working directory start_redis uses for PORT (data and redis.log).
redis_dir() {
    printf '%s/tailrate-redis.%s\n' "${TMPDIR:-/tmp}" "$1"
}

# start_redis PORT [EXTRA REDIS ARGS...]
# Starts redis-server on 127.0.0.1:PORT in the background, persisting nothing,
# pinned to CPU ${REDIS_CPU:-0} when taskset exists and there are 2+ CPUs
# (REDIS_CPU=none disables pinning). Waits up to 10 s for it to answer PING
# (and checks the answering server is this one), then prints its pid.
# On failure prints the log to stderr and returns 1.
# Safe to call as pid=$(start_redis ...): the server's output goes to files.
start_redis() {
    local port=$1
    shift
    local dir
    dir=$(redis_dir "$port")
    rm -rf "$dir"
    mkdir -p "$dir"
    local pin=()
    local cpu=${REDIS_CPU:-0}
    if [[ $cpu != none ]] && command -v taskset >/dev/null 2>&1 && [[ $(nproc) -ge 2 ]]; then
        pin=(taskset -c "$cpu")
    fi
    "${pin[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize no --dir "$dir" --logfile "$dir/redis.log" "$@" \
        </dev/null >"$dir/stdout.log" 2>&1 &
    local pid=$!
    local i reply
    for ((i = 0; i < 200; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        reply=$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)
        if [[ $reply == PONG ]]; then
            if redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null | tr -d '\r' |
                grep -qx "process_id:$pid"; then
                echo "$pid"
                return 0
            fi
            break # someone else answers on this port
        fi
        sleep 0.05
    done
    {
        echo "redis-server on port $port did not come up; log:"
        cat "$dir/redis.log" "$dir/stdout.log" 2>/dev/null || true
    } >&2
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
    return 1
}

# start_redis_free [EXTRA REDIS ARGS...]: start_redis on a free port, retrying
# with a new port up to 5 times; prints "PORT PID".
start_redis_free() {
    local attempt port pid
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if pid=$(start_redis "$port" "$@"); then
            echo "$port $pid"
            return 0
        fi
        log "redis-server start attempt $attempt on port $port failed"
    done
    return 1
}

# stop_redis PID [PORT]: SIGKILL the server, reap it if it is our child, and
# remove its directory when PORT is given.
stop_redis() {
    local pid=$1 port=${2:-}
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    # Not our child (started in a $(...) subshell): wait until it is gone.
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [[ -n $port ]]; then
        rm -rf "$(redis_dir "$port")"
    fi
}

# raise_nofile N: raises this shell's open-file limit (soft, and the hard one
# when it is lower and we are root) to at least N; servers and generators
# started afterwards inherit it. Dies when it cannot.
raise_nofile() {
    local want=$1 soft hard
    soft=$(ulimit -Sn)
    [[ $soft == unlimited || $soft -ge $want ]] && return 0
    hard=$(ulimit -Hn)
    if [[ $hard != unlimited && $hard -lt $want ]]; then
        ulimit -Hn "$want" 2>/dev/null ||
            die "ulimit -n: need $want open files, the hard limit is $hard (raise it as root, or in limits.conf)"
    fi
    ulimit -Sn "$want" || die "ulimit -n $want failed"
    log "ulimit -n $soft -> $(ulimit -Sn)"
}

_CLEANUP=()
_CLEANUP_INSTALLED=0
# on_exit CMD...: remembers CMD (one string, eval'd) to run at exit, last
# registered first.
on_exit() {
    _CLEANUP+=("$*")
}

_run_cleanup() {
    local i
    for ((i = ${#_CLEANUP[@]} - 1; i >= 0; i--)); do
        eval "${_CLEANUP[i]}" || true
    done
    _CLEANUP=()
}

# Installs the EXIT/INT/TERM traps that run the on_exit commands.
install_cleanup_trap() {
    [[ $_CLEANUP_INSTALLED -eq 1 ]] && return 0
    _CLEANUP_INSTALLED=1
    trap _run_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
