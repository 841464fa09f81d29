#!/usr/bin/env bash
# Builds firmware/c/stack-test alone into OUTDIR (stack-test.elf, and the objects and GCC .su files
# in OUTDIR/stack-test-obj), with the flags firmware/c/build.sh uses for it (keep them in sync), so
# the stack analyzer's tests do not depend on the other C firmware building.
# Usage: sim/stack/tests/corpus/build-stack-test.sh OUTDIR
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 OUTDIR" >&2; exit 2; fi
CC=${ARM_CC:-arm-none-eabi-gcc}
command -v "$CC" >/dev/null || { echo "error: $CC not found (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)" >&2; exit 1; }
FW=$(cd "$(dirname "$0")/../../../../firmware/c" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
ST=$OUT/stack-test-obj
mkdir -p "$ST"
FLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror
       -ffunction-sections -fdata-sections -ffreestanding -nostartfiles --specs=nano.specs
       -I "$FW/include" -mfloat-abi=hard -mfpu=fpv4-sp-d16 -DMCUBENCH_NO_REGIONS -fstack-usage)
for f in startup main; do
    "$CC" "${FLAGS[@]}" -c "$FW/stack-test/$f.c" -o "$ST/$f.o"
done
"$CC" "${FLAGS[@]}" -T "$FW/stack-test/link.ld" -L "$FW/../../linker/mps2" -Wl,--gc-sections "$ST/startup.o" "$ST/main.o" \
    -o "$OUT/stack-test.elf"
