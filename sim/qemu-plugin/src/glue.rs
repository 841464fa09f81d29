//! The QEMU side: install, translation-time instrumentation, marker callbacks, results at exit.

use std::cell::UnsafeCell;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use mcubench_thumb::Decoder;
use mcubench_timing::Model;
use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::sys::{qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_tb};
use qemu_plugin::{MemRW, PluginId, PluginOp, TranslationBlock};

use crate::cost::{self, TbCost};
use crate::profile::{Functions, Profile, TbShape};
use crate::regions::{At, CycleSummary, Regions};
use crate::{BUILT_FOR_API, Config, Marker};

/// Guest instructions executed; added to by generated code (single vCPU: plain adds suffice).
static INSNS: AtomicU64 = AtomicU64::new(0);

/// Estimated cycles: each TB's `fall_through` by generated code, taken-branch refills by the
/// exec callback of the next TB.
static CYCLES: AtomicU64 = AtomicU64::new(0);

/// The pending refill of the last TB if it ended in a conditional branch: its fall-through
/// address and the extra cycles (0: nothing pending).
static PENDING_FALL: AtomicU32 = AtomicU32::new(0);
static PENDING_EXTRA: AtomicU64 = AtomicU64::new(0);
/// The profile node the pending refill belongs to.
static PENDING_NODE: AtomicU32 = AtomicU32::new(0);

struct Timing {
    model: Model,
    decoder: Decoder,
}

struct State {
    config: Config,
    regions: Mutex<Regions>,
    timing: Option<Timing>,
    functions: Option<Functions>,
    /// First reason cycles are unavailable (an executed TB could not be priced).
    unavailable: Mutex<Option<String>>,
}

static STATE: OnceLock<State> = OnceLock::new();

/// The profile, touched only from the (single) vCPU thread's exec callbacks and at exit.
struct ProfileCell(UnsafeCell<Profile>);
// SAFETY: the plugin refuses to run with more than one vCPU, so exec callbacks are never
// concurrent; the exit callback runs after the vCPU stopped.
unsafe impl Sync for ProfileCell {}
static PROFILE: OnceLock<ProfileCell> = OnceLock::new();

/// Per-TB data for the exec callback, leaked at translation (bounded by the translations).
struct TbInfo {
    start: u32,
    /// Fall-through address when the TB ends in a conditional branch, else unused.
    fall: u32,
    /// Refill if the final conditional branch is taken (0: no conditional branch).
    taken_extra: u64,
    /// For the profile.
    shape: Option<TbShape>,
    cost: u64,
    insns: u64,
    /// Why this TB has no price (it adds no cycles; running it makes cycles unavailable).
    error: Option<String>,
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
             use QEMU 7.2 (Debian 12) or rebuild against the matching `plugin-api-vN` feature"
        ));
    }
    if info.target_name != "arm" {
        return Err(format!("loaded into a `{}` QEMU; mcubench runs qemu-system-arm", info.target_name));
    }
    match &info.system {
        None => return Err("loaded into user-mode QEMU; mcubench runs system emulation".into()),
        Some(s) if s.smp_vcpus != 1 => {
            return Err(format!("{} vCPUs; the counters assume exactly one", s.smp_vcpus));
        }
        Some(_) => {}
    }
    Ok(())
}

impl Register for McubenchPlugin {
    fn register_default(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        if let Err(e) = check_host(info) {
            refuse(&e);
        }
        let config = Config::parse(&args.raw).unwrap_or_else(|e| refuse(&e));
        let timing = config.core.map(|core| Timing { model: Model::new(core), decoder: cost::decoder_for(core) });
        let functions = config.functions.as_ref().map(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| refuse(&format!("cannot read {path}: {e}")));
            Functions::parse(&text).unwrap_or_else(|e| refuse(&e))
        });
        if functions.is_some() {
            let _ = PROFILE.set(ProfileCell(UnsafeCell::new(Profile::default())));
        }
        let state =
            State { config, regions: Mutex::new(Regions::default()), timing, functions, unavailable: Mutex::new(None) };
        if STATE.set(state).is_err() {
            refuse("installed twice");
        }
        // Only the two callbacks we need: no idle/resume/syscall traffic.
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        }
        qemu_plugin::qemu_plugin_register_atexit_cb(id, on_exit)?;
        Ok(())
    }
}

qemu_plugin::register!(McubenchPlugin);

/// The exec callback of every TB when cycles are on: settles the previous TB's pending refill,
/// leaves this TB's, and feeds the profile.
unsafe extern "C" fn on_tb_exec(_vcpu: c_uint, userdata: *mut c_void) {
    // SAFETY: userdata is the leaked TbInfo registered with this callback.
    let tb = unsafe { &*(userdata as *const TbInfo) };
    let extra = PENDING_EXTRA.load(Ordering::Relaxed);
    let taken = extra != 0 && PENDING_FALL.load(Ordering::Relaxed) != tb.start;
    if taken {
        CYCLES.fetch_add(extra, Ordering::Relaxed);
    }
    PENDING_EXTRA.store(tb.taken_extra, Ordering::Relaxed);
    PENDING_FALL.store(tb.fall, Ordering::Relaxed);
    if let Some(cell) = PROFILE.get() {
        // SAFETY: see ProfileCell.
        let profile = unsafe { &mut *cell.0.get() };
        if taken {
            profile.add(PENDING_NODE.load(Ordering::Relaxed), extra, 0);
        }
        if let Some(shape) = &tb.shape {
            let node = profile.enter(shape);
            profile.add(node, tb.cost, tb.insns);
            PENDING_NODE.store(node, Ordering::Relaxed);
        }
    }
    if let Some(e) = &tb.error
        && let Some(state) = STATE.get()
    {
        let mut u = state.unavailable.lock().unwrap_or_else(|p| p.into_inner());
        if u.is_none() {
            *u = Some(e.clone());
        }
    }
}

