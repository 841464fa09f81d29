//! mcubench-stack: worst-case static stack bounds from the machine code of a linked Cortex-M
//! ELF, for rustc/LLVM and arm-none-eabi-gcc output alike, with no compiler flags.
//!
//! [`analyze`] finds every function ([`mcubench_elf::functions`]), decodes it
//! ([`mcubench_thumb`]), tracks SP along every path of its control-flow graph to get its frame
//! and the SP offset at each call site, builds the call graph (direct calls, tail calls,
//! indirect calls resolved from the address-taken set) and bounds each root (reset handler,
//! exception handlers) and the whole main stack (MSP) with an exception model.
//!
//! # What a result means
//! - [`Bound::Exact`]: every path and callee was resolved without assumptions.
//! - [`Bound::Bounded`]: a sound upper bound *under the listed assumptions* (indirect calls may
//!   reach only address-taken functions; annotated recursion depths; annotated frames).
//! - [`Bound::Unbounded`]: no bound: dynamic SP (alloca/VLA), unbounded recursion, an indirect
//!   call or jump with no candidate target, an instruction that could not be decoded, SP that
//!   differs between the paths that join at an instruction, a sum past 4 GiB (frames of a
//!   corrupt or hostile ELF: sums are checked, never wrapped). The reason names the location and,
//!   where an annotation would help, [`StackReport::unresolved`] carries a ready-to-paste one.
//!   Nothing unknown is ever counted as 0 bytes.
//!
//! # Known limitations
//! - Indirect calls: a call whose target is loaded from a constant address in read-only data
//!   (`ldr rX, =table; ldr rY, [rX, #k]` or `[rX, rI, lsl #2]`) reaches the function in that
//!   word (or any function of that table, assuming the index stays inside it); one whose target
//!   is loaded from a `via:` annotated variable reaches its annotated targets. Otherwise
//!   targets are the address-taken functions (words in data and literal
//!   pools, `movw`/`movt` and `movw` constants); writable tables and hooks fall back to them.
//!   A Rust trait-object call (receiver and vtable one fat pointer: `vtable`) reaches slot k
//!   of every vtable plus the functions whose address is a word in data outside vtables,
//!   assuming no such (receiver, table) pair points at a table built at run time; the trait
//!   at the call is not known, so a `dyn Write` call may reach a `Debug::fmt`. A call whose target was loaded from
//!   `[Rn, #k]` (Rn not SP/PC) reaches slot k of the Rust vtables found in read-only data plus
//!   every function whose address appears outside vtables (assumption: a function found only
//!   in vtable slots is called only through its slot). Pointers computed at run time (not
//!   stored anywhere as an address) are missed: annotate such sites.
//! - A `blx`/`bx` through a register that holds a known function address (linker veneers
//!   `movw ip; movt ip; bx ip`, `-mlong-calls`) is a direct call or tail call. A literal-pool
//!   word only ever branched through (`branch_literal`: CMSIS's `ldr r0, =_start; bx r0`)
//!   is no address-taken function; a `movw`/`movt` address, or a literal used any other way,
//!   still is (sound, but it widens what other indirect calls may reach).
//! - Frames are the largest SP excursion of a function's own code: stores below SP (none in
//!   AAPCS code) are not counted.
//! - SP stored in the frame and loaded back (GCC's stack save/restore around a block-scoped
//!   VLA) is the saved SP unless a store that may hit the slot comes between; stores through
//!   other pointers and callees are taken not to write it.
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
//! - Functions that do not return are known from their code: a semihosting SYS_EXIT ends a
//!   path, and falling off a function's end right after a call or a semihosting call is taken
//!   as the compiler's knowledge that it does not return; and by name ([`noreturn`]: `abort`,
//!   `exit`, `__stack_chk_fail`, `__assert_func`, Rust panics): a call to one ends the path.
//! - Unresolved: every recursion cycle the annotations leave (each with the entry that cuts
//!   it: the re-entered function, or the indirect call resolved to every address-taken
//!   function that closes it), every indirect call with no target and every frame without a
//!   bound, of the code the roots reach, in one run ([`StackReport::annotation_template`]).
//! - A branch into the body of another function is a tail call into its rest (its bound less
//!   its depth at the target); the target must be reached by that function's own paths.
//! - A `bl` to a label that starts no function calls a local subroutine, walked on its own
//!   (nested at most 8 deep); one that does not return balanced (LLVM's Thumb-1 far branch)
//!   is followed as a jump. A function symbol without a size runs to the next function.
//! - A loop that moves SP is summarised only when its body is straight-line and its counter's
//!   start is a constant the code shows; otherwise the frame is divergent and
//!   [`FunctionStack::frame_candidates`] offers frames for 1–4 iterations (a `frames:` entry
//!   in [`StackReport::unresolved`]).
//! - SP set from an unknown value and then an indirect jump is a hand-off out of the program
//!   ([`FunctionStack::handoffs`]), recognised by that shape only.
//! - The vector table ends at its symbol's size, else its section's, capped at the core's
//!   most vectors ([`exception::max_vectors`]); without a symbol size, at the first word past
//!   the system vectors that is neither 0 nor a Thumb address in code.
//! - A function's first SP change, before any store, call or branch, being `mov sp, rX` (crt0
//!   setting SP to `__stack`) starts the stack afresh: taken to be the top of the same stack.
//!   Called again from code it reaches, when the reset handler enters it directly, it restarts
//!   the stack: no recursion (`crt`).
//! - Packs: newlib 3.3 only (another version is reported, not applied); their indirect-call
//!   entries assume streams made by newlib itself and no `signal()` handlers (off when those
//!   are linked).
//! - Annotations are keyed by function name (symbol or demangled name without hash) and, for a
//!   call site, its ordinal among the function's indirect calls (`f@N`) or offset (`f+0x..`);
//!   not by DWARF file:line. Recursion: `f: N` means at most N activations of f on the stack
//!   at once; the annotated functions must cut every cycle of the recursive component.
//!
//! # Modules
//! One module per concern, like gimli-rs/object, in the order the analysis runs:
//! - [`frame`]: each function's frame and call sites, from SP tracked over its CFG;
//! - `branch_literal`: literal-pool words only branched through (not address-taken);
//! - `callgraph`: call edges, indirect calls resolved (annotations by site or hook, constant
//!   tables and slots, Rust vtable slots, address-taken set), strongly connected components;
//! - `vtable`: Rust vtables and the trait-object calls through them;
//! - [`noreturn`]: functions known by name never to return, with the reason;
//! - `bound`: worst-case bounds callees first, recursion bounded by annotated depths, every
//!   remaining cycle with the entry that cuts it;
//! - [`exception`]: exception frames per core, vector-table roots, the MSP sum over preemption
//!   levels;
//! - [`report`]: the result ([`StackReport`]) and what `mcubench stack` prints of it;
//! - [`annotations`]: what the binary cannot tell, as the YAML file people write and as the
//!   analyzer reads it;
//! - [`packs`]: annotations mcubench ships for the C runtime libraries it recognises in the ELF
//!   (newlib/newlib-nano 3.3 and 4.3–4.5 + libgcc), applied unless [`StackOptions::packs`] is off.

