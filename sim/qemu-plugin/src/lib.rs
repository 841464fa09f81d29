//! mcubench's QEMU TCG plugin, built twice from this source: for QEMU plugin API v1 (QEMU 7.2 to
//! 8.2, as in Debian 12: `libmcubench_qemu_plugin_v1.so`, this package) and for API v3 (QEMU 9.1
//! to 10.x: `libmcubench_qemu_plugin_v3.so`, the `api-v3/` package). Only [`api`] differs between
//! the two; the host picks the build from the QEMU version it finds, and the plugin refuses a
//! QEMU whose API range does not contain its own (see `check_host` in the glue).
//!
//! It counts executed guest instructions exactly and measures **regions** that firmware marks
//! with two functions the host resolves from the ELF (see [`regions`] for the semantics). The host loads it with `-plugin libmcubench_qemu_plugin_v1.so,out=<file>,...`:
//! the arguments, the functions file and the results file are `mcubench-wire`'s
//! ([`mcubench_wire::PluginArgs`], [`mcubench_wire::FunctionsFile`], [`mcubench_wire::Results`]),
//! one definition that the host and this plugin share. Arguments the plugin cannot use are
//! refused before the guest starts.
//!
//! With `core=`, cycles are estimated with that core's `mcubench-timing` model and blocks
//! decoded with its instruction set; `functions=` keeps a shadow call stack (see [`profile`]),
//! with function regions (see [`calls`]); `stack=` probes stores (see [`regions`]); `handler=`
//! prices exceptions (see "Exceptions" below).
//!
//! # How counting works, and why it is exact
//!
//! Every translation block (TB) adds its instruction count to a counter when it starts: an inline
//! `ADD_U64` (generated code, no call: nearly free; on API v3 to a per-vCPU scoreboard entry, see
//! [`api`]) when the plugin only counts, or its exec callback when cycles are on (that callback
//! runs for every TB then anyway). QEMU emits both after the `-icount` budget check, so a TB that
//! is cut short by the budget adds nothing and its re-translated remainder adds what it runs. Memory callbacks are registered only on instructions inside the two marker functions;
//! the store address gives the region id. When such a store runs, the counter already includes
//! its whole TB, so the snapshot is `counter - (instructions after the store in that TB)`: the
//! exact count up to and including the store.
//!
//! Device accesses: under `-icount` QEMU stops a TB at a device-register access, re-runs the
//! access alone in a one-instruction TB that gets memory callbacks only, and goes on with a new
//! TB after it (`cpu_io_recompile`), so the stopped TB's instructions after the access were
//! added but run again in that new TB. With `core=`, a memory callback on the instruction of
//! every one-instruction TB recognises the re-run (the TB's exec callback did not run) and takes
//! them back, instructions and cycles (the glue's `on_device_access`); the same callback reads
//! the firmware's reads of the DWT cycle counter. Without `core=` (counting only), each device
//! access outside regions adds the rest of its TB to `insns`.
//!
//! # Cycle estimates
//!
//! With `core=`, each TB is decoded at translation ([`cost`]: `mcubench-thumb`'s
//! `decode_block`, which tracks IT blocks) and priced with the core's `mcubench-timing` model
//! (`Model::block`): its exec callback adds the `fall_through` cost to a cycle counter, next to
//! the instruction count. A TB that ends in a conditional branch leaves a *pending* refill
//! (`taken_extra`) with the TB's fall-through address; the next TB's callback adds it when that
//! TB does not start at the fall-through (the branch was taken). So every TB gets an exec
//! callback when cycles are on (the check needs the successor's start address); it is a few
//! loads and stores. The same callback adds the TB's `branch_entry` (the cost of fetching a
//! straddling 32-bit first instruction after a refill, Cortex-M3/M4) when the TB was entered by
//! a branch: it does not start where the previous TB would run on to, and no exception entry or
//! return was priced there.
//!
//! Marker snapshots subtract the costs of the TB's instructions after the store
//! (`TbPrice::cycles_after`, computed at translation for TBs that contain marker stores).
//!
//! What the exec callback adds per TB (exception costs, the continuation correction below, the
//! branch-entry cost, the memory system's fetch stalls, the previous TB's taken refill) is
//! `mcubench_timing::run::Pricer`'s, not this crate's: the host replays run traces (`trace=`,
//! `mcubench_wire::trace`) through the same code to price a run again with other parameters, so
//! that a replay and a live run can never disagree.
//!
//! A TB that cannot be decoded (an instruction the core does not have) adds no cycles: its exec
//! callback records the error, and the results file then says `cycles-unavailable <reason>`
//! instead of a number: never a made-up cost.
//!
//! # Exceptions
//!
//! With `handler=` addresses, the exec callback also prices exceptions (costs from
//! `mcubench_timing::CoreTiming::exception_entry`, `exception_exit`, `tail_chain`):
//!
//! * **Entry**: a TB starting at a handler address that is not the previous TB's static
//!   successor (its direct branch or call target, or its fall-through address) adds the entry
//!   cost. A handler reached by an *indirect* branch or call is therefore also read as an
//!   exception entry (firmware rarely calls its own handlers).
//! * **Return**: each active exception keeps a call depth, raised by TBs ending in a call and
//!   lowered by TBs ending in a return; a TB ending in a return at depth 0 is the exception return
//!   (QEMU resolves the EXC_RETURN branch internally, so this is the only trace of it). Its cost
//!   is added at the next TB: the exit cost, or the tail-chain cost instead of exit + entry when
//!   that TB is another handler's entry. A handler that returns other than by `bx lr`/`pop {pc}`/
//!   `ldr pc, [sp], #4` (e.g. `bx r3`) or never returns adds no exit.
//!
//! # Straight-line code cut into several TBs
//!
//! QEMU cuts straight-line code at pages, size limits (QEMU 10 halves long TBs that 7.2 keeps
//! whole) and I/O accesses. A TB that a TB ending without a branch falls into is priced as its
//! continuation: the exec callback adds the difference between its price after the previous
//! TB's last instruction (`mcubench_timing::Model::block_after`, cached per entry context) and
//! its fresh price. So where QEMU cuts does not change the estimate, and QEMU 7.2 and 10 give the
//! same cycles (tested with the whole KAT matrix).
//!
//! Inexactness (documented in `mcubench-timing` too): blocks that control flow enters (a branch,
//! a call, a return, an exception) are priced afresh, so pairing rules do not cross those; an interrupt taken right after a not-taken conditional
//! branch is read as "taken" (+P); a TB cut short by an exception or an I/O access is priced
//! whole, like the instruction count.

