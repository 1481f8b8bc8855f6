# A throwaway PostgreSQL server on loopback for the store tests. Sourced by
# .ci/run (or by hand: `source .ci/postgres.sh && pg_start`), it defines:
#   pg_start  installs PostgreSQL from Debian's packages when it is missing,
#             initdb's a cluster in a temporary directory owned by an
#             unprivileged user (postgres refuses to run as root), starts it on
#             127.0.0.1 on a free port, and exports AGENTMSG_PG_URL;
#   pg_stop   stops it and removes the directory (safe to call twice; pg_start
#             sets an EXIT trap that calls it, so it also runs when a step fails).

pg_bin_dir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
            echo "$dir"
        fi
    done | sort -V | tail -n 1
}

pg_start() {
    local bin
    bin="$(pg_bin_dir)"
    if [[ -z "$bin" ]]; then
        echo "==> installing PostgreSQL from Debian's packages"
        if [[ "$(id -u)" -ne 0 ]]; then
            echo "error: PostgreSQL is not installed and installing it needs root" >&2
            return 1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
        bin="$(pg_bin_dir)"
        if [[ -z "$bin" ]]; then
            echo "error: no initdb under /usr/lib/postgresql/*/bin after installing postgresql" >&2
            return 1
        fi
    fi

    # postgres will not run as root: the cluster belongs to an unprivileged user.
    local as=()
    PG_USER="$(id -un)"
    if [[ "$(id -u)" -eq 0 ]]; then
        PG_USER=postgres
        if ! id "$PG_USER" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
        fi
        as=(runuser -u "$PG_USER" --)
    fi
    PG_AS=("${as[@]}")
    PG_BIN="$bin"
    PG_DIR="$(mktemp -d /tmp/agentmsg-pg.XXXXXX)"
    chown "$PG_USER" "$PG_DIR"
    chmod 700 "$PG_DIR"
    trap pg_stop EXIT

    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"

    "${as[@]}" "$bin/initdb" --pgdata="$PG_DIR/data" --username=agentmsg --auth=trust \
        --encoding=UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1 || {
        cat "$PG_DIR/initdb.log" >&2
        return 1
    }
    # Loopback TCP only, socket in the temporary directory; fsync off: the
    # server is thrown away after the run.
    "${as[@]}" "$bin/pg_ctl" --pgdata="$PG_DIR/data" --log="$PG_DIR/server.log" --wait \
        --options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$PG_DIR -c fsync=off -c max_connections=200" \
        start >/dev/null || {
        cat "$PG_DIR/server.log" >&2
        return 1
    }
    export AGENTMSG_PG_URL="postgres://agentmsg@127.0.0.1:$port/postgres"
    echo "==> PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (AGENTMSG_PG_URL)"
}

pg_stop() {
    if [[ -n "${PG_DIR:-}" && -d "$PG_DIR" ]]; then
        if [[ -f "$PG_DIR/data/postmaster.pid" ]]; then
            "${PG_AS[@]}" "$PG_BIN/pg_ctl" --pgdata="$PG_DIR/data" --mode=immediate --wait stop >/dev/null 2>&1 || true
        fi
        rm -rf "$PG_DIR"
        echo "==> PostgreSQL stopped"
    fi
    PG_DIR=
    unset AGENTMSG_PG_URL
}
