//! Per-function profile: a shadow call stack driven by the TBs that execute, and a call tree whose
//! nodes accumulate self cycles and instructions. Pure code, tested on the host without QEMU.
//!
//! # Attribution rules
//!
//! Every executed TB's cost goes to the call-tree node of the current shadow stack; the TB belongs
//! to the function containing its first instruction (functions: `[start, start+size)` ranges the
//! host passes from the ELF symbol table; outside every range: "unknown", index [`UNKNOWN`]). A
//! taken-branch refill goes to the node of the TB whose branch was taken. The stack follows how
//! the previous TB ended ([`End`]):
//!
//! * **Call** (BL, BLX): push a frame for the function of the new TB, remembering the return
//!   address.
//! * **Return** (BX LR, POP {pc}, ...): pop to the innermost frame whose return address is the new
//!   TB's start. Exception returns land at the interrupted address, which the exception frame
//!   remembers (see below). No match: resynchronise.
//! * **Branch / fall-through / indirect jump**: when the new TB is in the current function or in
//!   one of its successors, nothing changes. When it is at the *start* of another function and
//!   was a successor of the previous TB (a direct branch's target, the fall-through, or any
//!   indirect jump), it is a **tail call**: the top frame is replaced. When it is not a successor
//!   of the previous TB at all, an **exception** was taken (QEMU enters handlers between TBs):
//!   a frame is pushed that returns to the previous TB's successor (or either of a conditional
//!   branch's two). Anything else resynchronises: pop to the innermost frame of the new TB's
//!   function if there is one, else replace the top frame.
//!
//! Known inexactness: an exception taken right after an indirect jump is read as a tail call of
//! the handler; a handler that never returns to the interrupted code (e.g. the firmware's fault
//! handler, which exits) leaves its frame on the stack, which is harmless.

use std::collections::HashMap;

use mcubench_wire::{FunctionsFile, StackCost};

use crate::cost::End;

/// Function index of addresses outside every known function.
pub const UNKNOWN: u32 = u32::MAX;

/// Function ranges, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct Functions {
    /// (start, end, index in the host's list)
    ranges: Vec<(u32, u32, u32)>,
    /// Function region of each function (by index in the host's list), if any.
    regions: Vec<Option<u32>>,
}

impl Functions {
    /// The functions of the host's functions file: a function's index is its line (from 0).
    pub fn new(file: &FunctionsFile) -> Functions {
        let mut ranges: Vec<(u32, u32, u32)> =
            (0..).zip(&file.functions).map(|(i, f)| (f.start, f.start.saturating_add(f.size.max(1)), i)).collect();
        ranges.sort();
        Functions { ranges, regions: file.functions.iter().map(|f| f.region).collect() }
    }

    /// Parses the host's functions file.
    pub fn parse(text: &str) -> Result<Functions, String> {
        FunctionsFile::parse(text).map(|f| Functions::new(&f)).map_err(|e| e.to_string())
    }

    /// The function region a call of function `func` (an index from [`Functions::lookup`]) opens.
    pub fn region(&self, func: u32) -> Option<u32> {
        self.regions.get(func as usize).copied().flatten()
    }

    /// Whether any function opens a function region.
    pub fn has_regions(&self) -> bool {
        self.regions.iter().any(Option::is_some)
    }

    /// The function containing `addr` and whether `addr` is its first instruction.
    pub fn lookup(&self, addr: u32) -> (u32, bool) {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        // The innermost (latest-starting) range that contains addr.
        for r in self.ranges[..i].iter().rev().take(4) {
            if addr < r.1 {
                return (r.2, addr == r.0);
            }
        }
        (UNKNOWN, false)
    }
}

/// What the profiler needs to know about one TB (fixed at translation).
#[derive(Debug, Clone, Copy)]
pub struct TbShape {
    pub start: u32,
    pub fall: u32,
    pub end: End,
    pub func: u32,
    pub func_entry: bool,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    node: u32,
    /// Where this frame's function returns to (None: the bottom frame).
    ret: Option<u32>,
    /// A second possible return address (exception after a conditional branch).
    alt: Option<u32>,
}

