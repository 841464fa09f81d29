//! Where the core was when a run's time ran out, from QEMU's monitor (contained runs stop the CPU
//! and ask it, [`crate::exec`]): the program counter, the exception being handled (IPSR) and, in
//! a fault handler, the fault status registers and the faulting instruction from the exception
//! frame. C start-up files (newlib's, vendors' templates) give every fault a handler that loops
//! forever: such firmware faults silently, and its run ends at the timeout. With this its verdict
//! is the fault, with its cause.
//!
//! Sources: ARMv7-M Architecture Reference Manual (ARM DDI 0403E) B1.4.2 (IPSR holds the
//! exception number: 2 NMI, 3 HardFault, 4 MemManage, 5 BusFault, 6 UsageFault, 11 SVCall, 12
//! DebugMonitor, 14 PendSV, 15 SysTick, 16 and up external interrupts), B1.5.6 (the frame an
//! exception stacks: R0–R3, R12, LR, the return address, xPSR, upwards from SP), B1.5.8
//! (EXC_RETURN bit 2: 0 returns to the main stack); ARMv8-M (ARM DDI 0553) adds 7, SecureFault.
//!
//! Limits: the frame is read at SP when the core stopped at the handler's first instruction, a
//! branch to itself (`b .`), or above what a vector-table handler pushed, by its frame at the
//! stopped PC (the stack analyzer's `depth_at`), with EXC_RETURN in the word below it; and only
//! when EXC_RETURN names the main stack, the stack SP is then. Otherwise the faulting instruction
//! is not named. ARMv6-M has no fault status registers (they read 0).

use std::collections::BTreeMap;

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use mcubench_thumb::{Decoder, Flow, Insn};

use crate::judge::verdict::{Outcome, Verdict};

/// The core's state as QEMU's monitor printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreState {
    pub pc: u32,
    pub sp: u32,
    pub lr: u32,
    pub xpsr: u32,
    /// CFSR and HFSR (0xE000ED28, 0xE000ED2C), when the monitor could read them.
    pub fault_status: Option<(u32, u32)>,
    /// The words from SP up (up to 64, as many as the monitor gave in a row).
    pub stack: Vec<u32>,
    /// R0 to R12.
    pub regs: [Option<u32>; 13],
    /// The CPU's memory map, from `info mtree -f` (empty without it).
    pub map: Vec<Mapped>,
}

/// One range of the CPU's flat memory map as QEMU's monitor prints it (`info mtree -f`):
/// `0000000040023800-0000000040023bff (prio -1000, i/o): RCC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    pub start: u64,
    /// Inclusive.
    pub last: u64,
    pub priority: i32,
    /// `ram`, `rom`, `i/o`, ...
    pub kind: String,
    pub name: String,
}

impl Mapped {
    /// QEMU's placeholder for a device its model of the board leaves out
    /// (`create_unimplemented_device`, priority -1000): reads return 0, writes are dropped.
    pub fn unimplemented(&self) -> bool {
        self.priority == -1000 && self.kind == "i/o"
    }

    /// A device (memory-mapped I/O, not RAM or ROM).
    pub fn device(&self) -> bool {
        self.kind == "i/o"
    }
}

