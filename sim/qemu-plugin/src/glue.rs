//! The QEMU side: install, translation-time instrumentation, marker callbacks, results at exit.

use std::cell::UnsafeCell;
use std::ffi::{c_uint, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use mcubench_thumb::Decoder;
use mcubench_timing::run::{ExceptionEvent, Pricer, TbPrice};
use mcubench_wire::trace::{Event, TraceWriter};
use mcubench_wire::{CounterValue, Cycles, DWT_CYCCNT, Interval, Marker, PluginArgs, StackProbeRange};
use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::sys::{qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_tb};
use qemu_plugin::{MemRW, PluginId, TranslationBlock};

use crate::BUILT_FOR_API;
use crate::api::{Arguments, Counter};
use crate::calls::Calls;
use crate::cost::{self, TbCost};
use crate::profile::{Functions, Profile, TbShape};
use crate::regions::{At, Extra, Regions};

/// Guest instructions executed: added to by generated code when only counting, by each TB's
/// exec callback when cycles are on (single vCPU: plain adds suffice; see `api`).
static INSNS: Counter = Counter::new();

/// Whether the machine has more than one vCPU (the SSE-200 boards, e.g. mps2-an521: two
/// Cortex-M33s, the second powered off at reset until the firmware releases it). The inline
/// counters cannot tell vCPUs apart, so the counts are vCPU 0's only while no other vCPU runs
/// code: an exec callback on every TB watches for one ([`on_vcpu_0`]).
static MULTI_VCPU: AtomicBool = AtomicBool::new(false);

/// The first vCPU other than 0 seen executing code (`u32::MAX`: none). Set, it voids the run's
/// counts: the plugin says so at exit and writes no results.
static OTHER_VCPU: AtomicU32 = AtomicU32::new(u32::MAX);

/// Notes a TB executed by `vcpu`; false (and the run's counts void) if it is not vCPU 0.
fn on_vcpu_0(vcpu: c_uint) -> bool {
    if vcpu == 0 {
        return true;
    }
    let _ = OTHER_VCPU.compare_exchange(u32::MAX, vcpu, Ordering::Relaxed, Ordering::Relaxed);
    false
}

/// Estimated cycles: what the run-time pricer ([`Pricer`]) prices per TB, added by the TB's exec
/// callback (the previous TB's taken-branch refill included), plus data-load stalls.
static CYCLES: Counter = Counter::new();

/// The TB whose exec callback ran last (with cycles on): a device access that QEMU re-runs in a
/// block of its own ([`on_device_access`]) stopped this one.
static LAST_TB: AtomicPtr<TbInfo> = AtomicPtr::new(std::ptr::null_mut());

/// The firmware's reads and writes of the DWT cycle counter (QEMU's reads 0): the last access's
/// address and counts through it, and the intervals from an access to the next read (what the
/// board's read gives after a read, as a difference, or after `DWT->CYCCNT = 0`).
/// `reads` and `zeroed` (cycles at the last write, taken as a write of 0) give what the board's
/// counter reads (`counter=`).
struct CounterReads {
    last: Option<(u32, u64, u64)>,
    intervals: std::collections::BTreeMap<(u32, u32), Interval>,
    reads: u64,
    zeroed: u64,
}

static COUNTER_READS: Mutex<CounterReads> =
    Mutex::new(CounterReads { last: None, intervals: std::collections::BTreeMap::new(), reads: 0, zeroed: 0 });

/// The profile node the pending refill belongs to.
static PENDING_NODE: AtomicU32 = AtomicU32::new(0);

/// Stack probe: the lowest probed store address since the last region event (`u32::MAX`: none),
/// and of the whole run up to that event.
static PROBE_LOW: AtomicU32 = AtomicU32::new(u32::MAX);
static RUN_LOW: AtomicU32 = AtomicU32::new(u32::MAX);

/// Stack probe: SP followed from the code (plugin API v1 cannot read registers, and the same
/// code runs on every API, so both give the same numbers). `start`: SP when the running TB
/// began (`None`: unknown), `total`: what the TB does to it ([`cost::SpSteps`]); `saved`: SP
/// of the code each active exception preempted, restored at its return (the hardware frame's
/// size is not known, so inside a handler SP is unknown until a store with base SP shows it).
struct SpTrack {
    start: Option<u32>,
    total: Option<i32>,
    saved: Vec<Option<u32>>,
    /// The TB whose start `start` is (null before the first).
    tb: *const TbInfo,
}

struct SpCell(UnsafeCell<SpTrack>);
// SAFETY: as ShadowCell: vCPU 0 only, callbacks never concurrent; the TbInfo pointer is to a
// leaked, never freed value.
unsafe impl Sync for SpCell {}
unsafe impl Send for SpCell {}
static SP: OnceLock<SpCell> = OnceLock::new();

/// The SP tracker, when probing with cycles on (the tracker needs each TB's exec callback).
fn sp_track() -> Option<&'static mut SpTrack> {
    // SAFETY: see SpCell; callers never hold two of these references at once.
    SP.get().map(|cell| unsafe { &mut *cell.0.get() })
}

