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
# Linker scripts: the sections are ours (link.ld, stack-test/link.ld); the memory map is the
# board layout's linker/<layout>/memory.x (generated from sim/mcubench/src/config/board.rs), which
# they `INCLUDE` from the -L directory.
LINKER=$(cd "$HERE/../../linker" && pwd)
MPS2_LD=(-T "$HERE/link.ld" -L "$LINKER/mps2")
MICROBIT_LD=(-T "$HERE/link.ld" -L "$LINKER/microbit")
CFLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror
        -ffunction-sections -fdata-sections -ffreestanding -nostartfiles --specs=nano.specs
        -I "$HERE/include")

# kat-crc32: CRC-32 KATs for mps2-an386 (Cortex-M4).
"$CC" "${CFLAGS[@]}" "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32.elf"
echo "built $OUT/kat-crc32.elf"
# The same KATs with a table-driven CRC: a variant whose difference (1 KiB table) is known.
"$CC" "${CFLAGS[@]}" -DCRC32_TABLE "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32-table.elf"
echo "built $OUT/kat-crc32-table.elf"
# The same KATs with nothing inlined and no region markers (-DMCUBENCH_NO_REGIONS): `crc32` stays
# a function of its own, called once per KAT, as in a third-party ELF without region markers (the
# function-region tests measure it by name; its KAT counts come from SysTick ticks).
"$CC" "${CFLAGS[@]}" -fno-inline -DMCUBENCH_NO_REGIONS "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32-noinline.elf"
echo "built $OUT/kat-crc32-noinline.elf"

# The same KATs linked for the other layouts (linker/<layout>/memory.x), each for its board's core:
# lm3s6965evb (Cortex-M3, flash 0x0 256K / SRAM 0x20000000 64K) and mps2-an505 (the Secure aliases
# 0x10000000 / 0x38000000; Cortex-M33; runs on mps2-an505 and mps2-an521).
KAT_LAYOUT_FLAGS=(-mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections -ffreestanding
                  -nostartfiles --specs=nano.specs -I "$HERE/include" -T "$HERE/link.ld" -Wl,--gc-sections)
"$CC" -mcpu=cortex-m3 "${KAT_LAYOUT_FLAGS[@]}" -L "$LINKER/lm3s6965evb" \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32-lm3s6965evb.elf"
"$CC" -mcpu=cortex-m33 -mfloat-abi=soft "${KAT_LAYOUT_FLAGS[@]}" -L "$LINKER/mps2-an505" \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-crc32/main.c" -o "$OUT/kat-crc32-mps2-an505.elf"
echo "built $OUT/kat-crc32-{lm3s6965evb,mps2-an505}.elf"

# percall: one function called with several sizes from several callers, and KATs with `bytes=`
# (-DMCUBENCH_BYTES), for per-call and per-byte measurement; mps2-an386, kat-crc32's start-up.
"$CC" "${CFLAGS[@]}" "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/percall/main.c" -o "$OUT/percall.elf"
echo "built $OUT/percall.elf"

# stack-test: constructs for the static stack analyzer, for mps2-an386 (Cortex-M4F, hard float).
# Compiled with -fstack-usage; the .su files (and objects) stay in OUTDIR/stack-test-obj for the
# analyzer's differential test against GCC. Without region markers (-DMCUBENCH_NO_REGIONS): its
# hand-derived frames (stack-test/EXPECTED.md) are of the header's code without them.
ST=$OUT/stack-test-obj
mkdir -p "$ST"
STFLAGS=("${CFLAGS[@]}" -mfloat-abi=hard -mfpu=fpv4-sp-d16 -DMCUBENCH_NO_REGIONS -fstack-usage)
for f in startup main; do
    "$CC" "${STFLAGS[@]}" -c "$HERE/stack-test/$f.c" -o "$ST/$f.o"
done
"$CC" "${STFLAGS[@]}" -T "$HERE/stack-test/link.ld" -L "$LINKER/mps2" -Wl,--gc-sections "$ST/startup.o" "$ST/main.o" \
    -o "$OUT/stack-test.elf"
