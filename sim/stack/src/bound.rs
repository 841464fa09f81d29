//! Worst-case bounds over the call graph, callees first: a function's bound is its own frame or,
//! if deeper, the SP depth at one of its call sites plus the callee's bound. A recursive
//! component is bounded only when annotated activation counts cut all its cycles. A bound is
//! `Result<u32, String>`: the error says why there is none, and nothing unknown counts as 0 B.

use std::collections::{BTreeMap, HashMap};

use crate::callgraph::{CallGraph, Edge, tarjan, tarjan_subset};
use crate::frame::Frame;
use crate::report::{Bound, ExcludingPanic, StackReport, Unresolved};

/// Functions that only ever end the program by a panic or abort: Rust's panic machinery
/// (`core::panicking::*`, the panic handler `rust_begin_unwind`, `__rust_start_panic`, the
/// out-of-line failure paths of slices, strings, `Option`, `Result`, `RefCell` and allocation,
/// named `*_fail`/`*_failed`/`panic_*`/`handle_*error`), mcubench's Rust support crate's failure
/// exit (`mcubench_support::fail_with`: a `panic` record, then exit) and the C library's
/// `abort`, `__assert_func`, `__assert_fail`, `__assert`, `__stack_chk_fail`, `_exit` and
/// `_Exit`. Each is no-return by its contract, so a path through one ends the program: cutting
/// the calls into them removes exactly the panic/abort paths (and what only they reach), never a
/// path that goes on. `exit` is not one (atexit handlers and stdio flushing run on every normal
/// exit).
pub fn is_panic_or_abort(name: &str, demangled: &str) -> bool {
    const C: [&str; 7] = ["abort", "__assert_func", "__assert_fail", "__assert", "__stack_chk_fail", "_exit", "_Exit"];
    // rustc ≥ 1.89 mangles the panic handler as `__rustc::rust_begin_unwind`.
    const RUST_NAMES: [&str; 5] = [
        "rust_begin_unwind",
        "__rust_start_panic",
        "__rustc::rust_begin_unwind",
        "__rustc::__rust_start_panic",
        "mcubench_support::fail_with",
    ];
    const RUST_PREFIXES: [&str; 3] = ["core::panicking::", "std::panicking::", "core::panic::"];
    const RUST_FAILURES: [&str; 8] = [
        "core::option::unwrap_failed",
        "core::option::expect_failed",
        "core::result::unwrap_failed",
        "core::cell::panic_already_borrowed",
        "core::cell::panic_already_mutably_borrowed",
        "alloc::alloc::handle_alloc_error",
        "alloc::raw_vec::handle_error",
        "alloc::raw_vec::capacity_overflow",
    ];
    // Demangled Rust names may end in `::h<hash>` (legacy mangling).
    let base = match demangled.rsplit_once("::h") {
        Some((b, h)) if h.len() == 16 && h.bytes().all(|c| c.is_ascii_hexdigit()) => b,
        _ => demangled,
    };
    // `core::slice::index::slice_index_fail`, `core::slice::copy_from_slice_impl::len_mismatch_fail`,
    // `core::str::slice_error_fail`, ...
    let slice_or_str_failure = (base.starts_with("core::slice::") || base.starts_with("core::str::"))
        && (base.ends_with("_fail") || base.contains("_fail::"));
    C.contains(&name)
        || RUST_NAMES.contains(&name)
        || RUST_NAMES.contains(&base)
        || RUST_PREFIXES.iter().any(|p| base.starts_with(p))
        || slice_or_str_failure
        || RUST_FAILURES.iter().any(|f| base == *f || base.starts_with(&format!("{f}::")))
}

/// A set of assumptions: indices into a table of their texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Assumptions {
    bits: Vec<u64>,
}

impl Assumptions {
    pub(crate) fn insert(&mut self, id: usize) {
        if self.bits.len() <= id / 64 {
            self.bits.resize(id / 64 + 1, 0);
        }
        self.bits[id / 64] |= 1 << (id % 64);
    }

