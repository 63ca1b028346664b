#!/usr/bin/env bash
# Build the Pulumi CLI and its Python language host from source, for the engine tests
# (tests/test_engine.py), into a cache folder that later runs reuse.
#
#   scripts/pulumi_engine.sh          build when missing, then print the folder to put on PATH
#   scripts/pulumi_engine.sh --check  exit 0 when a build for the pinned version is present
#
# Settings: GPU_CLUSTER_PULUMI_CACHE (default ~/.cache/gpu-cluster/pulumi-VERSION),
# GPU_CLUSTER_PULUMI_VENDOR (default ../shared/vendor/pulumi beside the repository), GPU_CLUSTER_GO.
#
# The CLI is the main package cmd/pulumi of the Go module github.com/pulumi/pulumi/pkg/v3 at
# PULUMI_VERSION; the language host is the upstream source in ../shared/vendor/pulumi (see its
# PROVENANCE.md), built in a copy inside the cache folder (its go.sum is written there by
# `go mod tidy`), and the CLI is built within that same module so both share one module graph.
# The runner scripts the engine also needs (pulumi-language-python-exec,
# pulumi-resource-pulumi-python) are linked beside the binaries.
#
# Users do not need this: they install the CLI with `curl -fsSL https://get.pulumi.com | sh`.
#
# Exit codes: 0 ready; 3 Go is not installed; 4 the vendored host source is missing;
# 5 a Go module could not be downloaded or the build failed (the log is printed).
set -euo pipefail

PULUMI_VERSION=3.260.0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENDOR=${GPU_CLUSTER_PULUMI_VENDOR:-$ROOT/../shared/vendor/pulumi}
CACHE=${GPU_CLUSTER_PULUMI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cluster/pulumi-$PULUMI_VERSION}
BIN=$CACHE/bin
HOST_SOURCE=$VENDOR/pulumi-language-python

say() { printf 'pulumi_engine: %s\n' "$*" >&2; }

# What a build depends on besides the version: the vendored host source and the runner scripts.
fingerprint() {
  (cd "$VENDOR" && cat pulumi-language-python/go.mod pulumi-language-python/main.go \
    bin/pulumi-language-python-exec bin/pulumi-resource-pulumi-python) | sha256sum | cut -d' ' -f1
}

if [ ! -f "$HOST_SOURCE/main.go" ] || [ ! -f "$HOST_SOURCE/go.mod" ] || [ ! -d "$VENDOR/bin" ]; then
  say "the Pulumi Python language host source is missing: expected $HOST_SOURCE/main.go and go.mod and $VENDOR/bin"
  exit 4
fi
STAMP="v$PULUMI_VERSION $(fingerprint)"

ready() {
  [ -x "$BIN/pulumi" ] && [ -x "$BIN/pulumi-language-python" ] && [ -f "$CACHE/stamp" ] \
    && [ "$(cat "$CACHE/stamp")" = "$STAMP" ]
}

if [ "${1:-}" = "--check" ]; then
  ready && { echo "$BIN"; exit 0; }
  say "no build of pulumi v$PULUMI_VERSION in $CACHE"
  exit 1
fi

if ready; then
  say "reusing pulumi v$PULUMI_VERSION in $BIN"
  echo "$BIN"
  exit 0
fi

# Go: GPU_CLUSTER_GO when set, else `go` on PATH, else Go's default install folder.
GO=${GPU_CLUSTER_GO:-$(command -v go || echo /usr/local/go/bin/go)}
if [ ! -x "$GO" ]; then
  say "Go is not installed ($GO not found): the Pulumi CLI cannot be built; install Go (https://go.dev/dl) or the CLI itself (curl -fsSL https://get.pulumi.com | sh)"
  exit 3
fi

say "building pulumi v$PULUMI_VERSION and pulumi-language-python with $("$GO" version) into $CACHE"
started=$(date +%s)
rm -rf "$BIN" "$CACHE/src" "$CACHE/stamp"
mkdir -p "$BIN" "$CACHE/src"
SRC=$CACHE/src/pulumi-language-python
cp -R "$HOST_SOURCE" "$SRC"
chmod -R u+w "$SRC"

# Module and build caches live in the cache folder: the build is self-contained and its size shows.
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gobuild GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
VERSION_FLAG="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
LOG=$CACHE/build.log
: >"$LOG"

step() {
  say "$1"
  shift
  if ! (cd "$SRC" && "$@") >>"$LOG" 2>&1; then
    say "failed: $*"
    cat "$LOG" >&2
    say "the build of pulumi v$PULUMI_VERSION failed (log above, kept in $LOG)"
    exit 5
  fi
}

step "resolving modules (go mod tidy)" "$GO" mod tidy
# Keep pkg/v3 required after tidy (main.go alone may not import it), then build both binaries.
step "requiring github.com/pulumi/pulumi/pkg/v3@v$PULUMI_VERSION" "$GO" get "github.com/pulumi/pulumi/pkg/v3@v$PULUMI_VERSION"
step "building pulumi-language-python" "$GO" build -trimpath -ldflags "-s -w $VERSION_FLAG" -o "$BIN/pulumi-language-python" .
step "building pulumi (cmd/pulumi)" "$GO" build -trimpath -ldflags "-s -w $VERSION_FLAG" -o "$BIN/pulumi" \
  github.com/pulumi/pulumi/pkg/v3/cmd/pulumi

for runner in pulumi-language-python-exec pulumi-resource-pulumi-python; do
  cp "$VENDOR/bin/$runner" "$BIN/$runner"
  chmod 755 "$BIN/$runner"
done
echo "$STAMP" >"$CACHE/stamp"
# Only the binaries are reused: drop the module and build caches (about 3.3 GB) to keep the folder small.
"$GO" clean -modcache >/dev/null 2>&1 || true
rm -rf "$CACHE/gomod" "$CACHE/gobuild" "$CACHE/src"
say "built in $(( $(date +%s) - started )) s; $BIN holds $(du -sh "$BIN" | cut -f1), the cache folder $(du -sh "$CACHE" | cut -f1)"
echo "$BIN"
