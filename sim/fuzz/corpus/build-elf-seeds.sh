#!/usr/bin/env bash
# Rebuilds the ELF seeds of the `elf` fuzz target (corpus/elf/*.elf): small GCC firmware from
# firmware/c for several cores, -Os, linked with -n (no page alignment) and stripped of debug
# info and .comment, so each seed stays under 8 KiB. Usage: sim/fuzz/corpus/build-elf-seeds.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
C=$HERE/../../../firmware/c
OUT=$HERE/elf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
F=(-mthumb -Os -std=c11 -ffunction-sections -fdata-sections -ffreestanding -nostartfiles --specs=nano.specs
   -I "$C/include" -Wl,--gc-sections -Wl,-n -T "$C/link.ld" -L "$C/../../linker/mps2" "$C/kat-crc32/startup.c")
cc() { arm-none-eabi-gcc "$@"; }
cc -mcpu=cortex-m4 "${F[@]}" "$C/kat-crc32/main.c" -o "$TMP/crc-m4.elf"
cc -mcpu=cortex-m0 -masm-syntax-unified "${F[@]}" "$C/kat-crc32/main.c" -o "$TMP/crc-m0.elf"
cc -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 "${F[@]}" -DHOSTILE=6 "$C/hostile/main.c" -o "$TMP/hardfault-m4f.elf"
cc -mcpu=cortex-m3 "${F[@]}" -DHOSTILE=12 "$C/hostile/main.c" -o "$TMP/recursion-m3.elf"
cc -mcpu=cortex-m33 "${F[@]}" -DHOSTILE=14 "$C/hostile/main.c" -o "$TMP/forged-kat-m33.elf"
mkdir -p "$OUT"
for f in "$TMP"/*.elf; do
    arm-none-eabi-strip --strip-debug -R .comment -o "$OUT/$(basename "$f")" "$f"
    size=$(stat -c %s "$OUT/$(basename "$f")")
    [ "$size" -le 8192 ] || { echo "error: $(basename "$f") is $size bytes (> 8 KiB)" >&2; exit 1; }
done
ls -l "$OUT"
