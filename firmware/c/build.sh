#!/usr/bin/env bash
# Builds every C firmware under firmware/c into OUTDIR as ELF files (with debug info).
# Usage: firmware/c/build.sh OUTDIR
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
CC=${ARM_CC:-arm-none-eabi-gcc}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "error: $CC not found; install it (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)" >&2
    exit 1
fi
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$1
mkdir -p "$OUT"
CFLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror
        -ffunction-sections -fdata-sections -ffreestanding -nostartfiles --specs=nano.specs
        -I "$HERE/include")

# kat-crc32: CRC-32 KATs for mps2-an386 (Cortex-M4).
"$CC" "${CFLAGS[@]}" -T "$HERE/kat-crc32/mps2-an386.ld" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32.elf"
echo "built $OUT/kat-crc32.elf"
