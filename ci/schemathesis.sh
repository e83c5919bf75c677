#!/usr/bin/env bash
# The API fuzzer schemathesis (PyPI) against a live `triskel serve` on
# 127.0.0.1, over a fresh temporary store with one tenant's token: every
# operation of serve/openapi.json gets generated requests, valid and not,
# and every response must be no 5xx and conform to the document (status
# code, content type, body schema). The server must still be serving at
# the end. A bounded run: at most SCHEMATHESIS_EXAMPLES cases per
# operation and SCHEMATHESIS_SECONDS in all.
#
#   ci/schemathesis.sh [TRISKEL_BIN]   (default target/ci/triskel)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=$(realpath "${1:-target/ci/triskel}")
venv="$root/target/py-venv"
examples=${SCHEMATHESIS_EXAMPLES:-25}
seconds=${SCHEMATHESIS_SECONDS:-60}

if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
"$venv/bin/pip" install --quiet "schemathesis>=4,<5"

work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

token=$("$bin" serve token create --tenant fuzz --store "$work/store")
"$bin" serve --listen 127.0.0.1:0 --store "$work/store" --workers 1 --queue 8 \
    --job-timeout-seconds 60 >"$work/out" 2>"$work/err" &
pid=$!
url=""
for _ in $(seq 200); do
    url=$(sed -n 's/^listening on \([^ ]*\) .*/\1/p' "$work/out")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
    sleep 0.05
done
[ -n "$url" ] || { echo "triskel serve did not start" >&2; exit 1; }
echo "schemathesis against $url ($examples examples per operation, at most $seconds s)"

# From the temporary directory, so that nothing is left in the checkout.
(cd "$work" && SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$root/ci" "$venv/bin/schemathesis" run "$url/v1/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$examples" --max-time "$seconds" --seed 34 \
    --generation-database none --workers 1 --no-color)

if ! kill -0 "$pid" 2>/dev/null; then
    echo "triskel serve stopped during the run:" >&2
    cat "$work/err" >&2
    exit 1
fi
health=$("$venv/bin/python" -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + '/healthz').status)" "$url")
[ "$health" = 200 ] || { echo "triskel serve does not answer /healthz after the run" >&2; exit 1; }
echo "schemathesis: no 5xx, every response as documented, the server serving on"
