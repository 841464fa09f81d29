//! The run-time half of the cycle model: what a run adds on top of each block's static price, in
//! the order the blocks execute. The QEMU plugin drives it live (one [`Pricer::enter`] per
//! executed block, one [`Pricer::load`] per data load), and the host drives the same code from a
//! run trace (`mcubench_wire::trace`) to price a run again with other parameters
//! (`mcubench calibrate`): one implementation, so a replay gives exactly what a live run with
//! the same parameters gives.
//!
//! Per executed block, in this order (the plugin's crate documentation says why each rule is so):
//! 1. exception costs: entry when a block starts at a handler address that is not the previous
//!    block's static successor; exit or tail-chain at the block after an exception return (a
//!    return at call depth 0 inside a handler);
//! 2. continuation: a block that straight-line code falls into (QEMU cut it) is priced as the
//!    continuation of the previous block ([`crate::Model::block_after`]), not afresh; on the
//!    Cortex-M3/M4 so is the not-taken path of a conditional branch (the prefetch unit's state
//!    carries into it);
//! 3. the branch-entry cost of its first instruction when a branch (not running on) led to it;
//! 4. the memory system's fetch stalls ([`crate::memory::MemorySystem::fetch`]);
//! 5. the previous block's taken-branch refill, when this block is not its fall-through, and
//!    (Cortex-M7) the misprediction penalty of its final conditional branch when the branch's
//!    history predicted the other direction ([`Predictor`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use mcubench_thumb::{Flow, Insn, PC};
use mcubench_wire::{Core, MemoryConfig, WaitStates};

use crate::core_timing::CoreTiming;
use crate::memory::{FetchPlan, MemorySystem};
use crate::{Context, Model, Params};

/// The model the plugin prices with for `core=`, `wait=` and `param=` arguments: the core's
/// defaults, the wait states, then each parameter by name in order.
pub fn model_for(core: Core, wait_states: &[WaitStates], params: &[(String, String)]) -> Result<Model, String> {
    let mut p = Params { wait_states: wait_states.to_vec(), ..Params::for_core(core) };
    for (name, value) in params {
        let n = value
            .parse::<u32>()
            .map_err(|_| format!("argument `param`: `{name}:{value}`: the value is not a whole number"))?;
        p.set(name, n).map_err(|e| format!("argument `param`: {e}"))?;
    }
    Ok(Model::with_params(core, p))
}

/// How a block ends, for the exception call depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndKind {
    Other,
    Call,
    Return,
}

/// One block's price, computed once at translation, for one [`Pricer`] (it caches that pricer's
/// continuation prices).
#[derive(Debug)]
pub struct TbPrice {
    pub start: u32,
    /// Address after the last instruction (the successor when a final conditional branch is
    /// not taken); 0 for an unpriced block.
    pub fall: u32,
    /// Fall-through cycles ([`crate::BlockCost::fall_through`]).
    pub cost: u64,
    pub taken_extra: u64,
    pub branch_entry: u64,
    /// What a misprediction of its final conditional branch costs (Cortex-M7; 0: none predicted,
    /// [`crate::Model::mispredict`]), what flags set early save of it, and that branch's address.
    pub mispredict: u64,
    pub early_flags_save: u64,
    pub branch_at: u32,
    /// Instructions after its last flag-setting one (`None`: none sets the flags), and its
    /// instruction count: how far a branch is from the flags it tests, counted at run time
    /// across the blocks straight-line code runs through.
    pub after_setter: Option<u32>,
    pub insn_count: u32,
    /// The block can run on into the one at `fall`: it ends without writing PC, or conditionally.
    pub runs_on: bool,
    /// It ends without any branch (QEMU cut it): the block at `fall` continues it.
    pub falls_through: bool,
    /// The block at `fall` is priced as its continuation when it runs on into it: it falls
    /// through, or (Cortex-M3/M4) it ends in a conditional branch, whose prefetch state carries
    /// into the not-taken path ([`crate::Context::fetch_ahead`]).
    pub carries: bool,
    /// Exception entry and tail-chain costs when the block starts at a handler address (0: not one).
    pub entry: u64,
    pub tail_chain: u64,
    /// Target of a final direct branch or call (`u32::MAX`: none).
    pub target: u32,
    pub kind: EndKind,
    /// For continuation pricing (`None`: unpriced).
    pub straight: Option<Straight>,
    /// The flash lines the block fetches from (`None`: none, or no memory system).
    pub fetch: Option<Box<FetchPlan>>,
    /// Why the block has no price (it adds no cycles; running it makes cycles unavailable).
    pub error: Option<String>,
}