/// Moves the SP tracker to the start of `tb`.
fn sp_begin(tb: &TbInfo, event: ExceptionEvent) {
    let Some(t) = sp_track() else { return };
    // With -icount, a TB that reaches a device access before its last instruction is abandoned
    // there (after its exec callback ran) and run again as a shorter TB from the same start
    // (QEMU's cpu_io_recompile): the abandoned run's SP changes did not happen. A loop that
    // branches to its own start runs the same TB again, not a shorter one.
    // SAFETY: TbInfo values are leaked at translation and never freed.
    let prev = unsafe { t.tb.as_ref() };
    let abandoned = prev.is_some_and(|p| p.price.start == tb.price.start && !std::ptr::eq(p, tb) && tb.insns < p.insns);
    t.tb = tb;
    let mut sp = if abandoned { t.start } else { t.start.zip(t.total).map(|(s, d)| s.wrapping_add_signed(d)) };
    match event {
        ExceptionEvent::None => {}
        ExceptionEvent::Entry => {
            t.saved.push(sp);
            sp = None;
        }
        ExceptionEvent::TailChain => sp = None,
        ExceptionEvent::Exit => sp = t.saved.pop().flatten(),
    }
    t.start = sp;
    t.total = tb.sp_total;
}

/// SP before the instruction `before` bytes into the running TB's SP change (`None`: unknown).
fn sp_at(before: Option<i32>) -> Option<u32> {
    let t = sp_track()?;
    t.start.zip(before).map(|(s, d)| s.wrapping_add_signed(d))
}

struct Timing {
    decoder: Decoder,
}

/// The cycle model's run-time state (`mcubench_timing::run`: refills, exceptions,
/// continuations, the memory system's buffers and caches), with `core=`.
struct PricerCell(UnsafeCell<Pricer>);
// SAFETY: as ShadowCell: touched only by vCPU 0's callbacks (and at translation, which under
// -icount never runs concurrently with them), never concurrently.
unsafe impl Sync for PricerCell {}
static PRICER: OnceLock<PricerCell> = OnceLock::new();

/// The run-time pricer, when cycles are on.
fn pricer() -> Option<&'static mut Pricer> {
    // SAFETY: see PricerCell; callers never hold two of these references at once.
    PRICER.get().map(|cell| unsafe { &mut *cell.0.get() })
}

/// The run trace (`trace=`): what the pricer priced, for the host to price again with other
/// parameters (`mcubench_wire::trace`).
struct Trace {
    writer: TraceWriter<std::fs::File>,
    /// Translated TBs so far (the next one's number).
    blocks: u32,
    /// Snapshots so far (the next one's number).
    snapshots: u64,
}

struct TraceCell(UnsafeCell<Trace>);
// SAFETY: as ShadowCell: vCPU 0's callbacks and translation, never concurrently; the exit
// callback after the vCPUs stopped.
unsafe impl Sync for TraceCell {}
static TRACE: OnceLock<TraceCell> = OnceLock::new();

fn trace() -> Option<&'static mut Trace> {
    // SAFETY: see TraceCell; callers never hold two of these references at once.
    TRACE.get().map(|cell| unsafe { &mut *cell.0.get() })
}

/// The number of the next snapshot, recorded in the trace when tracing (0 otherwise).
fn snapshot_number() -> u64 {
    trace().map_or(0, |t| {
        t.snapshots += 1;
        t.snapshots - 1
    })
}

/// A data load at `addr` of `size` bytes: its stall when loads cost anything, and its trace
/// record when tracing.
fn data_load(addr: u32, size: u32) {
    let Some(p) = pricer() else { return };
    // Loads outside the flash change nothing ([`MemorySystem::load`]): no record.
    if let Some(t) = trace()
        && p.memory().is_some_and(|m| m.flash_at(addr).is_some())
    {
        t.writer.event(&Event::Load { addr, size });
    }
    if p.data_side() {
        let stall = p.load(addr, size);
        if stall != 0 {
            CYCLES.add(stall);
        }
    }
}

struct State {
    config: PluginArgs,
    regions: Mutex<Regions>,
    timing: Option<Timing>,
    functions: Option<Functions>,
    /// First reason cycles are unavailable (an executed TB could not be priced).
    unavailable: Mutex<Option<String>>,
    /// The results file, created at install: once the guest runs, a contained QEMU may open no
    /// file (see mcubench's contain.rs). Readers know a complete file by its `end` line.
    out: Mutex<std::fs::File>,
    /// `counter=`: the file for the counter's value at each read, created at install.
    counter: Option<std::fs::File>,
}

static STATE: OnceLock<State> = OnceLock::new();

/// The shadow call stack (profile) and the function regions on it.
struct Shadow {
    profile: Profile,
    calls: Calls,
}

/// The shadow stack, touched only from vCPU 0's callbacks and at exit.
struct ShadowCell(UnsafeCell<Shadow>);
// SAFETY: callbacks are never concurrent: mcubench always runs QEMU with `-icount`, under which
// TCG runs every vCPU in one thread (round-robin), and on a machine with several vCPUs the
// callbacks of any vCPU but 0 return before touching this; the exit callback runs after the
// vCPUs stopped.
unsafe impl Sync for ShadowCell {}
static SHADOW: OnceLock<ShadowCell> = OnceLock::new();

/// The shadow stack, if functions were given.
fn shadow() -> Option<&'static mut Shadow> {
    // SAFETY: see ShadowCell; callers never hold two of these references at once.
    SHADOW.get().map(|cell| unsafe { &mut *cell.0.get() })
}

/// Attributes the probed stores since the last event to every open activation (marker regions
/// and function regions) and to the whole run. Called before any activation opens or closes.
fn fold_probe(regions: Option<&mut Regions>, calls: Option<&mut Calls>) {
    let low = PROBE_LOW.swap(u32::MAX, Ordering::Relaxed);
    if low == u32::MAX {
        return;
    }
    RUN_LOW.fetch_min(low, Ordering::Relaxed);
    if let Some(r) = regions {
        r.fold_low(low);
    }
    if let Some(c) = calls {
        c.fold_low(low);
    }
}