extern "C" fn on_translate(_id: qemu_plugin_id_t, raw: *mut qemu_plugin_tb) {
    let Some(state) = STATE.get() else { return };
    let tb = TranslationBlock::from(raw);
    let n = tb.size();
    qemu_plugin::qemu_plugin_register_vcpu_tb_exec_inline(
        tb.clone(),
        PluginOp::QEMU_PLUGIN_INLINE_ADD_U64,
        INSNS.as_ptr() as *mut c_void,
        n as u64,
    );
    let start = tb.vaddr() as u32;
    let marker_indices: Vec<(usize, Marker)> = match state.config.markers {
        Some(m) => {
            tb.instructions().enumerate().filter_map(|(i, insn)| Some((i, m.function_at(insn.vaddr())?))).collect()
        }
        None => Vec::new(),
    };

    // Cycles: price the TB, add its fall-through cost inline, and register the exec callback.
    let mut price: Option<TbCost> = None;
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
        let result = cost::price(&timing.decoder, &timing.model, start, &bytes, !marker_indices.is_empty());
        let mut info = TbInfo { start, fall: 0, taken_extra: 0, shape: None, cost: 0, insns: n as u64, error: None };
        match result {
            Ok(c) => {
                qemu_plugin::qemu_plugin_register_vcpu_tb_exec_inline(
                    tb.clone(),
                    PluginOp::QEMU_PLUGIN_INLINE_ADD_U64,
                    CYCLES.as_ptr() as *mut c_void,
                    c.fall_through,
                );
                info.fall = c.fall;
                info.taken_extra = c.taken_extra;
                info.cost = c.fall_through;
                if let Some(f) = &state.functions {
                    let (func, func_entry) = f.lookup(start);
                    info.shape = Some(TbShape { start, fall: c.fall, end: c.end, func, func_entry });
                }
                price = Some(c);
            }
            Err(e) => {
                if let Some(f) = &state.functions {
                    // Unpriced, but the profile still follows the stack (as a fall-through).
                    let (func, func_entry) = f.lookup(start);
                    info.shape = Some(TbShape { start, fall: 0, end: cost::End::Jump, func, func_entry });
                }
                info.error = Some(e);
            }
        }
        let userdata = Box::into_raw(Box::new(info)) as *mut c_void;
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_cb(
                raw,
                Some(on_tb_exec),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                userdata,
            );
        }
    }

    let Some(markers) = state.config.markers else { return };
    for (index, marker) in marker_indices {
        let Ok(insn) = tb.instruction(index) else { continue };
        // Instructions of this TB after the store: the inline add has counted them already.
        let tail = (n - index - 1) as u64;
        // Their cycles likewise (None: this TB has no price; the cycle snapshot is then moot).
        let cycle_tail = price.as_ref().map_or(0, |p| p.fall_through - p.prefix[index]);
        // QEMU 7.2 fires no callbacks registered for writes alone; register both and filter.
        insn.register_memory_access_callback(
            move |_vcpu, info, vaddr| {
                if !info.is_store() {
                    return;
                }
                let Some(id) = markers.region_id(vaddr) else { return };
                let at = At {
                    insns: INSNS.load(Ordering::Relaxed) - tail,
                    cycles: CYCLES.load(Ordering::Relaxed).wrapping_sub(cycle_tail),
                };
                let Some(state) = STATE.get() else { return };
                let mut regions = state.regions.lock().unwrap_or_else(|p| p.into_inner());
                match marker {
                    Marker::Enter => regions.enter(id, at),
                    Marker::Exit => regions.exit(id, at),
                }
            },
            MemRW::QEMU_PLUGIN_MEM_RW,
        );
    }
}

fn on_exit(_id: qemu_plugin_id_t) {
    let Some(state) = STATE.get() else { return };
    let cycles = match &state.timing {
        None => CycleSummary::Off,
        Some(t) => {
            let model = t.model.describe();
            match state.unavailable.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                Some(reason) => CycleSummary::Unavailable { reason, model },
                None => {
                    // A refill still pending at exit: the run ended inside the next TB's
                    // translation or at the branch; it did not run, nothing to add.
                    CycleSummary::Total { cycles: CYCLES.load(Ordering::Relaxed), model }
                }
            }
        }
    };
    // SAFETY: the vCPU has stopped.
    let stacks = PROFILE.get().map_or(String::new(), |cell| unsafe { &*cell.0.get() }.render());
    let text =
        state.regions.lock().unwrap_or_else(|p| p.into_inner()).render(INSNS.load(Ordering::Relaxed), &cycles, &stacks);
    let out = &state.config.out;
    let tmp = format!("{out}.tmp");
    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, out)) {
        eprintln!("mcubench-qemu-plugin: error: cannot write {out}: {e}");
    }
}
