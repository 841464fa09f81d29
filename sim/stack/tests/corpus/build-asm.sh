#!/usr/bin/env bash
# Assembles and links the stack analyzer's assembly test objects (tests/asm/NAME.S) into
# OUTDIR/asm-NAME.elf with tests/asm/asm.ld. The ELFs committed under tests/data are its output:
# regenerate them with
#   sim/stack/tests/corpus/build-asm.sh sim/stack/tests/data
# (no debug information, so the output does not depend on the checkout's path; the full tier's
# stack_asm_build.rs checks that a rebuild is byte-identical to the committed files).
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 OUTDIR" >&2; exit 2; fi
CC=${ARM_CC:-arm-none-eabi-gcc}
LD=${ARM_LD:-arm-none-eabi-ld}
command -v "$CC" >/dev/null || { echo "error: $CC not found (apt-get install gcc-arm-none-eabi)" >&2; exit 1; }
SRC=$(cd "$(dirname "$0")/../asm" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
for s in "$SRC"/*.S; do
    name=$(basename "$s" .S)
    "$CC" -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -c "$s" -o "$OBJ/$name.o"
    "$LD" -T "$SRC/asm.ld" "$OBJ/$name.o" -o "$OUT/asm-$name.elf"
done