/// What a priced block keeps for pricing it as a continuation.
/// Its continuation prices and context numbers belong to the [`Pricer`] that first ran the
/// block: a block is priced by one pricer only.
#[derive(Debug)]
pub struct Straight {
    insns: Vec<Insn>,
    /// The context after the last instruction when the block starts afresh.
    exit: Option<Context>,
    /// `exit`'s number in the pricer's [`Contexts`] (`UNNUMBERED` until first needed).
    exit_id: Cell<u32>,
    /// The continuation price met last (entry `NO_CONTEXT`: none yet): a block is nearly always
    /// continued from the same context, and this answers that without a search of `seen`.
    recent: Cell<Continued>,
    /// Continuation prices seen so far, one per entry context (by number: no context is
    /// compared or copied per executed block, which once cost half of the plugin's time).
    seen: RefCell<Vec<Continued>>,
}

#[derive(Debug, Clone, Copy)]
struct Continued {
    /// The entry context's number.
    entry: u32,
    cycles: u64,
    /// The taken extra in this context (the M3/M4 speculative-fetch stall moves cycles between
    /// the fall-through and the taken price).
    taken_extra: u64,
    /// The exit context's number (`NO_CONTEXT`: none).
    exit: u32,
}

/// [`Straight::exit_id`] not yet numbered.
const UNNUMBERED: u32 = u32::MAX - 1;
/// No context (an empty block).
const NO_CONTEXT: u32 = u32::MAX;

/// The exit contexts a run met, numbered by key ([`Context::key`]: two contexts with one key
/// price every continuation alike), so the run carries a context as a number.
#[derive(Debug, Default)]
struct Contexts {
    all: Vec<Context>,
    ids: HashMap<crate::ContextKey, u32>,
}

impl Contexts {
    fn number(&mut self, context: Option<&Context>) -> u32 {
        let Some(context) = context else { return NO_CONTEXT };
        *self.ids.entry(context.key()).or_insert_with(|| {
            self.all.push(context.clone());
            (self.all.len() - 1) as u32
        })
    }
}

impl TbPrice {
    /// Prices the decoded block `insns` starting at `start` (`handler`: an exception handler
    /// starts there), with `memory`'s fetch plan when there is a memory system.
    pub fn new(model: &Model, memory: Option<&MemorySystem>, start: u32, insns: Vec<Insn>, handler: bool) -> TbPrice {
        let mut tb = TbPrice::unpriced(model, start, handler, String::new());
        let Some(last) = insns.last() else {
            tb.error = Some(format!("empty block at 0x{start:08x}"));
            return tb;
        };
        tb.error = None;
        let (cost, exit) = model.block_after(None, &insns);
        tb.fall = last.addr.wrapping_add(u32::from(last.len));
        tb.cost = cost.fall_through;
        tb.taken_extra = cost.taken_extra;
        tb.branch_entry = cost.branch_entry;
        if let Some(m) = model.mispredict(last) {
            (tb.mispredict, tb.early_flags_save) = (u64::from(m.penalty), u64::from(m.early_flags_save));
        }
        tb.branch_at = last.addr;
        tb.after_setter = insns.iter().rposition(crate::insn::sets_flags).map(|i| (insns.len() - 1 - i) as u32);
        tb.insn_count = insns.len() as u32;
        tb.runs_on = !last.writes.contains(PC) || last.conditional;
        tb.falls_through = matches!(last.flow, Flow::Next) && !last.writes.contains(PC);
        tb.carries = tb.falls_through || (model.core.not_taken_continues() && tb.runs_on);
        tb.target = match last.flow {
            Flow::Branch { target } | Flow::Call { target } => target,
            _ => u32::MAX,
        };
        tb.kind = match last.flow {
            Flow::Call { .. } | Flow::CallIndirect { .. } => EndKind::Call,
            Flow::Return => EndKind::Return,
            _ => EndKind::Other,
        };
        if let Some(m) = memory {
            let plan = m.plan(model, &insns);
            tb.fetch = (!plan.is_empty()).then(|| Box::new(plan));
        }
        tb.straight = Some(Straight {
            insns,
            exit,
            exit_id: Cell::new(UNNUMBERED),
            recent: Cell::new(Continued { entry: NO_CONTEXT, cycles: 0, taken_extra: 0, exit: NO_CONTEXT }),
            seen: RefCell::new(Vec::new()),
        });
        tb
    }

    /// A block that cannot be priced (`error` says why): it adds no cycles, but exception entry
    /// at a handler is still priced.
    pub fn unpriced(model: &Model, start: u32, handler: bool, error: String) -> TbPrice {
        TbPrice {
            start,
            fall: 0,
            cost: 0,
            taken_extra: 0,
            branch_entry: 0,
            mispredict: 0,
            early_flags_save: 0,
            branch_at: 0,
            after_setter: None,
            insn_count: 0,
            runs_on: false,
            falls_through: false,
            carries: false,
            entry: if handler { model.exception_entry(start) } else { 0 },
            tail_chain: if handler { model.tail_chain(start) } else { 0 },
            target: u32::MAX,
            kind: EndKind::Other,
            straight: None,
            fetch: None,
            error: Some(error),
        }
    }

    /// Fresh-priced cycles of the instructions after instruction `index` (for a snapshot taken
    /// at that instruction: the block's cycles are added when it starts).
    pub fn cycles_after(&self, model: &Model, index: usize) -> u64 {
        match &self.straight {
            Some(s) if index < s.insns.len() => self.cost - model.block(&s.insns[..=index]).fall_through,
            _ => 0,
        }
    }

