#!/usr/bin/env bash
# Compiles libfenceline-uct against the installed UCT headers: build.sh <source dir> <output .so>.
# Run by the ucx module's build when /usr/include/uct/api/uct.h exists (Debian: libucx-dev).
set -euo pipefail
src="$1"
out="$2"
command -v gcc >/dev/null 2>&1 || { echo "build.sh: gcc is needed to build the ucx transport's native library" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
gcc -std=c11 -O2 -g -fPIC -shared -Wall -Wextra -Werror \
    -Wl,-z,defs -Wl,--as-needed -o "$out" "$src/fenceline_uct.c" -luct -lucs
