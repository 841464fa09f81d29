//! Worst-case bounds over the call graph, callees first: a function's bound is its own frame or,
//! if deeper, the SP depth at one of its call sites plus the callee's bound. A recursive
//! component is bounded only when annotated activation counts cut all its cycles. A bound is
//! `Result<u32, String>`: the error says why there is none, and nothing unknown counts as 0 B.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::callgraph::{CallGraph, Callee, Edge, Resolution, tarjan, tarjan_subset};
use crate::frame::Frame;
use crate::noreturn::is_panic_or_abort;
use crate::report::{Bound, ExcludingPanic, StackReport, Unresolved};

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
        let mut edges: Vec<_> = (0..n).map(|i| self.edges(i, &mut unresolved, &mut interner)).collect();
        let reset = crate::exception::vector_extent(self.image, self.options.arch)
            .and_then(|vt| vt.handlers.iter().find(|(k, _)| *k == 1).and_then(|&(_, w)| self.index_of(w)));
        crate::crt::cut_stack_restarts(self.functions, reset, &mut edges);
        // A call with no known target may reach any address-taken function: what those reach
        // counts as reached, so that its own unresolved sites show in this run too.
        let widen: BTreeSet<usize> = unresolved.iter().flat_map(|u| self.all_by_name(&u.function)).collect();
        let rank = self.discovery(&edges, &widen);
        let nodes = self.bounds(&edges, &rank, &mut unresolved, &mut interner);
        // What needs a human, of the code the roots reach (all of it when there are no roots):
        // every site at once, in address order.
        let any_root = rank.iter().any(Option::is_some);
        unresolved.retain(|u| !any_root || self.all_by_name(&u.function).iter().any(|&i| rank[i].is_some()));
        unresolved.sort_by(|a, b| (a.at, &a.annotation).cmp(&(b.at, &b.annotation)));
        unresolved.dedup_by(|a, b| a.annotation == b.annotation && a.at == b.at);
        let (roots, reset, handlers) = self.roots(&nodes, &interner);
        let reset_path = reset.as_ref().map(|r| r.path.clone());
        let msp = self.msp(reset, &handlers, &mut interner);
        let (excluding, excluding_path) = self.excluding_panic(&edges, &rank, &mut interner);
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
            excluding_bounds: excluding_path.as_ref().map(|(_, b)| b.clone()).unwrap_or_default(),
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
        rank: &[Option<usize>],
        interner: &mut Interner,
    ) -> (Option<ExcludingPanic>, Option<(Vec<usize>, Vec<Option<u32>>)>) {
        let panic: Vec<bool> = self.functions.iter().map(|f| is_panic_or_abort(&f.name, &f.demangled)).collect();
        let cut: Vec<Vec<Edge>> = edges
            .iter()
            .map(|es| es.iter().filter(|e| !matches!(e, Ok(c) if panic[c.to])).cloned().collect())
            .collect();
        // The unresolved sites were reported by the sound pass already.
        let nodes = self.bounds(&cut, rank, &mut Vec::new(), interner);
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

    /// The order in which a depth-first walk of the call graph from the roots (reset handler
    /// first, then the other vector-table handlers) first reaches each function; `None` for a
    /// function no root reaches. A recursion is entered at its first-reached member, and the
    /// call back to a function on the walk's stack is the one that closes the cycle.
    fn discovery(&self, edges: &[Vec<Edge>], widen: &BTreeSet<usize>) -> Vec<Option<usize>> {
        let taken: Vec<usize> = self.taken.all.iter().filter_map(|&a| self.index_of(a)).collect();
        let mut rank = vec![None; self.functions.len()];
        let mut roots = Vec::new();
        if let Some(vt) = self.image.vector_table() {
            let count = self.image.section_by_name(&vt.section).map_or(0, |s| s.size / 4);
            for k in 1..count {
                let Some(w) = self.image.word_at(vt.address + 4 * k) else { break };
                if let Some(i) = (w & 1 == 1).then(|| self.index_of(w)).flatten() {
                    roots.push(i);
                }
            }
        }
        let mut next = 0usize;
        for r in roots {
            if rank[r].is_some() {
                continue;
            }
            rank[r] = Some(next);
            next += 1;
            let mut stack: Vec<(usize, usize)> = vec![(r, 0)];
            while let Some(&mut (v, ref mut k)) = stack.last_mut() {
                let n = edges[v].len();
                let to = match edges[v].get(*k) {
                    Some(Ok(c)) => Some(c.to),
                    Some(Err(_)) => None,
                    None if widen.contains(&v) => match taken.get(*k - n) {
                        Some(&t) => Some(t),
                        None => {
                            stack.pop();
                            continue;
                        }
                    },
                    None => {
                        stack.pop();
                        continue;
                    }
                };
                *k += 1;
                if let Some(t) = to
                    && rank[t].is_none()
                {
                    rank[t] = Some(next);
                    next += 1;
                    stack.push((t, 0));
                }
            }
        }
        rank
    }

    /// The bound of every function (indexed like `functions`).
    fn bounds(
        &self,
        edges: &[Vec<Edge>],
        rank: &[Option<usize>],
        unresolved: &mut Vec<Unresolved>,
        interner: &mut Interner,
    ) -> Vec<Node> {
        let n = self.functions.len();
        // Frames the analysis could not bound, each with a `frames:` entry to paste.
        for (i, f) in self.functions.iter().enumerate() {
            if let Err(e) = self.own_frame(i) {
                unresolved.push(Unresolved {
                    function: f.name.clone(),
                    at: f.start,
                    what: format!("{e}: give its frame (bytes of its own stack, not its callees')"),
                    annotation: format!("frames: {{ \"{}\": BYTES }}", f.name),
                    cycle: Vec::new(),
                });
            }
        }
        // Strongly connected components (Tarjan, iterative).
        let sccs = tarjan(n, |i| edges[i].iter().filter_map(|e| e.as_ref().ok().map(|e| e.to)).collect());
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
                members.len() > 1 || edges[members[0]].iter().any(|e| matches!(e, Ok(c) if c.to == members[0]));
            if !recursive {
                let i = members[0];
                nodes[i] = Some(self.acyclic_bound(i, &edges[i], &nodes, interner));
            } else {
                let in_comp = |j: usize| comp[j] == c;
                for (m, node) in self.recursive_bounds(members, &in_comp, edges, rank, &nodes, unresolved, interner) {
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
        // When there is no bound, the path is the one that reaches the cause.
        for e in edges {
            match e {
                Err(msg) => {
                    if node.bound.is_ok() {
                        node.bound = Err(msg.clone());
                        node.path = vec![i];
                    }
                }
                Ok(Callee { to: j, depth, why, .. }) => {
                    let callee = nodes[*j].as_ref().expect("callee processed first");
                    if let Some(w) = why {
                        node.assumptions.insert(*w);
                    }
                    node.assumptions.extend(&callee.assumptions);
                    let via_callee = || std::iter::once(i).chain(callee.path.iter().copied()).collect();
                    match (&node.bound, &callee.bound) {
                        (Ok(b), Ok(cb)) => match add_bytes(*depth, *cb, || self.call_path(i, *j)) {
                            Ok(total) if total > *b => {
                                node.bound = Ok(total);
                                node.path = via_callee();
                            }
                            Ok(_) => {}
                            Err(e) => {
                                node.bound = Err(e);
                                node.path = via_callee();
                            }
                        },
                        (Ok(_), Err(msg)) => {
                            node.bound = Err(msg.clone());
                            node.path = via_callee();
                        }
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
    #[allow(clippy::too_many_arguments)]
    fn recursive_bounds(
        &self,
        members: &[usize],
        in_comp: &dyn Fn(usize) -> bool,
        edges: &[Vec<Edge>],
        rank: &[Option<usize>],
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
                .filter_map(|e| e.as_ref().ok().map(|e| e.to))
                .filter(|j| in_comp(*j) && !cut.contains_key(j))
                .collect()
        });
        let mut order: Vec<usize> = Vec::new();
        let mut cyclic: Option<Vec<usize>> = None;
        for scc in sub {
            let self_loop = scc.len() == 1 && edges[scc[0]].iter().any(|e| matches!(e, Ok(c) if c.to == scc[0]));
            if scc.len() > 1 || self_loop {
                cyclic.get_or_insert(scc.clone());
            }
            order.extend(scc);
        }
        order.extend(cut.keys().copied());
        let mut g: HashMap<usize, BTreeMap<usize, u32>> = HashMap::new();
        let mut h: HashMap<usize, (u32, Vec<usize>)> = HashMap::new();
        let mut cycles: Vec<Vec<(usize, Callee)>> = Vec::new();
        if cut.is_empty() || cyclic.is_some() {
            // Every cycle the annotations leave, each with the entry that removes it.
            cycles = self.cycles(members, in_comp, &cut, edges, rank);
            for cy in &cycles {
                unresolved.push(self.cycle_entry(cy));
            }
            let what = match &cyclic {
                Some(rest) if !cut.is_empty() => format!(
                    "recursion among {} not cut by the annotated functions (a cycle remains among {})",
                    names.join(", "),
                    rest.iter().map(|&m| self.functions[m].demangled.clone()).collect::<Vec<_>>().join(", ")
                ),
                _ => format!("recursion among {}", names.join(", ")),
            };
            let first = cycles.first().map(|cy| format!(": {}", self.cycle_text(cy))).unwrap_or_default();
            err = Some(format!("unbounded {what}{first}"));
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
                        Ok(Callee { to: j, depth: d, why, .. }) => {
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
                Some(e) => (Err(e.clone()), self.path_into_cycle(m, cycles.first(), in_comp, edges)),
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

impl CallGraph<'_> {
    /// The cycles of a recursive component that its annotated members (`cut`) leave, each as
    /// its calls (caller, call) from the function the closing call re-enters: found one at a
    /// time by a depth-first walk from the member the roots reach first, the first call back
    /// to a function on the walk's stack closing each. A cycle through an indirect call the
    /// analysis resolved to every address-taken function is removed by that call's entry (the
    /// call's edges leave the graph); any other by a recursion entry for the re-entered
    /// function (it leaves the graph). What remains is checked again, so the entries together
    /// remove every cycle.
    fn cycles(
        &self,
        members: &[usize],
        in_comp: &dyn Fn(usize) -> bool,
        cut: &BTreeMap<usize, u32>,
        edges: &[Vec<Edge>],
        rank: &[Option<usize>],
    ) -> Vec<Vec<(usize, Callee)>> {
        // Enough for any real program's report; the rest show in the next run.
        const MOST: usize = 64;
        let mut gone: BTreeSet<usize> = cut.keys().copied().collect();
        let mut gone_sites: BTreeSet<(usize, u32)> = BTreeSet::new();
        let mut order: Vec<usize> = members.to_vec();
        order.sort_by_key(|&m| (rank[m].unwrap_or(usize::MAX), m));
        let mut out = Vec::new();
        while out.len() < MOST {
            let succ = |v: usize| -> Vec<Callee> {
                edges[v]
                    .iter()
                    .filter_map(|e| e.as_ref().ok().copied())
                    .filter(|c| in_comp(c.to) && !gone.contains(&c.to) && !gone_sites.contains(&(v, c.at)))
                    .collect()
            };
            let Some(cycle) = first_cycle(&order, &gone, succ) else { break };
            match widest(&cycle) {
                Some((caller, c)) => {
                    gone_sites.insert((caller, c.at));
                }
                None => {
                    gone.insert(cycle[0].0);
                }
            }
            out.push(cycle);
        }
        out
    }

    /// One call of a cycle as people read it: `f+0x1c → g`, saying how an indirect call was
    /// resolved.
    fn step_text(&self, caller: usize, c: &Callee) -> String {
        let f = &self.functions[caller];
        let how = match c.how {
            Resolution::Direct => "",
            Resolution::Annotated => " (indirect call, annotated targets)",
            Resolution::Table => " (indirect call through a constant table)",
            Resolution::Vtable => " (indirect call resolved to a slot of every vtable)",
            Resolution::AddressTaken => {
                " (indirect call resolved to \
                     every address-taken function)"
            }
        };
        format!("{} → {}{how}", self.site_label(f, c.at), self.functions[c.to].demangled)
    }

    /// `a → b → a` for a cycle.
    fn cycle_text(&self, cycle: &[(usize, Callee)]) -> String {
        let mut names: Vec<&str> = cycle.iter().map(|(f, _)| self.functions[*f].demangled.as_str()).collect();
        names.push(&self.functions[cycle[0].0].demangled);
        names.join(" → ")
    }

    /// The entry that removes `cycle`: the indirect call it goes through, when the analysis
    /// resolved that call to every address-taken function (the likely cause of a false
    /// recursion), else the recursion depth of the function the closing call re-enters.
    fn cycle_entry(&self, cycle: &[(usize, Callee)]) -> Unresolved {
        let steps: Vec<String> = cycle.iter().map(|(f, c)| self.step_text(*f, c)).collect();
        let chain = self.cycle_text(cycle);
        let entered = &self.functions[cycle[0].0];
        let (closer, closing) = cycle[cycle.len() - 1];
        if let Some((caller, c)) = widest(cycle) {
            let f = &self.functions[caller];
            let wide = match c.how {
                Resolution::Vtable => "a slot of every vtable",
                _ => "every address-taken function",
            };
            return Unresolved {
                function: f.name.clone(),
                at: c.at,
                what: format!(
                    "recursion {chain} goes through the indirect call at {}, which the analysis resolved to \
                     {wide}, {} among them.\nIf that call cannot reach {}, list its real \
                     targets here; if it can, annotate the recursion instead: recursion: {{ \"{}\": DEPTH }}",
                    self.site_label(f, c.at),
                    self.functions[c.to].demangled,
                    self.functions[c.to].demangled,
                    self.key_name(entered),
                ),
                annotation: format!("indirect: [{}]", self.indirect_entry(f, c.at)),
                cycle: steps,
            };
        }
        Unresolved {
            function: entered.name.clone(),
            at: closing.at,
            what: format!(
                "recursion {chain}: the call at {} enters {} again; how many activations of it can be on \
                     the stack at once?",
                self.site_label(&self.functions[closer], closing.at),
                entered.demangled
            ),
            annotation: format!("recursion: {{ \"{}\": DEPTH }}", self.key_name(entered)),
            cycle: steps,
        }
    }

    /// For an unbounded member `m` of a recursive component: the calls from `m` to the first
    /// reported cycle (shortest), then once around it: the path that shows the cause.
    fn path_into_cycle(
        &self,
        m: usize,
        cycle: Option<&Vec<(usize, Callee)>>,
        in_comp: &dyn Fn(usize) -> bool,
        edges: &[Vec<Edge>],
    ) -> Vec<usize> {
        let Some(cycle) = cycle else { return vec![m] };
        let on_cycle: Vec<usize> = cycle.iter().map(|(f, _)| *f).collect();
        let mut parent: HashMap<usize, usize> = HashMap::new();
        let mut queue = VecDeque::from([m]);
        let mut seen = BTreeSet::from([m]);
        let mut hit = None;
        while let Some(v) = queue.pop_front() {
            if on_cycle.contains(&v) {
                hit = Some(v);
                break;
            }
            for c in edges[v].iter().filter_map(|e| e.as_ref().ok()) {
                if in_comp(c.to) && seen.insert(c.to) {
                    parent.insert(c.to, v);
                    queue.push_back(c.to);
                }
            }
        }
        let Some(v) = hit else { return vec![m] };
        let mut path = vec![v];
        while let Some(&p) = parent.get(path.last().expect("non-empty")) {
            path.push(p);
        }
        path.reverse();
        let k = on_cycle.iter().position(|&x| x == v).expect("on the cycle");
        path.extend(on_cycle[k + 1..].iter().chain(on_cycle[..=k].iter()).copied());
        path
    }
}

/// The first cycle a depth-first walk finds, starting from the members in `order` not yet
/// visited (and not `gone`): the calls from the re-entered function round to the call that
/// closes it.
fn first_cycle(
    order: &[usize],
    gone: &BTreeSet<usize>,
    succ: impl Fn(usize) -> Vec<Callee>,
) -> Option<Vec<(usize, Callee)>> {
    let mut visited: BTreeSet<usize> = BTreeSet::new();
    for &start in order {
        if gone.contains(&start) || !visited.insert(start) {
            continue;
        }
        // (function, its calls, next call to look at, the call that led here)
        let mut stack: Vec<(usize, Vec<Callee>, usize, Option<Callee>)> = vec![(start, succ(start), 0, None)];
        while let Some(top) = stack.last_mut() {
            let (v, calls, k, _) = top;
            let Some(&c) = calls.get(*k) else {
                stack.pop();
                continue;
            };
            *k += 1;
            let v = *v;
            if let Some(pos) = stack.iter().position(|(f, ..)| *f == c.to) {
                // A call back to a function on the stack: the calls from there round to it.
                let mut cycle: Vec<(usize, Callee)> = Vec::new();
                for w in pos..stack.len() {
                    let caller = stack[w].0;
                    let call = if w + 1 < stack.len() { stack[w + 1].3.expect("entered by a call") } else { c };
                    cycle.push((caller, call));
                }
                debug_assert_eq!(cycle.last().map(|x| x.0), Some(v));
                return Some(cycle);
            }
            if visited.insert(c.to) {
                let next = succ(c.to);
                stack.push((c.to, next, 0, Some(c)));
            }
        }
    }
    None
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

/// The call of `cycle` resolved most widely (to every address-taken function, else to a slot
/// of every vtable): the likely cause of a false recursion, which an `indirect:` entry cuts.
fn widest(cycle: &[(usize, Callee)]) -> Option<(usize, Callee)> {
    [Resolution::AddressTaken, Resolution::Vtable]
        .into_iter()
        .find_map(|how| cycle.iter().find(|(_, c)| c.how == how).copied())
}