    /// The index of the instruction at `addr` (`None`: no instruction of the block starts there).
    pub fn index_of(&self, addr: u32) -> Option<usize> {
        self.straight.as_ref()?.insns.binary_search_by_key(&addr, |i| i.addr).ok()
    }

    /// The address after instruction `index` (`None`: no such instruction).
    pub fn after(&self, index: usize) -> Option<u32> {
        let i = self.straight.as_ref()?.insns.get(index)?;
        Some(i.addr.wrapping_add(u32::from(i.len)))
    }
}

/// What happened before a block, for the plugin's stack tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExceptionEvent {
    None,
    /// An exception was taken before it.
    Entry,
    /// An exception returned before it.
    Exit,
    /// An exception returned into another one (tail-chaining).
    TailChain,
}

/// What [`Pricer::enter`] priced for one executed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Exception entry, exit or tail-chain cycles settled before the block.
    pub exception: u64,
    pub event: ExceptionEvent,
    /// The previous block's taken-branch refill (0: not taken, or none pending) and its
    /// branch's misprediction penalty (Cortex-M7).
    pub taken: u64,
    /// The block's own cycles: its price (as a continuation where it continues straight-line
    /// code; two's complement when that saves cycles), branch entry and fetch stalls.
    pub own: u64,
}

/// Exception tracking (only with handler addresses).
#[derive(Debug)]
struct Exceptions {
    /// One entry per active exception: its call depth (calls minus returns since entry).
    depths: Vec<u32>,
    /// The previous block's direct branch or call target (`u32::MAX`: none).
    prev_target: u32,
    /// An exception return ran; the next block settles its cost.
    exit_pending: bool,
    exit: u64,
}

/// The run-time state of the cycle model.
#[derive(Debug)]
pub struct Pricer {
    pub model: Model,
    memory: Option<MemorySystem>,
    exceptions: Option<Exceptions>,
    /// The last block's fall-through address and its pending taken-branch refill (0: none).
    pending_fall: u32,
    pending_extra: u64,
    /// Where the last block runs on to when it does not branch (`u32::MAX`: it always branches).
    sequential: u32,
    /// The last block fell through to this address, ending in this context (its number).
    flow: Option<(u32, u32)>,
    contexts: Contexts,
    /// Whether mispredictions cost anything (Cortex-M7 with `m7-mispredict` > 0).
    predicting: bool,
    /// The last block's final conditional branch, when a misprediction of it costs anything.
    pending_branch: Option<PendingBranch>,
    /// Instructions since the last flag-setting one, at the end of the last block (`None`: not
    /// known, or none since a branch was taken).
    after_setter: Option<u32>,
    predictor: Predictor,
}

/// A conditional branch whose direction the next block shows.
#[derive(Debug, Clone, Copy)]
struct PendingBranch {
    at: u32,
    /// Its not-taken successor.
    fall: u32,
    penalty: u64,
}

/// Cortex-M7 direction prediction of direct conditional branches. The M7 has a branch target
/// address cache holding "branch predictor state and target address" (TRM), so taken branches
/// are predicted, and a misprediction costs 6–8 cycles ([m7-meas] in `m7.rs`). How the predictor
/// decides is INFERRED, as no public source describes it. Two-bit saturating counters, predicted
/// taken while 2 or 3 (the textbook scheme): one per branch, and one per branch and pattern of
/// the last `m7-history` conditional branches' directions (global history, which Arm documents
/// for another in-order dual-issue core, the Cortex-A8: DDI 0344 §5.1, a global history
/// buffer). The pattern's counter predicts when the branch was seen with that pattern, else the
/// branch's own; a branch never taken is predicted not taken (fetch runs on). With history 0
/// only the branch's counter is left, which mispredicts every loop exit; with history, a loop
/// whose trip count repeats is predicted whole once its pattern has been seen. The tables have
/// no capacity limit (no aliasing). The default history, 8, is the value that fits CoreMark
/// built with GCC 12 on an i.MX RT1170 (`docs/src/explain/validation.md`).
#[derive(Debug)]
struct Predictor {
    /// Counters by branch address and the global history it was reached with.
    counters: HashMap<(u32, u32), u8>,
    /// Counters by branch address alone.
    by_address: HashMap<u32, u8>,
    /// The directions of the last conditional branches, newest in bit 0.
    history: u32,
    /// Mask of the history bits a counter is chosen by (`m7-history` bits; 0: by address only).
    mask: u32,
}

impl Predictor {
    fn new(history_bits: u32) -> Predictor {
        let mask = 1u32.checked_shl(history_bits).map_or(u32::MAX, |bit| bit - 1);
        Predictor { counters: HashMap::new(), by_address: HashMap::new(), history: 0, mask }
    }