#[derive(Debug, Clone, Default)]
struct Node {
    parent: u32,
    func: u32,
    cycles: u64,
    insns: u64,
}

/// The shadow stack and the call tree.
#[derive(Debug, Default)]
pub struct Profile {
    nodes: Vec<Node>,
    children: HashMap<(u32, u32), u32>,
    stack: Vec<Frame>,
    prev: Option<TbShape>,
    /// Whether the last [`Profile::enter`] began a call: pushed a frame (call, exception) or
    /// replaced the top frame by a tail call into another function.
    began: bool,
}

const NO_PARENT: u32 = u32::MAX;

impl Profile {
    fn node(&mut self, parent: u32, func: u32) -> u32 {
        if let Some(&n) = self.children.get(&(parent, func)) {
            return n;
        }
        let n = self.nodes.len() as u32;
        self.nodes.push(Node { parent, func, cycles: 0, insns: 0 });
        self.children.insert((parent, func), n);
        n
    }

    fn top_func(&self) -> u32 {
        self.stack.last().map_or(UNKNOWN, |f| self.nodes[f.node as usize].func)
    }

    fn parent_of_top(&self) -> u32 {
        self.stack.len().checked_sub(2).map_or(NO_PARENT, |i| self.stack[i].node)
    }

    fn push(&mut self, func: u32, ret: Option<u32>, alt: Option<u32>) {
        let parent = self.stack.last().map_or(NO_PARENT, |f| f.node);
        let node = self.node(parent, func);
        self.stack.push(Frame { node, ret, alt });
    }

    fn replace_top(&mut self, func: u32) {
        let parent = self.parent_of_top();
        let node = self.node(parent, func);
        match self.stack.last_mut() {
            Some(top) => top.node = node,
            None => self.stack.push(Frame { node, ret: None, alt: None }),
        }
    }

    fn resync(&mut self, tb: &TbShape) {
        if let Some(i) = self.stack.iter().rposition(|f| self.nodes[f.node as usize].func == tb.func) {
            self.stack.truncate(i + 1);
        } else {
            self.replace_top(tb.func);
        }
    }