echo "built $OUT/stack-test.elf"

# stack-calls: recursions, indirect calls through constant tables, struct slots, hooks and
# writable tables, for the analyzer's call-graph tests (sim/mcubench/tests/stack_calls.rs);
# mps2-an386, its own start-up. tables.c is a file of its own so that the compiler cannot fold
# the loads from its constant tables into direct calls.
"$CC" "${CFLAGS[@]}" "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/stack-calls/main.c" "$HERE/stack-calls/tables.c" -o "$OUT/stack-calls.elf"
echo "built $OUT/stack-calls.elf"

# hostile-*: one ELF per attack on the host (firmware/c/hostile/main.c, -DHOSTILE=<n>) for the
# containment tests; mps2-an386, sharing kat-crc32's start-up and link.ld.
n=0
for name in system read write remove silent-hang hardfault lockup reset exit0 forged-end flood recursion \
    big-write forged-kat probe network relabel; do
    n=$((n + 1))
    "$CC" "${CFLAGS[@]}" -DHOSTILE=$n "${MPS2_LD[@]}" -Wl,--gc-sections \
        "$HERE/kat-crc32/startup.c" "$HERE/hostile/main.c" -o "$OUT/hostile-$name.elf"
done
echo "built $OUT/hostile-*.elf"

# kernels-*: the timing microbenchmarks of sim/timing/kernels, each run once inside region markers
# (firmware/c/kernels), for the end-to-end cycle test. armv7m on mps2-an385/an386 (built for the
# Cortex-M3, runs on both), armv7em-fp on mps2-an386 (hard float), armv6m on microbit, armv8m on
# mps2-an505 (Cortex-M33), armv7em-m7 on mps2-an500 (Cortex-M7).
KSRC=$HERE/../../sim/timing/kernels
KFLAGS=(-DSVC_HANDLER=mb_svc_handler -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections -ffreestanding
        -nostartfiles --specs=nano.specs -I "$HERE/include")
"$CC" -mcpu=cortex-m3 "${KFLAGS[@]}" -DKERNELS_ARMV7M "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kernels/main.c" "$HERE/kernels/harness.S" "$KSRC/armv7m.S" \
    "$KSRC/armv7m-refill.S" -o "$OUT/kernels-armv7m.elf"
"$CC" -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 "${KFLAGS[@]}" -DKERNELS_ARMV7EM_FP \
    "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kernels/main.c" "$HERE/kernels/harness.S" "$KSRC/armv7em-fp.S" \
    -o "$OUT/kernels-armv7em-fp.elf"
"$CC" -mcpu=cortex-m0 -masm-syntax-unified "${KFLAGS[@]}" -DKERNELS_ARMV6M "${MICROBIT_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kernels/main.c" "$HERE/kernels/harness.S" "$KSRC/armv6m.S" \
    -o "$OUT/kernels-armv6m.elf"
"$CC" -mcpu=cortex-m33 -mfloat-abi=soft "${KFLAGS[@]}" -DKERNELS_ARMV8M -T "$HERE/link.ld" -L "$LINKER/mps2-an505" \
    -Wl,--gc-sections "$HERE/kat-crc32/startup.c" "$HERE/kernels/main.c" "$HERE/kernels/harness.S" "$KSRC/armv8m.S" \
    -o "$OUT/kernels-armv8m.elf"
"$CC" -mcpu=cortex-m7 -mfloat-abi=soft "${KFLAGS[@]}" -DKERNELS_ARMV7EM_M7 "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kernels/main.c" "$HERE/kernels/harness.S" "$KSRC/armv7em-m7.S" \
    -o "$OUT/kernels-armv7em-m7.elf"
echo "built $OUT/kernels-*.elf"

# heap-test: malloc/free with known sizes for the heap measurement (-DMCUBENCH_HEAP: mcubench.h's
# _sbrk and `heap=` fields); mps2-an386 with kat-crc32's start-up and link.ld.
"$CC" "${CFLAGS[@]}" -DMCUBENCH_HEAP "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/heap-test/main.c" -o "$OUT/heap-test.elf"
echo "built $OUT/heap-test.elf"