    /// Whether the branch at `at` was mispredicted, given that it was `taken`; learns the outcome.
    /// The counter of this branch and history predicts; a history not seen before with this
    /// branch falls back to the branch's own counter, and a branch not seen taken yet is
    /// predicted not taken (it has no counter). One table lookup each (none for the history
    /// table without history: the branch's own counter is all there is).
    fn mispredicted(&mut self, at: u32, taken: bool) -> bool {
        let own = predict_and_learn(self.by_address.entry(at), None, taken);
        let counter = if self.mask == 0 {
            own
        } else {
            let history = self.history & self.mask;
            self.history = (self.history << 1) | u32::from(taken);
            // A new history counter starts from the branch's own.
            predict_and_learn(self.counters.entry((at, history)), own, taken)
        };
        counter.is_some_and(|c| c >= 2) != taken
    }
}

/// The counter in `slot` before this outcome (`start` for an empty slot), which then learns the
/// outcome: an empty slot takes `start`'s next value, or 2 (weakly taken) when first taken, and
/// stays empty while neither.
fn predict_and_learn<K>(slot: Entry<'_, K, u8>, start: Option<u8>, taken: bool) -> Option<u8> {
    match slot {
        Entry::Occupied(mut e) => {
            let before = *e.get();
            *e.get_mut() = learn(before, taken);
            Some(before)
        }
        Entry::Vacant(e) => {
            match start {
                Some(c) => _ = e.insert(learn(c, taken)),
                None if taken => _ = e.insert(2),
                None => {}
            }
            start
        }
    }
}

/// A two-bit saturating counter after an outcome.
fn learn(counter: u8, taken: bool) -> u8 {
    if taken { (counter + 1).min(3) } else { counter.saturating_sub(1) }
}

impl Pricer {
    /// `handlers`: whether exception handler addresses were given (exception costs are priced
    /// only then); `memory`: the memory system (none when empty).
    pub fn new(model: Model, memory: &MemoryConfig, handlers: bool) -> Pricer {
        let exceptions = handlers.then(|| Exceptions {
            depths: Vec::new(),
            prev_target: u32::MAX,
            exit_pending: false,
            exit: model.exception_exit(),
        });
        let predicting = model.predicts_branches();
        let model_history = model.params.m7_history;
        Pricer {
            memory: (!memory.is_empty()).then(|| MemorySystem::new(memory.clone())),
            model,
            exceptions,
            pending_fall: 0,
            pending_extra: 0,
            sequential: u32::MAX,
            flow: None,
            contexts: Contexts::default(),
            predicting,
            pending_branch: None,
            after_setter: None,
            predictor: Predictor::new(model_history),
        }
    }

    /// The model's name for reports: the core model's, then the memory system's when there is
    /// one (which gives the wait states: the core model's own "0 WS" would contradict it).
    pub fn describe(&self) -> String {
        match &self.memory {
            Some(m) => format!("{}; {}", self.model.describe_core(), m.describe()),
            None => self.model.describe(),
        }
    }

    pub fn memory(&self) -> Option<&MemorySystem> {
        self.memory.as_ref()
    }

    /// Whether data loads cost anything (some flash region has wait states): only then does the
    /// plugin watch loads and [`Pricer::load`] get called.
    pub fn data_side(&self) -> bool {
        self.memory.as_ref().is_some_and(|m| m.config().data_side())
    }

    /// Prices the start of block `tb`'s execution. The caller adds `exception` and `taken`
    /// before anything it snapshots "before the block", and `own` after. Always inline: the
    /// plugin's exec callbacks run it for every executed block, and a call of its own would save
    /// and restore registers and return the step through memory each time.
    #[inline(always)]
    pub fn enter(&mut self, tb: &TbPrice) -> Step {
        self.enter_with::<true>(tb)
    }

    /// Whether this run prices with the core model alone: no memory system and no branch
    /// history (exceptions may be tracked). Then `enter_with::<false>` prices exactly as
    /// [`Pricer::enter`] without testing for them per block.
    pub fn core_only(&self) -> bool {
        self.memory.is_none() && !self.predicting
    }

    /// [`Pricer::enter`]; with `ALL` false, only for a [`Pricer::core_only`] run (the plugin's
    /// most common callback picks it once, at translation).
    #[inline(always)]
    pub fn enter_with<const ALL: bool>(&mut self, tb: &TbPrice) -> Step {
        debug_assert!(ALL || self.core_only());
        let (exception, event) = self.exceptions_step(tb);
        let (continued, taken_extra) = self.continuation(tb);
        let sequential = self.sequential;
        self.sequential = if tb.runs_on { tb.fall } else { u32::MAX };
        // Entered by a branch (not by running on, and not by an exception entry or return,
        // whose costs include the refill).
        let branch_entry = if exception == 0 && tb.start != sequential { tb.branch_entry } else { 0 };
        let stall = match (&tb.fetch, &mut self.memory) {
            (Some(plan), Some(m)) if ALL => m.fetch(plan, continued),
            _ => 0,
        };
        let extra = self.pending_extra;
        let mut taken = if extra != 0 && self.pending_fall != tb.start { extra } else { 0 };
        if ALL && self.predicting {
            taken += self.predict(tb, exception, exception == 0 && tb.start == sequential);
        }
        self.pending_extra = taken_extra;
        self.pending_fall = tb.fall;
        Step { exception, event, taken, own: tb.cost.wrapping_add(continued as u64) + branch_entry + stall }
    }