/// Per-TB data for the exec callback, leaked at translation (bounded by the translations).
struct TbInfo {
    /// The cycle model's price (`mcubench_timing::run`).
    price: TbPrice,
    /// For the shadow stack.
    shape: Option<TbShape>,
    /// The function region a call beginning at this TB opens.
    region: Option<u32>,
    /// The argument register holding the bytes such a call processes (`region_arg=`); its exec
    /// callback is then registered to read registers.
    arg: Option<u8>,
    insns: u64,
    /// What the TB does to SP (stack probe; `None`: unknown or not probing).
    sp_total: Option<i32>,
    /// SP before each instruction relative to the TB's start, when probing (else empty): where
    /// SP is when a device access stops the TB ([`take_back`]).
    sp_before: Box<[Option<i32>]>,
    /// Its number in the run trace (translation order), when tracing.
    trace_id: u32,
}

struct McubenchPlugin;

impl HasCallbacks for McubenchPlugin {}

/// Refuses to run when loaded into something it was not built for. Loud: a message on stderr
/// that the host turns into a setup error, and QEMU exits 1 before the guest starts.
fn refuse(message: &str) -> ! {
    eprintln!("mcubench-qemu-plugin: error: {message}");
    std::process::exit(1)
}

fn check_host(info: &Info) -> Result<(), String> {
    let (cur, min) = (info.version.current, info.version.mininum);
    if !(min <= BUILT_FOR_API && BUILT_FOR_API <= cur) {
        return Err(format!(
            "built for QEMU plugin API v{BUILT_FOR_API}, but this QEMU offers v{min}..v{cur}; \
             use libmcubench_qemu_plugin_v1.so with QEMU 7.2 to 8.2 and libmcubench_qemu_plugin_v3.so \
             with QEMU 9.1 to 10.x (mcubench picks it from `qemu-system-arm --version`)"
        ));
    }
    if info.target_name != "arm" {
        return Err(format!("loaded into a `{}` QEMU; mcubench runs qemu-system-arm", info.target_name));
    }
    match &info.system {
        None => return Err("loaded into user-mode QEMU; mcubench runs system emulation".into()),
        Some(s) if s.smp_vcpus < 1 => return Err(format!("{} vCPUs", s.smp_vcpus)),
        // Several vCPUs (an SSE-200's second Cortex-M33 starts powered off): counted as vCPU
        // 0's while no other runs code (see MULTI_VCPU).
        Some(s) => MULTI_VCPU.store(s.smp_vcpus > 1, Ordering::Relaxed),
    }
    Ok(())
}

impl Register for McubenchPlugin {
    fn register_default(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        if let Err(e) = check_host(info) {
            refuse(&e);
        }
        let config = PluginArgs::parse(&args.raw).unwrap_or_else(|e| refuse(&e.to_string()));
        if !config.region_args.is_empty() && !Arguments::READABLE {
            refuse(&format!(
                "`region_arg=` (bytes per call from an argument register) needs register reads, which QEMU \
                 plugin API v2 and later have (QEMU 9.1 to 10.x: libmcubench_qemu_plugin_v3.so); this build is \
                 for plugin API v{BUILT_FOR_API}"
            ));
        }
        let timing = config.core.map(|core| {
            let model = mcubench_timing::run::model_for(core, &config.wait_states, &config.params)
                .unwrap_or_else(|e| refuse(&e));
            let pricer = Pricer::new(model, &config.memory, !config.handlers.is_empty());
            let _ = PRICER.set(PricerCell(UnsafeCell::new(pricer)));
            Timing {
                decoder: Decoder::for_core(core).unwrap_or_else(|e| refuse(&format!("no decoder for {core}: {e}"))),
            }
        });
        if let Some(path) = &config.trace {
            // Created now: once the guest runs, a contained QEMU may open no file.
            let file = std::fs::File::create(path)
                .unwrap_or_else(|e| refuse(&format!("cannot create {}: {e}", path.display())));
            let trace = Trace { writer: TraceWriter::new(file), blocks: 0, snapshots: 0 };
            let _ = TRACE.set(TraceCell(UnsafeCell::new(trace)));
        }
        let functions = config.functions.as_ref().map(|path| {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| refuse(&format!("cannot read {}: {e}", path.display())));
            Functions::parse(&text).unwrap_or_else(|e| refuse(&e))
        });
        if let (Some(probe), Some(_)) = (&config.stack_probe, &timing) {
            // At reset SP is the initial SP, the top of the probe's range.
            let track = SpTrack { start: Some(probe.hi), total: Some(0), saved: Vec::new(), tb: std::ptr::null() };
            let _ = SP.set(SpCell(UnsafeCell::new(track)));
        }
        if functions.is_some() {
            let mut calls = Calls::default();
            calls.log = config.trace.as_ref().map(|_| Vec::new());
            let shadow = Shadow { profile: Profile::default(), calls };
            let _ = SHADOW.set(ShadowCell(UnsafeCell::new(shadow)));
        }
        let out = std::fs::File::create(&config.out)
            .unwrap_or_else(|e| refuse(&format!("cannot create {}: {e}", config.out.display())));
        let counter = config.counter.as_ref().map(|path| {
            std::fs::File::create(path).unwrap_or_else(|e| refuse(&format!("cannot create {}: {e}", path.display())))
        });
        let mut regions = Regions::default();
        regions.log = config.trace.as_ref().map(|_| Vec::new());
        let state = State {
            counter,
            config,
            regions: Mutex::new(regions),
            timing,
            functions,
            unavailable: Mutex::new(None),
            out: Mutex::new(out),
        };
        if STATE.set(state).is_err() {
            refuse("installed twice");
        }
        INSNS.install();
        CYCLES.install();
        // Only the callbacks we need: no idle/resume/syscall traffic.
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        }
        if STATE.get().is_some_and(|s| !s.config.region_args.is_empty()) {
            // Register handles can be looked up only in the vCPU's context.
            unsafe {
                qemu_plugin::sys::qemu_plugin_register_vcpu_init_cb(id, Some(on_vcpu_init));
            }
        }
        qemu_plugin::qemu_plugin_register_atexit_cb(id, on_exit)?;
        Ok(())
    }
}

