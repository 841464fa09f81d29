#!/usr/bin/env bash
# Real third-party C for mcubench's tests: Mbed TLS's own self-test program
# (programs/test/selftest.c, which prints "[ All tests PASS ]" and exits 0, or
# "[ N tests FAIL ]" and exits 1), from Debian's `mbedtls` source package, built unmodified with
# arm-none-eabi-gcc + newlib (printf on semihosting through rdimon) for mps2-an386 (Cortex-M4).
#
# Nothing of Mbed TLS is kept in this repository: the source is fetched with `apt-get source
# mbedtls` into MCUBENCH_THIRD_PARTY_SRC (default: <cargo target dir>/third-party/src), outside
# the checkout, on first use; later runs reuse the unpacked tree. `apt-get source` needs a deb-src
# entry and dpkg-source (dpkg-dev): `bash ci/setup.sh` adds both.
#
# Usage: firmware/c/third-party/build-mbedtls.sh OUTDIR   -> OUTDIR/mbedtls-selftest.elf
#        firmware/c/third-party/build-mbedtls.sh --fetch   (only fetch and unpack the source)
#
# The build: every library/*.c (modules the configuration leaves out compile to nothing) and
# programs/test/selftest.c, with Mbed TLS's own configs/config-no-entropy.h (no entropy source
# needed: a bare-metal target has none), firmware/c/newlib/startup.c (vector table; calls
# main(1, {"selftest", NULL})) and firmware/c/link.ld with linker/mps2's memory map.
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR | --fetch" >&2
    exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
FWC=$(cd "$HERE/.." && pwd)
REPO=$(cd "$FWC/../.." && pwd)
SRC_ROOT=${MCUBENCH_THIRD_PARTY_SRC:-${CARGO_TARGET_DIR:-$REPO/target}/third-party/src}
mkdir -p "$SRC_ROOT"
SRC_ROOT=$(cd "$SRC_ROOT" && pwd)

# The unpacked tree, if there is one: mbedtls-2.28.<n> (Debian 12 ships the 2.28 LTS branch;
# selftest.c and configs/config-no-entropy.h are where this script expects them in 2.x).
find_tree() {
    local d
    for d in "$SRC_ROOT"/mbedtls-2.*; do
        if [ -f "$d/programs/test/selftest.c" ] && [ -f "$d/configs/config-no-entropy.h" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

fetch() {
    # One fetch at a time (tests run in parallel); the second waits and then finds the tree.
    exec 9>"$SRC_ROOT/.mbedtls.lock"
    flock 9
    if find_tree >/dev/null; then
        return 0
    fi
    if ! command -v dpkg-source >/dev/null 2>&1; then
        echo "error: \`apt-get source\` needs dpkg-source; install it with \`bash ci/setup.sh\` (or \`apt-get install dpkg-dev\`)" >&2
        exit 1
    fi
    echo "fetching Debian source package mbedtls into $SRC_ROOT" >&2
    if ! (cd "$SRC_ROOT" && apt-get source -qq mbedtls >&2); then
        echo "error: \`apt-get source mbedtls\` failed; it needs a deb-src entry in APT's sources: run \`bash ci/setup.sh\` (it adds one and runs apt-get update)" >&2
        exit 1
    fi
    if ! find_tree >/dev/null; then
        echo "error: \`apt-get source mbedtls\` unpacked no mbedtls-2.* tree with programs/test/selftest.c under $SRC_ROOT" >&2
        exit 1
    fi
    flock -u 9
}

fetch
if [ "$1" = "--fetch" ]; then
    echo "mbedtls source: $(find_tree)"
    exit 0
fi

CC=${ARM_CC:-arm-none-eabi-gcc}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "error: $CC not found; install it (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)" >&2
    exit 1
fi
TREE=$(find_tree)
OUT=$1
mkdir -p "$OUT/mbedtls-obj"
OUT=$(cd "$OUT" && pwd)
OBJ=$OUT/mbedtls-obj
CFLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -ffunction-sections -fdata-sections
        -I "$TREE/include" -I "$TREE" '-DMBEDTLS_CONFIG_FILE="configs/config-no-entropy.h"')
rm -f "$OBJ"/*.o
export CC OBJ
# One object per source, compiled in parallel (xargs appends the source after the flags).
if ! printf '%s\0' "$TREE"/library/*.c "$TREE/programs/test/selftest.c" |
    xargs -0 -n 1 -P "$(nproc 2>/dev/null || echo 2)" \
        bash -c 'f=${!#}; exec "$CC" "${@:1:$#-1}" -c "$f" -o "$OBJ/$(basename "${f%.c}").o"' _ "${CFLAGS[@]}"; then
    echo "error: compiling Mbed TLS ($TREE) failed; the compiler's messages are above" >&2
    exit 1
fi
"$CC" -mcpu=cortex-m4 -mthumb -O2 -g -ffunction-sections -fdata-sections -DNEWLIB_RDIMON \
    '-DSTARTUP_ARGV0="selftest"' -c "$FWC/newlib/startup.c" -o "$OBJ/startup.o"
"$CC" -mcpu=cortex-m4 -mthumb -nostartfiles --specs=nano.specs --specs=rdimon.specs \
    -T "$FWC/link.ld" -L "$REPO/linker/mps2" -Wl,--gc-sections \
    "$OBJ"/*.o -o "$OUT/mbedtls-selftest.elf"
echo "built $OUT/mbedtls-selftest.elf (from $(basename "$TREE"))"