use std::collections::{BTreeMap, BTreeSet};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use mcubench_thumb::{DecodeError, Insn};

pub mod annotations;
mod bound;
mod branch_literal;
mod callgraph;
mod crt;
pub mod exception;
pub mod frame;
pub mod noreturn;
pub mod packs;
pub mod report;
mod switch;
mod vtable;

pub use annotations::Annotations;
pub use exception::{
    ADDITIONAL_STATE_CONTEXT, Arch, BASIC_EXCEPTION_FRAME, EXCEPTION_ALIGN_PAD, EXTENDED_EXCEPTION_FRAME,
    SECURE_FP_EXTRA, exception_frame,
};
pub use frame::{CallKind, CallSite, Frame, FunctionStack, Loaded};
pub use noreturn::is_panic_or_abort;
pub use report::{
    Bound, BoundView, Contributor, ExcludingPanic, PathStep, RootBound, StackReport, StackView, Unresolved,
};

use callgraph::{CallGraph, address_taken, data_objects, name_index};

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
    /// Apply the shipped annotation [packs] of the C runtime libraries the ELF holds (default);
    /// `annotations` win over a pack's entries.
    pub packs: bool,
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
            packs: true,
        }
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
    let mut functions: Vec<FunctionStack> =
        fmap.functions().iter().map(|f| frame::function_stack(image, &fmap, f, source, &[])).collect();
    // Branches into the body of another function (libgcc's `__aeabi_ui2d` into `__adddf3`):
    // that function's frame depth at the target, for the tail call into its rest.
    let mut inner: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    for f in &functions {
        for c in &f.calls {
            if let CallKind::Call { target } | CallKind::Tail { target } = c.kind
                && fmap.index_at(target).is_none()
                && let Some(g) = fmap.containing(target)
                && let Some(j) = fmap.index_at(g.start)
            {
                inner.entry(j).or_default().insert(target & !1);
            }
        }
    }
    for (j, want) in inner {
        let want: Vec<u32> = want.into_iter().collect();
        functions[j] = frame::function_stack(image, &fmap, &fmap.functions()[j], source, &want);
    }
    let vectors = exception::vector_extent(image, options.arch);
    let pool = branch_literal::pool_words(image, &fmap, source, &|a| vectors.as_ref().is_some_and(|v| v.contains(a)));
    let taken = address_taken(image, &fmap, &functions, vectors.as_ref(), &pool);
    let names = name_index(&fmap);
    let (annotations, pack_uses) = if options.packs {
        let (mut annotations, mut uses) = packs::apply(image, &fmap, &functions, &options.annotations);
        uses.extend(crt::apply(image, &fmap, &functions, &taken, &options.annotations, &mut annotations));
        (annotations, uses)
    } else {
        (options.annotations.clone(), Vec::new())
    };
    let options = StackOptions { annotations, ..options.clone() };
    let objects = data_objects(image);
    let mut report = CallGraph {
        image,
        fmap: &fmap,
        functions: &functions,
        taken: &taken,
        options: &options,
        names: &names,
        objects: &objects,
    }
    .report();
    report.packs = pack_uses;
    // A loop's candidates replace the bound's plain "give its frame" entry for that function.
    for suggestion in frame_suggestions(&report.functions, &options.annotations) {
        match report
            .unresolved
            .iter_mut()
            .find(|u| u.function == suggestion.function && u.annotation == suggestion.annotation)
        {
            Some(plain) => *plain = suggestion,
            None => report.unresolved.push(suggestion),
        }
    }
    report
}

/// A ready-to-paste `frames:` entry for every function whose frame is divergent only because
/// an SP loop's trip count is not a constant the code shows, with the frame for each trip
/// count tried.
fn frame_suggestions(functions: &[FunctionStack], annotations: &Annotations) -> Vec<Unresolved> {
    let mut out = Vec::new();
    for f in functions {
        let Frame::Divergent { at, detail } = &f.frame else { continue };
        if f.frame_candidates.is_empty() || annotations.frames.contains_key(&f.name) {
            continue;
        }
        let candidates: Vec<String> = f
            .frame_candidates
            .iter()
            .map(|(n, b)| format!("{b} B if it runs {n} time{}", if *n == 1 { "" } else { "s" }))
            .collect();
        out.push(Unresolved {
            function: f.name.clone(),
            at: *at,
            what: format!(
                "{detail}: annotate the frame for the most iterations it can run ({})",
                candidates.join(", ")
            ),
            annotation: format!("frames: {{ \"{}\": BYTES }}", f.name),
            cycle: Vec::new(),
        });
    }
    out
}
