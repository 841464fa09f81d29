//! What differs between the plugin API versions this plugin is built for: the counters that
//! generated code adds to inline. Everything else in [`crate::glue`] is the same on both.
//!
//! * **API v1** (QEMU 7.2 to 8.2; feature `api-v1`): `qemu_plugin_register_vcpu_tb_exec_inline`
//!   adds to a plain `u64` in the plugin.
//! * **API v3** (QEMU 9.1 to 10.x; feature `api-v3`): that call is gone (QEMU 9.0 replaced it);
//!   inline operations add to a *scoreboard* entry, one `u64` per vCPU that QEMU allocates
//!   (`qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu`). The plugin refuses to run with more
//!   than one vCPU, so vCPU 0's entry is the count, read and added to through QEMU's
//!   `qemu_plugin_u64_get`/`_add`.
//!
//! **Registers** (`region_arg=`, bytes per call from an argument register): API v1 has no
//! register access at all, so [`Arguments::READABLE`] is false there and the plugin refuses the
//! argument at install; API v2 and later read them (`qemu_plugin_get_registers` in the vCPU init
//! callback for the handles of r0 .. r3, `qemu_plugin_read_register` in an exec callback
//! registered with `QEMU_PLUGIN_CB_R_REGS`).
//!
//! Both are generated code, no call: counting stays exact and nearly free on both. Inline adds
//! are used when nothing else runs per TB (counting only); with cycle estimates every TB has an
//! exec callback anyway, and it adds the TB's instructions and cycles itself ([`Counter::add`],
//! a plain add in the plugin on both APIs): on QEMU 10 two per-vCPU inline adds cost more than
//! two adds in a callback that runs anyway. So no TB has both an exec callback and an inline add,
//! and the order QEMU emits them in (7.2: callbacks first; 9.x/10.x: registration order) never
//! matters.

use qemu_plugin::PluginOp;
use qemu_plugin::sys::qemu_plugin_tb;

#[cfg(all(feature = "api-v1", feature = "api-v3"))]
compile_error!("build the plugin for one QEMU plugin API: feature `api-v1` or `api-v3`, not both");
#[cfg(not(any(feature = "api-v1", feature = "api-v3")))]
compile_error!(
    "build the plugin for a QEMU plugin API: feature `api-v1` (sim/qemu-plugin) or `api-v3` (sim/qemu-plugin/api-v3)"
);

/// A counter that generated code adds to at the start of each TB it is registered on.
#[cfg(feature = "api-v1")]
pub struct Counter(std::sync::atomic::AtomicU64);

#[cfg(feature = "api-v1")]
impl Counter {
    pub const fn new() -> Counter {
        Counter(std::sync::atomic::AtomicU64::new(0))
    }

    /// Nothing to allocate on API v1.
    pub fn install(&self) {}

    pub fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Adds `n` from a callback (wrapping: a negative correction in two's complement). A plain
    /// load and store, no locked add: callbacks of the one vCPU never run concurrently, and
    /// generated code adds to a counter only when no callback does (see the module docs).
    pub fn add(&self, n: u64) {
        let v = self.0.load(std::sync::atomic::Ordering::Relaxed);
        self.0.store(v.wrapping_add(n), std::sync::atomic::Ordering::Relaxed);
    }

    /// Generated code adds `n` each time `tb` runs.
    pub fn add_inline(&self, tb: *mut qemu_plugin_tb, n: u64) {
        // SAFETY: `tb` is the TB being translated; the counter is a static that outlives QEMU's use.
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_inline(
                tb,
                PluginOp::QEMU_PLUGIN_INLINE_ADD_U64,
                self.0.as_ptr() as *mut std::ffi::c_void,
                n,
            );
        }
    }
}

/// A counter that generated code adds to at the start of each TB it is registered on (a
/// scoreboard of one `u64` per vCPU, allocated by QEMU at [`Counter::install`]), plus what the
/// plugin's callbacks add (a plain `u64` here, no call into QEMU).
#[cfg(feature = "api-v3")]
pub struct Counter {
    score: std::sync::atomic::AtomicPtr<qemu_plugin::sys::qemu_plugin_scoreboard>,
    added: std::sync::atomic::AtomicU64,
}

