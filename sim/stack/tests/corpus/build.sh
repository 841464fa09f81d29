#!/usr/bin/env bash
# Builds the corpus of the stack analyzer's differential test against GCC -fstack-usage:
# every corpus item is a directory OUTDIR/<item>/ holding one linked ELF (`prog.elf`) and the
# .su files GCC wrote for its objects. Deterministic: fixed csmith seeds, a pinned PyPI sdist
# (checked by SHA-256).
#
#   fw-stack-test       firmware/c/stack-test (Cortex-M4F, hard float, -O2)
#   csmith-<seed>-<opt> csmith --seed <seed> programs, Cortex-M4 soft float, linked against newlib
#                       (nosys specs); <opt> is O0, O2, O2-noinline, Os-noinline
#   pqclean-<opt>       PQClean "clean" C (ML-KEM/Kyber-768, ML-DSA/Dilithium-2, Falcon-512,
#                       SPHINCS+-SHA2-128f, FIPS 202, SHA-2) from the PyPI sdist pypqc 0.0.6.2,
#                       Cortex-M4, -O2 and -Os
#
# Needs: arm-none-eabi-gcc + libnewlib-arm-none-eabi, csmith + libcsmith-dev (Debian), pip.
# Usage: sim/stack/tests/corpus/build.sh OUTDIR   (skips items already built)
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 OUTDIR" >&2; exit 2; fi
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
CC=${ARM_CC:-arm-none-eabi-gcc}
for tool in "$CC" csmith; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi csmith libcsmith-dev)" >&2; exit 1; }
done
CSMITH_INC=/usr/include/csmith
[ -e "$CSMITH_INC/csmith.h" ] || { echo "error: $CSMITH_INC/csmith.h missing (apt-get install libcsmith-dev)" >&2; exit 1; }
M4=(-mcpu=cortex-m4 -mthumb)

# The items are independent (each writes its own directory), so they build side by side, at most
# JOBS at a time (default: one per CPU); a failing item fails the script.
JOBS=${JOBS:-$(nproc)}
pids=()
spawn() {
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 0.1; done
    "$@" &
    pids+=($!)
}

# ---- the C firmware ----
build_firmware() {
    rm -rf "$OUT/fw-stack-test" "$OUT/.fw"
    bash "$HERE/build-stack-test.sh" "$OUT/.fw"
    mkdir -p "$OUT/fw-stack-test"
    cp "$OUT"/.fw/stack-test-obj/*.su "$OUT/fw-stack-test/"
    cp "$OUT/.fw/stack-test.elf" "$OUT/fw-stack-test/prog.elf"
    rm -rf "$OUT/.fw"
}
[ -e "$OUT/fw-stack-test/prog.elf" ] || spawn build_firmware

# ---- csmith programs ----
SEEDS=${CSMITH_SEEDS:-"1 2 3 4 5 6 7 8"}
declare -A OPTS=([O0]="-O0" [O2]="-O2" [O2-noinline]="-O2 -fno-inline" [Os-noinline]="-Os -fno-inline")
build_csmith() {
    local seed=$1 src="$OUT/.csmith/s$1.c"
    if [ ! -e "$src" ]; then
        # (csmith writes platform.info into its working directory: one per seed)
        mkdir -p "$OUT/.csmith/$seed"
        (cd "$OUT/.csmith/$seed" && csmith --seed "$seed" --max-funcs 12 -o "$src.tmp" >/dev/null)
        mv "$src.tmp" "$src"
    fi
    for opt in "${!OPTS[@]}"; do
        dir="$OUT/csmith-$seed-$opt"
        [ -e "$dir/prog.elf" ] && continue
        mkdir -p "$dir"
        # shellcheck disable=SC2086
        (cd "$dir" && "$CC" "${M4[@]}" ${OPTS[$opt]} -w -fstack-usage -I "$CSMITH_INC" -c "$src" -o prog.o \
            && "$CC" "${M4[@]}" --specs=nosys.specs prog.o -o prog.elf.tmp && mv prog.elf.tmp prog.elf)
    done
}
for seed in $SEEDS; do
    spawn build_csmith "$seed"
done

# ---- PQClean from the pypqc sdist ----
PYPQC=pypqc-0.0.6.2
PYPQC_SHA256=f8f09a46971c2ef0cb5be4e5f5a280b3cdcdb01b3ef983091486eb40089228a5
if [ ! -d "$OUT/.pypqc/$PYPQC" ]; then
    mkdir -p "$OUT/.pypqc"
    python3 -m pip download --quiet --no-deps --no-binary :all: "pypqc==0.0.6.2" -d "$OUT/.pypqc" >&2
    echo "$PYPQC_SHA256  $OUT/.pypqc/$PYPQC.tar.gz" | sha256sum -c --quiet - >&2
    tar -xzf "$OUT/.pypqc/$PYPQC.tar.gz" -C "$OUT/.pypqc"
fi
PQ="$OUT/.pypqc/$PYPQC/Modules/PQClean"
# PQClean's compat.h includes glibc's <features.h>, which newlib lacks: a shim with the one macro.
mkdir -p "$OUT/.shim"
printf '#define __GNUC_PREREQ(maj, min) ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((maj) << 16) + (min))\n' \
    > "$OUT/.shim/features.h"
SCHEMES=(crypto_kem/kyber768 crypto_sign/dilithium2 crypto_sign/falcon-512 crypto_sign/sphincs-sha2-128f-simple)
build_pqclean() {
    local opt=$1 dir="$OUT/pqclean-$1"
    rm -rf "$dir"; mkdir -p "$dir/obj"
    objs=()
    n=0
    for c in "$PQ"/common/fips202.c "$PQ"/common/sha2.c; do
        o="$dir/obj/common-$(basename "$c" .c).o"
        "$CC" "${M4[@]}" -$opt -w -fstack-usage -I "$OUT/.shim" -I "$PQ/common" -c "$c" -o "$o"; objs+=("$o")
    done
    for s in "${SCHEMES[@]}"; do
        for c in "$PQ/$s"/clean/*.c; do
            n=$((n + 1))
            o="$dir/obj/$n-$(basename "$c" .c).o"
            "$CC" "${M4[@]}" -$opt -w -fstack-usage -I "$OUT/.shim" -I "$PQ/common" -I "$PQ/$s/clean" -c "$c" -o "$o"; objs+=("$o")
        done
    done
    # randombytes is the only external (and _init/_fini for newlib's exit path) the schemes need besides libc.
    printf '#include <stddef.h>\n#include <stdint.h>\nint PQCLEAN_randombytes(uint8_t *o, size_t n){for(size_t i=0;i<n;i++)o[i]=(uint8_t)i;return 0;}\nvoid _init(void){}\nvoid _fini(void){}\n' > "$dir/obj/stub.c"
    "$CC" "${M4[@]}" -$opt -c "$dir/obj/stub.c" -o "$dir/obj/stub.o"
    "$CC" "${M4[@]}" --specs=nosys.specs -nostartfiles -Wl,--entry=0 -Wl,--no-gc-sections \
        "${objs[@]}" "$dir/obj/stub.o" -o "$dir/prog.elf.tmp"
    mv "$dir"/obj/*.su "$dir/"
    rm -rf "$dir/obj"
    mv "$dir/prog.elf.tmp" "$dir/prog.elf"
}
for opt in O2 Os; do
    [ -e "$OUT/pqclean-$opt/prog.elf" ] || spawn build_pqclean "$opt"
done

failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
[ "$failed" = 0 ] || { echo "error: a corpus item failed to build (see above)" >&2; exit 1; }
echo "corpus in $OUT" >&2