    pub(crate) fn extend(&mut self, other: &Assumptions) {
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
pub(crate) struct Interner {
    ids: HashMap<String, usize>,
    pub(crate) text: Vec<String>,
}

impl Interner {
    pub(crate) fn id(&mut self, s: String) -> usize {
        if let Some(&i) = self.ids.get(&s) {
            return i;
        }
        self.text.push(s.clone());
        self.ids.insert(s, self.text.len() - 1);
        self.text.len() - 1
    }
}

pub(crate) fn to_bound(bound: &Result<u32, String>, assumptions: &Assumptions, table: &[String]) -> Bound {
    match bound {
        Ok(b) if assumptions.is_empty() => Bound::Exact { bytes: *b },
        Ok(b) => Bound::Bounded { bytes: *b, assumptions: assumptions.texts(table) },
        Err(e) => Bound::Unbounded { reason: e.clone() },
    }
}

/// `a + b` bytes of stack, or why there is no bound: a sum past 4 GiB is no real stack (only a
/// corrupt or hostile ELF or an absurd annotation gets there), and wrapped it would be a small
/// number, i.e. an unsound bound.
pub(crate) fn add_bytes(a: u32, b: u32, what: impl FnOnce() -> String) -> Result<u32, String> {
    a.checked_add(b).ok_or_else(|| format!("{} is past 4 GiB ({a} B + {b} B overflows 32 bits)", what()))
}

/// The bound of one function, the assumptions it rests on and its deepest path (function
/// indices, the function first).
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) bound: Result<u32, String>,
    pub(crate) assumptions: Assumptions,
    pub(crate) path: Vec<usize>,
}