# stack-probe: newlib-nano (malloc of 6000 B, recursion, soft double, printf through _write on
# semihosting, assert) measured by mb_measure, for the stack probe and the bound excluding
# panic/abort paths (sim/mcubench/tests/stack_probe.rs); mps2-an386, kat-crc32's start-up.
# stack-probe.elf: its own link.ld (CMSIS-style __HeapLimit/__StackLimit/__StackTop);
# stack-probe-noregion.elf: firmware/c/link.ld, a heap from `end` with no symbol bounding it.
# (Hosted, not -ffreestanding: it uses the C library. nosys.specs: stubs for the system calls it
# does not define; the linker warns that those always fail, which is what they should do here.)
SFLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections
        -nostartfiles --specs=nano.specs --specs=nosys.specs -I "$HERE/include" -Wl,--gc-sections)
"$CC" "${SFLAGS[@]}" -T "$HERE/stack-probe/link.ld" -L "$LINKER/mps2" \
    "$HERE/kat-crc32/startup.c" "$HERE/stack-probe/main.c" -o "$OUT/stack-probe.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
"$CC" "${SFLAGS[@]}" -DNO_HEAP_LIMIT "${MPS2_LD[@]}" \
    "$HERE/kat-crc32/startup.c" "$HERE/stack-probe/main.c" -o "$OUT/stack-probe-noregion.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
echo "built $OUT/stack-probe.elf $OUT/stack-probe-noregion.elf"

# newlib-*: plain newlib firmware that has never heard of mcubench (firmware/c/newlib: printf,
# malloc, exit; no mcubench.h), judged by its own console lines and exit code. The same program
# four ways (firmware/c/newlib/Makefile): printf on semihosting (rdimon) passing and failing
# (-DSELFTEST_FAIL), and printf on the board's UART (uart.c retargets newlib's _write; exit is
# semihosting SYS_EXIT) on mps2-an386 (CMSDK APB UART0) and on netduinoplus2 (STM32 USART1, linked
# at the part's 0x08000000 flash).
if ! command -v make >/dev/null 2>&1; then
    echo "error: make not found; install it (Debian: apt-get install make)" >&2
    exit 1
fi
make -s -C "$HERE/newlib" CC="$CC" BUILD="$(cd "$OUT" && pwd)" all
echo "built $OUT/newlib-*.elf"
# newlib-calltree: an ordinary newlib firmware (rdimon: printf, malloc, exit; no mcubench header)
# with many distinct call paths, for profiling under containment; mps2-an386, its own start-up.
# newlib-calltree-open also opens /proc/sys/vm/overcommit_memory itself (semihosting SYS_OPEN).
NFLAGS=(-mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections
        -nostartfiles --specs=rdimon.specs "${MPS2_LD[@]}" -Wl,--gc-sections -Wl,--defsym=end=__bss_end)
"$CC" "${NFLAGS[@]}" "$HERE/newlib-calltree/main.c" -o "$OUT/newlib-calltree.elf"
"$CC" "${NFLAGS[@]}" -DGUEST_OPEN='"/proc/sys/vm/overcommit_memory"' "$HERE/newlib-calltree/main.c" \
    -o "$OUT/newlib-calltree-open.elf"
echo "built $OUT/newlib-calltree*.elf"
# cyccnt: a board benchmark that times crc32 with the DWT cycle counter and prints the difference
# (newlib, rdimon, firmware/c/newlib's start-up); cyccnt-2000 polls the counter 1000 times more;
# cyccnt-wait first waits on the counter, which never ends under QEMU (unless the counter is live:
# `cycle-counter: estimated`), cyccnt-longwait waits 10^8 cycles; cyccnt-slower times a
# slower call with the reads moved (the base and head of a diff); cyccnt-reset zeroes the counter
# before each timed call instead of reading it.
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" -o "$OUT/cyccnt.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DSPINS=2000 "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" \
    -o "$OUT/cyccnt-2000.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DWAIT_ON_COUNTER "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" \
    -o "$OUT/cyccnt-wait.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DCRC_BYTES=80 -DWARMUP "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" \
    -o "$OUT/cyccnt-slower.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DRESET_COUNTER "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" \
    -o "$OUT/cyccnt-reset.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DWAIT_ON_COUNTER -DDELAY=100000000 "$HERE/newlib/startup.c" \
    "$HERE/cyccnt/main.c" -o "$OUT/cyccnt-longwait.elf"