    /// The misprediction penalty of the last block's conditional branch, now that `tb` runs after
    /// it (none when an exception came between: the branch's direction is not known); `tb`'s own
    /// branch is then pending, its penalty set by how far its flags were set: counted across the
    /// blocks `tb` ran on from (`ran_on`: it continues the last block, which did not branch), so
    /// where QEMU cuts straight-line code changes nothing. Out of line, and called only when
    /// mispredictions cost anything (Cortex-M7): the other cores' blocks pay one test of a flag.
    #[inline(never)]
    fn predict(&mut self, tb: &TbPrice, exception: u64, ran_on: bool) -> u64 {
        let penalty = match self.pending_branch.take() {
            Some(b) if exception == 0 && self.predictor.mispredicted(b.at, tb.start != b.fall) => b.penalty,
            _ => 0,
        };
        let carried = if ran_on { self.after_setter } else { None };
        let after_setter = tb.after_setter.or_else(|| carried.map(|c| c.saturating_add(tb.insn_count)));
        self.after_setter = after_setter;
        if tb.mispredict != 0 {
            // No flag setter since the last taken branch: set before it, so early.
            let early = after_setter.is_none_or(|d| d >= crate::m7::EARLY_FLAGS);
            let penalty = if early { tb.mispredict - tb.early_flags_save } else { tb.mispredict };
            self.pending_branch = Some(PendingBranch { at: tb.branch_at, fall: tb.fall, penalty });
        }
        penalty
    }

    /// Block `tb`, the last one [`Pricer::enter`] priced, stopped after its instruction `index`:
    /// under `-icount` QEMU cannot let a device-register access run inside a block, so it ends the
    /// block at the access (the instructions before it have run), runs the access alone in a
    /// block that gets no exec callback, and goes on with a new block at the next instruction
    /// (`cpu_io_recompile`). `tb`'s whole price was added when it started: this returns the
    /// (fresh-priced) cycles of its instructions after `index`, which the caller takes back, and
    /// leaves the pricer as if `tb` had been cut after `index`, so that the next block continues
    /// it as straight-line code (no refill, no branch entry, the pipeline state carried). 0 and
    /// nothing changed when `index` is `tb`'s last instruction: then nothing was added twice.
    pub fn abandon(&mut self, tb: &TbPrice, index: usize) -> u64 {
        let Some(s) = &tb.straight else { return 0 };
        let Some(next) = s.insns.get(index + 1).map(|i| i.addr) else { return 0 };
        let (head, after) = self.model.block_after(None, &s.insns[..=index]);
        self.sequential = next;
        self.pending_fall = next;
        self.pending_extra = 0;
        self.flow = Some((next, self.contexts.number(after.as_ref())));
        // The block's own branch did not run: nothing for the predictor, no call or return.
        self.pending_branch = None;
        self.after_setter = None;
        if let Some(e) = &mut self.exceptions {
            e.prev_target = u32::MAX;
            match tb.kind {
                EndKind::Call => {
                    if let Some(d) = e.depths.last_mut() {
                        *d = d.saturating_sub(1);
                    }
                }
                // A return at depth 0 left the exception (exit pending); any other lowered it.
                EndKind::Return if e.exit_pending => {
                    e.exit_pending = false;
                    e.depths.push(0);
                }
                EndKind::Return => {
                    if let Some(d) = e.depths.last_mut() {
                        *d += 1;
                    }
                }
                EndKind::Other => {}
            }
        }
        tb.cost.saturating_sub(head.fall_through)
    }

    /// Whether an exception handler is running, as far as the exception tracking knows (only
    /// with handler addresses; without them, false).
    pub fn in_exception(&self) -> bool {
        self.exceptions.as_ref().is_some_and(|e| !e.depths.is_empty())
    }

    /// Stall cycles of a data load of `size` bytes at `addr` (the memory system's data side).
    pub fn load(&mut self, addr: u32, size: u32) -> u64 {
        self.memory.as_mut().map_or(0, |m| m.load(addr, size))
    }

    #[inline]
    fn exceptions_step(&mut self, tb: &TbPrice) -> (u64, ExceptionEvent) {
        let Some(e) = &mut self.exceptions else { return (0, ExceptionEvent::None) };
        // Most blocks: not a handler's start, no exception active or returning. Only the
        // previous block's target changes (what `exceptions_tracked` does for them).
        if tb.entry == 0 && !e.exit_pending && e.depths.is_empty() {
            e.prev_target = tb.target;
            return (0, ExceptionEvent::None);
        }
        self.exceptions_tracked(tb)
    }