impl CallGraph<'_> {
    /// Bounds of every function, the roots and the main stack.
    pub(crate) fn report(&self) -> StackReport {
        let n = self.functions.len();
        let mut unresolved = Vec::new();
        let mut interner = Interner::default();
        let edges: Vec<_> = (0..n).map(|i| self.edges(i, &mut unresolved, &mut interner)).collect();
        let nodes = self.bounds(&edges, &mut unresolved, &mut interner);
        let (roots, reset, handlers) = self.roots(&nodes, &interner);
        let reset_path = reset.as_ref().map(|r| r.path.clone());
        let msp = self.msp(reset, &handlers, &mut interner);
        let (excluding, excluding_path) = self.excluding_panic(&edges, &mut interner);
        let mut report = StackReport {
            functions: self.functions.to_vec(),
            roots,
            msp,
            address_taken: self.taken.all.iter().filter_map(|&a| self.fmap.at(a)).map(|f| f.name.clone()).collect(),
            unresolved,
            packs: Vec::new(),
            top: None,
            excluding_panic: None,
            bounds: nodes.into_iter().map(|n| (n.bound, n.assumptions, n.path)).collect(),
            assumption_text: interner.text,
        };
        let sound: Vec<Option<u32>> = report.bounds.iter().map(|b| b.0.as_ref().ok().copied()).collect();
        report.top = reset_path.and_then(|p| report.top_of(&p, &|i| sound[i]));
        report.excluding_panic = excluding.map(|mut x| {
            x.top = excluding_path.and_then(|(p, b)| report.top_of(&p, &|i| b[i]));
            x
        });
        report
    }

    /// The bounds with every call into a panic/abort function cut and the fault-only handlers
    /// left out of the main stack (see [`ExcludingPanic`]), and the reset root's worst path
    /// then. `None` without a reset handler.
    /// Also returns the bound of every function then (indexed like `functions`).
    #[allow(clippy::type_complexity)]
    fn excluding_panic(
        &self,
        edges: &[Vec<Edge>],
        interner: &mut Interner,
    ) -> (Option<ExcludingPanic>, Option<(Vec<usize>, Vec<Option<u32>>)>) {
        let panic: Vec<bool> = self.functions.iter().map(|f| is_panic_or_abort(&f.name, &f.demangled)).collect();
        let cut: Vec<Vec<Edge>> = edges
            .iter()
            .map(|es| es.iter().filter(|e| !matches!(e, Ok((j, _, _)) if panic[*j])).cloned().collect())
            .collect();
        // The unresolved sites were reported by the sound pass already.
        let nodes = self.bounds(&cut, &mut Vec::new(), interner);
        let (_, reset, handlers) = self.roots(&nodes, interner);
        let Some(reset) = reset else { return (None, None) };
        let faults = self.fault_only_handlers();
        let handlers: Vec<(usize, Node)> = handlers.into_iter().filter(|(i, _)| !faults.contains(i)).collect();
        let path = reset.path.clone();
        let reset_bound = to_bound(&reset.bound, &reset.assumptions, &interner.text);
        let msp = self.msp(Some(reset), &handlers, interner);
        let mut panic_functions: Vec<String> =
            (0..self.functions.len()).filter(|&i| panic[i]).map(|i| self.functions[i].demangled.clone()).collect();
        panic_functions.sort();
        panic_functions.dedup();
        let x = ExcludingPanic {
            reset: reset_bound,
            msp,
            path: path.iter().map(|&p| self.functions[p].demangled.clone()).collect(),
            top: None,
            panic_functions,
            fault_handlers: faults.iter().map(|&i| self.functions[i].name.clone()).collect(),
        };
        let bounds = nodes.iter().map(|n| n.bound.as_ref().ok().copied()).collect();
        (Some(x), Some((path, bounds)))
    }

    /// Functions that the vector table names only as fault handlers (vectors 3 to 7:
    /// HardFault, MemManage, BusFault, UsageFault, SecureFault), never for another exception or
    /// interrupt. Read like [`CallGraph::roots`] reads the table.
    fn fault_only_handlers(&self) -> Vec<usize> {
        let Some(vt) = self.image.vector_table() else { return Vec::new() };
        let count = self.image.section_by_name(&vt.section).map_or(0, |s| s.size / 4) as u32;
        let mut fault = std::collections::BTreeSet::new();
        let mut other = std::collections::BTreeSet::new();
        for k in 2..count {
            let Some(w) = self.image.word_at(vt.address + u64::from(k) * 4) else { break };
            if w == 0 || w & 1 == 0 {
                continue;
            }
            let Some(i) = self.index_of(w) else { continue };
            if (3..=7).contains(&k) {
                fault.insert(i);
            } else {
                other.insert(i);
            }
        }
        fault.difference(&other).copied().collect()
    }

    /// The bound of every function (indexed like `functions`).
    fn bounds(&self, edges: &[Vec<Edge>], unresolved: &mut Vec<Unresolved>, interner: &mut Interner) -> Vec<Node> {
        let n = self.functions.len();
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
            if !recursive {
                let i = members[0];
                nodes[i] = Some(self.acyclic_bound(i, &edges[i], &nodes, interner));
            } else {
                let in_comp = |j: usize| comp[j] == c;
                for (m, node) in self.recursive_bounds(members, &in_comp, edges, &nodes, unresolved, interner) {
                    nodes[m] = Some(node);
                }
            }
        }
        nodes.into_iter().map(|n| n.expect("all nodes computed")).collect()
    }

    /// Frame of function `i` and the assumption it rests on (an annotated frame), or why it
    /// has none.
    fn own_frame(&self, i: usize) -> Result<(u32, Option<String>), String> {
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
    }

    /// A call edge as a reason names it.
    fn call_path(&self, caller: usize, callee: usize) -> String {
        format!("the stack of {} calling {}", self.functions[caller].name, self.functions[callee].name)
    }

    /// Bound of function `i`, which is not recursive: its callees' nodes are all computed.
    fn acyclic_bound(&self, i: usize, edges: &[Edge], nodes: &[Option<Node>], interner: &mut Interner) -> Node {
        let mut node = match self.own_frame(i) {
            Ok((b, a)) => {
                let mut assumptions = Assumptions::default();
                if let Some(a) = a {
                    assumptions.insert(interner.id(a));
                }
                Node { bound: Ok(b), assumptions, path: vec![i] }
            }
            Err(e) => Node { bound: Err(e), assumptions: Assumptions::default(), path: vec![i] },
        };
        for e in edges {
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
                        (Ok(b), Ok(cb)) => match add_bytes(*depth, *cb, || self.call_path(i, *j)) {
                            Ok(total) if total > *b => {
                                node.bound = Ok(total);
                                node.path = std::iter::once(i).chain(callee.path.iter().copied()).collect();
                            }
                            Ok(_) => {}
                            Err(e) => node.bound = Err(e),
                        },
                        (Ok(_), Err(msg)) => node.bound = Err(msg.clone()),
                        _ => {}
                    }
                }
            }
        }
        node
    }

    /// Bounds of the members of a recursive component (`in_comp` tells its members apart).
    ///
    /// The annotated members (at most k activations each on the stack at once) must cut every
    /// cycle of the component; then any stack is a prefix to the first annotated activation, at
    /// most K = Σk activations of annotated members each followed by the deepest way (`g`) to
    /// the next one, and the deepest way out (`h`) from the last.
    fn recursive_bounds(
        &self,
        members: &[usize],
        in_comp: &dyn Fn(usize) -> bool,
        edges: &[Vec<Edge>],
        nodes: &[Option<Node>],
        unresolved: &mut Vec<Unresolved>,
        interner: &mut Interner,
    ) -> Vec<(usize, Node)> {
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
            let self_loop = scc.len() == 1 && edges[scc[0]].iter().any(|e| matches!(e, Ok((j, _, _)) if *j == scc[0]));
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
                let (own_b, own_a) = match self.own_frame(m) {
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
                                    match add_bytes(*d, v, || self.call_path(m, *j)) {
                                        Ok(total) => {
                                            let e = gm.entry(b).or_insert(0);
                                            *e = (*e).max(total);
                                        }
                                        Err(e) => {
                                            err.get_or_insert(e);
                                        }
                                    }
                                }
                                let (hj, pj) = &h[j];
                                match add_bytes(*d, *hj, || self.call_path(m, *j)) {
                                    Ok(total) if total > hm.0 => {
                                        hm = (total, std::iter::once(*j).chain(pj.iter().copied()).collect());
                                    }
                                    Ok(_) => {}
                                    Err(e) => {
                                        err.get_or_insert(e);
                                    }
                                }
                            } else {
                                let callee = nodes[*j].as_ref().expect("callee processed first");
                                assumptions.extend(&callee.assumptions);
                                let total =
                                    callee.bound.clone().and_then(|cb| add_bytes(*d, cb, || self.call_path(m, *j)));
                                match total {
                                    Ok(total) if total > hm.0 => hm = (total, callee.path.clone()),
                                    Ok(_) => {}
                                    Err(msg) => {
                                        err.get_or_insert(msg);
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
                let why = self
                    .options
                    .annotations
                    .reasons
                    .get(&format!("recursion:{}", self.functions[m].name))
                    .map_or("annotation".to_string(), |r| r.clone());
                assumptions.insert(interner.id(format!(
                    "{} has at most {d} activations on the stack at once ({why}; recursion among {})",
                    self.key_name(&self.functions[m]),
                    names.join(", ")
                )));
            }
        }
        let cut_ids: Vec<usize> = cut.keys().copied().collect();
        let mut memo: HashMap<(usize, Vec<u32>), Option<u32>> = HashMap::new();
        let mut out = Vec::new();
        for &m in members {
            let (bound, path) = match &err {
                Some(e) => (Err(e.clone()), vec![m]),
                None => {
                    let (hm, hp) = h[&m].clone();
                    let mut left: Vec<u32> = cut_ids.iter().map(|c| cut[c]).collect();
                    let start = if let Some(k) = cut_ids.iter().position(|&x| x == m) {
                        left[k] = left[k].saturating_sub(1);
                        deepest_from_cut(m, &left, &cut_ids, &g, &h, &mut memo)
                    } else {
                        let mut v = Some(hm);
                        for (&b, &d) in &g[&m] {
                            let k = cut_ids.iter().position(|&x| x == b).expect("cut member");
                            if left[k] > 0 {
                                let mut l = left.clone();
                                l[k] -= 1;
                                let deeper =
                                    deepest_from_cut(b, &l, &cut_ids, &g, &h, &mut memo).and_then(|x| d.checked_add(x));
                                v = v.zip(deeper).map(|(v, x)| v.max(x));
                            }
                        }
                        v
                    };
                    match start {
                        Some(start) => (Ok(start.max(hm)), std::iter::once(m).chain(hp).collect()),
                        None => (
                            Err(format!(
                                "the stack of the recursion among {} with the annotated activation counts is past \
                                 4 GiB (overflows 32 bits)",
                                names.join(", ")
                            )),
                            vec![m],
                        ),
                    }
                }
            };
            out.push((m, Node { bound, assumptions: assumptions.clone(), path }));
        }
        out
    }
}