echo "built $OUT/cyccnt{,-2000,-wait,-longwait,-slower,-reset}.elf"
# cyccnt-wait-m33: cyccnt-wait for the Cortex-M33 of mps2-an505 (two cores, the second held off).
"$CC" -mcpu=cortex-m33 -mfloat-abi=soft -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections \
    -fdata-sections -nostartfiles --specs=rdimon.specs -T "$HERE/link.ld" -L "$LINKER/mps2-an505" -Wl,--gc-sections \
    -Wl,--defsym=end=__bss_end -DNEWLIB_RDIMON -DWAIT_ON_COUNTER "$HERE/newlib/startup.c" "$HERE/cyccnt/main.c" \
    -o "$OUT/cyccnt-wait-m33.elf"
echo "built $OUT/cyccnt-wait-m33.elf"
# clock-wait: an STM32F4 clock start-up that waits for the crystal (RCC_CR.HSERDY), which QEMU's
# netduinoplus2 never reports ready; printf on USART1; linked for the part's flash at 0x08000000.
"$CC" -mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections \
    -nostartfiles --specs=nano.specs --specs=nosys.specs -T "$HERE/link.ld" -L "$LINKER/netduinoplus2" -Wl,--gc-sections \
    -DUART_STM32=0x40011000 "$HERE/newlib/startup.c" "$HERE/newlib/uart.c" "$HERE/clock-wait/main.c" \
    -o "$OUT/clock-wait.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
echo "built $OUT/clock-wait.elf"
# tick-wait: a delay on the tick of TIM6's interrupt (an STM32 HAL time base), which QEMU's
# netduinoplus2 never raises; its own vector table; printf on USART1.
"$CC" -mcpu=cortex-m4 -mthumb -O2 -g -std=gnu11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections \
    -nostartfiles --specs=nano.specs --specs=nosys.specs -T "$HERE/link.ld" -L "$LINKER/netduinoplus2" -Wl,--gc-sections \
    -DUART_STM32=0x40011000 "$HERE/newlib/uart.c" "$HERE/tick-wait/main.c" \
    -o "$OUT/tick-wait.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
"$CC" -mcpu=cortex-m4 -mthumb -O2 -g -std=gnu11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections \
    -nostartfiles --specs=nano.specs --specs=nosys.specs -T "$HERE/link.ld" -L "$LINKER/netduinoplus2" -Wl,--gc-sections \
    -DUART_STM32=0x40011000 -DSLEEP "$HERE/newlib/uart.c" "$HERE/tick-wait/main.c" \
    -o "$OUT/tick-wait-sleep.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
echo "built $OUT/tick-wait.elf $OUT/tick-wait-sleep.elf"
# loop-end-{m0,m33}: work, then libnosys's `_exit` loop, on the microbit (Cortex-M0) and mps2-an505
# (Cortex-M33, two cores); loop-end-wfi: the work, then an idle loop on WFI (mps2-an386);
# loop-end-dsb-wfi: the same with a DSB before the WFI.
LFLAGS=(-mthumb -O2 -g -std=c11 -Wall -Wextra -Werror -ffunction-sections -fdata-sections -nostartfiles
        --specs=nano.specs --specs=nosys.specs -T "$HERE/link.ld" -Wl,--gc-sections)
"$CC" -mcpu=cortex-m0 "${LFLAGS[@]}" -L "$LINKER/microbit" "$HERE/newlib/startup.c" "$HERE/loop-end/main.c" \
    -o "$OUT/loop-end-m0.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