qemu_plugin::register!(McubenchPlugin);

/// vCPU 0's initialisation: the handles of the argument registers (`region_arg=`).
extern "C" fn on_vcpu_init(_id: qemu_plugin_id_t, vcpu: c_uint) {
    if vcpu == 0
        && let Err(e) = Arguments.find()
    {
        refuse(&format!("`region_arg=`: {e}"));
    }
}

/// The exec callback of a TB when cycles are on and more than its price is wanted (else
/// [`on_tb_exec_priced`]): settles the previous TB's pending refill, leaves this TB's, and feeds
/// the profile.
unsafe extern "C" fn on_tb_exec(vcpu: c_uint, userdata: *mut c_void) {
    if !on_vcpu_0(vcpu) {
        return;
    }
    LAST_TB.store(userdata as *mut TbInfo, Ordering::Relaxed);
    // SAFETY: userdata is the leaked TbInfo registered with this callback.
    let tb = unsafe { &*(userdata as *const TbInfo) };
    let Some(pricer) = pricer() else { return };
    // Exceptions, continuation, branch entry, fetch stalls, the previous TB's taken refill
    // (mcubench_timing::run, the code the host's trace replay runs too).
    let step = pricer.enter(&tb.price);
    let (exception, taken) = (step.exception, step.taken);
    if exception != 0 {
        CYCLES.add(exception);
    }
    sp_begin(tb, step.event);
    if taken != 0 {
        CYCLES.add(taken);
    }
    let mut snapshot = false;
    if let Some(shadow) = shadow() {
        let profile = &mut shadow.profile;
        if taken != 0 {
            profile.add(PENDING_NODE.load(Ordering::Relaxed), taken, 0);
        }
        if let Some(shape) = &tb.shape {
            let node = profile.enter(shape);
            profile.add(node, step.own.wrapping_add(exception), tb.insns);
            PENDING_NODE.store(node, Ordering::Relaxed);
            let depth = profile.depth();
            let begin = if profile.began() && shape.func_entry { tb.region } else { None };
            if shadow.calls.wants(depth, begin) {
                // This callback adds the TB's own counts at its end, so here the counters hold
                // everything before this TB, the previous TB's taken refill included: the
                // snapshot "before the TB". (kernels_e2e pins it: a call of a lone `bx lr`
                // counts exactly 1 instruction.)
                let at = At { insns: INSNS.get(), cycles: CYCLES.get(), snap: snapshot_number() };
                snapshot = true;
                if let Some(state) = STATE.get()
                    && state.config.stack_probe.is_some()
                {
                    let mut regions = state.regions.lock().unwrap_or_else(|p| p.into_inner());
                    fold_probe(Some(&mut regions), Some(&mut shadow.calls));
                }
                let sp = STATE.get().and_then(|s| s.config.stack_probe.as_ref()).map(|_| sp_at(Some(0)));
                shadow.calls.step(depth, begin, profile.top_return(), at, sp);
                if begin.is_some()
                    && let Some(register) = tb.arg
                    && let Some(bytes) = Arguments.read(register)
                {
                    shadow.calls.set_bytes(bytes);
                }
            }
        }
    }
    // This TB's instructions and cycles (its fresh price plus the continuation correction, which
    // may be negative: two's complement wraps back). With cycles on, the exec callback runs for
    // every TB, so it adds them instead of inline operations (cheaper on QEMU 10, see `api`);
    // after the snapshots above, as inline adds registered after the callback would be.
    INSNS.add(tb.insns);
    CYCLES.add(step.own);
    if let Some(t) = trace() {
        t.writer.event(&Event::Exec { id: tb.trace_id, snapshot });
    }
    if let Some(e) = &tb.price.error
        && let Some(state) = STATE.get()
    {
        let mut u = state.unavailable.lock().unwrap_or_else(|p| p.into_inner());
        if u.is_none() {
            *u = Some(e.clone());
        }
    }
}

/// The exec callback of a TB when cycles are on and nothing but its price is wanted: no
/// function profile, stack probe or run trace, and priced without error. [`on_tb_exec`] without
/// those parts: QEMU calls it for nearly every block, so what it leaves out is the cycle model's
/// cost per block (`bench_plugin`). `ALL` false: the run prices with the core model alone
/// ([`Pricer::core_only`]), so the memory system, exception and branch-history tests go too.
unsafe extern "C" fn on_tb_exec_priced<const ALL: bool>(vcpu: c_uint, userdata: *mut c_void) {
    if vcpu != 0 {
        on_vcpu_0(vcpu);
        return;
    }
    LAST_TB.store(userdata as *mut TbInfo, Ordering::Relaxed);
    // SAFETY: userdata is the leaked TbInfo registered with this callback.
    let tb = unsafe { &*(userdata as *const TbInfo) };
    let Some(pricer) = pricer() else { return };
    let step = pricer.enter_with::<ALL>(&tb.price);
    INSNS.add(tb.insns);
    CYCLES.add(step.exception.wrapping_add(step.taken).wrapping_add(step.own));
}