#[cfg(not(test))]
mod api;
pub mod calls;
pub mod cost;
pub mod profile;
pub mod regions;

/// The plugin API version this plugin is built for (the `qemu-plugin` crate's `plugin-api-vN`
/// feature its package selects).
pub const BUILT_FOR_API: i64 = qemu_plugin::sys::QEMU_PLUGIN_VERSION as i64;

/// The API version in the `.so` for the host to read without loading it (it looks for
/// `mcubench-qemu-plugin api=v` followed by the number in the file): a plugin built for another
/// API than the QEMU in use needs is refused or rebuilt before QEMU runs.
#[used]
#[unsafe(no_mangle)]
pub static MCUBENCH_QEMU_PLUGIN_API: [u8; 29] = api_tag();

const fn api_tag() -> [u8; 29] {
    let mut tag = *b"mcubench-qemu-plugin api=v?\n\0";
    tag[26] = b'0' + qemu_plugin::sys::QEMU_PLUGIN_VERSION as u8;
    tag
}

/// Length of a Thumb instruction from its first halfword (QEMU 7.2's instruction-bytes call can
/// return more bytes than the instruction has).
pub fn thumb_len(first_halfword: u16) -> usize {
    match first_halfword >> 11 {
        0b11101..=0b11111 => 4,
        _ => 2,
    }
}

// The QEMU glue references symbols that only QEMU provides, so host unit tests leave it out.
#[cfg(not(test))]
mod glue;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumb_instruction_length_from_the_first_halfword() {
        assert_eq!(thumb_len(0x4770), 2); // bx lr
        assert_eq!(thumb_len(0xf000), 4); // bl prefix
        assert_eq!(thumb_len(0xe92d), 4); // push.w
        assert_eq!(thumb_len(0xe7fe), 2); // b .
    }

    #[test]
    fn the_api_tag_names_the_api_built_for() {
        let tag = std::str::from_utf8(&MCUBENCH_QEMU_PLUGIN_API).unwrap();
        assert_eq!(tag, format!("mcubench-qemu-plugin api=v{BUILT_FOR_API}\n\0"));
    }
}
