//! Worst-case static stack bounds from the machine code of a linked Cortex-M ELF.
//!
//! [`analyze`] decodes every function ([`mcubench_elf::functions`]), tracks SP along every path of its
//! control-flow graph to get its frame and the SP offset at each call site, builds the call
//! graph (direct calls, tail calls, indirect calls resolved from the address-taken set) and
//! bounds each root (reset handler, exception handlers) and the whole main stack (MSP) with an
//! exception model.
//!
//! # What a result means
//! - [`Bound::Exact`]: every path and callee was resolved without assumptions.
//! - [`Bound::Bounded`]: a sound upper bound *under the listed assumptions* (indirect calls may
//!   reach only address-taken functions; annotated recursion depths; annotated frames).
//! - [`Bound::Unbounded`]: no bound: dynamic SP (alloca/VLA), unbounded recursion, an indirect
//!   call or jump with no candidate target, an instruction that could not be decoded, SP that
//!   differs between the paths that join at an instruction. The reason names the location and,
//!   where an annotation would help, [`StackReport::unresolved`] carries a ready-to-paste one.
//!   Nothing unknown is ever counted as 0 bytes.
//!
//! # Known limitations
//! - Indirect calls: targets are the address-taken functions (words in data and literal
//!   pools, `movw`/`movt` and `movw` constants). A call whose target was loaded from
//!   `[Rn, #k]` (Rn not SP/PC) reaches slot k of the Rust vtables found in read-only data plus
//!   every function whose address appears outside vtables (assumption: a function found only
//!   in vtable slots is called only through its slot). Pointers computed at run time (not
//!   stored anywhere as an address) are missed: annotate such sites.
//! - A `blx`/`bx` through a register that holds a known function address (linker veneers
//!   `movw ip; movt ip; bx ip`, `-mlong-calls`) is a direct call or tail call; that address
//!   still counts as address-taken (sound, but it widens what other indirect calls may reach).
//! - Frames are the largest SP excursion of a function's own code: stores below SP (none in
//!   AAPCS code) are not counted.
//! - Functions are found from symbols: a stripped ELF has no functions to analyse; code without
//!   a symbol is only analysed as part of the function whose range covers it.
//! - Conditional SP changes inside IT blocks that are not returns make the function divergent
//!   (paths with and without the change join), which is sound but can be loose.
//! - Exception model: every vector-table handler can preempt every other and the main path
//!   once, unless [`StackOptions::priority_groups`] (the annotation file's `priorities:`) says
//!   which handlers share a priority; priorities are run-time writes the binary does not show.
//!   The stacked frame per level is [`exception_frame`]: 104 B with an FPU (extended frame,
//!   lazy stacking reserves the space) or 32 B without, plus 4 B of alignment; on ARMv8-M
//!   Mainline the Security Extension's Secure→Non-secure stacking (40 B more, and S16–S31
//!   with an FPU) is counted unless [`StackOptions::security_extension`] is `Some(false)`.
//!   The vector table found is the only one: a Non-secure image's own table, PSP-based threads
//!   (RTOS) and handlers installed at run time (VTOR writes) are not modelled.
//! - Annotations are keyed by function name (symbol or demangled name without hash) and, for a
//!   call site, its ordinal among the function's indirect calls (`f@N`) or offset (`f+0x..`);
//!   not by DWARF file:line. Recursion: `f: N` means at most N activations of f on the stack
//!   at once; the annotated functions must cut every cycle of the recursive component.
//! - Thumb-1 far branches (`bl` to a block of the same function) are followed as jumps and,
//!   conservatively, as falling through.

use std::collections::{BTreeMap, BTreeSet, HashMap};

pub use mcubench_thumb::Arch;
use mcubench_thumb::{DecodeError, Flow, Insn, Reg, SpEffect};
use serde::{Deserialize, Serialize};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::{Function, FunctionMap};

pub mod annotations;

/// Bytes the core stacks on exception entry: basic frame (R0–R3, R12, LR, return address,
/// xPSR).
pub const BASIC_EXCEPTION_FRAME: u32 = 32;
/// Bytes the core stacks on exception entry with an active FP context (extended frame: the
/// basic frame, S0–S15, FPSCR and a reserved word). With lazy stacking (FPCCR.LSPEN, the
/// reset value on FPv4/FPv5) the registers are written later, but the space is reserved at
/// entry, so the SP excursion is the same.
pub const EXTENDED_EXCEPTION_FRAME: u32 = 104;
/// Alignment padding the core may add (STKALIGN) when SP was not 8-aligned.
pub const EXCEPTION_ALIGN_PAD: u32 = 4;
/// ARMv8-M with the Security Extension: the additional state context (integrity signature, a
/// reserved word, R4–R11) stacked below the frame when an exception taken from Secure state
/// goes to a Non-secure handler.
pub const ADDITIONAL_STATE_CONTEXT: u32 = 40;
/// ARMv8-M with the Security Extension and an FPU: S16–S31 are also stacked (or reserved,
/// with lazy stacking) in the extended frame when FPCCR.TS is 1 (secure FP context).
pub const SECURE_FP_EXTRA: u32 = 64;

/// Worst-case bytes one exception entry pushes on the stack of the preempted code, for a core
/// with architecture `arch`, an FPU (`fpu`) and, on ARMv8-M, the Security Extension
/// (`security`; ignored elsewhere).
///
/// Sources: ARMv7-M ARM (DDI 0403E) B1.5.7 "Stack alignment on exception entry" and B1.5.6
/// "Exception entry behavior" (basic 32 B, extended 104 B, +4 B alignment); Armv8-M ARM
/// (DDI 0553) chapter B3 "Exception model", "Exception entry, context stacking", pseudocode
/// `PushStack` and `PushCalleeStack`: an exception from Secure state to a Non-secure handler also pushes the
/// additional state context (integrity signature, reserved word, R4–R11: 40 B), and with
/// FPCCR.TS = 1 the FP context includes S16–S31 (64 B more). Whether either happens depends on
/// run-time configuration (which handlers are Non-secure, FPCCR.TS), so both are counted.
pub fn exception_frame(arch: Arch, fpu: bool, security: bool) -> u32 {
    let secure = security && arch == Arch::V8MMain;
    let mut bytes = if fpu { EXTENDED_EXCEPTION_FRAME } else { BASIC_EXCEPTION_FRAME };
    if secure {
        bytes += ADDITIONAL_STATE_CONTEXT;
        if fpu {
            bytes += SECURE_FP_EXTRA;
        }
    }
    bytes + EXCEPTION_ALIGN_PAD
}

/// Where the instructions come from. [`mcubench_thumb::Decoder`] is the real one; tests may
/// supply hand-made instruction sequences.
pub trait InsnSource {
    /// Decode the code bytes `bytes` that start at `addr`, in order, tracking IT blocks. An
    /// undecodable instruction yields an `Err` and decoding goes on after it (2 bytes on).
    fn decode_block(&self, addr: u32, bytes: &[u8]) -> Vec<Result<Insn, DecodeError>>;
}

impl InsnSource for mcubench_thumb::Decoder {
    fn decode_block(&self, addr: u32, bytes: &[u8]) -> Vec<Result<Insn, DecodeError>> {
        // The decoder stops at the first error: record it and go on 2 bytes further (what
        // follows an undecodable halfword is unknown anyway; only reachable addresses matter).
        let mut out = Vec::new();
        let mut off = 0usize;
        while off < bytes.len() {
            let at = addr.wrapping_add(off as u32);
            let (insns, err) = mcubench_thumb::Decoder::decode_block(self, at, &bytes[off..]);
            let decoded: usize = insns.iter().map(|i| usize::from(i.len)).sum();
            out.extend(insns.into_iter().map(Ok));
            off += decoded;
            match err {
                None => break,
                Some(e) => {
                    out.push(Err(e));
                    off += 2;
                }
            }
        }
        out
    }
}

/// Annotations: what the binary cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotations {
    /// Maximum number of activations of a function on the stack at once, by function name.
    /// A recursive cycle is bounded when the annotated functions cut all its cycles.
    #[serde(default)]
    pub recursion: BTreeMap<String, u32>,
    /// Targets of indirect calls/jumps, keyed by `function@N` (the N-th indirect call site of
    /// the function in address order, from 1: survives rebuilds that do not reorder the
    /// function's indirect calls), `function+0xoffset` of the call site, or the function name
    /// alone (all its indirect sites). Names may be symbols or demangled names (no hash).
    #[serde(default)]
    pub indirect: BTreeMap<String, Vec<String>>,
    /// Frames of functions the analyzer cannot bound (dynamic SP, undecodable), by name.
    #[serde(default)]
    pub frames: BTreeMap<String, u32>,
    /// Call edges that cannot happen: caller name → callee names.
    #[serde(default)]
    pub infeasible: BTreeMap<String, Vec<String>>,
}