/// Deepest stack from the start of an activation of cut member `a` when `left` activations of
/// each cut member (`cut_ids`) may still start; `g[a]` is the deepest way from `a` to each cut
/// member it reaches, `h[a]` the deepest way out (memoised search). `None`: past 4 GiB (the
/// activation counts times the frames overflow 32 bits).
fn deepest_from_cut(
    a: usize,
    left: &[u32],
    cut_ids: &[usize],
    g: &HashMap<usize, BTreeMap<usize, u32>>,
    h: &HashMap<usize, (u32, Vec<usize>)>,
    memo: &mut HashMap<(usize, Vec<u32>), Option<u32>>,
) -> Option<u32> {
    if let Some(&v) = memo.get(&(a, left.to_vec())) {
        return v;
    }
    let mut v = Some(h[&a].0);
    for (&b, &d) in &g[&a] {
        let k = cut_ids.iter().position(|&x| x == b).expect("cut member");
        if left[k] > 0 {
            let mut l = left.to_vec();
            l[k] -= 1;
            let deeper = deepest_from_cut(b, &l, cut_ids, g, h, memo).and_then(|x| d.checked_add(x));
            v = v.zip(deeper).map(|(v, x)| v.max(x));
        }
    }
    memo.insert((a, left.to_vec()), v);
    v
}