#[cfg(feature = "api-v3")]
impl Counter {
    pub const fn new() -> Counter {
        Counter {
            score: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            added: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Allocates the scoreboard (at plugin install, before any TB is translated).
    pub fn install(&self) {
        // SAFETY: plain allocation by QEMU; freed with the process.
        let score = unsafe { qemu_plugin::sys::qemu_plugin_scoreboard_new(std::mem::size_of::<u64>()) };
        self.score.store(score, std::sync::atomic::Ordering::Release);
    }

    fn entry(&self) -> qemu_plugin::sys::qemu_plugin_u64 {
        qemu_plugin::sys::qemu_plugin_u64 { score: self.score.load(std::sync::atomic::Ordering::Acquire), offset: 0 }
    }

    /// vCPU 0's inline count (the plugin runs with exactly one vCPU) plus what callbacks added.
    pub fn get(&self) -> u64 {
        let added = self.added.load(std::sync::atomic::Ordering::Relaxed);
        if self.score.load(std::sync::atomic::Ordering::Acquire).is_null() {
            return added;
        }
        // SAFETY: a live scoreboard of u64s.
        added.wrapping_add(unsafe { qemu_plugin::sys::qemu_plugin_u64_get(self.entry(), 0) })
    }

    /// Adds `n` from a callback (wrapping: a negative correction in two's complement); a plain
    /// load and store, as on API v1.
    pub fn add(&self, n: u64) {
        let v = self.added.load(std::sync::atomic::Ordering::Relaxed);
        self.added.store(v.wrapping_add(n), std::sync::atomic::Ordering::Relaxed);
    }

    /// Generated code adds `n` to the running vCPU's entry each time `tb` runs.
    pub fn add_inline(&self, tb: *mut qemu_plugin_tb, n: u64) {
        // SAFETY: `tb` is the TB being translated; the scoreboard lives as long as QEMU.
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
                tb,
                PluginOp::QEMU_PLUGIN_INLINE_ADD_U64,
                self.entry(),
                n,
            );
        }
    }
}

/// The argument registers r0 .. r3 of vCPU 0, for `region_arg=`.
pub struct Arguments;

#[cfg(feature = "api-v1")]
impl Arguments {
    /// API v1 cannot read registers.
    pub const READABLE: bool = false;

    pub fn find(&self) -> Result<(), String> {
        Err("plugin API v1 cannot read registers".into())
    }

    pub fn read(&self, _register: u8) -> Option<u64> {
        None
    }
}

#[cfg(feature = "api-v3")]
static ARGUMENT_REGISTERS: std::sync::OnceLock<Vec<qemu_plugin::RegisterDescriptor<'static>>> =
    std::sync::OnceLock::new();

#[cfg(feature = "api-v3")]
impl Arguments {
    pub const READABLE: bool = true;

    /// Looks up r0 .. r3 among the vCPU's registers (QEMU allows this only in the vCPU init
    /// callback, in the vCPU's context).
    pub fn find(&self) -> Result<(), String> {
        let all =
            qemu_plugin::qemu_plugin_get_registers().map_err(|e| format!("cannot list the vCPU's registers: {e}"))?;
        let mut found = Vec::new();
        for name in ["r0", "r1", "r2", "r3"] {
            let r = all
                .iter()
                .find(|r| r.name == name)
                .ok_or_else(|| format!("the vCPU has no register `{name}` ({} registers listed)", all.len()))?;
            found.push(r.clone());
        }
        let _ = ARGUMENT_REGISTERS.set(found);
        Ok(())
    }

    /// r`register` (0..=3) of the running vCPU, from an exec callback registered with
    /// `QEMU_PLUGIN_CB_R_REGS`: `None` if it cannot be read.
    pub fn read(&self, register: u8) -> Option<u64> {
        let r = ARGUMENT_REGISTERS.get()?.get(usize::from(register))?;
        let bytes = r.read().ok()?;
        // Target byte order: little-endian on Arm M-profile; the core registers are 32 bits.
        let word: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
        Some(u64::from(u32::from_le_bytes(word)))
    }
}
