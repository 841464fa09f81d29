//! The exception model: what the core stacks on exception entry, the vector table's handlers
//! as roots of the call graph, and the worst main stack (MSP): the reset path plus, for each
//! preemption level, the deepest handler of that level and the frame stacked for it.

use std::collections::BTreeSet;

use mcubench_elf::ElfImage;
pub use mcubench_thumb::Arch;

use crate::bound::{Interner, Node, add_bytes, to_bound};
use crate::callgraph::CallGraph;
use crate::report::{Bound, RootBound};

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

/// Roots of the call graph with their bounds, the reset handler's node and each other
/// handler's node (by function index).
type Roots = (Vec<RootBound>, Option<Node>, Vec<(usize, Node)>);

/// Most vector-table entries a core of `arch` can use: 16 system vectors (the initial SP
/// among them) and its largest number of external interrupts. ARMv6-M: 32 (ARMv6-M ARM
/// B3.4, NVIC); ARMv7-M cores: 240 (Cortex-M3/M4/M7 TRMs, "1 to 240 interrupts"); ARMv8-M
/// Mainline: 480 (Armv8-M ARM B3.4 / Cortex-M33 TRM, "up to 480 interrupts").
pub fn max_vectors(arch: Arch) -> u32 {
    16 + match arch {
        Arch::V6M => 32,
        Arch::V7M | Arch::V7EM => 240,
        Arch::V8MMain => 480,
    }
}

/// The vector table as far as it really goes: where it is and its handler entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VectorExtent {
    /// Run-time address of the table (its section's start).
    pub(crate) address: u32,
    /// Words the table spans, the initial SP included.
    pub(crate) words: u32,
    /// (vector number, word) of every entry that is a Thumb address in executable code.
    pub(crate) handlers: Vec<(u32, u32)>,
}

impl VectorExtent {
    pub(crate) fn contains(&self, addr: u32) -> bool {
        addr >= self.address && u64::from(addr) < u64::from(self.address) + 4 * u64::from(self.words)
    }
}

/// The vector table's extent: the size of a data symbol at its start (`g_pfnVectors`,
/// `__isr_vector`), else its section's size, either capped at [`max_vectors`]; past the 16
/// system vectors, without a symbol size, it ends at the first word that is neither 0 (a
/// reserved or unused vector) nor a Thumb address in executable code, so that constants or
/// literal pools after a short table, or the code after a table placed at the start of
/// `.text`, are never read as handlers. Among the system vectors other words are skipped
/// (some parts keep a checksum in a reserved vector).
pub(crate) fn vector_extent(image: &ElfImage, arch: Arch) -> Option<VectorExtent> {
    let vt = image.vector_table()?;
    let section = image.section_by_name(&vt.section)?;
    let data = image.section_data(section);
    let address = u32::try_from(section.vma).ok()?;
    let symbol_words = image
        .symbols()
        .iter()
        .filter(|s| s.section_index == Some(section.index) && s.address == section.vma && s.size >= 8)
        .filter(|s| s.kind != mcubench_elf::SymbolKind::Function)
        .map(|s| s.size / 4)
        .max();
    let limit = u64::from(max_vectors(arch)).min(symbol_words.unwrap_or(section.size / 4)).min(data.len() as u64 / 4);
    let is_code = |w: u32| {
        w & 1 == 1
            && image.sections().iter().any(|s| s.alloc && s.exec && !s.nobits && s.contains_vma(u64::from(w & !1)))
    };
    let mut handlers = Vec::new();
    let mut words = limit as u32;
    for k in 1..limit as u32 {
        let o = 4 * k as usize;
        let w = u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
        if is_code(w) {
            handlers.push((k, w));
        } else if w != 0 && symbol_words.is_none() && k >= 16 {
            words = k;
            break;
        }
    }
    Some(VectorExtent { address, words, handlers })
}

impl CallGraph<'_> {
    /// Roots: the reset handler and every other vector-table handler (each function once).
    pub(crate) fn roots(&self, nodes: &[Node], interner: &Interner) -> Roots {
        let mut roots = Vec::new();
        let mut handler_bounds: Vec<(usize, Node)> = Vec::new();
        let mut reset_node: Option<Node> = None;
        if let Some(vt) = vector_extent(self.image, self.options.arch) {
            let mut seen = BTreeSet::new();
            for (k, w) in vt.handlers {
                let Some(i) = self.index_of(w) else { continue };
                if k != 1 && !seen.insert(i) {
                    continue;
                }
                let node = nodes[i].clone();
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
        (roots, reset_node, handler_bounds)
    }

    /// Worst main-stack use: `reset` plus, per preemption level, the deepest handler of the
    /// level and the frame the core stacks for it.
    pub(crate) fn msp(&self, reset: Option<Node>, handlers: &[(usize, Node)], interner: &mut Interner) -> Bound {
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
        match reset {
            None => Bound::Unbounded { reason: "no vector table with a reset handler".into() },
            Some(mut total) => {
                // Groups of handler indices; handlers no group names nest with all others.
                let mut groups: Vec<Vec<usize>> = Vec::new();
                let mut grouped = BTreeSet::new();
                for g in self.options.priority_groups.iter().flatten() {
                    let members: Vec<usize> = g
                        .iter()
                        .flat_map(|n| self.all_by_name(n))
                        .filter(|i| handlers.iter().any(|(h, _)| h == i) && grouped.insert(*i))
                        .collect();
                    if !members.is_empty() {
                        groups.push(members);
                    }
                }
                for (h, _) in handlers {
                    if !grouped.contains(h) {
                        groups.push(vec![*h]);
                    }
                }
                for g in groups {
                    let mut worst: Option<Node> = None;
                    for i in &g {
                        let Some((_, h)) = handlers.iter().find(|(n, _)| n == i) else { continue };
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
                            (Ok(a), Ok(b)) => {
                                let what = || "the main stack (reset path and nested handlers)".to_string();
                                add_bytes(*a, *b, what).and_then(|s| add_bytes(s, frame, what))
                            }
                            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
                        };
                    }
                }
                if !handlers.is_empty() {
                    total.assumptions.insert(interner.id(match &self.options.priority_groups {
                        None => format!(
                            "every exception handler may preempt the others once, {frame_note} (no priorities given)"
                        ),
                        Some(_) => format!("handlers nest only across the given priority groups, {frame_note}"),
                    }));
                }
                to_bound(&total.bound, &total.assumptions, &interner.text)
            }
        }
    }
}