/// The flat view of the CPU's address space from `info mtree -f`: the secure one on a core with
/// the Security Extension (firmware starts secure), else `cpu-memory-0`.
fn cpu_map(text: &str) -> Vec<Mapped> {
    let mut views: Vec<(Vec<String>, Vec<Mapped>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("FlatView #") {
            views.push((Vec::new(), Vec::new()));
            continue;
        }
        let Some((spaces, ranges)) = views.last_mut() else { continue };
        if let Some(rest) = line.strip_prefix("AS \"") {
            spaces.push(rest.split('"').next().unwrap_or_default().to_string());
            continue;
        }
        // `start-last (prio P, kind): name`
        let Some((range, rest)) = line.split_once(' ') else { continue };
        let Some((start, last)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(last)) = (u64::from_str_radix(start, 16), u64::from_str_radix(last, 16)) else { continue };
        let Some((attrs, name)) = rest.strip_prefix("(prio ").and_then(|r| r.split_once("): ")) else { continue };
        let Some((priority, kind)) = attrs.split_once(", ") else { continue };
        let Ok(priority) = priority.parse() else { continue };
        ranges.push(Mapped { start, last, priority, kind: kind.to_string(), name: name.to_string() });
    }
    ["cpu-secure-memory-0", "cpu-memory-0"]
        .iter()
        .find_map(|want| views.iter().find(|(spaces, _)| spaces.iter().any(|s| s == want)))
        .map(|(_, ranges)| ranges.clone())
        .unwrap_or_default()
}