/// How [`analyze`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackOptions {
    pub arch: Arch,
    /// The core has an FPU (exception frames are the 104-byte extended ones).
    pub fpu: bool,
    /// Resolve indirect calls to every address-taken function (default). When false, every
    /// indirect call without an annotation is unresolved.
    pub address_taken: bool,
    pub annotations: Annotations,
    /// Handlers (by name) grouped by preemption priority: handlers of one group cannot preempt
    /// each other. `None`: every handler is its own group (all may nest: conservative). A
    /// handler named in no group is a group of its own.
    pub priority_groups: Option<Vec<Vec<String>>>,
    /// The core has the ARMv8-M Security Extension (see [`exception_frame`]). `None`: assume it
    /// does on [`Arch::V8MMain`] (conservative: its extra stacking is counted).
    pub security_extension: Option<bool>,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            arch: Arch::V7EM,
            fpu: true,
            address_taken: true,
            annotations: Annotations::default(),
            priority_groups: None,
            security_extension: None,
        }
    }
}

/// A function's own frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Frame {
    /// Largest SP excursion of the function's own code, in bytes.
    Known { bytes: u32 },
    /// SP is set from a run-time value (alloca/VLA) at `at`. `bytes` is the static part.
    Dynamic { at: u32, bytes: u32 },
    /// SP differs between paths that meet at `at`.
    Divergent { at: u32, detail: String },
    /// The code could not be followed at `at` (undecodable instruction, execution of data,
    /// falling off the function, unbalanced return).
    Unknown { at: u32, detail: String },
}

impl Frame {
    pub fn bytes(&self) -> Option<u32> {
        match self {
            Frame::Known { bytes } => Some(*bytes),
            _ => None,
        }
    }
}

/// What a call site does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CallKind {
    /// BL/BLX imm, or BLX Rm with a function's address built in Rm (`-mlong-calls`).
    Call { target: u32 },
    /// B/B.W/Bcc/CBZ leaving the function, fall-through into the next function, or a veneer's
    /// jump to a known address (`ldr pc, [pc, #..]`; `movw ip; movt ip; bx ip`).
    Tail { target: u32 },
    /// BLX Rm.
    Indirect,
    /// BX Rm / MOV pc / LDR pc other than a return.
    IndirectTail,
}

/// One call site with the caller's SP excursion when the callee starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    pub at: u32,
    /// Bytes of the caller's frame in use at the call (0 for a tail call after the epilogue).
    pub depth: u32,
    #[serde(flatten)]
    pub kind: CallKind,
    /// For an indirect call: the target was loaded from `[Rn, #slot]` (Rn not SP/PC), e.g. a
    /// Rust vtable method slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
}

/// Frame and call sites of one function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionStack {
    pub name: String,
    pub demangled: String,
    pub start: u32,
    pub end: u32,
    pub frame: Frame,
    pub calls: Vec<CallSite>,
    /// Constants built by `movw`/`movt` that are Thumb addresses of functions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_consts: Vec<u32>,
}

/// A worst-case bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Bound {
    Exact { bytes: u32 },
    Bounded { bytes: u32, assumptions: Vec<String> },
    Unbounded { reason: String },
}

impl Bound {
    pub fn bytes(&self) -> Option<u32> {
        match self {
            Bound::Exact { bytes } | Bound::Bounded { bytes, .. } => Some(*bytes),
            Bound::Unbounded { .. } => None,
        }
    }
}

/// A root of the call graph and its bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootBound {
    pub name: String,
    /// `reset` or `exception N` (vector number).
    pub role: String,
    pub bound: Bound,
    /// The deepest path, root first.
    pub path: Vec<String>,
}

/// Something the analyzer needs a human for, with an annotation that resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unresolved {
    pub function: String,
    pub at: u32,
    pub what: String,
    /// A YAML line for the annotations file.
    pub annotation: String,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackReport {
    pub functions: Vec<FunctionStack>,
    pub roots: Vec<RootBound>,
    /// Worst main-stack (MSP) use: reset path plus nested exception handlers.
    pub msp: Bound,
    /// Functions whose address is taken (possible targets of indirect calls).
    pub address_taken: Vec<String>,
    pub unresolved: Vec<Unresolved>,
    /// Bound, assumptions and worst path (function indices) of every function, indexed like
    /// `functions`; [`StackReport::bound_of`] turns one into a [`Bound`]. Kept compact (the
    /// assumptions as a set of indices into `assumption_text`): a function's assumptions are
    /// those of all its callees, and listing them for every function of a large ELF is
    /// quadratic.
    #[serde(skip)]
    bounds: Vec<(Result<u32, String>, Assumptions, Vec<usize>)>,
    #[serde(skip)]
    assumption_text: Vec<String>,
}

/// A set of assumptions: indices into a table of their texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Assumptions {
    bits: Vec<u64>,
}

impl Assumptions {
    fn insert(&mut self, id: usize) {
        if self.bits.len() <= id / 64 {
            self.bits.resize(id / 64 + 1, 0);
        }
        self.bits[id / 64] |= 1 << (id % 64);
    }

    fn extend(&mut self, other: &Assumptions) {
        if self.bits.len() < other.bits.len() {
            self.bits.resize(other.bits.len(), 0);
        }
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }

    fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The texts, sorted.
    fn texts(&self, table: &[String]) -> Vec<String> {
        let mut out: Vec<String> = (0..self.bits.len() * 64)
            .filter(|&i| self.bits[i / 64] & (1 << (i % 64)) != 0)
            .map(|i| table[i].clone())
            .collect();
        out.sort();
        out
    }
}

/// Assumption texts, each stored once.
#[derive(Debug, Default)]
struct Interner {
    ids: HashMap<String, usize>,
    text: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: String) -> usize {
        if let Some(&i) = self.ids.get(&s) {
            return i;
        }
        self.text.push(s.clone());
        self.ids.insert(s, self.text.len() - 1);
        self.text.len() - 1
    }
}

fn to_bound(bound: &Result<u32, String>, assumptions: &Assumptions, table: &[String]) -> Bound {
    match bound {
        Ok(b) if assumptions.is_empty() => Bound::Exact { bytes: *b },
        Ok(b) => Bound::Bounded { bytes: *b, assumptions: assumptions.texts(table) },
        Err(e) => Bound::Unbounded { reason: e.clone() },
    }
}

/// One step of a worst path: the function, its frame, and the call to the next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathStep {
    pub function: String,
    pub address: u32,
    /// The function's own frame in bytes (None if unknown).
    pub frame: Option<u32>,
    /// Offset of the call to the next step from the function's start, and SP depth there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_offset: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_depth: Option<u32>,
}

/// The bound of a root or named function with its worst path, for output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoundView {
    pub name: String,
    pub role: String,
    /// `exact`, `bounded` or `unbounded`.
    pub label: &'static str,
    pub bound: Bound,
    pub path: Vec<PathStep>,
}

/// What `mcubench stack` prints (serialize it for JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StackView {
    pub roots: Vec<BoundView>,
    pub msp: Bound,
    pub functions: Vec<BoundView>,
    pub unresolved: Vec<Unresolved>,
    /// Names asked for that are not functions of the ELF.
    pub not_found: Vec<String>,
}

impl StackReport {
    pub fn function(&self, name: &str) -> Option<&FunctionStack> {
        self.functions.iter().find(|f| f.name == name || f.demangled == name)
    }

    pub fn root(&self, name: &str) -> Option<&RootBound> {
        self.roots.iter().find(|r| r.name == name)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.functions.iter().position(|f| f.name == name || f.demangled == name)
    }

    /// The worst path from function `i` as steps with frames and call-site offsets.
    fn steps(&self, path: &[usize]) -> Vec<PathStep> {
        let mut out = Vec::new();
        for (k, &i) in path.iter().enumerate() {
            let f = &self.functions[i];
            let next = path.get(k + 1).map(|&j| self.functions[j].start);
            let call = next.and_then(|t| {
                f.calls
                    .iter()
                    .filter(|c| match c.kind {
                        CallKind::Call { target } | CallKind::Tail { target } => target == t,
                        CallKind::Indirect | CallKind::IndirectTail => true,
                    })
                    .max_by_key(|c| (matches!(c.kind, CallKind::Call { .. } | CallKind::Tail { .. }), c.depth))
            });
            out.push(PathStep {
                function: f.demangled.clone(),
                address: f.start,
                frame: f.frame.bytes(),
                call_offset: call.map(|c| c.at - f.start),
                call_depth: call.map(|c| c.depth),
            });
        }
        out
    }

    /// Bound and worst path (function indices) of function `i` (indexed like `functions`).
    pub fn bound_of(&self, i: usize) -> Option<(Bound, Vec<usize>)> {
        self.bounds.get(i).map(|(b, a, path)| (to_bound(b, a, &self.assumption_text), path.clone()))
    }