/// A Thumb branch to its own address: `b .` (T2, 0xe7fe) or `b.w .` (T4, offset -4).
fn is_branch_to_itself(bytes: &[u8]) -> bool {
    matches!(bytes, [0xfe, 0xe7] | [0xff, 0xf7, 0xfe, 0xbf])
}

/// The exec callback of a TB that is one branch to itself, with `loop_end=on`: the first such
/// loop that runs outside every exception handler ends the run ([`end_at_loop`]), so firmware
/// that ends in `while (1) {}` (a board's `exit`) gives the counts of its work, the same in
/// every run. The counts hold one pass of the loop's instruction, not its branch refill: when
/// the code before it fell into it within one TB, that TB counted the pass; otherwise this TB
/// counts it first. A fault handler's `b .` does not end the run (the timeout judges it).
unsafe extern "C" fn on_tb_exec_loop(vcpu: c_uint, userdata: *mut c_void) {
    if vcpu != 0 {
        on_vcpu_0(vcpu);
        return;
    }
    // SAFETY: userdata is the leaked TbInfo registered with this callback, as is LAST_TB.
    let (tb, last) = unsafe { (&*(userdata as *const TbInfo), LAST_TB.load(Ordering::Relaxed).as_ref()) };
    let pc = tb.price.start;
    let fell_in = last.is_some_and(|p| !std::ptr::eq(p, tb) && p.price.start < pc && pc < p.price.fall);
    let in_handler = || pricer().is_some_and(|p| p.in_exception());
    if fell_in && !in_handler() {
        end_at_loop(pc);
    }
    // SAFETY: as above.
    unsafe { on_tb_exec(vcpu, userdata) };
    if !fell_in && !in_handler() {
        end_at_loop(pc);
    }
}

/// Ends the run at the branch to itself at `pc`: writes the results (with the loop's address)
/// and the run trace now, then exits QEMU as a semihosting `SYS_EXIT` does, from the vCPU
/// thread; the exit callback then finds them written. Exit status 0: the host reads how the run
/// ended from the results (`loop pc=`), not from it.
fn end_at_loop(pc: u32) -> ! {
    write_results(Some(pc));
    std::process::exit(0)
}

/// The exec callback of every TB on a machine with several vCPUs when cycles are off (with
/// cycles, [`on_tb_exec`] checks the vCPU): notes a vCPU other than 0 running code.
unsafe extern "C" fn on_tb_exec_watch(vcpu: c_uint, _userdata: *mut c_void) {
    on_vcpu_0(vcpu);
}