    /// [`Pricer::exceptions_step`] for a block that starts a handler, or while an exception is
    /// active or returning: out of line, as most blocks are neither.
    #[inline(never)]
    fn exceptions_tracked(&mut self, tb: &TbPrice) -> (u64, ExceptionEvent) {
        let pending_fall = self.pending_fall;
        let Some(e) = &mut self.exceptions else { return (0, ExceptionEvent::None) };
        let entered = tb.entry != 0 && tb.start != e.prev_target && tb.start != pending_fall;
        let mut add = 0;
        let mut event = ExceptionEvent::None;
        if e.exit_pending {
            e.exit_pending = false;
            (add, event) =
                if entered { (tb.tail_chain, ExceptionEvent::TailChain) } else { (e.exit, ExceptionEvent::Exit) };
        } else if entered {
            (add, event) = (tb.entry, ExceptionEvent::Entry);
        }
        if entered {
            e.depths.push(0);
        }
        if let Some(depth) = e.depths.last_mut() {
            match tb.kind {
                EndKind::Call => *depth += 1,
                EndKind::Return if *depth == 0 => {
                    e.depths.pop();
                    e.exit_pending = true;
                }
                EndKind::Return => *depth -= 1,
                EndKind::Other => {}
            }
        }
        e.prev_target = tb.target;
        (add, event)
    }

    /// The cycles to add to `tb`'s fresh price when it continues straight-line code that QEMU
    /// cut, or (Cortex-M3/M4) the not-taken path of a conditional branch (negative when pairing
    /// or the prefetch state across the cut saves cycles); records where the next block
    /// continues from.
    /// Also returns the block's taken extra in that context.
    #[inline]
    fn continuation(&mut self, tb: &TbPrice) -> (i64, u64) {
        if self.flow.is_none() && !tb.carries {
            // Most blocks: neither continuing a cut nor cut themselves.
            return (0, tb.taken_extra);
        }
        let previous = self.flow.take();
        let Some(straight) = &tb.straight else { return (0, tb.taken_extra) };
        let (mut correction, mut taken_extra) = (0, tb.taken_extra);
        let mut exit = straight.exit_id.get();
        if let Some((fall, entry)) = previous
            && fall == tb.start
            && entry != NO_CONTEXT
        {
            let recent = straight.recent.get();
            let c = if recent.entry == entry { recent } else { self.continued(straight, entry) };
            correction = c.cycles as i64 - tb.cost as i64;
            taken_extra = c.taken_extra;
            exit = c.exit;
        } else if exit == UNNUMBERED {
            exit = self.contexts.number(straight.exit.as_ref());
            straight.exit_id.set(exit);
        }
        if tb.carries {
            self.flow = Some((tb.fall, exit));
        }
        (correction, taken_extra)
    }