    fn view_of(&self, i: usize, role: &str) -> BoundView {
        let (bound, path) =
            self.bound_of(i).unwrap_or((Bound::Unbounded { reason: "no bound computed".into() }, vec![i]));
        BoundView {
            name: self.functions[i].demangled.clone(),
            role: role.to_string(),
            label: match bound {
                Bound::Exact { .. } => "exact",
                Bound::Bounded { .. } => "bounded",
                Bound::Unbounded { .. } => "unbounded",
            },
            bound,
            path: self.steps(&path),
        }
    }

    /// Roots, MSP, the named functions (symbol or demangled name) and unresolved sites.
    pub fn view(&self, functions: &[&str]) -> StackView {
        let roots = self.roots.iter().filter_map(|r| self.index(&r.name).map(|i| self.view_of(i, &r.role))).collect();
        let mut named = Vec::new();
        let mut not_found = Vec::new();
        for &n in functions {
            match self.index(n) {
                Some(i) => named.push(self.view_of(i, "function")),
                None => not_found.push(n.to_string()),
            }
        }
        StackView { roots, msp: self.msp.clone(), functions: named, unresolved: self.unresolved.clone(), not_found }
    }

    /// Human-readable report: see [`StackReport::view`].
    pub fn to_text(&self, functions: &[&str]) -> String {
        use std::fmt::Write as _;
        let v = self.view(functions);
        let mut s = String::new();
        let bound_text = |b: &Bound| match b {
            Bound::Exact { bytes } => format!("{bytes} B (exact)"),
            Bound::Bounded { bytes, .. } => format!("{bytes} B (bounded)"),
            Bound::Unbounded { reason } => format!("unbounded: {reason}"),
        };
        let one = |s: &mut String, b: &BoundView| {
            let _ = writeln!(s, "{} [{}]: {}", b.name, b.role, bound_text(&b.bound));
            if let Bound::Bounded { assumptions, .. } = &b.bound {
                for a in assumptions {
                    let _ = writeln!(s, "    assuming {a}");
                }
            }
            for p in &b.path {
                let frame = p.frame.map_or("?".to_string(), |f| format!("{f} B"));
                match (p.call_offset, p.call_depth) {
                    (Some(o), Some(d)) => {
                        let _ = writeln!(s, "    {:<60} frame {frame:>7}  calls at +0x{o:x} (depth {d} B)", p.function);
                    }
                    _ => {
                        let _ = writeln!(s, "    {:<60} frame {frame:>7}", p.function);
                    }
                }
            }
        };
        for r in &v.roots {
            one(&mut s, r);
        }
        let _ = writeln!(s, "MSP (reset + nested handlers): {}", bound_text(&v.msp));
        for f in &v.functions {
            one(&mut s, f);
        }
        for n in &v.not_found {
            let _ = writeln!(s, "{n}: no such function");
        }
        if !v.unresolved.is_empty() {
            let _ = writeln!(s, "unresolved ({}), paste into the annotation file:", v.unresolved.len());
            for u in &v.unresolved {
                let _ = writeln!(s, "  # {} at 0x{:08x}: {}\n  {}", u.function, u.at, u.what, u.annotation);
            }
        }
        s
    }
}

/// Analyse `image` with the real decoder. Fails only when `options` name an FPU on a core
/// that has none.
pub fn analyze(image: &ElfImage, options: &StackOptions) -> Result<StackReport, mcubench_thumb::NewError> {
    let decoder = mcubench_thumb::Decoder::new(options.arch, options.fpu)?;
    Ok(analyze_with(image, options, &decoder))
}

/// Analyse `image` with instructions from `source`.
pub fn analyze_with(image: &ElfImage, options: &StackOptions, source: &dyn InsnSource) -> StackReport {
    let fmap = FunctionMap::new(image);
    let functions: Vec<FunctionStack> =
        fmap.functions().iter().map(|f| function_stack(image, &fmap, f, source)).collect();
    let taken = address_taken(image, &fmap, &functions);
    let names = name_index(&fmap);
    CallGraph { image, fmap: &fmap, functions: &functions, taken: &taken, options, names: &names }.report()
}

// ---- per-function frames ------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sp {
    /// Offset from SP at entry (≤ 0 while a frame is live).
    Known(i32),
    Dynamic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    sp: Sp,
    /// Registers with a known value: entry-SP + offset (frame pointers) or a constant (literal
    /// loads and immediate moves, for Thumb-1 `ldr r6, =-N; add sp, r6`).
    regs: [Option<Val>; 16],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    /// Entry SP + offset.
    Sp(i32),
    Const(i32),
    /// Loaded from `[Rn, #offset]` with Rn neither SP nor PC (a vtable or struct slot).
    Slot(u32),
}

/// One IT block: the addresses of its instructions with their sense (true: then).
#[derive(Debug, Clone)]
struct ItBlock {
    insns: Vec<(u32, bool)>,
    end: u32,
}

impl ItBlock {
    /// The next instruction of the block after `addr` executed when `addr` was executed
    /// (`same`) or skipped, or the end of the block.
    fn next(&self, addr: u32, same: bool) -> u32 {
        let Some(k) = self.insns.iter().position(|(a, _)| *a == addr) else { return self.end };
        let sense = self.insns[k].1;
        self.insns[k + 1..].iter().find(|(_, s)| (*s == sense) == same).map_or(self.end, |(a, _)| *a)
    }
}

/// IT blocks of a function whose conditions stay fixed inside the block (no instruction in the
/// block writes the flags): every instruction of such a block maps to it.
fn it_blocks(insns: &BTreeMap<u32, Insn>) -> HashMap<u32, std::rc::Rc<ItBlock>> {
    let mut out = HashMap::new();
    for (&a, i) in insns {
        if i.class != mcubench_thumb::Class::It {
            continue;
        }
        let mask = i.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
        let Some(rest) = mask.strip_prefix("it") else { continue };
        let senses: Vec<bool> = std::iter::once(true).chain(rest.chars().map(|c| c == 't')).collect();
        let mut block = Vec::new();
        let mut at = a + u32::from(i.len);
        let mut flags_safe = true;
        for &sense in &senses {
            let Some(x) = insns.get(&at) else {
                flags_safe = false;
                break;
            };
            if writes_flags(x) {
                flags_safe = false;
            }
            block.push((at, sense));
            at += u32::from(x.len);
        }
        if flags_safe {
            let b = std::rc::Rc::new(ItBlock { insns: block.clone(), end: at });
            for (x, _) in block {
                out.insert(x, b.clone());
            }
        }
    }
    out
}

/// Whether an instruction inside an IT block may change the condition flags.
fn writes_flags(i: &Insn) -> bool {
    let m = i.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    if ["cmp", "cmn", "tst", "teq", "vmrs", "msr"].iter().any(|p| m.starts_with(p)) {
        return true;
    }
    // Strip the condition suffix: a flag-setting data-processing form ends in `s` before it.
    let base = if m.len() > 2 { &m[..m.len() - 2] } else { m };
    base.ends_with('s')
        && !base.starts_with("pop")
        && !base.starts_with("ldm")
        && !base.starts_with("stm")
        && !base.starts_with("vpop")
        && !base.starts_with("vldm")
        && !base.starts_with("vstm")
}

/// Value of a register after an instruction that sets it to a constant (`movs rd, #imm`,
/// `mov.w`, `movw`, `movt` on a known constant, `ldr rd, [pc, #imm]`, `mov rd, rm` of a known
/// constant).
fn const_def(image: &ElfImage, insn: &Insn, regs: &[Option<Val>; 16]) -> Option<(Reg, i32)> {
    if insn.conditional {
        return None;
    }
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    if !matches!(m, "mov" | "movs" | "movw" | "movt" | "ldr") {
        return None;
    }
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let rd = parse_reg(ops.first()?)?;
    match (m, ops.as_slice()) {
        ("mov" | "movs", [_, r]) if parse_reg(r).is_some() => match regs[usize::from(parse_reg(r)?)]? {
            Val::Const(c) => Some((rd, c)),
            _ => None,
        },
        ("mov" | "movs" | "movw", [_, i]) => Some((rd, parse_imm(i)?)),
        ("movt", [_, i]) => match regs[usize::from(rd)]? {
            Val::Const(lo) => Some((rd, ((lo as u32 & 0xffff) | ((parse_imm(i)? as u32) << 16)) as i32)),
            _ => None,
        },
        ("ldr", _) => {
            let mem = insn.mem?;
            if mem.base != mcubench_thumb::PC || mem.index.is_some() || mem.bytes != 4 || mem.store {
                return None;
            }
            let lit = ((insn.addr.wrapping_add(4)) & !3).wrapping_add(mem.offset as u32);
            Some((rd, image.word_at(u64::from(lit))? as i32))
        }
        _ => None,
    }
}