#[cfg(test)]
mod tests {
    use super::is_panic_or_abort;

    #[test]
    fn panic_and_abort_functions_by_name() {
        for (name, demangled) in [
            ("abort", "abort"),
            ("__assert_func", "__assert_func"),
            ("__stack_chk_fail", "__stack_chk_fail"),
            ("_exit", "_exit"),
            ("_RNvCs1_7___rustc17rust_begin_unwind", "__rustc::rust_begin_unwind"),
            ("x", "core::panicking::panic_fmt"),
            ("x", "core::panicking::panic_bounds_check::h0123456789abcdef"),
            ("x", "core::slice::index::slice_index_fail"),
            ("x", "core::slice::copy_from_slice_impl::len_mismatch_fail"),
            ("x", "core::option::unwrap_failed"),
            ("x", "mcubench_support::fail_with"),
        ] {
            assert!(is_panic_or_abort(name, demangled), "{demangled}");
        }
        for (name, demangled) in [
            ("exit", "exit"),
            ("x", "<core::panic::panic_info::PanicMessage as core::fmt::Display>::fmt"),
            ("x", "core::fmt::write"),
            ("x", "core::slice::sort::stable::drift::sort"),
            ("failure", "failure"),
        ] {
            assert!(!is_panic_or_abort(name, demangled), "{demangled}");
        }
    }
}