extern "C" fn on_translate(_id: qemu_plugin_id_t, raw: *mut qemu_plugin_tb) {
    let Some(state) = STATE.get() else { return };
    let tb = TranslationBlock::from(raw);
    let n = tb.size();
    if state.timing.is_none() && MULTI_VCPU.load(Ordering::Relaxed) {
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_cb(
                raw,
                Some(on_tb_exec_watch),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                std::ptr::null_mut(),
            );
        }
    }
    let start = tb.vaddr() as u32;
    let marker_indices: Vec<(usize, Marker)> = match state.config.markers {
        Some(m) => {
            tb.instructions().enumerate().filter_map(|(i, insn)| Some((i, m.function_at(insn.vaddr())?))).collect()
        }
        None => Vec::new(),
    };

    // Cycles: price the TB, add its fall-through cost inline, and register the exec callback.
    let mut price: Option<TbCost> = None;
    // The TbInfo the exec callback gets (null without cycles).
    let mut own: *const TbInfo = std::ptr::null();
    // Which instructions store (for the stack probe); `None`: unknown, probe them all.
    let mut stores: Option<Vec<bool>> = None;
    // Per marker instruction: the cycles of the TB's instructions after it.
    let mut cycle_tails: Vec<u64> = Vec::new();
    if let Some(timing) = &state.timing {
        let mut bytes = Vec::with_capacity(n * 4);
        for insn in tb.instructions() {
            let data = insn.data();
            let len = match data.get(..2) {
                Some(h) => crate::thumb_len(u16::from_le_bytes([h[0], h[1]])).min(data.len()),
                None => data.len(),
            };
            bytes.extend_from_slice(&data[..len]);
        }
        let Some(pricer) = pricer() else { return };
        let model = &pricer.model;
        let result = cost::price(&timing.decoder, model, start, &bytes, false, state.config.stack_probe.is_some());
        let handler = state.config.handlers.binary_search(&start).is_ok();
        let mut info = TbInfo {
            price: TbPrice::unpriced(model, start, handler, String::new()),
            shape: None,
            region: None,
            arg: None,
            insns: n as u64,
            sp_total: None,
            sp_before: Box::default(),
            trace_id: 0,
        };
        match result {
            Ok(c) => {
                stores = Some(c.stores.clone());
                info.sp_total = c.sp.total;
                if state.config.stack_probe.is_some() {
                    info.sp_before = c.sp.before.clone().into_boxed_slice();
                }
                info.price = TbPrice::new(model, pricer.memory(), start, c.insns.clone(), handler);
                if let Some(f) = &state.functions {
                    let (func, func_entry) = f.lookup(start);
                    info.shape = Some(TbShape { start, fall: c.fall, end: c.end, func, func_entry });
                    info.region = f.region(func);
                }
                price = Some(c);
            }
            Err(e) => {
                if let Some(f) = &state.functions {
                    // Unpriced, but the profile still follows the stack (as a fall-through).
                    let (func, func_entry) = f.lookup(start);
                    info.shape = Some(TbShape { start, fall: 0, end: cost::End::Jump, func, func_entry });
                    info.region = f.region(func);
                }
                info.price.error = Some(e);
            }
        }
        // The marker stores' snapshots: the cycles of the instructions after each store.
        cycle_tails = marker_indices.iter().map(|&(i, _)| info.price.cycles_after(model, i)).collect();
        if let Some(t) = trace() {
            info.trace_id = t.blocks;
            t.blocks += 1;
            t.writer.event(&Event::Block { start, handler, bytes: &bytes });
        }
        // Only the entry TBs of regions with `region_arg=` read registers: QEMU syncs the
        // registers before such a callback, which costs a little.
        info.arg = match (&info.shape, info.region) {
            (Some(shape), Some(region)) if shape.func_entry => {
                state.config.region_args.iter().find(|(r, _)| *r == region).map(|(_, register)| *register)
            }
            _ => None,
        };
        let flags = match info.arg {
            Some(_) => qemu_plugin_cb_flags::QEMU_PLUGIN_CB_R_REGS,
            None => qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
        };
        let only_price = shadow().is_none()
            && sp_track().is_none()
            && trace().is_none()
            && info.price.error.is_none()
            && info.arg.is_none();
        // A branch to itself alone in its TB, when the run ends at one: its own callback (rare,
        // so the common ones stay as they are).
        let self_loop = state.config.loop_end && n == 1 && is_branch_to_itself(&bytes);
        let callback = match (only_price, pricer.core_only()) {
            _ if self_loop => on_tb_exec_loop,
            (true, true) => on_tb_exec_priced::<false>,
            (true, false) => on_tb_exec_priced::<true>,
            (false, _) => on_tb_exec,
        };
        let userdata = Box::into_raw(Box::new(info)) as *mut c_void;
        own = userdata as *const TbInfo;
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_cb(raw, Some(callback), flags, userdata);
        }
    }
    // Counting only: an inline add (with cycles on, the exec callback adds both counts).
    if state.timing.is_none() {
        INSNS.add_inline(raw, n as u64);
    }
    // An idle loop's sleep (`idle=`; QEMU ends a TB at WFI/WFE): the run ends just before the
    // core sleeps, in thread mode, with the TB, the sleep included, counted (it may never wake).
    if state.config.loop_end
        && n > 0
        && let Ok(insn) = tb.instruction(n - 1)
        && state.config.idle.binary_search(&(insn.vaddr() as u32)).is_ok()
    {
        let pc = insn.vaddr() as u32;
        insn.register_execute_callback(move |vcpu| {
            if vcpu == 0 && !pricer().is_some_and(|p| p.in_exception()) {
                end_at_loop(pc);
            }
        });
    }

    if let Some(probe) = &state.config.stack_probe {
        probe_stores(&tb, stores.as_deref(), price.as_ref().map(|p| &p.sp), probe);
    }
    // Under -icount QEMU re-runs a device access alone, in a one-instruction TB: watch those.
    if n == 1
        && !own.is_null()
        && let Some(p) = &price
        && p.insns.first().is_some_and(|i| i.mem.is_some())
        && let Ok(insn) = tb.instruction(0)
    {
        let own = own as usize;
        let pc = start;
        insn.register_memory_access_callback(
            move |vcpu, info, vaddr| {
                if vcpu == 0 {
                    let counter = (vaddr == u64::from(DWT_CYCCNT)).then(|| info.is_store());
                    on_device_access(own as *const TbInfo, pc, counter);
                }
            },
            // QEMU 7.2 filters callbacks by access type wrongly (see probe_stores).
            MemRW::QEMU_PLUGIN_MEM_RW,
        );
    }
    // Loads are watched when they cost something, and when tracing a run with flash (a replay
    // may give the flash wait states).
    let data_side =
        state.config.memory.data_side() || (state.config.trace.is_some() && !state.config.memory.flash.is_empty());
    if data_side && let Some(p) = &price {
        // Instructions of the marker functions get their one memory callback below, which
        // prices their loads too: one callback per instruction behaves the same on every QEMU.
        let markers = state.config.markers;
        let skip = |pc: u64| markers.is_some_and(|m| m.function_at(pc).is_some());
        let flash = &state.config.memory.flash;
        probe_loads(&tb, &p.insns, skip, |a| flash.iter().any(|f| f.start <= a && a < f.end));
    }

    let Some(markers) = state.config.markers else { return };
    for (k, (index, marker)) in marker_indices.into_iter().enumerate() {
        let Ok(insn) = tb.instruction(index) else { continue };
        // Instructions of this TB after the store: the inline add has counted them already.
        let tail = (n - index - 1) as u64;
        // Their cycles likewise (None: this TB has no price; the cycle snapshot is then moot).
        let cycle_tail = cycle_tails.get(k).copied().unwrap_or(0);
        // SP at the marker's store, relative to the TB's start (stack probe).
        let sp_before = price.as_ref().and_then(|p| p.sp.before.get(index).copied().flatten());
        // QEMU 7.2 fires no callbacks registered for writes alone; register both and filter.
        insn.register_memory_access_callback(
            move |_vcpu, info, vaddr| {
                if !info.is_store() {
                    // A load in a marker function: the data side of the memory system.
                    if data_side {
                        data_load(vaddr as u32, 1 << info.size_shift());
                    }
                    return;
                }
                let Some(id) = markers.region_id(vaddr) else { return };
                let snap = snapshot_number();
                if let Some(t) = trace() {
                    t.writer.event(&Event::MarkerSnapshot { index: index as u32 });
                }
                let at = At { insns: INSNS.get() - tail, cycles: CYCLES.get().wrapping_sub(cycle_tail), snap };
                let Some(state) = STATE.get() else { return };
                let mut regions = state.regions.lock().unwrap_or_else(|p| p.into_inner());
                let sp = state.config.stack_probe.as_ref().map(|_| sp_at(sp_before));
                if state.config.stack_probe.is_some() {
                    fold_probe(Some(&mut regions), shadow().map(|s| &mut s.calls));
                }
                match marker {
                    Marker::Enter => regions.enter(id, at, sp),
                    Marker::Exit => regions.exit(id, at),
                }
            },
            MemRW::QEMU_PLUGIN_MEM_RW,
        );
    }
}