/// `add sp, rN` / `add sp, sp, rN` / `sub sp, sp, rN` with a constant in rN: the SP change.
fn sp_plus_const(insn: &Insn, regs: &[Option<Val>; 16]) -> Option<i32> {
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    let sign: i32 = match m {
        "add" => 1,
        "sub" => -1,
        _ => return None,
    };
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let rn = match ops.as_slice() {
        ["sp", r] if sign == 1 => r,
        ["sp", "sp", r] => r,
        _ => return None,
    };
    match regs[usize::from(parse_reg(rn)?)]? {
        Val::Const(c) => sign.checked_mul(c),
        _ => None,
    }
}

fn parse_reg(s: &str) -> Option<Reg> {
    match s {
        "fp" => Some(11),
        "ip" => Some(12),
        "sb" => Some(9),
        "sl" => Some(10),
        _ => s.strip_prefix('r')?.parse::<u8>().ok().filter(|&r| r <= 12),
    }
}

fn parse_imm(s: &str) -> Option<i32> {
    let s = s.strip_prefix('#')?;
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok()? as i32,
        None => s.parse::<u32>().ok()? as i32,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Decode `f` (skipping `$d` ranges) into an address → instruction map; errors by address.
fn decode_function(
    image: &ElfImage,
    fmap: &FunctionMap,
    f: &Function,
    source: &dyn InsnSource,
) -> (BTreeMap<u32, Insn>, BTreeMap<u32, String>) {
    let mut insns = BTreeMap::new();
    let mut errors = BTreeMap::new();
    let mut addr = f.start;
    while addr < f.end {
        if let Some(d) = fmap.data_range(addr) {
            addr = d.end.max(addr + 2);
            continue;
        }
        let chunk_end = fmap.next_data(addr).map_or(f.end, |d| d.start.min(f.end));
        match image.bytes_at(u64::from(addr), u64::from(chunk_end - addr)) {
            Some(bytes) => {
                for r in source.decode_block(addr, bytes) {
                    match r {
                        Ok(i) => {
                            insns.insert(i.addr, i);
                        }
                        Err(e) => {
                            let at = match &e {
                                DecodeError::Truncated { addr }
                                | DecodeError::Undecodable { addr, .. }
                                | DecodeError::NotOnArch { addr, .. } => *addr,
                            };
                            errors.insert(at, e.to_string());
                        }
                    }
                }
            }
            None => {
                errors.insert(addr, format!("0x{addr:08x}: no loaded bytes"));
            }
        }
        // Progress even if a data range were empty (FunctionMap keeps none): input is untrusted.
        addr = chunk_end.max(addr.saturating_add(2));
    }
    (insns, errors)
}

/// Number of TBB/TBH entries from a preceding `cmp Rn, #imm` on the index register.
fn table_entries_from_cmp(insns: &BTreeMap<u32, Insn>, tb: &Insn, index: Reg) -> Option<u32> {
    let reg = format!("r{index}");
    for (_, i) in insns.range(..tb.addr).rev().take(4) {
        if i.mnemonic.starts_with("cmp") {
            let ops: Vec<&str> = i.operands.split(',').map(str::trim).collect();
            if ops.len() == 2 && ops[0] == reg {
                let imm = ops[1].trim_start_matches('#');
                let n = if let Some(h) = imm.strip_prefix("0x") {
                    u32::from_str_radix(h, 16).ok()
                } else {
                    imm.parse::<u32>().ok()
                };
                return n.map(|n| n + 1);
            }
            return None;
        }
        if i.writes.contains(index) || !matches!(i.flow, Flow::Next | Flow::Branch { .. }) {
            return None;
        }
    }
    None
}

/// Targets of a TBB/TBH whose table starts at `table`.
#[allow(clippy::too_many_arguments)]
fn table_targets(
    image: &ElfImage,
    fmap: &FunctionMap,
    insns: &BTreeMap<u32, Insn>,
    tb: &Insn,
    table: u32,
    halfword: bool,
    index: Reg,
    f: &Function,
) -> Result<Vec<u32>, String> {
    let base = tb.addr + 4;
    let width = if halfword { 2 } else { 1 };
    let counted = table_entries_from_cmp(insns, tb, index);
    let data_end = fmap.data_range(table).map_or(f.end, |d| d.end.min(f.end));
    let mut targets = Vec::new();
    let mut min_target = u32::MAX;
    let mut pos = table;
    let mut n = 0u32;
    loop {
        match counted {
            Some(c) if n >= c => break,
            None if pos >= min_target || pos + width > data_end => break,
            _ => {}
        }
        let bytes = image
            .bytes_at(u64::from(pos), u64::from(width))
            .ok_or_else(|| format!("table entry at 0x{pos:08x} is not in the image"))?;
        let entry = if halfword { u32::from(u16::from_le_bytes([bytes[0], bytes[1]])) } else { u32::from(bytes[0]) };
        let target = base + 2 * entry;
        if target < pos + width && counted.is_none() {
            // Points into the table itself: padding after the last entry.
            break;
        }
        if !f.contains(target) {
            return Err(format!("table entry at 0x{pos:08x} jumps to 0x{target:08x}, outside the function"));
        }
        min_target = min_target.min(target);
        targets.push(target);
        pos += width;
        n += 1;
    }
    if targets.is_empty() {
        return Err("table has no entries".into());
    }
    Ok(targets)
}

fn function_stack(image: &ElfImage, fmap: &FunctionMap, f: &Function, source: &dyn InsnSource) -> FunctionStack {
    let mut out = FunctionStack {
        name: f.name.clone(),
        demangled: f.demangled.clone(),
        start: f.start,
        end: f.end,
        frame: Frame::Known { bytes: 0 },
        calls: Vec::new(),
        address_consts: Vec::new(),
    };
    let mut address_consts = BTreeSet::new();
    if !f.thumb {
        out.frame = Frame::Unknown { at: f.start, detail: "ARM-state code (not executable on Cortex-M)".into() };
        return out;
    }
    let (insns, errors) = decode_function(image, fmap, f, source);
    let its = it_blocks(&insns);
    let mut states: HashMap<u32, State> = HashMap::new();
    let mut work: Vec<u32> = vec![f.start];
    states.insert(f.start, State { sp: Sp::Known(0), regs: [None; 16] });
    let mut max_depth: i32 = 0;
    let mut dynamic_at: Option<u32> = None;
    let mut failure: Option<Frame> = None;
    let mut calls: BTreeMap<(u32, u8), CallSite> = BTreeMap::new();

    let depth_of = |sp: Sp| match sp {
        Sp::Known(o) => u32::try_from(-o.min(0)).unwrap_or(0),
        Sp::Dynamic => 0,
    };

    'work: while let Some(addr) = work.pop() {
        let state = states[&addr].clone();
        let Some(insn) = insns.get(&addr) else {
            let detail = if let Some(e) = errors.get(&addr) {
                format!("cannot decode: {e}")
            } else if fmap.is_data(addr) {
                format!("execution reaches data (literal pool or table) at 0x{addr:08x}")
            } else {
                format!("branch into the middle of an instruction at 0x{addr:08x}")
            };
            failure.get_or_insert(Frame::Unknown { at: addr, detail });
            continue;
        };
        // Inside an IT block whose flags stay fixed, only the first instruction is a two-way
        // choice: the ones after it are reached only on the path where they execute.
        let cond = insn.conditional && its.get(&addr).is_none_or(|b| b.insns[0].0 == addr);
        // Apply the SP effect.
        let mut next = state.clone();
        let sp_effect = match (insn.sp, sp_plus_const(insn, &state.regs)) {
            (SpEffect::Dynamic, Some(d)) => SpEffect::Adjust(d),
            (e, _) => e,
        };
        match sp_effect {
            SpEffect::None => {}
            SpEffect::Adjust(d) => {
                if let Sp::Known(o) = next.sp {
                    // Overflowing i32 is only possible in garbage code: fail closed.
                    next.sp = o.checked_add(d).map_or_else(
                        || {
                            dynamic_at.get_or_insert(addr);
                            Sp::Dynamic
                        },
                        Sp::Known,
                    );
                }
            }
            SpEffect::FromReg { reg, offset } => {
                next.sp = match state.regs.get(usize::from(reg)).copied().flatten() {
                    Some(Val::Sp(v)) if v.checked_add(offset).is_some() => Sp::Known(v + offset),
                    _ => {
                        dynamic_at.get_or_insert(addr);
                        Sp::Dynamic
                    }
                };
            }
            SpEffect::Dynamic => {
                dynamic_at.get_or_insert(addr);
                next.sp = Sp::Dynamic;
            }
        }
        // Register tracking: writes kill, an SP copy, constant or known arithmetic defines.
        for r in 0..16u8 {
            if insn.writes.contains(r) {
                next.regs[usize::from(r)] = None;
            }
        }
        // Successor addresses when the instruction executes / is skipped: inside an IT block
        // whose flags stay fixed, the other instructions of the same sense follow it.
        let len_fall = addr + u32::from(insn.len);
        let (exec_fall, skip_fall) = match its.get(&addr) {
            Some(b) if insn.conditional => (b.next(addr, true), b.next(addr, false)),
            _ => (len_fall, len_fall),
        };
        let split = cond && matches!(insn.flow, Flow::Next) && (sp_effect != SpEffect::None || its.contains_key(&addr));
        if !cond || split {
            if let Some((rd, v)) = frame_pointer_arith(insn, &state.regs) {
                next.regs[usize::from(rd)] = Some(v);
            }
            if let Some((rd, c)) = const_def(image, insn, &state.regs) {
                next.regs[usize::from(rd)] = Some(Val::Const(c));
                if insn.mnemonic.starts_with("movw") || insn.mnemonic.starts_with("movt") {
                    let c = c as u32;
                    if c & 1 == 1 && fmap.at(c).is_some() {
                        address_consts.insert(c & !1);
                    }
                }
            }
            if let Some(m) = insn.mem
                && !m.store
                && m.bytes == 4
                && m.index.is_none()
                && !m.writeback
                && m.base != mcubench_thumb::SP
                && m.base != mcubench_thumb::PC
                && insn.class == (mcubench_thumb::Class::Load { width: 4 })
                && let Some(rd) = insn.operands.split(',').next().and_then(|r| parse_reg(r.trim()))
                && m.offset >= 0
            {
                next.regs[usize::from(rd)] = Some(Val::Slot(m.offset as u32));
            }
            if let Some((rd, imm)) = insn.sp_copy
                && let (Sp::Known(o), Some(slot)) = (state.sp, next.regs.get_mut(usize::from(rd)))
            {
                *slot = o.checked_add(imm).map(Val::Sp);
            }
        }
        if split {
            // Executed or not: both reach a successor; a join of different SPs is divergent.
            let skipped = state.clone();
            if let Err(fr) = propagate(&mut states, &mut work, skip_fall, skipped) {
                failure.get_or_insert(fr);
                continue 'work;
            }
        }
        if let Sp::Known(o) = next.sp {
            max_depth = max_depth.max(-o);
        }
        let fall = exec_fall;
        // (target, state) pairs to follow inside the function.
        let mut succ: Vec<(u32, State)> = Vec::new();
        // The register an indirect call or jump goes through, and whether it came from a slot.
        let via = match insn.flow {
            Flow::CallIndirect { reg } => Some(reg),
            Flow::JumpIndirect { literal: None } if insn.mnemonic.starts_with("bx") => parse_reg(insn.operands.trim()),
            _ => None,
        };
        let slot = via.and_then(|r| match state.regs[usize::from(r)] {
            Some(Val::Slot(o)) => Some(o),
            _ => None,
        });
        // A register that holds a function's Thumb address (movw/movt, a literal, a copy of
        // one): the linker's veneers (`movw ip; movt ip; bx ip`, the v6-M `ldr r0, [pc]; mov ip,
        // r0; ...; bx ip`) and `-mlong-calls` (`movw r3; movt r3; blx r3`) are direct.
        let known_target = via.and_then(|r| match state.regs[usize::from(r)] {
            Some(Val::Const(c)) if c & 1 == 1 && fmap.at(c as u32).is_some() => Some(c as u32 & !1),
            _ => None,
        });
        let mut add_call = |kind: CallKind, depth: u32, tag: u8| {
            let slot = if matches!(kind, CallKind::Indirect | CallKind::IndirectTail) { slot } else { None };
            calls.entry((addr, tag)).or_insert(CallSite { at: addr, depth, kind, slot });
        };
        let cond_state = state.clone();
        match insn.flow {
            Flow::Next => succ.push((fall, next.clone())),
            Flow::Branch { target } => {
                if f.contains(target) && !fmap.is_data(target) {
                    succ.push((target, next.clone()));
                } else {
                    add_call(CallKind::Tail { target }, depth_of(next.sp), 0);
                }
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::Call { target } if f.contains(target) && target != f.start && !fmap.is_data(target) => {
                // BL inside the function: the Thumb-1 far branch LLVM emits (`tBfar`) to a
                // block of the same function. Follow it as a jump (and, conservatively, the
                // fall-through as well).
                succ.push((target, next.clone()));
                succ.push((fall, next.clone()));
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::Call { .. } | Flow::CallIndirect { .. } => {
                let kind = match (insn.flow, known_target) {
                    (Flow::Call { target }, _) | (_, Some(target)) => CallKind::Call { target },
                    _ => CallKind::Indirect,
                };
                add_call(kind, depth_of(next.sp), 0);
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
                let mut after = next.clone();
                for r in [0u8, 1, 2, 3, 12, 14] {
                    after.regs[usize::from(r)] = None;
                }
                succ.push((fall, after));
            }
            Flow::Return => {
                if next.sp != Sp::Known(0) && next.sp != Sp::Dynamic {
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: format!("returns with SP {:?} relative to entry", next.sp),
                    });
                }
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::JumpIndirect { literal } => {
                let target = literal.and_then(|l| image.word_at(u64::from(l)));
                match (target, known_target) {
                    (Some(t), _) if t & 1 == 1 && fmap.at(t).is_some() => {
                        add_call(CallKind::Tail { target: t & !1 }, depth_of(next.sp), 0)
                    }
                    (None, Some(t)) => add_call(CallKind::Tail { target: t }, depth_of(next.sp), 0),
                    _ => add_call(CallKind::IndirectTail, depth_of(next.sp), 0),
                }
                if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
            Flow::TableBranch { table, halfword, index } => {
                let Some(table) = table else {
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: "TBB/TBH with a table not addressed from PC".into(),
                    });
                    continue 'work;
                };
                match table_targets(image, fmap, &insns, insn, table, halfword, index, f) {
                    Ok(ts) => {
                        for t in ts {
                            succ.push((t, next.clone()));
                        }
                    }
                    Err(e) => {
                        failure.get_or_insert(Frame::Unknown { at: addr, detail: e });
                        continue 'work;
                    }
                }
            }
            Flow::Trap => {
                // SVC returns to the next instruction (its handler runs on the exception stack
                // and is counted as a handler); UDF/BKPT stop the path.
                if insn.mnemonic.starts_with("svc") {
                    succ.push((fall, next.clone()));
                } else if cond {
                    succ.push((skip_fall, cond_state.clone()));
                }
            }
        }
        for (t, s) in succ {
            if f.contains(t) && !fmap.is_data(t) {
                if let Err(fr) = propagate(&mut states, &mut work, t, s) {
                    failure.get_or_insert(fr);
                }
            } else if t == fall || t == skip_fall {
                // Falls off the function: after a call, the callee did not return (noreturn);
                // into another function's start: a fall-through tail call; else unknown.
                // A NOP here is padding after such a call (`bl abort; nop; .word ...`).
                let after_call = matches!(insn.flow, Flow::Call { .. } | Flow::CallIndirect { .. })
                    || (insn.class == mcubench_thumb::Class::Hint && insn.mnemonic.starts_with("nop"))
                    // `mov r8, r8`: the Thumb-1 NOP that LLVM pads with after a noreturn call.
                    || insn.raw == 0x46c0;
                if after_call {
                    continue;
                }
                if fmap.at(t).is_some() {
                    add_call(CallKind::Tail { target: t }, depth_of(s.sp), 1);
                } else {
                    failure.get_or_insert(Frame::Unknown {
                        at: addr,
                        detail: format!("execution falls through past the end of the function to 0x{t:08x}"),
                    });
                }
            }
        }
    }
    out.calls = calls.into_values().collect();
    out.address_consts = address_consts.into_iter().collect();
    let max_depth = u32::try_from(max_depth.max(0)).unwrap_or(0);
    out.frame = if let Some(fr) = failure {
        fr
    } else if let Some(at) = dynamic_at {
        Frame::Dynamic { at, bytes: max_depth }
    } else {
        Frame::Known { bytes: max_depth }
    };
    out
}

