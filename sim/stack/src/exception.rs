//! The exception model: what the core stacks on exception entry, the vector table's handlers
//! as roots of the call graph, and the worst main stack (MSP): the reset path plus, for each
//! preemption level, the deepest handler of that level and the frame stacked for it.

use std::collections::BTreeSet;

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

impl CallGraph<'_> {
    /// Roots: the reset handler and every other vector-table handler (each function once).
    pub(crate) fn roots(&self, nodes: &[Node], interner: &Interner) -> Roots {
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
