#!/usr/bin/env bash
# Compiles libfenceline-shm: build.sh <source dir> <output .so>. Run by the shm module's build when
# gcc is installed; without it the jar has no native library and large puts take the JVM's copy.
set -euo pipefail
src="$1"
out="$2"
mkdir -p "$(dirname "$out")"
gcc -std=c11 -O2 -g -fPIC -shared -Wall -Wextra -Werror -Wl,-z,defs -o "$out" "$src/fenceline_copy.c"