/// `add`/`sub` of an immediate to a register with a known value (the -O0 epilogue
/// `adds r7, #16; mov sp, r7`): the destination and its new value.
fn frame_pointer_arith(insn: &Insn, regs: &[Option<Val>; 16]) -> Option<(Reg, Val)> {
    let m = insn.mnemonic.trim_end_matches(".w").trim_end_matches(".n");
    let sign: i32 = match m {
        "add" | "adds" | "addw" => 1,
        "sub" | "subs" | "subw" => -1,
        _ => return None,
    };
    if insn.conditional {
        return None;
    }
    let ops: Vec<&str> = insn.operands.split(',').map(str::trim).collect();
    let (rd, rn, k) = match ops.as_slice() {
        [d, i] => (parse_reg(d)?, parse_reg(d)?, parse_imm(i)?),
        [d, n, i] => (parse_reg(d)?, parse_reg(n)?, parse_imm(i)?),
        _ => return None,
    };
    Some((
        rd,
        match regs[usize::from(rn)]? {
            Val::Sp(base) => Val::Sp(base.checked_add(sign.checked_mul(k)?)?),
            Val::Const(c) => Val::Const(c.wrapping_add(sign.wrapping_mul(k))),
            Val::Slot(_) => return None,
        },
    ))
}

fn propagate(states: &mut HashMap<u32, State>, work: &mut Vec<u32>, at: u32, s: State) -> Result<(), Frame> {
    match states.get_mut(&at) {
        None => {
            states.insert(at, s);
            work.push(at);
            Ok(())
        }
        Some(old) => {
            let sp = match (old.sp, s.sp) {
                (Sp::Known(a), Sp::Known(b)) if a != b => {
                    return Err(Frame::Divergent {
                        at,
                        detail: format!("SP is entry{a:+} on one path and entry{b:+} on another"),
                    });
                }
                (Sp::Known(a), Sp::Known(_)) => Sp::Known(a),
                _ => Sp::Dynamic,
            };
            let mut regs = old.regs;
            for (r, v) in regs.iter_mut().zip(s.regs.iter()) {
                if *r != *v {
                    *r = None;
                }
            }
            if sp != old.sp || regs != old.regs {
                old.sp = sp;
                old.regs = regs;
                work.push(at);
            }
            Ok(())
        }
    }
}