/// An access by the one instruction at `pc` of a one-instruction TB (`own`). When that TB's exec
/// callback did not run, QEMU is re-running a device-register access on its own
/// (`cpu_io_recompile` under -icount: such a block gets memory callbacks only): the TB that ran
/// last stopped at this instruction, and its instructions after it, whose instructions and
/// cycles its exec callback already added, did not run; the TB QEMU goes on with runs them.
/// Takes them back, so the counts are exact across device accesses (the pricer and the
/// profile then treat that TB as cut after the access). `counter`: the access reads (`false`) or
/// writes (`true`) the DWT cycle counter; the counts through it are then a read of the estimate,
/// or where the next read starts counting ([`CounterReads`]).
fn on_device_access(own: *const TbInfo, pc: u32, counter: Option<bool>) {
    let last = LAST_TB.load(Ordering::Relaxed);
    // `own` ran whole, its exec callback last (a one-instruction TB of its own: a single step
    // under gdb, or QEMU 9.1+ letting a TB's last instruction reach a device), or an instruction
    // with several accesses (LDM) called back before: nothing to take back, or settled once.
    let stopped = if std::ptr::eq(last, own) {
        None
    } else {
        LAST_TB.store(own as *mut TbInfo, Ordering::Relaxed);
        // SAFETY: TbInfo values are leaked at translation and never freed.
        unsafe { last.as_ref() }
            .and_then(|tb| Some((tb, tb.price.index_of(pc)?)))
            .and_then(|(tb, index)| take_back(tb, index, pc).then_some(index as u32))
    };
    if let Some(write) = counter {
        let (insns, cycles) = (INSNS.get(), CYCLES.get());
        let mut reads = COUNTER_READS.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some((from, i, c)), false) = (reads.last, write) {
            reads.intervals.entry((from, pc)).or_default().add(insns.wrapping_sub(i), cycles.wrapping_sub(c));
        }
        reads.last = Some((pc, insns, cycles));
        if write {
            reads.zeroed = cycles;
        } else if let Some(file) = STATE.get().and_then(|s| s.counter.as_ref()) {
            use std::os::unix::fs::FileExt;
            reads.reads += 1;
            let value = CounterValue { reads: reads.reads, pc, value: cycles.wrapping_sub(reads.zeroed) as u32 };
            // The runner reads it with QEMU stopped after this read; a failed write leaves the
            // record of the read before, which the runner refuses to serve (its count is old).
            let _ = file.write_at(&value.to_bytes(), 0);
        }
    }
    if let Some(t) = trace()
        && (stopped.is_some() || counter.is_some())
    {
        let (read, write) = match counter {
            Some(false) => (Some(pc), None),
            Some(true) => (None, Some(pc)),
            None => (None, None),
        };
        t.writer.event(&Event::Access { stopped, read, write });
    }
}

/// [`on_device_access`]: TB `stopped` ran up to its instruction `index` (at `pc`) only; false
/// when that was its last instruction (nothing to take back).
fn take_back(stopped: &TbInfo, index: usize, pc: u32) -> bool {
    let not_run = stopped.insns.saturating_sub(index as u64 + 1);
    let Some(p) = pricer() else { return false };
    if not_run == 0 {
        return false;
    }
    let cycles = p.abandon(&stopped.price, index);
    INSNS.add(not_run.wrapping_neg());
    CYCLES.add(cycles.wrapping_neg());
    let next = stopped.price.after(index).unwrap_or(pc);
    if let Some(shadow) = shadow() {
        shadow.profile.stopped(PENDING_NODE.load(Ordering::Relaxed), cycles, not_run, next);
    }
    // The next TB starts from SP after the access, not after the whole TB.
    if let Some(t) = sp_track() {
        t.total = stopped.sp_before.get(index + 1).copied().flatten();
    }
    true
}

