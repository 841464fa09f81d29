#!/usr/bin/env bash
# Builds the newlib 4 corpus of sim/stack/tests/stack_newlib4.rs into $1: the program of
# newlib-real/main.c (printf, malloc, soft-double, semihosting exit through rdimon) compiled by
# the system's arm-none-eabi-gcc against newlib 4.5 (Debian 13's libnewlib-arm-none-eabi, the
# newlib of the Arm GNU Toolchain 14.x), unpacked by ci/setup.sh under $MCUBENCH_NEWLIB4_PREFIX
# (default /opt/newlib-4) beside the system's newlib 3.3, which stays the compiler's default:
#   <core>-<lib>-<opt>.elf, lib = nano | full,
#   cortex-m4 soft-float (thumb/v7e-m/nofp): {nano,full} x {O0,O2,Os}, and nano with printf of
#     doubles (-u _printf_float) at O2                                   -> mps2-an386
#   cortex-m4 hard-float (thumb/v7e-m+fp/hard): {nano,full} x O2           -> mps2-an386
#   cortex-m0 (thumb/v6-m/nofp): {nano,full} x Os                          -> microbit (16 KiB RAM)
#   cortex-m33 (thumb/v8-m.main/nofp): {nano,full} x O2                    -> mps2-an505
# and, in $1/other-version, m4-full-O2 with newlib 3.x's `_cleanup_r` linked (-DNEWLIB3_SYMBOL):
# symbols of two newlib versions, for which the newlib-4 pack must be reported and not applied;
# and, in $1/nostdio, newlib-real/nostdio.c (malloc, errno, no stdio, no exit) against newlib 4.5
# (newlib4-nostdio.elf) and against the system's newlib 3.3 (newlib3-nostdio.elf).
# Headers and libraries are named explicitly (-nostdinc, -nostdlib: newlib 4's own headers and
# the multilib directory GCC picks for the flags), so nothing of newlib 3.3 is mixed in; libgcc
# is the compiler's.
set -euo pipefail
out=${1:?usage: build-newlib4.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
prefix=${MCUBENCH_NEWLIB4_PREFIX:-/opt/newlib-4}
inc=$prefix/usr/include/newlib
libs=$prefix/usr/lib/arm-none-eabi/newlib
if [ ! -e "$inc/_newlib_version.h" ] || [ ! -e "$libs/thumb/v7e-m/nofp/libc.a" ]; then
    echo "build-newlib4.sh: newlib 4 not found under $prefix: run ci/setup.sh (it unpacks Debian's libnewlib-arm-none-eabi 4.5 there)" >&2
    exit 2
fi
gcc_inc=$(arm-none-eabi-gcc -print-file-name=include)
mkdir -p "$out"

# build NAME LAYOUT "ARCH FLAGS" LIB OPT [extra flags...]
build() {
    local name=$1 layout=$2 arch=$3 lib=$4 opt=$5
    shift 5
    # shellcheck disable=SC2086
    local multi
    multi=$(arm-none-eabi-gcc $arch -print-multi-directory)
    local dir=$libs/$multi
    local cinc=(-isystem "$inc")
    local libc=$dir/libc.a rdimon=$dir/librdimon.a
    if [ "$lib" = nano ]; then
        cinc=(-isystem "$inc/nano" -isystem "$inc")
        libc=$dir/libc_nano.a rdimon=$dir/librdimon_nano.a
    fi
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $arch "-$opt" -g -std=gnu11 -Wall -Werror -ffunction-sections -fdata-sections \
        -nostdinc -isystem "$gcc_inc" -isystem "$gcc_inc-fixed" "${cinc[@]}" "$@" \
        "$here/newlib-real/main.c" -nostdlib -Wl,--gc-sections -Wl,--wrap=_exit \
        -T "$root/firmware/c/link.ld" -L "$root/linker/$layout" \
        -Wl,--start-group "$libc" "$rdimon" -lgcc -Wl,--end-group -o "$out/$name.elf"
}

m4soft="-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
for lib in nano full; do
    for opt in O0 O2 Os; do
        build "m4-$lib-$opt" mps2 "$m4soft" $lib $opt
    done
done
build m4-nano-float-O2 mps2 "$m4soft" nano O2 -u _printf_float -DPRINT_FLOAT
for lib in nano full; do
    build "m4hf-$lib-O2" mps2 "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" $lib O2
    build "m0-$lib-Os" microbit "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" $lib Os -DPAINT_BYTES=8192u
    build "m33-$lib-O2" mps2-an505 "-mcpu=cortex-m33 -mthumb -mfloat-abi=soft" $lib O2
done
mkdir -p "$out/other-version"
build other-version/m4-full-O2-cleanup_r mps2 "$m4soft" full O2 -DNEWLIB3_SYMBOL -Wl,--undefined=_cleanup_r
mkdir -p "$out/nostdio"
nostdio=("$here/newlib-real/nostdio.c" -O2 -Wall -Werror -nostartfiles -Wl,--gc-sections -T "$root/firmware/c/link.ld"
         -L "$root/linker/mps2")
# shellcheck disable=SC2086
arm-none-eabi-gcc $m4soft -nostdinc -isystem "$gcc_inc" -isystem "$gcc_inc-fixed" -isystem "$inc" "${nostdio[@]}" \
    -nostdlib -Wl,--start-group "$libs/thumb/v7e-m/nofp/libc.a" "$libs/thumb/v7e-m/nofp/libnosys.a" -lgcc \
    -Wl,--end-group -o "$out/nostdio/newlib4-nostdio.elf"
# shellcheck disable=SC2086
arm-none-eabi-gcc $m4soft --specs=nosys.specs "${nostdio[@]}" -o "$out/nostdio/newlib3-nostdio.elf"