// ---- address-taken functions ----------------------------------------------------------------

/// Possible targets of indirect calls.
#[derive(Debug, Default)]
struct Taken {
    /// Every function whose Thumb address appears as an aligned word in loaded data (other than
    /// the vector table: its handlers are roots), in a literal pool (`$d`) of the code, or as a
    /// `movw`/`movt` constant.
    all: BTreeSet<u32>,
    /// Those whose address appears somewhere other than a method slot of a Rust vtable.
    free: BTreeSet<u32>,
    /// Functions in each slot (byte offset) of the Rust vtables.
    slots: BTreeMap<u32, BTreeSet<u32>>,
    vtables: usize,
}

/// Rust vtables in read-only data: `[drop_in_place or 0, size, align, method, …]` with at
/// least one method; returns (address of the word, byte offset in its vtable) of each
/// function word.
fn vtables(words: &[(u32, u32)], is_fn: &dyn Fn(u32) -> bool) -> Vec<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    let mut k = 0;
    while k + 3 < words.len() {
        let w = |i: usize| words[k + i].1;
        let contiguous = (0..4).all(|i| words[k + i].0 == words[k].0 + 4 * i as u32);
        let drop_ok = w(0) == 0 || is_fn(w(0));
        let size_ok = w(1) < (1 << 24);
        let align_ok = w(2).is_power_of_two() && w(2) <= 4096 && (w(1) % w(2) == 0);
        if contiguous && drop_ok && size_ok && align_ok && is_fn(w(3)) {
            let mut v = Vec::new();
            if w(0) != 0 {
                v.push((words[k].0, 0));
            }
            let mut j = 3;
            while k + j < words.len() && words[k + j].0 == words[k].0 + 4 * j as u32 && is_fn(words[k + j].1) {
                v.push((words[k + j].0, 4 * j as u32));
                j += 1;
            }
            out.push(v);
            k += j;
        } else {
            k += 1;
        }
    }
    out
}

fn address_taken(image: &ElfImage, fmap: &FunctionMap, functions: &[FunctionStack]) -> Taken {
    let vt = image.vector_table();
    let is_fn = |w: u32| w & 1 == 1 && fmap.at(w).is_some();
    let mut taken = Taken::default();
    for s in image.sections() {
        if !s.alloc || s.nobits || s.size < 4 {
            continue;
        }
        if vt.as_ref().is_some_and(|v| v.section == s.name) {
            continue;
        }
        let data = image.section_data(s);
        let base = s.vma as u32;
        let mut off = (4 - (base % 4)) % 4;
        let mut words = Vec::new();
        while (off as usize) + 4 <= data.len() {
            let addr = base + off;
            if !s.exec || fmap.is_data(addr) {
                let o = off as usize;
                words.push((addr, u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])));
            }
            off += 4;
        }
        let mut in_vtable = BTreeSet::new();
        if !s.exec && !s.write {
            for v in vtables(&words, &is_fn) {
                taken.vtables += 1;
                for (at, slot) in v {
                    in_vtable.insert(at);
                    let w = image.word_at(u64::from(at)).unwrap_or(0);
                    taken.slots.entry(slot).or_default().insert(w & !1);
                }
            }
        }
        for (at, w) in words {
            if is_fn(w) {
                taken.all.insert(w & !1);
                if !in_vtable.contains(&at) {
                    taken.free.insert(w & !1);
                }
            }
        }
    }
    for f in functions {
        for &c in &f.address_consts {
            taken.all.insert(c);
            taken.free.insert(c);
        }
    }
    taken
}

// ---- call graph and bounds -----------------------------------------------------------------

struct CallGraph<'a> {
    image: &'a ElfImage,
    fmap: &'a FunctionMap,
    functions: &'a [FunctionStack],
    taken: &'a Taken,
    options: &'a StackOptions,
    /// Function indices (ascending) by raw name, demangled name and alias.
    names: &'a HashMap<&'a str, Vec<usize>>,
}

/// Every name of every function (symbol, demangled, aliases) → indices of the functions with
/// that name, ascending: name look-ups in the call graph are O(1) instead of a scan.
fn name_index(fmap: &FunctionMap) -> HashMap<&str, Vec<usize>> {
    let mut out: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in fmap.functions().iter().enumerate() {
        for n in std::iter::once(&f.name).chain(std::iter::once(&f.demangled)).chain(f.aliases.iter()) {
            let v = out.entry(n.as_str()).or_default();
            if v.last() != Some(&i) {
                v.push(i);
            }
        }
    }
    out
}

/// A call edge (callee index, caller depth at the call, assumption it rests on) or why the
/// call cannot be followed.
type Edge = Result<(usize, u32, Option<usize>), String>;

#[derive(Debug, Clone)]
struct Node {
    bound: Result<u32, String>,
    assumptions: Assumptions,
    path: Vec<usize>,
}

