#!/usr/bin/env bash
# Regenerates the checked-in jextract bindings from the inputs in this folder:
#
#   ibverbs/  -> ibverbs-ffm/src/main/java/dev/rdmarpc/ibverbs/raw
#   rdmacm/   -> rdmacm-ffm/src/main/java/dev/rdmarpc/rdmacm/raw
#   cuda/     -> cuda-ffm/src/main/java/dev/rdmarpc/cuda/raw
#
# Each folder holds the wrapper header given to jextract, its options (jextract.args, with the
# explicit --include-* filters) and VERSIONS, which this script rewrites with the header versions
# it generated from. The old raw tree is deleted first, so a symbol dropped from a filter
# disappears. With the versions in VERSIONS, a second run reproduces the checked-in sources byte
# for byte (check with `git diff --exit-code`).
#
# Usage: native-headers/regenerate.sh [ibverbs] [rdmacm] [cuda]      (default: all three)
#
# Environment:
#   JEXTRACT       jextract launcher (default: `jextract` on PATH). It must generate code for the
#                  JDK 22 API: openjdk/jextract at commit 360bdc9 does; see the README.
#   CLANG_INCLUDE  clang's own headers (default /usr/lib/llvm-14/lib/clang/14.0.6/include).
#   CUDA_INCLUDE   folder holding cuda.h (default /usr/local/cuda-13.0/include).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

jextract="${JEXTRACT:-$(command -v jextract || true)}"
if [ -z "$jextract" ] || [ ! -x "$jextract" ]; then
  echo "regenerate.sh: no jextract: set JEXTRACT=/path/to/jextract or put it on PATH" >&2
  exit 2
fi
clang_include="${CLANG_INCLUDE:-/usr/lib/llvm-14/lib/clang/14.0.6/include}"
cuda_include="${CUDA_INCLUDE:-/usr/local/cuda-13.0/include}"
if [ ! -d "$clang_include" ]; then
  echo "regenerate.sh: clang headers not found at $clang_include (install libclang-14-dev or set CLANG_INCLUDE)" >&2
  exit 2
fi

# The generator, recorded in every VERSIONS file (jextract cannot report its own version).
generator="openjdk/jextract 360bdc9 (JDK 22 API), libclang $(basename "$(dirname "$clang_include")")"

deb_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown
}

write_versions() { # lib, lines...
  local lib="$1"; shift
  {
    echo "# Versions the checked-in dev.rdmarpc.$lib.raw sources were generated from (written by regenerate.sh)."
    printf '%s\n' "$@"
    echo "generator=$generator"
  } > "$here/$lib/VERSIONS"
}

generate() { # lib, module, header, extra jextract options...
  local lib="$1" module="$2" header="$3"; shift 3
  local src="$root/$module/src/main/java"
  local raw="$src/dev/rdmarpc/$lib/raw"
  echo "regenerate.sh: $lib -> ${raw#"$root"/}"
  rm -rf "$raw"
  # Relative paths keep the generated sources free of this machine's folder names.
  (cd "$here/$lib" && "$jextract" -I "$clang_include" "$@" --output "$src" @jextract.args "$header")
  if [ ! -d "$raw" ]; then
    echo "regenerate.sh: jextract produced nothing for $lib" >&2
    exit 1
  fi
}

rdma_core_version() { # Debian package name -> upstream version (44.0-2 -> 44.0)
  local v; v="$(deb_version "$1")"; echo "${v%%-*}"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(ibverbs rdmacm cuda)

for t in "${targets[@]}"; do
  case "$t" in
    ibverbs)
      generate ibverbs ibverbs-ffm ibverbs.h
      write_versions ibverbs "rdma-core=$(rdma_core_version libibverbs-dev)" \
        "debian-package=libibverbs-dev $(deb_version libibverbs-dev)" \
        "header=<infiniband/verbs.h>"
      ;;
    rdmacm)
      generate rdmacm rdmacm-ffm rdmacm.h
      write_versions rdmacm "rdma-core=$(rdma_core_version librdmacm-dev)" \
        "debian-package=librdmacm-dev $(deb_version librdmacm-dev)" \
        "header=<rdma/rdma_cma.h> <rdma/rdma_verbs.h>"
      ;;
    cuda)
      if [ ! -f "$cuda_include/cuda.h" ]; then
        echo "regenerate.sh: $cuda_include/cuda.h not found (install the CUDA toolkit headers or set CUDA_INCLUDE)" >&2
        exit 2
      fi
      cv="$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda_include/cuda.h")"
      generate cuda cuda-ffm cuda_driver.h -I "$cuda_include"
      write_versions cuda "cuda=$((cv / 1000)).$(((cv % 1000) / 10))" "CUDA_VERSION=$cv" \
        "header=<cuda.h> (CUDA driver API)"
      ;;
    *)
      echo "regenerate.sh: unknown target '$t' (ibverbs, rdmacm or cuda)" >&2
      exit 2
      ;;
  esac
done