/// Stack probe: a memory callback on every store instruction of `tb` outside the skipped code
/// ranges (every instruction when `stores` is unknown), recording the lowest address written in
/// `[lo, hi)`. A single store with base SP also sets the SP tracker (`sp`: the TB's
/// [`cost::SpSteps`]): it shows SP exactly, also after the tracker lost it.
fn probe_stores(
    tb: &TranslationBlock<'_>,
    stores: Option<&[bool]>,
    sp: Option<&cost::SpSteps>,
    probe: &StackProbeRange,
) {
    let (lo, hi) = (probe.lo, probe.hi);
    for (i, insn) in tb.instructions().enumerate() {
        if stores.is_some_and(|s| !s.get(i).copied().unwrap_or(true)) {
            continue;
        }
        let pc = insn.vaddr() as u32;
        if probe.skip.iter().any(|&(a, b)| a <= pc && pc < b) {
            continue;
        }
        // SP before this store relative to the TB's start, and its address minus SP.
        let resync = sp.and_then(|s| s.before.get(i).copied().flatten().zip(s.witness.get(i).copied().flatten()));
        // QEMU 7.2 fires no callbacks registered for writes alone; register both and filter.
        insn.register_memory_access_callback(
            move |_vcpu, info, vaddr| {
                if !info.is_store() {
                    return;
                }
                let a = vaddr as u32;
                if lo <= a && a < hi && a < PROBE_LOW.load(Ordering::Relaxed) {
                    PROBE_LOW.store(a, Ordering::Relaxed);
                }
                // Also when SP was known: the store shows it exactly.
                if let Some((before, witness)) = resync
                    && let Some(t) = sp_track()
                {
                    t.start =
                        Some(a.wrapping_add_signed(witness.wrapping_neg()).wrapping_add_signed(before.wrapping_neg()));
                }
            },
            MemRW::QEMU_PLUGIN_MEM_RW,
        );
    }
}

/// Data side of the memory system: a memory callback on every load instruction of `tb` that
/// adds the stall of a load from flash ([`MemorySystem::load`]: wait states unless the data cache
/// holds the line). Costly (a call per load), so only when some flash region has wait states, and
/// not on loads that cannot reach flash, which change nothing ([`MemorySystem::load`]): loads
/// from the stack (SP-based: the stack is writable memory) and literal loads whose address,
/// known at translation, is outside the flash.
fn probe_loads(
    tb: &TranslationBlock<'_>,
    insns: &[mcubench_thumb::Insn],
    skip: impl Fn(u64) -> bool,
    flash: impl Fn(u32) -> bool,
) {
    for (i, insn) in tb.instructions().enumerate() {
        let Some(decoded) = insns.get(i).filter(|d| cost::reads_memory(d)) else { continue };
        if skip(insn.vaddr()) || !cost::may_load_from(decoded, &flash) {
            continue;
        }
        insn.register_memory_access_callback(
            move |vcpu, info, vaddr| {
                if vcpu != 0 || info.is_store() {
                    return;
                }
                data_load(vaddr as u32, 1 << info.size_shift());
            },
            // QEMU 7.2 filters callbacks by access type wrongly (see probe_stores): register
            // for both and filter here, as the marker and stack callbacks do.
            MemRW::QEMU_PLUGIN_MEM_RW,
        );
    }
}

fn on_exit(_id: qemu_plugin_id_t) {
    write_results(None);
}

/// Whether the results have been written (at exit, or where the run ended at a loop).
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Writes the results file and finishes the run trace, once; `loop_end`: the run ends at the
/// branch to itself there.
fn write_results(loop_end: Option<u32>) {
    if WRITTEN.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(state) = STATE.get() else { return };
    let other = OTHER_VCPU.load(Ordering::Relaxed);
    if other != u32::MAX {
        // The counters hold that vCPU's instructions too: no results rather than wrong ones.
        eprintln!(
            "mcubench-qemu-plugin: error: vCPU {other} ran code (the firmware started a second core); \
             the counts cover vCPU 0 only, so this run has none"
        );
        return;
    }
    let mut regions = state.regions.lock().unwrap_or_else(|p| p.into_inner());
    let mut shadow = shadow();
    let probe = state.config.stack_probe.as_ref().map(|_| {
        // Stores after the last event belong to the still-open activations and the run.
        fold_probe(Some(&mut regions), shadow.as_deref_mut().map(|s| &mut s.calls));
        RUN_LOW.load(Ordering::Relaxed)
    });
    let cycles = pricer().filter(|_| state.timing.is_some()).map(|p| Cycles {
        model: p.describe(),
        total: match state.unavailable.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            Some(reason) => Err(reason),
            // A refill still pending at exit: the run ended inside the next TB's translation or
            // at the branch; it did not run, nothing to add.
            None => Ok(CYCLES.get()),
        },
    });
    let stacks = match &shadow {
        Some(s) if state.config.profile => s.profile.stacks(),
        _ => Vec::new(),
    };
    if let Some(t) = trace() {
        // The completed activations, then the end mark.
        let logs = [(false, regions.log.as_deref()), (true, shadow.as_ref().and_then(|s| s.calls.log.as_deref()))];
        for (function, log) in logs {
            for &(id, first, last) in log.unwrap_or_default() {
                t.writer.event(&Event::Activation { function, id, first, last });
            }
        }
        if let Err(e) = t.writer.finish() {
            let path = state.config.trace.as_deref().unwrap_or(std::path::Path::new("?"));
            eprintln!("mcubench-qemu-plugin: error: cannot write {}: {e}", path.display());
        }
    }
    let functions = shadow.as_ref().filter(|_| state.functions.as_ref().is_some_and(Functions::has_regions));
    let intervals = std::mem::take(&mut COUNTER_READS.lock().unwrap_or_else(|p| p.into_inner()).intervals);
    let extra = Extra { functions: functions.map(|s| s.calls.stats()), probe, stacks, intervals };
    let mut results = regions.results(INSNS.get(), cycles, extra);
    results.loop_end = loop_end;
    let text = results.write();
    let mut file = state.out.lock().unwrap_or_else(|p| p.into_inner());
    if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
        eprintln!("mcubench-qemu-plugin: error: cannot write {}: {e}", state.config.out.display());
    }
}