    /// Frames on the shadow stack (the top frame's index is `depth() - 1`).
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Where the top frame returns to: the return address of its call (for a tail call, of the
    /// call the tail-calling function was called with; for an exception, the interrupted
    /// address). `None` for the bottom frame.
    pub fn top_return(&self) -> Option<u32> {
        self.stack.last().and_then(|f| f.ret)
    }

    /// Whether the last [`Profile::enter`] began a call of the new TB's function: a call or an
    /// exception pushed a frame, or a tail call replaced the top frame. A branch back to a
    /// function's own first instruction (a loop, or a self tail call) begins nothing.
    pub fn began(&self) -> bool {
        self.began
    }

    /// The TB `tb` starts executing: update the stack. Returns the node its cost goes to.
    pub fn enter(&mut self, tb: &TbShape) -> u32 {
        self.began = false;
        match self.prev {
            None => {
                self.push(tb.func, None, None);
                self.began = true;
            }
            Some(prev) => match prev.end {
                End::Call { ret } if tb.start != ret => {
                    self.push(tb.func, Some(ret), None);
                    self.began = true;
                }
                // A call whose next TB is its own return address: the callee was not seen (an
                // exception hit it?); treat as a fall-through.
                End::Return => {
                    match self.stack.iter().rposition(|f| f.ret == Some(tb.start) || f.alt == Some(tb.start)) {
                        Some(i) if i > 0 => self.stack.truncate(i),
                        _ => self.resync(tb),
                    }
                }
                end => {
                    let successor = match end {
                        End::Branch { target } => tb.start == target || tb.start == prev.fall,
                        End::Next | End::Call { .. } => tb.start == prev.fall,
                        End::Jump | End::Return => true,
                    };
                    if !successor {
                        // An exception entered between the two TBs.
                        let (ret, alt) = match end {
                            End::Branch { target } => (Some(prev.fall), Some(target)),
                            _ => (Some(prev.fall), None),
                        };
                        self.push(tb.func, ret, alt);
                        self.began = true;
                    } else if tb.func != self.top_func() {
                        if tb.func_entry {
                            self.replace_top(tb.func);
                            self.began = true;
                        } else {
                            self.resync(tb);
                        }
                    }
                }
            },
        }
        self.prev = Some(*tb);
        self.stack.last().expect("never empty after enter").node
    }

    /// The last TB stopped at a device access before its instruction at `next` (see
    /// `mcubench_timing::run::Pricer::abandon`): its node gives back the `cycles` and `insns`
    /// of the instructions that did not run, and the TB counts as cut there, so the TB that goes
    /// on at `next` continues it (no call, return or exception seen between them).
    pub fn stopped(&mut self, node: u32, cycles: u64, insns: u64, next: u32) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.cycles = n.cycles.saturating_sub(cycles);
            n.insns = n.insns.saturating_sub(insns);
        }
        if let Some(prev) = &mut self.prev {
            prev.end = End::Next;
            prev.fall = next;
        }
    }

    /// Adds cost to a node (the one [`Profile::enter`] returned).
    pub fn add(&mut self, node: u32, cycles: u64, insns: u64) {
        let n = &mut self.nodes[node as usize];
        n.cycles += cycles;
        n.insns += insns;
    }

    /// The results file's `stack` lines: one per call-tree node with a cost, outermost frame
    /// first, `None` for an unknown function.
    pub fn stacks(&self) -> Vec<StackCost> {
        let mut stacks = Vec::new();
        for n in &self.nodes {
            if n.cycles == 0 && n.insns == 0 {
                continue;
            }
            let mut frames = vec![n.func];
            let mut p = n.parent;
            while p != NO_PARENT {
                frames.push(self.nodes[p as usize].func);
                p = self.nodes[p as usize].parent;
            }
            let frames = frames.iter().rev().map(|&f| (f != UNKNOWN).then_some(f)).collect();
            stacks.push(StackCost { frames, cycles: n.cycles, insns: n.insns });
        }
        stacks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tb(start: u32, fall: u32, end: End, f: &Functions) -> TbShape {
        let (func, func_entry) = f.lookup(start);
        TbShape { start, fall, end, func, func_entry }
    }

    #[test]
    fn calls_returns_tail_calls_and_exceptions() {
        // 0: main 0x100..0x200, 1: f 0x200..0x300, 2: g 0x300..0x400, 3: handler 0x400..0x500
        let f = Functions::parse("0x101 256\n0x201 256\n0x301 256\n0x401 256\n").unwrap();
        assert_eq!(f.lookup(0x200), (1, true));
        assert_eq!(f.lookup(0x250), (1, false));
        assert_eq!(f.lookup(0x50), (UNKNOWN, false));
        let mut p = Profile::default();
        let seq = [
            tb(0x100, 0x108, End::Call { ret: 0x108 }, &f),      // main calls f
            tb(0x200, 0x210, End::Branch { target: 0x300 }, &f), // f tail-calls g
            tb(0x300, 0x310, End::Next, &f),                     // g ... interrupted
            tb(0x400, 0x410, End::Return, &f),                   // handler, returns to g
            tb(0x310, 0x320, End::Return, &f),                   // g returns to main
            tb(0x108, 0x110, End::Next, &f),
        ];
        let nodes: Vec<u32> = seq.iter().map(|t| p.enter(t)).collect();
        for (i, n) in nodes.iter().enumerate() {
            p.add(*n, 10 * (i as u64 + 1), 1);
        }
        let text = mcubench_wire::Results { stacks: p.stacks(), ..Default::default() }.write();
        assert_eq!(
            text,
            "mcubench-qemu-plugin/5\ninsns 0\n\
             stack cycles=70 insns=2 frames=0\nstack cycles=20 insns=1 frames=0;1\n\
             stack cycles=80 insns=2 frames=0;2\nstack cycles=40 insns=1 frames=0;2;3\nend\n"
        );
    }
}