impl CoreState {
    /// Parses the text of [`crate::exec`]'s probe: `info registers` (`R13=…`, `R14=…`,
    /// `R15=…`, `XPSR=…`), then `x /2wx 0xe000ed28` and `x /8wx <SP>` (`addr: 0x… 0x…` lines).
    /// `None` without the registers.
    pub fn parse(text: &str) -> Option<CoreState> {
        let register = |name: &str| {
            text.split_whitespace().find_map(|w| w.strip_prefix(name)).and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        let (pc, sp, lr, xpsr) = (register("R15=")?, register("R13=")?, register("R14=")?, register("XPSR=")?);
        // Words by address from the memory dumps.
        let mut words = BTreeMap::new();
        for line in text.lines() {
            let Some((address, rest)) = line.trim().split_once(':') else { continue };
            let Ok(mut at) = u32::from_str_radix(address, 16) else { continue };
            for word in rest.split_whitespace() {
                let Some(v) = word.strip_prefix("0x").and_then(|h| u32::from_str_radix(h, 16).ok()) else { break };
                words.insert(at, v);
                at = at.wrapping_add(4);
            }
        }
        let word = |a: u32| words.get(&a).copied();
        let fault_status = word(0xE000_ED28).zip(word(0xE000_ED2C));
        let stack = (0..64).map_while(|i| word(sp.wrapping_add(4 * i))).collect();
        let regs = std::array::from_fn(|i| register(&format!("R{i:02}=")));
        Some(CoreState { pc, sp, lr, xpsr, fault_status, stack, regs, map: cpu_map(text) })
    }

    /// The range of the memory map holding `addr`, the highest priority first.
    pub fn mapped(&self, addr: u32) -> Option<&Mapped> {
        let a = u64::from(addr);
        self.map.iter().filter(|m| m.start <= a && a <= m.last).max_by_key(|m| m.priority)
    }

    /// The exception being handled (IPSR), 0 in thread mode.
    pub fn exception(&self) -> u32 {
        self.xpsr & 0x1ff
    }

    /// A fault handler: HardFault, MemManage, BusFault, UsageFault or SecureFault.
    pub fn in_fault_handler(&self) -> bool {
        (3..=7).contains(&self.exception())
    }

    /// The stacked return address and LR of the faulting code, from the exception frame
    /// `depth` bytes above SP (what the handler pushed before the core stopped: 0 at its first
    /// instruction), when the frame is on the main stack: EXC_RETURN bit 2 clear, EXC_RETURN
    /// being LR at the handler's first instruction, and once it pushed registers the word
    /// below the frame, where a prologue's `push {…, lr}` puts LR (AAPCS: the highest register
    /// at the highest address).
    pub fn faulting(&self, depth: Option<u32>) -> Option<(u32, u32)> {
        let at = usize::try_from(depth? / 4).ok()?;
        let exc_return = if at == 0 { self.lr } else { *self.stack.get(at - 1)? };
        let main_stack = exc_return >> 28 == 0xf && exc_return & 0x4 == 0;
        let frame = self.stack.get(at..at + 8)?;
        (self.in_fault_handler() && main_stack).then_some((frame[6], frame[5]))
    }
}

/// A timeout's verdict with what the core was doing: in a fault handler that loops, the fault
/// (outcome `fault`: where, why, and where the handler is); anywhere else, the timeout with where
/// it hung and in which exception.
///
/// Where a loop of several instructions stopped depends on when the time ran out, so only a
/// branch to itself is given by address; anything else by its function, which keeps the report
/// the same from run to run.
pub fn judge(
    timeout: Verdict,
    s: &CoreState,
    image: &ElfImage,
    decoder: Option<&Decoder>,
    symbolize: &dyn Fn(u32) -> String,
) -> Verdict {
    // Stopped on a branch to itself (`b .`): the same place in every run.
    let on_itself = image.bytes_at(u64::from(s.pc), 2) == Some(&[0xfe, 0xe7][..]);
    let function = image.symbolize(u64::from(s.pc));
    let at = match (&function, on_itself) {
        (_, true) => format!("at pc=0x{:08x} ({})", s.pc, symbolize(s.pc)),
        (Some((f, _)), false) => format!("in {f}"),
        (None, false) => "outside every function".to_string(),
    };
    if !s.in_fault_handler() {
        let exception = match s.exception() {
            0 => String::new(),
            n => format!(", handling {}", exception_name(n)),
        };
        // A WFI leaves PC after itself while the core sleeps.
        let wfi =
            |len: u32, bytes: &[u8]| image.bytes_at(u64::from(s.pc.wrapping_sub(len)), u64::from(len)) == Some(bytes);
        let slept = if wfi(2, &[0x30, 0xbf]) {
            Some(2)
        } else if wfi(4, &[0xaf, 0xf3, 0x03, 0x80]) {
            Some(4)
        } else {
            None
        };
        let asleep = if slept.is_some() { ", asleep in WFI (waiting for an interrupt)" } else { "" };
        // Asleep in an idle loop, `while (1) { __WFI(); }`.
        let idle = slept.is_some_and(|len| {
            decoder.is_some_and(|d| {
                crate::analyze::idle::idle_loops(&crate::analyze::decoded_functions(image, d))
                    .contains(&s.pc.wrapping_sub(len))
            })
        });
        // A loop on itself in thread mode is how firmware for a board ends; a loop that reads a
        // device waits for something QEMU's model of it may never do.
        let mut at = at;
        let hint = if on_itself && s.exception() == 0 {
            "; if that loop is where the firmware ends (`while (1) {}` after `main`, libnosys's `_exit`), \
             `verdict: { exit: loop }` (`--exit-code loop`) ends the run there, with its counts"
                .to_string()
        } else if idle && s.exception() == 0 {
            "; if that idle loop is where the firmware ends (`while (1) { __WFI(); }`), `verdict: { exit: loop }` \
             (`--exit-code loop`) ends the run there, before the core sleeps, with its counts"
                .to_string()
        } else if let Some((site, reads)) = decoder.and_then(|d| polled(s, image, d)) {
            // The loop's function, not the function it calls where the core happened to stop: the
            // same in every run.
            if let Some((f, _)) = image.symbolize(u64::from(site)) {
                at = format!("in {f}");
            }
            wait_hint(s, image, &reads)
        } else {
            String::new()
        };
        return Verdict::new(
            Outcome::Timeout,
            format!("{}; when the time ran out the core was {at}{asleep}{exception}{hint}", timeout.message),
        );
    }
    let name = exception_name(s.exception());
    // Where the exception frame is: at SP when the handler stopped at its first instruction (a
    // branch to itself); in a handler of the vector table that pushed registers first (to print
    // something, say), above them, by its frame at the stopped PC.
    let depth = if on_itself && function.is_some_and(|(_, off)| off == 0) {
        Some(0)
    } else {
        let map = FunctionMap::new(image);
        let handlers = crate::exec::plugin::exception_handlers(image);
        map.containing(s.pc)
            .filter(|f| handlers.binary_search(&f.start).is_ok())
            .zip(decoder)
            .and_then(|(f, d)| mcubench_stack::frame::depth_at(image, f, d, s.pc))
    };
    let origin = match s.faulting(depth) {
        Some((pc, lr)) => format!(" at pc=0x{pc:08x} ({}), lr=0x{lr:08x}", symbolize(pc)),
        None => String::new(),
    };
    let status = match s.fault_status {
        Some((cfsr, hfsr)) => format!(", {}", crate::judge::fault::status_text(cfsr, hfsr)),
        None => String::new(),
    };
    Verdict::new(
        Outcome::Fault,
        format!(
            "{name}{origin}{status}; the core was in its {name} handler {at} when the time ran out \
             ({}), so the run never ended",
            if on_itself { "a handler that loops" } else { "a handler that did not return" }
        ),
    )
}

/// What the loop the core stopped in was waiting on, when it reads a device or a variable: `; the
/// loop …`, or empty. A device QEMU leaves out reads 0 for ever; one it models may still never
/// show what the firmware waits for (a clock that never becomes ready); a variable in RAM waits
/// for an interrupt handler, whose interrupt may never come.
fn wait_hint(s: &CoreState, image: &ElfImage, reads: &[u32]) -> String {
    // Not the core's own registers (0xE0000000 up: SysTick, SCB, DWT, whose counter has a hint
    // of its own).
    let device = reads.iter().find_map(|&a| s.mapped(a).filter(|m| a < 0xE000_0000 && m.device()).map(|m| (a, m)));
    if let Some((addr, m)) = device {
        let what = if m.unimplemented() {
            "a device QEMU's model of this board leaves out (it reads 0 and ignores writes), so the wait never ends \
             under QEMU: keep it out of builds for QEMU, or wait on it with a time limit"
        } else {
            "a device of QEMU's model of this board, which never gave the value the firmware waits for: the model \
             may not implement it (a clock or a peripheral becoming ready)"
        };
        return format!(
            "; the loop it was in reads 0x{addr:08x}, in `{}` (0x{:08x}–0x{:08x}), {what}",
            m.name, m.start, m.last
        );
    }
    let variable = reads.iter().find_map(|&a| {
        s.mapped(a).filter(|m| m.kind == "ram")?;
        image.symbolize(u64::from(a)).map(|(name, _)| (a, name))
    });
    match variable {
        Some((addr, name)) => format!(
            "; the loop it was in reads `{name}` (0x{addr:08x}, RAM) and waits for something else to change it: if \
             an interrupt handler does, that interrupt never came (QEMU's model of this board may not raise it, \
             e.g. a timer it leaves out)"
        ),
        None => String::new(),
    }
}

/// The addresses the innermost loop around the stopped PC loads from (not the stack, not literal
/// pools), directly or in a function it calls: base registers the loop does not write held on
/// every pass what the stopped core holds, and registers set to a constant (a literal,
/// `movw`/`movt`) are followed with the stack analyzer's constant tracking. When the PC is in no
/// loop (stopped in a function the loop calls, such as `HAL_GetTick`), the loop around the
/// return address in LR, with the registers a call preserves (r4–r11).
///
/// Returns the address the loop was found around (the PC or LR) and the addresses, none when the
/// loop (or a function it calls) stores anywhere but the stack: then it computes, not waits.
///
/// Limits: a loop is the smallest direct backward branch around the address in its function;
/// calls are followed one level; an address computed otherwise is not seen.
fn polled(s: &CoreState, image: &ElfImage, decoder: &Decoder) -> Option<(u32, Vec<u32>)> {
    let map = FunctionMap::new(image);
    let decode = |addr: u32| -> Option<Vec<Insn>> {
        let f = map.containing(addr).filter(|f| f.thumb)?;
        Some(decoder.decode_block(f.start, map.code(image, f)?).0)
    };
    let stopped: [Option<u32>; 13] = s.regs;
    let preserved: [Option<u32>; 13] = std::array::from_fn(|r| if (4..=11).contains(&r) { s.regs[r] } else { None });
    // LR as a return address (not EXC_RETURN): the caller resumes there.
    let caller = (s.lr < 0xF000_0000).then_some(s.lr & !1);
    let sites = [Some((s.pc, stopped)), caller.map(|lr| (lr, preserved))];
    for (at, regs) in sites.into_iter().flatten() {
        let Some(insns) = decode(at) else { continue };
        let backward = insns.iter().filter_map(|i| match i.flow {
            Flow::Branch { target } if target <= at && at <= i.addr => Some((target, i.addr)),
            _ => None,
        });
        let Some((from, to)) = backward.min_by_key(|(target, branch)| branch - target) else { continue };
        let body: Vec<&Insn> = insns.iter().filter(|i| (from..=to).contains(&i.addr)).collect();
        let written = body.iter().fold(0u16, |w, i| w | i.writes.0);
        // Registers the loop does not write hold, on every pass, what the core holds.
        let known: [Option<u32>; 16] =
            std::array::from_fn(|r| if r < 13 && written & (1 << r) == 0 { regs[r] } else { None });
        let mut out = loads(image, body.iter().copied(), known);
        // A loop that stores (other than to the stack) computes rather than waits: no reads.
        let stores = |insns: &[&Insn]| insns.iter().any(|i| i.mem.is_some_and(|m| m.store && m.base != 13));
        let mut computes = stores(&body);
        for insn in &body {
            if let Flow::Call { target } = insn.flow
                && let Some(callee) = decode(target)
            {
                let callee: Vec<&Insn> = callee.iter().filter(|i| i.addr >= target).collect();
                computes |= stores(&callee);
                out.extend(loads(image, callee, [None; 16]));
            }
        }
        if computes {
            out.clear();
        }
        return Some((at, out));
    }
    None
}

/// The addresses `insns` load from (not the stack, not literal pools) in straight-line order,
/// given the registers `known` before the first.
fn loads<'a>(image: &ElfImage, insns: impl IntoIterator<Item = &'a Insn>, known: [Option<u32>; 16]) -> Vec<u32> {
    let accesses = mcubench_stack::frame::constant_accesses(image, insns, known);
    accesses.into_iter().filter(|(insn, _)| insn.mem.is_some_and(|m| !m.store)).map(|(_, addr)| addr).collect()
}