    /// The continuation price of `straight` from context number `entry`, other than the one met
    /// last: from those seen before, else priced now. Apart from [`Pricer::continuation`] so
    /// the per-block path stays small.
    #[cold]
    #[inline(never)]
    fn continued(&mut self, straight: &Straight, entry: u32) -> Continued {
        let seen = straight.seen.borrow().iter().find(|c| c.entry == entry).copied();
        let c = seen.unwrap_or_else(|| {
            let context = &self.contexts.all[entry as usize];
            let (cost, after) = self.model.block_after(Some(context), &straight.insns);
            let exit = self.contexts.number(after.as_ref());
            let c = Continued { entry, cycles: cost.fall_through, taken_extra: cost.taken_extra, exit };
            straight.seen.borrow_mut().push(c);
            c
        });
        straight.recent.set(c);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcubench_thumb::Decoder;

    fn block(model: &Model, start: u32, halfwords: &[u16]) -> TbPrice {
        let bytes: Vec<u8> = halfwords.iter().flat_map(|h| h.to_le_bytes()).collect();
        let (insns, err) = Decoder::for_core(model.core).unwrap().decode_block(start, &bytes);
        assert!(err.is_none());
        TbPrice::new(model, None, start, insns, false)
    }

    #[test]
    fn a_loop_pays_the_refill_when_it_branches_back() {
        let model = Model::new(Core::CortexM4);
        // subs r0, #1; bne .-2 at 0x100 (2 cycles, +1 taken); then bx lr at 0x104.
        let body = block(&model, 0x100, &[0x3801, 0xd1fd]);
        let ret = block(&model, 0x104, &[0x4770]);
        let mut p = Pricer::new(model, &MemoryConfig::default(), false);
        let mut total = 0;
        for tb in [&body, &body, &body, &ret] {
            let s = p.enter(tb);
            total += s.exception + s.taken + s.own;
        }
        // Three loop blocks (2 each), two taken refills (1 each), bx lr (1 + P = 2).
        assert_eq!(total, 3 * 2 + 2 + 2);
    }

    /// A device read that QEMU runs on its own (`cpu_io_recompile`): the loop block
    /// `ldr r0, [r1]; subs r3, #1; bne` is priced whole when it starts, stopped after the load,
    /// and continued by a block from the `subs`. With the stopped block's tail taken back
    /// ([`Pricer::abandon`]), the run costs what it costs when the load reads RAM, on every core
    /// (the continuation carries the pipeline state across the cut; on the M7 the predictor
    /// sees the same branches). Abandoning at the last instruction changes nothing.
    #[test]
    fn a_block_stopped_at_a_device_access_costs_what_the_whole_block_costs() {
        for core in [Core::CortexM0, Core::CortexM3, Core::CortexM4, Core::CortexM33, Core::CortexM7] {
            let model = Model::new(core);
            // ldr r0, [r1]; subs r3, #1; bne 0x100 at 0x100; the same from the subs at 0x102;
            // bx lr at 0x106.
            let body = block(&model, 0x100, &[0x6808, 0x3b01, 0xd1fc]);
            let tail = block(&model, 0x102, &[0x3b01, 0xd1fc]);
            let ret = block(&model, 0x106, &[0x4770]);
            let step = |p: &mut Pricer, tb: &TbPrice| {
                let s = p.enter(tb);
                s.exception.wrapping_add(s.taken).wrapping_add(s.own)
            };
            let mut ram = Pricer::new(model.clone(), &MemoryConfig::default(), true);
            let mut device = Pricer::new(model.clone(), &MemoryConfig::default(), true);
            let (mut a, mut b) = (0u64, 0u64);
            for _ in 0..3 {
                a = a.wrapping_add(step(&mut ram, &body));
                b = b.wrapping_add(step(&mut device, &body));
                b = b.wrapping_sub(device.abandon(&body, 0));
                b = b.wrapping_add(step(&mut device, &tail));
            }
            a = a.wrapping_add(step(&mut ram, &ret));
            b = b.wrapping_add(step(&mut device, &ret));
            assert_eq!(b, a, "{core}");
            assert_eq!(device.abandon(&ret, 0), 0, "{core}");
            assert_eq!(body.index_of(0x102), Some(1));
            assert_eq!(body.index_of(0x103), None);
        }
    }

    /// Cortex-M7: a loop's `subs; bne` (flags set right before: 8 cycles a misprediction) run
    /// three times from cold, then again, and so on. By address alone (`m7-history` 0): the first
    /// taken back-edge is mispredicted (not yet seen), the next predicted, the exit mispredicted;
    /// the second run's back-edges are predicted (the counter stayed at "taken"), its exit
    /// mispredicted again, every run. With the directions of the last 8 branches (the default),
    /// the first runs are the same (a history not seen before falls back to the branch's own
    /// counter); once the pattern has repeated, the whole loop is predicted, its exit included.
    /// With `m7-mispredict` 0 nothing is added.
    #[test]
    fn the_cortex_m7_pays_for_a_mispredicted_branch_from_its_history() {
        let run = |mispredict: u32, history: u32, runs: usize| {
            let mut params = Params::for_core(Core::CortexM7);
            params.m7_mispredict = mispredict;
            params.m7_history = history;
            let model = Model::with_params(Core::CortexM7, params);
            // subs r0, #1; bne .-2 at 0x100; bx lr at 0x104.
            let body = block(&model, 0x100, &[0x3801, 0xd1fd]);
            let ret = block(&model, 0x104, &[0x4770]);
            assert_eq!(body.mispredict, u64::from(mispredict));
            let mut p = Pricer::new(model, &MemoryConfig::default(), false);
            let mut taken = Vec::new();
            for _ in 0..runs {
                for tb in [&body, &body, &body, &ret] {
                    taken.push(p.enter(tb).taken);
                }
            }
            taken
        };
        // A branch's penalty is settled when the next block shows its direction.
        assert_eq!(run(8, 0, 2), [0, 8, 0, 8, 0, 0, 0, 8]);
        assert_eq!(run(8, 0, 6)[20..], [0, 0, 0, 8]);
        assert_eq!(run(8, 8, 2), [0, 8, 0, 8, 0, 0, 0, 8]);
        assert_eq!(run(8, 8, 6)[20..], [0, 0, 0, 0]);
        assert_eq!(run(0, 8, 2), [0; 8]);
    }

    /// [m7-meas]: flags set at least 6 slots before the branch save 2 cycles of a misprediction,
    /// counted across the blocks QEMU cut straight-line code into (a cut changes nothing); CBZ
    /// tests a register (the full penalty); a block that does not end in a conditional branch
    /// has none.
    #[test]
    fn the_cortex_m7_misprediction_penalty_depends_on_when_the_flags_were_set() {
        let model = Model::new(Core::CortexM7);
        // Blocks laid out from 0x100, each running on into the next; the last ends in a
        // conditional branch, taken (to 0x100), unseen so mispredicted: its penalty.
        let penalty = |parts: &[&[u16]]| {
            let mut at = 0x100;
            let tbs: Vec<TbPrice> = parts
                .iter()
                .map(|hw| {
                    let tb = block(&model, at, hw);
                    at += 2 * hw.len() as u32;
                    tb
                })
                .collect();
            let mut p = Pricer::new(model.clone(), &MemoryConfig::default(), false);
            for tb in &tbs {
                p.enter(tb);
            }
            p.enter(&tbs[0]).taken
        };
        let (subs, nop, bne, cbz, b) = (0x3801, 0xbf00, 0xd1fd, 0xb110, 0xe7fd);
        // subs; bne: 8. subs six slots before bne (five nops between): 6; five slots: 8.
        assert_eq!(penalty(&[&[subs, bne]]), 8);
        assert_eq!(penalty(&[&[subs, nop, nop, nop, nop, nop, bne]]), 6);
        assert_eq!(penalty(&[&[subs, nop, nop, nop, nop, bne]]), 8);
        // The same code cut into two blocks prices the same.
        assert_eq!(penalty(&[&[subs, nop, nop, nop], &[nop, nop, bne]]), 6);
        assert_eq!(penalty(&[&[subs, nop, nop], &[nop, nop, bne]]), 8);
        // No setter since the last taken branch: set before it, early.
        assert_eq!(penalty(&[&[nop, bne]]), 6);
        // cbz after subs far before: still 8. An unconditional branch: nothing to mispredict.
        assert_eq!(penalty(&[&[subs, nop, nop, nop, nop, nop, nop, cbz]]), 8);
        assert_eq!(penalty(&[&[subs, b]]), 0);
        // The M4 predicts nothing.
        assert_eq!(block(&Model::new(Core::CortexM4), 0x100, &[subs, bne]).mispredict, 0);
    }

    /// Cortex-M3/M4: the not-taken path of a conditional branch continues its prefetch state
    /// (m3m4's speculative fetch slot): three 16-bit `adds` leave the FIFO ahead, so neither the
    /// first `bne` nor a second one on its not-taken path waits. Priced afresh, the second would.
    #[test]
    fn the_not_taken_path_continues_the_prefetch_state() {
        let model = Model::new(Core::CortexM4);
        // adds r1, #1; adds r2, #1; adds r3, #1; bne (not taken) at 0x100: 4.
        let a = block(&model, 0x100, &[0x3101, 0x3201, 0x3301, 0xd1fb]);
        // bne (not taken) at 0x108: afresh 1 + 1 (nothing fetched ahead), continued 1.
        let b = block(&model, 0x108, &[0xd1fa]);
        let ret = block(&model, 0x10a, &[0x4770]);
        assert_eq!((a.cost, b.cost), (4, 2));
        let mut p = Pricer::new(model, &MemoryConfig::default(), false);
        let total: u64 = [&a, &b, &ret]
            .iter()
            .map(|tb| {
                let s = p.enter(tb);
                s.exception + s.taken + s.own
            })
            .sum();
        assert_eq!(total, 4 + 1 + 2);
    }

    /// A block continued from different contexts keeps one price per context, however the
    /// visits interleave (the prices are cached per context number).
    #[test]
    fn each_entry_context_keeps_its_own_continuation_price() {
        let model = Model::new(Core::CortexM4);
        let decoded = |start: u32, hw: &[u16]| {
            let bytes: Vec<u8> = hw.iter().flat_map(|h| h.to_le_bytes()).collect();
            Decoder::for_core(model.core).unwrap().decode_block(start, &bytes).0
        };
        // Two predecessors falling into 0x108 on their not-taken path: three `adds` then `bne`
        // at 0x100, one `adds` then `bne` at 0x104 (less fetched ahead); then `bne` at 0x108.
        let (a_insns, c_insns, b_insns) = (
            decoded(0x100, &[0x3101, 0x3201, 0x3301, 0xd1fb]),
            decoded(0x104, &[0x3301, 0xd1fb]),
            decoded(0x108, &[0xd1fa]),
        );
        let after =
            |pred: &[Insn]| model.block_after(Some(&model.block_after(None, pred).1.unwrap()), &b_insns).0.fall_through;
        let (from_a, from_c) = (after(&a_insns), after(&c_insns));
        assert_ne!(from_a, from_c, "the test needs two contexts that price the block differently");
        let a = TbPrice::new(&model, None, 0x100, a_insns, false);
        let c = TbPrice::new(&model, None, 0x104, c_insns, false);
        let b = TbPrice::new(&model, None, 0x108, b_insns, false);
        let mut p = Pricer::new(model.clone(), &MemoryConfig::default(), false);
        for (pred, expected) in [(&a, from_a), (&c, from_c), (&c, from_c), (&a, from_a), (&c, from_c)] {
            p.enter(pred);
            assert_eq!(p.enter(&b).own, expected);
        }
    }

    #[test]
    fn model_for_applies_parameters_by_name_and_refuses_bad_ones() {
        let m = model_for(Core::CortexM4, &[], &[("branch-refill".into(), "3".into())]).unwrap();
        assert_eq!(m.params.branch_refill, 3);
        assert!(model_for(Core::CortexM4, &[], &[("divide".into(), "x".into())]).unwrap_err().contains("divide:x"));
        assert!(model_for(Core::CortexM4, &[], &[("refill".into(), "1".into())]).unwrap_err().contains("refill"));
    }
}