"$CC" -mcpu=cortex-m33 -mfloat-abi=soft "${LFLAGS[@]}" -L "$LINKER/mps2-an505" "$HERE/newlib/startup.c" \
    "$HERE/loop-end/main.c" -o "$OUT/loop-end-m33.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
"$CC" -mcpu=cortex-m4 "${LFLAGS[@]}" -L "$LINKER/mps2" -DIDLE_WFI "$HERE/newlib/startup.c" "$HERE/loop-end/main.c" \
    -o "$OUT/loop-end-wfi.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
"$CC" -mcpu=cortex-m4 "${LFLAGS[@]}" -L "$LINKER/mps2" -DIDLE_WFI -DIDLE_DSB "$HERE/newlib/startup.c" \
    "$HERE/loop-end/main.c" -o "$OUT/loop-end-dsb-wfi.elf" 2>&1 | { grep -v "is not implemented and will always fail" || true; } >&2
echo "built $OUT/loop-end-{m0,m33,wfi,dsb-wfi}.elf"
# fault: calls through a function pointer without its Thumb bit; the start-up's fault handler loops.
# fault-printing: its own HardFault_Handler prints a line, then loops.
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON "$HERE/newlib/startup.c" "$HERE/fault/main.c" -o "$OUT/fault.elf"
"$CC" "${NFLAGS[@]}" -DNEWLIB_RDIMON -DPRINTING_HANDLER "$HERE/newlib/startup.c" "$HERE/fault/main.c" \
    -o "$OUT/fault-printing.elf"
echo "built $OUT/fault.elf $OUT/fault-printing.elf"

# kat-float: single-precision KATs built for hard float (-mfloat-abi=hard, VFP instructions and
# the hard-float calling convention) on mps2-an386 (Cortex-M4F); kat-crc32/startup.c enables the
# FPU at reset because __ARM_FP is defined. kat-float-fpu-off: the same with -DSTARTUP_FPU_OFF,
# so its first FP instruction faults (UsageFault NOCP escalated to HardFault), for the test of
# the fault message.
FFLAGS=("${CFLAGS[@]}" -mfloat-abi=hard -mfpu=fpv4-sp-d16 -fno-math-errno)
"$CC" "${FFLAGS[@]}" "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-float/main.c" -o "$OUT/kat-float.elf"
"$CC" "${FFLAGS[@]}" -DSTARTUP_FPU_OFF "${MPS2_LD[@]}" -Wl,--gc-sections \
    "$HERE/kat-crc32/startup.c" "$HERE/kat-float/main.c" -o "$OUT/kat-float-fpu-off.elf"
echo "built $OUT/kat-float.elf $OUT/kat-float-fpu-off.elf"

# parity-<layout>-<opt>[-lto]: mcubench.h's region markers in every optimisation level, with and
# without LTO, and with MCUBENCH_IMPL in the KAT file (`same`) or in a file of its own
# (`separate`); CRC-32 KATs (firmware/c/parity) on mps2-an386, for sim/mcubench/tests/c_parity.rs.
# The four builds of one optimisation level run in parallel (a failed one fails the script).
for opt in O0 O2 O3 Os; do
    pids=()
    for lto in "" -lto; do
        PFLAGS=("${CFLAGS[@]/-O2/-$opt}")
        [ -n "$lto" ] && PFLAGS+=(-flto)
        "$CC" "${PFLAGS[@]}" -DPARITY_IMPL_HERE "${MPS2_LD[@]}" -Wl,--gc-sections \
            "$HERE/kat-crc32/startup.c" "$HERE/parity/kats.c" "$HERE/parity/ops.c" "$HERE/parity/crc32.c" \
            -o "$OUT/parity-same-$opt$lto.elf" &
        pids+=($!)
        "$CC" "${PFLAGS[@]}" "${MPS2_LD[@]}" -Wl,--gc-sections \
            "$HERE/kat-crc32/startup.c" "$HERE/parity/kats.c" "$HERE/parity/impl.c" "$HERE/parity/ops.c" \
            "$HERE/parity/crc32.c" -o "$OUT/parity-separate-$opt$lto.elf" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
done
echo "built $OUT/parity-*.elf"