/// The name of exception `n`.
pub fn exception_name(n: u32) -> String {
    match n {
        0 => "none (thread mode)".into(),
        2 => "NMI".into(),
        3 => "HardFault".into(),
        4 => "MemManage".into(),
        5 => "BusFault".into(),
        6 => "UsageFault".into(),
        7 => "SecureFault".into(),
        11 => "SVCall".into(),
        12 => "DebugMonitor".into(),
        14 => "PendSV".into(),
        15 => "SysTick".into(),
        n if n >= 16 => format!("IRQ {}", n - 16),
        n => format!("exception {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QEMU 7.2's monitor for a Cortex-M3 running an M4F build: an FPU instruction faulted,
    /// escalated to HardFault, whose handler is `b .` (the text as the monitor sends it).
    const M3_FAULT: &str = "CPU#0\r\nR00=fffffffc R01=00007ae8 R02=ffffffff R03=6d65733a\r\n\
        R04=00000000 R05=ffffffff R06=00000000 R07=00000000\r\nR08=00007aec R09=203fff28 R10=00000000 R11=00000000\r\n\
        R12=ffffffff R13=203fff00 R14=fffffff9 R15=00000040\r\nXPSR=01000003 ---- T handler\r\nFPSCR: 00000000\r\n\n\
        e000ed28: 0x00010000 0x40000000\r\n\n\
        203fff00: 0x00000001 0x00000002 0x00000003 0x00000004\r\n203fff10: 0x0000000c 0x000000f1 0x00000134 0x21000000\r\n";

    #[test]
    fn a_fault_handler_loop_gives_the_exception_the_status_and_the_faulting_code() {
        let s = CoreState::parse(M3_FAULT).unwrap();
        assert_eq!((s.pc, s.sp, s.lr, s.exception()), (0x40, 0x203f_ff00, 0xffff_fff9, 3));
        assert_eq!(s.fault_status, Some((0x0001_0000, 0x4000_0000)));
        assert!(s.in_fault_handler());
        assert_eq!(s.faulting(Some(0)), Some((0x134, 0xf1)));
        // Where the frame is, unknown: no faulting instruction.
        assert_eq!(s.faulting(None), None);
        // 8 bytes up, below which no EXC_RETURN was pushed: no frame there.
        assert_eq!(s.faulting(Some(8)), None);
        // A handler that pushed {r3, lr} (LR then EXC_RETURN) and called a function: the frame
        // above the two words, LR clobbered by the call.
        let pushed = CoreState {
            lr: 0x0000_00b5,
            stack: [&[0x2000_0000, 0xffff_fff9][..], &s.stack].concat(),
            sp: s.sp - 8,
            ..s.clone()
        };
        assert_eq!(pushed.faulting(Some(8)), Some((0x134, 0xf1)));
        assert_eq!(pushed.faulting(Some(0)), None);
        let on_psp = CoreState { stack: [&[0x2000_0000, 0xffff_fffd][..], &s.stack].concat(), ..pushed.clone() };
        assert_eq!(on_psp.faulting(Some(8)), None);
        // A frame on the process stack (EXC_RETURN bit 2) is not at SP either.
        let psp = CoreState { lr: 0xffff_fffd, ..s.clone() };
        assert_eq!(psp.faulting(Some(0)), None);
        assert_eq!(exception_name(s.exception()), "HardFault");
    }

    #[test]
    fn the_memory_map_is_the_cpus_flat_view_the_secure_one_first() {
        let text = "R13=20001000 R14=00000101 R15=00000200\nXPSR=61000000 -ZC- T thread\n\
            FlatView #0\n AS \"memory\", root: system\n Root memory region: system\n\
            \x20 0000000040000000-00000000400003ff (prio 0, i/o): uart\n\
            FlatView #1\n AS \"cpu-memory-0\", root: armv7m-container\n\
            \x20 0000000040023800-0000000040023bff (prio -1000, i/o): RCC\n\
            FlatView #2\n AS \"cpu-secure-memory-0\", root: armv7m-container\n\
            \x20 0000000020000000-000000002000ffff (prio 0, ram): sram\n\
            \x20 0000000040023800-0000000040023bff (prio -1000, i/o): RCC-S\n";
        let s = CoreState::parse(text).unwrap();
        assert_eq!(s.map.len(), 2);
        let rcc = s.mapped(0x4002_3804).unwrap();
        assert_eq!((rcc.name.as_str(), rcc.unimplemented(), rcc.device()), ("RCC-S", true, true));
        assert!(!s.mapped(0x2000_0000).unwrap().device());
        assert_eq!(s.mapped(0x4000_0000), None);
        let plain = CoreState::parse(&text.replace("cpu-secure-memory-0", "other")).unwrap();
        assert_eq!(plain.mapped(0x4002_3800).unwrap().name, "RCC");
    }

    #[test]
    fn thread_mode_and_missing_parts() {
        let text = "R13=20001000 R14=00000101 R15=00000200\nXPSR=61000000 -ZC- T thread\n";
        let s = CoreState::parse(text).unwrap();
        assert_eq!((s.exception(), s.fault_status, s.stack.len()), (0, None, 0));
        assert!(!s.in_fault_handler());
        assert_eq!(s.faulting(Some(0)), None);
        assert_eq!(exception_name(31), "IRQ 15");
        assert_eq!(CoreState::parse("no registers here"), None);
    }
}
