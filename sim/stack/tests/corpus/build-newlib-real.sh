#!/usr/bin/env bash
# Builds the newlib corpus of sim/stack/tests/stack_newlib.rs into $1:
# {nano,full} × {O0,O2,Os}, plus nano with printf of doubles (-u _printf_float) at O2; and, in
# $1/other-version, full at O2 with newlib 4's `_fwalk_sglue` linked (-DNEWLIB4_SYMBOL): symbols
# of another newlib version, for which the newlib-3.3 pack must be reported and not applied.
# Needs arm-none-eabi-gcc with newlib (Debian: gcc-arm-none-eabi, libnewlib-arm-none-eabi).
set -euo pipefail
out=${1:?usage: build-newlib-real.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
mkdir -p "$out"
common=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft -g -std=gnu11 -Wall -Werror -ffunction-sections -fdata-sections
        "$here/newlib-real/main.c" -nostartfiles -Wl,--gc-sections -Wl,--wrap=_exit
        -T "$root/firmware/c/link.ld" -L "$root/linker/mps2")
for lib in nano full; do
    specs=(--specs=rdimon.specs)
    [ "$lib" = nano ] && specs=(--specs=nano.specs --specs=rdimon.specs)
    for opt in O0 O2 Os; do
        arm-none-eabi-gcc "-$opt" "${specs[@]}" "${common[@]}" -o "$out/newlib-$lib-$opt.elf"
    done
done
arm-none-eabi-gcc -O2 --specs=nano.specs --specs=rdimon.specs -u _printf_float -DPRINT_FLOAT "${common[@]}" \
    -o "$out/newlib-nano-float-O2.elf"
mkdir -p "$out/other-version"
arm-none-eabi-gcc -O2 --specs=rdimon.specs -DNEWLIB4_SYMBOL -Wl,--undefined=_fwalk_sglue "${common[@]}" \
    -o "$out/other-version/newlib-full-O2-sglue.elf"