impl CallGraph<'_> {
    fn index_of(&self, addr: u32) -> Option<usize> {
        self.fmap.index_at(addr)
    }

    /// Indices of every function with this raw or demangled name or alias (demangled names
    /// drop the hash, so several functions may share one).
    fn all_by_name(&self, name: &str) -> Vec<usize> {
        self.names.get(name).cloned().unwrap_or_default()
    }

    /// The name to use for `f` in an annotation: the demangled name when no other function
    /// has it (it survives rebuilds: no hash), else the symbol.
    fn key_name(&self, f: &FunctionStack) -> String {
        if self.names.get(f.demangled.as_str()).is_some_and(|v| v.len() == 1) {
            f.demangled.clone()
        } else {
            f.name.clone()
        }
    }

    fn site_key(&self, f: &FunctionStack, at: u32) -> String {
        format!("{}+0x{:x}", f.name, at - f.start)
    }

    /// The call site as people read it (demangled when unambiguous), for messages.
    fn site_label(&self, f: &FunctionStack, at: u32) -> String {
        format!("{}+0x{:x}", self.key_name(f), at - f.start)
    }

    /// Callees of function `i`: (callee index, caller depth at the call, assumption).
    fn edges(&self, i: usize, unresolved: &mut Vec<Unresolved>, interner: &mut Interner) -> Vec<Edge> {
        let f = &self.functions[i];
        let mut out = Vec::new();
        let infeasible: Vec<usize> = [&f.name, &f.demangled]
            .iter()
            .filter_map(|n| self.options.annotations.infeasible.get(*n))
            .flatten()
            .flat_map(|n| self.all_by_name(n))
            .collect();
        let mut ordinal = 0usize;
        for c in &f.calls {
            if matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail) {
                ordinal += 1;
            }
            match &c.kind {
                CallKind::Call { target } | CallKind::Tail { target } => match self.index_of(*target) {
                    Some(j) if infeasible.contains(&j) => {}
                    Some(j) => out.push(Ok((j, c.depth, None))),
                    None => out.push(Err(format!(
                        "{} calls 0x{target:08x}, which is not the start of a known function",
                        f.name
                    ))),
                },
                CallKind::Indirect | CallKind::IndirectTail => {
                    let key = self.site_key(f, c.at);
                    let ord_key = format!("{}@{ordinal}", self.key_name(f));
                    let ord_key_raw = format!("{}@{ordinal}", f.name);
                    let ind = &self.options.annotations.indirect;
                    let ann = ind
                        .get(&ord_key)
                        .or(ind.get(&ord_key_raw))
                        .or(ind.get(&key))
                        .or(self.options.annotations.indirect.get(&f.name))
                        .or(self.options.annotations.indirect.get(&f.demangled));
                    if let Some(names) = ann {
                        for n in names {
                            let found = self.all_by_name(n);
                            if found.is_empty() {
                                out.push(Err(format!("annotation for {key} names unknown function {n}")));
                            }
                            for j in found {
                                let why = interner.id(format!("annotated targets of {}", self.site_label(f, c.at)));
                                out.push(Ok((j, c.depth, Some(why))));
                            }
                        }
                    } else if self.options.address_taken && !self.taken.all.is_empty() {
                        let (why, targets): (String, BTreeSet<u32>) = match c.slot {
                            Some(o) if self.taken.vtables > 0 => (
                                format!(
                                    "indirect call at {} loads its target from offset {o} of a pointer: it reaches \
                                     slot {o} of the Rust vtables or one of the {} functions whose address \
                                     appears outside vtables",
                                    self.site_label(f, c.at),
                                    self.taken.free.len()
                                ),
                                self.taken
                                    .free
                                    .iter()
                                    .chain(self.taken.slots.get(&o).into_iter().flatten())
                                    .copied()
                                    .collect(),
                            ),
                            _ => (
                                format!(
                                    "indirect call at {} reaches only the {} address-taken functions",
                                    self.site_label(f, c.at),
                                    self.taken.all.len()
                                ),
                                self.taken.all.clone(),
                            ),
                        };
                        let why = interner.id(why);
                        for t in targets {
                            if let Some(j) = self.index_of(t).filter(|j| !infeasible.contains(j)) {
                                out.push(Ok((j, c.depth, Some(why))));
                            }
                        }
                    } else {
                        unresolved.push(Unresolved {
                            function: f.name.clone(),
                            at: c.at,
                            what: "indirect call with no known target".into(),
                            annotation: format!("indirect: [{{ site: \"{ord_key}\", targets: [TARGET] }}]"),
                        });
                        out.push(Err(format!("indirect call at {key} has no known target")));
                    }
                }
            }
        }
        out
    }

    fn report(&self) -> StackReport {
        let n = self.functions.len();
        let mut unresolved = Vec::new();
        let mut interner = Interner::default();
        let edges: Vec<_> = (0..n).map(|i| self.edges(i, &mut unresolved, &mut interner)).collect();
        // Strongly connected components (Tarjan, iterative).
        let sccs = tarjan(n, |i| edges[i].iter().filter_map(|e| e.as_ref().ok().map(|e| e.0)).collect());
        let mut comp = vec![0usize; n];
        for (c, members) in sccs.iter().enumerate() {
            for &m in members {
                comp[m] = c;
            }
        }
        // Tarjan yields components in reverse topological order (callees first).
        let mut nodes: Vec<Option<Node>> = vec![None; n];
        for (c, members) in sccs.iter().enumerate() {
            let recursive =
                members.len() > 1 || edges[members[0]].iter().any(|e| matches!(e, Ok((j, _, _)) if *j == members[0]));
            // Frame of each member.
            let own = |i: usize| -> Result<(u32, Option<String>), String> {
                let f = &self.functions[i];
                if let Some(&b) = self.options.annotations.frames.get(&f.name) {
                    return Ok((b, Some(format!("annotated frame of {} ({b} B)", f.name))));
                }
                match &f.frame {
                    Frame::Known { bytes } => Ok((*bytes, None)),
                    Frame::Dynamic { at, bytes } => Err(format!(
                        "{} sets SP from a run-time value at 0x{at:08x} (alloca/VLA; static part {bytes} B)",
                        f.name
                    )),
                    Frame::Divergent { at, detail } => Err(format!("{} is divergent at 0x{at:08x}: {detail}", f.name)),
                    Frame::Unknown { at, detail } => Err(format!("{} is unknown at 0x{at:08x}: {detail}", f.name)),
                }
            };
            if !recursive {
                let i = members[0];
                let mut node = match own(i) {
                    Ok((b, a)) => {
                        let mut assumptions = Assumptions::default();
                        if let Some(a) = a {
                            assumptions.insert(interner.id(a));
                        }
                        Node { bound: Ok(b), assumptions, path: vec![i] }
                    }
                    Err(e) => Node { bound: Err(e), assumptions: Assumptions::default(), path: vec![i] },
                };
                for e in &edges[i] {
                    match e {
                        Err(msg) => {
                            if node.bound.is_ok() {
                                node.bound = Err(msg.clone());
                            }
                        }
                        Ok((j, depth, why)) => {
                            let callee = nodes[*j].as_ref().expect("callee processed first");
                            if let Some(w) = why {
                                node.assumptions.insert(*w);
                            }
                            node.assumptions.extend(&callee.assumptions);
                            match (&node.bound, &callee.bound) {
                                (Ok(b), Ok(cb)) => {
                                    let total = depth + cb;
                                    if total > *b {
                                        node.bound = Ok(total);
                                        node.path = std::iter::once(i).chain(callee.path.iter().copied()).collect();
                                    }
                                }
                                (Ok(_), Err(msg)) => node.bound = Err(msg.clone()),
                                _ => {}
                            }
                        }
                    }
                }
                nodes[i] = Some(node);
            } else {
                // A cycle. The annotated members (at most k activations each on the stack at
                // once) must cut every cycle of the component; then any stack is a prefix to
                // the first annotated activation, at most K = Σk activations of annotated
                // members each followed by the deepest way (`g`) to the next one, and the
                // deepest way out (`h`) from the last.
                let names: Vec<String> = members.iter().map(|&m| self.functions[m].demangled.clone()).collect();
                let cut: BTreeMap<usize, u32> = members
                    .iter()
                    .filter_map(|&m| {
                        let f = &self.functions[m];
                        let d = self
                            .options
                            .annotations
                            .recursion
                            .get(&f.name)
                            .or_else(|| self.options.annotations.recursion.get(&f.demangled))?;
                        Some((m, *d))
                    })
                    .collect();
                let mut assumptions = Assumptions::default();
                let mut err: Option<String> = None;
                let in_comp = |j: usize| comp[j] == c;
                // Order the uncut members callees first (they must form a DAG).
                let uncut: Vec<usize> = members.iter().copied().filter(|m| !cut.contains_key(m)).collect();
                let sub = tarjan_subset(&uncut, |i| {
                    edges[i]
                        .iter()
                        .filter_map(|e| e.as_ref().ok().map(|e| e.0))
                        .filter(|j| in_comp(*j) && !cut.contains_key(j))
                        .collect()
                });
                let mut order: Vec<usize> = Vec::new();
                let mut cyclic: Option<Vec<usize>> = None;
                for scc in sub {
                    let self_loop =
                        scc.len() == 1 && edges[scc[0]].iter().any(|e| matches!(e, Ok((j, _, _)) if *j == scc[0]));
                    if scc.len() > 1 || self_loop {
                        cyclic.get_or_insert(scc.clone());
                    }
                    order.extend(scc);
                }
                order.extend(cut.keys().copied());
                let mut g: HashMap<usize, BTreeMap<usize, u32>> = HashMap::new();
                let mut h: HashMap<usize, (u32, Vec<usize>)> = HashMap::new();
                if cut.is_empty() || cyclic.is_some() {
                    let first = &self.functions[members[0]];
                    let what = match &cyclic {
                        Some(rest) if !cut.is_empty() => format!(
                            "recursion among {} not cut by the annotated functions (a cycle remains among {})",
                            names.join(", "),
                            rest.iter().map(|&m| self.functions[m].demangled.clone()).collect::<Vec<_>>().join(", ")
                        ),
                        _ => format!("recursion among {}", names.join(", ")),
                    };
                    let candidate = match &cyclic {
                        Some(rest) if !cut.is_empty() => &self.functions[rest[0]],
                        _ => first,
                    };
                    unresolved.push(Unresolved {
                        function: candidate.name.clone(),
                        at: candidate.start,
                        what: what.clone(),
                        annotation: format!("recursion: {{ \"{}\": DEPTH }}", self.key_name(candidate)),
                    });
                    err = Some(format!("unbounded {what}"));
                } else {
                    for &m in &order {
                        let (own_b, own_a) = match own(m) {
                            Ok(x) => x,
                            Err(e) => {
                                err.get_or_insert(e);
                                (0, None)
                            }
                        };
                        if let Some(a) = own_a {
                            assumptions.insert(interner.id(a));
                        }
                        let mut gm: BTreeMap<usize, u32> = BTreeMap::new();
                        let mut hm = (own_b, Vec::new());
                        for e in &edges[m] {
                            match e {
                                Err(msg) => {
                                    err.get_or_insert(msg.clone());
                                }
                                Ok((j, d, why)) => {
                                    if let Some(w) = why {
                                        assumptions.insert(*w);
                                    }
                                    if in_comp(*j) && cut.contains_key(j) {
                                        let e = gm.entry(*j).or_insert(0);
                                        *e = (*e).max(*d);
                                    } else if in_comp(*j) {
                                        for (&b, &v) in &g[j] {
                                            let e = gm.entry(b).or_insert(0);
                                            *e = (*e).max(d + v);
                                        }
                                        let (hj, pj) = &h[j];
                                        if d + hj > hm.0 {
                                            hm = (d + hj, std::iter::once(*j).chain(pj.iter().copied()).collect());
                                        }
                                    } else {
                                        let callee = nodes[*j].as_ref().expect("callee processed first");
                                        assumptions.extend(&callee.assumptions);
                                        match &callee.bound {
                                            Ok(cb) => {
                                                if d + cb > hm.0 {
                                                    hm = (d + cb, callee.path.clone());
                                                }
                                            }
                                            Err(msg) => {
                                                err.get_or_insert(msg.clone());
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        g.insert(m, gm);
                        h.insert(m, hm);
                    }
                    for (&m, &d) in &cut {
                        assumptions.insert(interner.id(format!(
                            "{} has at most {d} activations on the stack at once (annotation; recursion among {})",
                            self.key_name(&self.functions[m]),
                            names.join(", ")
                        )));
                    }
                }
                // Deepest stack from the start of an activation of cut member `a` when `left`
                // activations of each cut member may still start (memoised search).
                let cut_ids: Vec<usize> = cut.keys().copied().collect();
                let mut memo: HashMap<(usize, Vec<u32>), u32> = HashMap::new();
                fn best(
                    a: usize,
                    left: &[u32],
                    cut_ids: &[usize],
                    g: &HashMap<usize, BTreeMap<usize, u32>>,
                    h: &HashMap<usize, (u32, Vec<usize>)>,
                    memo: &mut HashMap<(usize, Vec<u32>), u32>,
                ) -> u32 {
                    if let Some(&v) = memo.get(&(a, left.to_vec())) {
                        return v;
                    }
                    let mut v = h[&a].0;
                    for (&b, &d) in &g[&a] {
                        let k = cut_ids.iter().position(|&x| x == b).expect("cut member");
                        if left[k] > 0 {
                            let mut l = left.to_vec();
                            l[k] -= 1;
                            v = v.max(d.saturating_add(best(b, &l, cut_ids, g, h, memo)));
                        }
                    }
                    memo.insert((a, left.to_vec()), v);
                    v
                }
                for &m in members {
                    let (bound, path) = match &err {
                        Some(e) => (Err(e.clone()), vec![m]),
                        None => {
                            let (hm, hp) = h[&m].clone();
                            let mut left: Vec<u32> = cut_ids.iter().map(|c| cut[c]).collect();
                            let start = if let Some(k) = cut_ids.iter().position(|&x| x == m) {
                                left[k] = left[k].saturating_sub(1);
                                best(m, &left, &cut_ids, &g, &h, &mut memo)
                            } else {
                                let mut v = hm;
                                for (&b, &d) in &g[&m] {
                                    let k = cut_ids.iter().position(|&x| x == b).expect("cut member");
                                    if left[k] > 0 {
                                        let mut l = left.clone();
                                        l[k] -= 1;
                                        v = v.max(d.saturating_add(best(b, &l, &cut_ids, &g, &h, &mut memo)));
                                    }
                                }
                                v
                            };
                            (Ok(start.max(hm)), std::iter::once(m).chain(hp).collect())
                        }
                    };
                    nodes[m] = Some(Node { bound, assumptions: assumptions.clone(), path });
                }
            }
        }

        // Roots: reset and every vector-table handler.
        let mut roots = Vec::new();
        let mut handler_bounds: Vec<(usize, Node)> = Vec::new();
        let mut reset_node: Option<Node> = None;
        if let Some(vt) = self.image.vector_table() {
            let section = self.image.section_by_name(&vt.section);
            let count = section.map_or(0, |s| s.size / 4) as u32;
            let mut seen = BTreeSet::new();
            for k in 1..count {
                let Some(w) = self.image.word_at(vt.address + u64::from(k) * 4) else { break };
                if w == 0 || w & 1 == 0 {
                    continue;
                }
                let Some(i) = self.index_of(w) else { continue };
                if k != 1 && !seen.insert(i) {
                    continue;
                }
                let node = nodes[i].clone().expect("all nodes computed");
                let role = if k == 1 { "reset".to_string() } else { format!("exception {k}") };
                roots.push(RootBound {
                    name: self.functions[i].name.clone(),
                    role,
                    bound: to_bound(&node.bound, &node.assumptions, &interner.text),
                    path: node.path.iter().map(|&p| self.functions[p].name.clone()).collect(),
                });
                if k == 1 {
                    reset_node = Some(node);
                } else {
                    handler_bounds.push((i, node));
                }
            }
        }
        let security = self.options.security_extension.unwrap_or(self.options.arch == Arch::V8MMain);
        let frame = exception_frame(self.options.arch, self.options.fpu, security);
        let frame_note = if security && self.options.arch == Arch::V8MMain {
            format!(
                "{frame} B stacked per level (ARMv8-M Security Extension: Secure to Non-secure entry with \
                 additional state context{})",
                if self.options.fpu { " and FPCCR.TS = 1" } else { "" }
            )
        } else {
            format!("{frame} B stacked per level")
        };
        let msp = match reset_node {
            None => Bound::Unbounded { reason: "no vector table with a reset handler".into() },
            Some(reset) => {
                let mut total = reset.clone();
                // Groups of handler indices; handlers no group names nest with all others.
                let mut groups: Vec<Vec<usize>> = Vec::new();
                let mut grouped = BTreeSet::new();
                for g in self.options.priority_groups.iter().flatten() {
                    let members: Vec<usize> = g
                        .iter()
                        .flat_map(|n| self.all_by_name(n))
                        .filter(|i| handler_bounds.iter().any(|(h, _)| h == i) && grouped.insert(*i))
                        .collect();
                    if !members.is_empty() {
                        groups.push(members);
                    }
                }
                for (h, _) in &handler_bounds {
                    if !grouped.contains(h) {
                        groups.push(vec![*h]);
                    }
                }
                for g in groups {
                    let mut worst: Option<Node> = None;
                    for i in &g {
                        let Some((_, h)) = handler_bounds.iter().find(|(n, _)| n == i) else { continue };
                        let better = match (&worst, &h.bound) {
                            (None, _) => true,
                            (Some(w), Ok(b)) => matches!(w.bound, Ok(wb) if *b > wb),
                            (Some(_), Err(_)) => true,
                        };
                        if better {
                            worst = Some(h.clone());
                        }
                    }
                    if let Some(w) = worst {
                        total.assumptions.extend(&w.assumptions);
                        total.bound = match (&total.bound, &w.bound) {
                            (Ok(a), Ok(b)) => Ok(a + b + frame),
                            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
                        };
                    }
                }
                if !handler_bounds.is_empty() {
                    total.assumptions.insert(interner.id(match &self.options.priority_groups {
                        None => format!(
                            "every exception handler may preempt the others once, {frame_note} (no priorities given)"
                        ),
                        Some(_) => format!("handlers nest only across the given priority groups, {frame_note}"),
                    }));
                }
                to_bound(&total.bound, &total.assumptions, &interner.text)
            }
        };
        StackReport {
            functions: self.functions.to_vec(),
            roots,
            msp,
            address_taken: self.taken.all.iter().filter_map(|&a| self.fmap.at(a)).map(|f| f.name.clone()).collect(),
            unresolved,
            bounds: nodes
                .into_iter()
                .map(|n| {
                    let n = n.expect("all nodes computed");
                    (n.bound, n.assumptions, n.path)
                })
                .collect(),
            assumption_text: interner.text,
        }
    }
}

/// [`tarjan`] over the subset `nodes` of the indices (successors outside it are ignored):
/// components of original indices, callees first.
fn tarjan_subset(nodes: &[usize], succ: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
    let local: HashMap<usize, usize> = nodes.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    tarjan(nodes.len(), |k| succ(nodes[k]).into_iter().filter_map(|j| local.get(&j).copied()).collect())
        .into_iter()
        .map(|c| {
            let mut c: Vec<usize> = c.into_iter().map(|k| nodes[k]).collect();
            c.sort_unstable();
            c
        })
        .collect()
}

/// Tarjan's strongly connected components, iterative; components come out callees first.
fn tarjan(n: usize, succ: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    let succs: Vec<Vec<usize>> = (0..n).map(&succ).collect();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            if let Some(&w) = succs[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comp.sort_unstable();
                    out.push(comp);
                }
            }
        }
    }
    out
}
