//! The call graph: direct calls and tail calls from the call sites, indirect calls resolved by
//! annotation, by the address-taken set (words in data and literal pools, `movw`/`movt`
//! constants) and by Rust vtable slots; and its strongly connected components.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;

use crate::StackOptions;
use crate::bound::Interner;
use crate::frame::{CallKind, CallSite, FunctionStack, Loaded};
use crate::report::Unresolved;

/// Possible targets of indirect calls.
#[derive(Debug, Default)]
pub(crate) struct Taken {
    /// Every function whose Thumb address appears as an aligned word in loaded data (other than
    /// the vector table's extent: its handlers are roots), in a literal pool (`$d`) of the code, or as a
    /// `movw`/`movt` constant.
    pub(crate) all: BTreeSet<u32>,
    /// Those whose address appears somewhere other than a method slot of a Rust vtable.
    free: BTreeSet<u32>,
    /// Functions in each slot (byte offset) of the Rust vtables.
    slots: BTreeMap<u32, BTreeSet<u32>>,
    vtables: usize,
    /// The vtables themselves, for calls through a fat pointer's vtable ([`crate::vtable`]).
    pub(crate) vt: crate::vtable::Vtables,
}

/// `vectors`: the vector table's extent, whose words are roots, not address-taken functions;
/// `pool`: literal-pool words only ever branched through ([`crate::branch_literal`]), which
/// are direct calls, not taken addresses, and those only loaded into registers.
pub(crate) fn address_taken(
    image: &ElfImage,
    fmap: &FunctionMap,
    functions: &[FunctionStack],
    vectors: Option<&crate::exception::VectorExtent>,
    pool: &crate::branch_literal::PoolWords,
) -> Taken {
    let is_fn = |w: u32| w & 1 == 1 && fmap.at(w).is_some();
    let mut taken = Taken::default();
    taken.vt.rust = crate::vtable::has_rust_core(fmap);
    for s in image.sections() {
        if !s.alloc || s.nobits || s.size < 4 {
            continue;
        }
        let data = image.section_data(s);
        let base = s.vma as u32;
        let mut off = (4 - (base % 4)) % 4;
        let mut words = Vec::new();
        while (off as usize) + 4 <= data.len() {
            let addr = base + off;
            if vectors.is_some_and(|v| v.contains(addr)) || pool.branch_only.contains(&addr) {
                off += 4;
                continue;
            }
            if !s.exec || fmap.is_data(addr) {
                let o = off as usize;
                words.push((addr, u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])));
            }
            off += 4;
        }
        let mut in_vtable = BTreeSet::new();
        if !s.exec && !s.write {
            for v in crate::vtable::scan(&words, &is_fn) {
                taken.vtables += 1;
                for &(at, slot, f) in &v.words {
                    in_vtable.insert(at);
                    taken.slots.entry(slot).or_default().insert(f);
                }
                taken.vt.tables.push(v);
            }
        }
        for (at, w) in words {
            if is_fn(w) {
                taken.all.insert(w & !1);
                if !in_vtable.contains(&at) {
                    taken.free.insert(w & !1);
                    // A pool word only loaded into a register is an address the code builds,
                    // like `movw`/`movt`: not a word of a table a vtable call could read.
                    if !pool.loaded_only.contains(&at) {
                        taken.vt.data_free.insert(w & !1);
                    }
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

/// The call graph's inputs: the image, its functions with their frames and call sites, the
/// possible targets of indirect calls and the options (annotations, exception model).
pub(crate) struct CallGraph<'a> {
    pub(crate) image: &'a ElfImage,
    pub(crate) fmap: &'a FunctionMap,
    pub(crate) functions: &'a [FunctionStack],
    pub(crate) taken: &'a Taken,
    pub(crate) options: &'a StackOptions,
    /// Function indices (ascending) by raw name, demangled name and alias.
    pub(crate) names: &'a HashMap<&'a str, Vec<usize>>,
    /// The sized data objects, by address ([`data_objects`]).
    pub(crate) objects: &'a [mcubench_elf::Symbol],
}

/// The sized data-object symbols of `image`, by address: where constant tables and
/// function-pointer variables are looked up.
pub(crate) fn data_objects(image: &ElfImage) -> Vec<mcubench_elf::Symbol> {
    let mut out: Vec<mcubench_elf::Symbol> =
        image.symbols().iter().filter(|s| s.kind == mcubench_elf::SymbolKind::Object && s.size > 0).cloned().collect();
    out.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));
    out
}

/// Every name of every function (symbol, demangled, aliases) → indices of the functions with
/// that name, ascending: name look-ups in the call graph are O(1) instead of a scan.
pub(crate) fn name_index(fmap: &FunctionMap) -> HashMap<&str, Vec<usize>> {
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

/// How an edge's callee was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// A direct call or tail call.
    Direct,
    /// An annotation (call site, hook or pack) named it.
    Annotated,
    /// Read from a constant table or slot in read-only data.
    Table,
    /// A slot of the Rust vtables, for a call through a fat pointer's vtable
    /// ([`crate::vtable`]).
    Vtable,
    /// One of the address-taken functions (or Rust vtable slots): an indirect call the
    /// analysis could not narrow down.
    AddressTaken,
}

/// A call edge: the callee, the caller's depth at the call, the assumption it rests on, the
/// call site and how the callee was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Callee {
    pub(crate) to: usize,
    pub(crate) depth: u32,
    pub(crate) why: Option<usize>,
    pub(crate) at: u32,
    pub(crate) how: Resolution,
}

/// A call edge or why the call cannot be followed.
pub(crate) type Edge = Result<Callee, String>;

impl CallGraph<'_> {
    pub(crate) fn index_of(&self, addr: u32) -> Option<usize> {
        self.fmap.index_at(addr)
    }

    /// Indices of every function with this raw or demangled name or alias (demangled names
    /// drop the hash, so several functions may share one).
    pub(crate) fn all_by_name(&self, name: &str) -> Vec<usize> {
        self.names.get(name).cloned().unwrap_or_default()
    }

    /// The name to use for `f` in an annotation: the demangled name when no other function
    /// has it (it survives rebuilds: no hash), else the symbol.
    pub(crate) fn key_name(&self, f: &FunctionStack) -> String {
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
    pub(crate) fn site_label(&self, f: &FunctionStack, at: u32) -> String {
        format!("{}+0x{:x}", self.key_name(f), at - f.start)
    }

    /// The `indirect:` entry that annotates the indirect call of `f` at `at` (its ordinal
    /// among `f`'s indirect sites, from 1): through the hook it loads its target from when that
    /// word has a symbol in writable data (one entry for every call through the hook), else
    /// by site.
    pub(crate) fn indirect_entry(&self, f: &FunctionStack, at: u32) -> String {
        let c = f.calls.iter().find(|c| c.at == at && matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail));
        if let Some(CallSite { loaded_from: Some(Loaded::Word { addr }), .. }) = c
            && let Some(name) = self.data_word_name(*addr, true)
        {
            return format!("{{ via: \"{name}\", targets: [TARGET] }}");
        }
        let ordinal = f
            .calls
            .iter()
            .filter(|c| matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail))
            .position(|c| c.at == at)
            .map_or(0, |k| k + 1);
        format!("{{ site: \"{}@{ordinal}\", targets: [TARGET] }}", self.key_name(f))
    }

    /// `sym` or `sym+OFF` for a word of a data object (writable only, when `writable`).
    fn data_word_name(&self, addr: u32, writable: bool) -> Option<String> {
        let sec = self.image.sections().iter().find(|s| s.alloc && !s.exec && s.contains_vma(u64::from(addr)))?;
        if writable && !sec.write {
            return None;
        }
        let sym = self.data_object(addr)?;
        let off = u64::from(addr) - sym.address;
        Some(if off == 0 { sym.name.clone() } else { format!("{}+{off}", sym.name) })
    }

    /// The sized data object (symbol) that contains `addr`, the innermost of the few that
    /// start closest below it.
    fn data_object(&self, addr: u32) -> Option<&mcubench_elf::Symbol> {
        let a = u64::from(addr);
        let k = self.objects.partition_point(|s| s.address <= a);
        self.objects[..k]
            .iter()
            .rev()
            .take(8)
            .filter(|s| a - s.address < s.size)
            .min_by_key(|s| (s.size, s.name.clone()))
    }

    /// Targets of an indirect call whose target is loaded from `loaded` in read-only data: the
    /// function in that word, or every function of the table (all its words must be function
    /// addresses or 0), with the text of the fact. `None`: not readable as such (writable
    /// data, a word that is no function address): the call falls back to the address-taken set.
    fn table_targets(&self, loaded: Loaded) -> Option<(Vec<u32>, String)> {
        let read_only = |a: u32| {
            self.image.sections().iter().any(|s| {
                s.alloc && !s.write && !s.nobits && s.contains_vma(u64::from(a)) && (!s.exec || self.fmap.is_data(a))
            })
        };
        let is_fn = |w: u32| w & 1 == 1 && self.fmap.at(w).is_some();
        match loaded {
            Loaded::Word { addr } if read_only(addr) => {
                let w = self.image.word_at(u64::from(addr))?;
                is_fn(w).then(|| {
                    let what = self.data_word_name(addr, false).unwrap_or_else(|| format!("0x{addr:08x}"));
                    (vec![w & !1], format!("the constant function pointer at {what} (read-only data)"))
                })
            }
            Loaded::Table { base } if read_only(base) => {
                let sym = self.data_object(base)?;
                let mut out = Vec::new();
                let mut a = sym.address;
                while a + 4 <= sym.address + sym.size {
                    let w = self.image.word_at(a)?;
                    if w != 0 && !is_fn(w) {
                        return None;
                    }
                    if w != 0 {
                        out.push(w & !1);
                    }
                    a += 4;
                }
                (!out.is_empty())
                    .then(|| (out, format!("the index stays within the constant table {} (read-only data)", sym.name)))
            }
            _ => None,
        }
    }

    /// A branch to `target` inside the body of another function (libgcc's `__aeabi_ui2d` into
    /// `__adddf3`) is a tail call into that function's rest, which uses at most its bound less
    /// its frame depth at the target: the function and that depth, when its own paths reach
    /// the target with a known SP.
    fn inner_target(&self, target: u32) -> Option<(usize, u32)> {
        let j = self.fmap.containing(target).and_then(|g| self.index_of(g.start))?;
        let &(_, d) = self.functions[j].entry_depths.iter().find(|(a, _)| *a == target & !1)?;
        Some((j, d))
    }

    /// Annotated targets of the call of `f` at `at` (`ordinal`: among `f`'s indirect sites),
    /// with the key that matched: by site, then through a hook the target is loaded from.
    fn annotated(&self, f: &FunctionStack, c: &CallSite, ordinal: usize) -> Option<(String, String, Vec<String>)> {
        let key = self.site_key(f, c.at);
        let ord_key = format!("{}@{ordinal}", self.key_name(f));
        let ord_key_raw = format!("{}@{ordinal}", f.name);
        let ind = &self.options.annotations.indirect;
        let keys: Vec<&String> = if matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail) {
            vec![&ord_key, &ord_key_raw, &key, &f.name, &f.demangled]
        } else {
            vec![&key]
        };
        if let Some((k, names)) = keys.into_iter().find_map(|k| ind.get_key_value(k.as_str())) {
            let reason = self.options.annotations.reasons.get(&format!("indirect:{k}"));
            let why = match reason {
                Some(r) => format!("targets of {}: {r}", self.site_label(f, c.at)),
                None => format!("annotated targets of {}", self.site_label(f, c.at)),
            };
            return Some((k.clone(), why, names.clone()));
        }
        if let Some(Loaded::Word { addr }) = c.loaded_from
            && let Some(h) = self.options.annotations.hooks.iter().find(|h| addr >= h.start && addr < h.end)
        {
            let why = format!("calls through {} reach only its annotated targets", h.name);
            return Some((h.name.clone(), why, h.targets.clone()));
        }
        None
    }

    /// Callees of function `i`, in call-site order.
    pub(crate) fn edges(&self, i: usize, unresolved: &mut Vec<Unresolved>, interner: &mut Interner) -> Vec<Edge> {
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
            let edge =
                |to: usize, depth: u32, why: Option<usize>, how: Resolution| Callee { to, depth, why, at: c.at, how };
            if matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail) {
                ordinal += 1;
            }
            let direct_unknown = match &c.kind {
                CallKind::Call { target } | CallKind::Tail { target } => {
                    self.index_of(*target).is_none() && self.inner_target(*target).is_none()
                }
                _ => false,
            };
            // Annotations apply to indirect calls and to direct calls that lead nowhere known.
            let annotated = (matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail) || direct_unknown)
                .then(|| self.annotated(f, c, ordinal))
                .flatten();
            if let Some((_, why, names)) = annotated.as_ref() {
                let why = interner.id(why.clone());
                for n in names {
                    let found = self.all_by_name(n);
                    if found.is_empty() {
                        out.push(Err(format!("annotation for {} names unknown function {n}", self.site_key(f, c.at))));
                    }
                    for j in found.into_iter().filter(|j| !infeasible.contains(j)) {
                        out.push(Ok(edge(j, c.depth, Some(why), Resolution::Annotated)));
                    }
                }
                continue;
            }
            match &c.kind {
                CallKind::Call { target } | CallKind::Tail { target } => match self.index_of(*target) {
                    Some(j) if infeasible.contains(&j) => {}
                    Some(j) => out.push(Ok(edge(j, c.depth, None, Resolution::Direct))),
                    None if let Some((j, d)) = self.inner_target(*target) => {
                        if !infeasible.contains(&j) {
                            out.push(Ok(edge(j, c.depth.saturating_sub(d), None, Resolution::Direct)));
                        }
                    }
                    None => {
                        let what =
                            format!("{} calls 0x{target:08x}, which is not the start of a known function", f.name);
                        unresolved.push(Unresolved {
                            function: f.name.clone(),
                            at: c.at,
                            what: format!("{what}: name the functions whose stack it uses"),
                            annotation: format!(
                                "indirect: [{{ site: \"{}\", targets: [TARGET] }}]",
                                self.site_key(f, c.at)
                            ),
                            cycle: Vec::new(),
                        });
                        out.push(Err(what));
                    }
                },
                CallKind::Indirect | CallKind::IndirectTail => {
                    if let Some((targets, fact)) = c.loaded_from.and_then(|l| self.table_targets(l)) {
                        let why = match c.loaded_from {
                            Some(Loaded::Table { .. }) => {
                                Some(interner.id(format!("indirect call at {}: {fact}", self.site_label(f, c.at))))
                            }
                            _ => None,
                        };
                        for t in targets {
                            if let Some(j) = self.index_of(t).filter(|j| !infeasible.contains(j)) {
                                out.push(Ok(edge(j, c.depth, why, Resolution::Table)));
                            }
                        }
                    } else if let Some(o) = c.fat_slot
                        && let Some((targets, fact)) = self.taken.vt.site_targets(o, self.fmap)
                    {
                        let why = interner.id(format!("indirect call at {}: {fact}", self.site_label(f, c.at)));
                        for t in targets {
                            if let Some(j) = self.index_of(t).filter(|j| !infeasible.contains(j)) {
                                out.push(Ok(edge(j, c.depth, Some(why), Resolution::Vtable)));
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
                                out.push(Ok(edge(j, c.depth, Some(why), Resolution::AddressTaken)));
                            }
                        }
                    } else {
                        unresolved.push(Unresolved {
                            function: f.name.clone(),
                            at: c.at,
                            what: format!("indirect call at {} with no known target", self.site_label(f, c.at)),
                            annotation: format!("indirect: [{}]", self.indirect_entry(f, c.at)),
                            cycle: Vec::new(),
                        });
                        out.push(Err(format!("indirect call at {} has no known target", self.site_key(f, c.at))));
                    }
                }
            }
        }
        out
    }
}

/// [`tarjan`] over the subset `nodes` of the indices (successors outside it are ignored):
/// components of original indices, callees first.
pub(crate) fn tarjan_subset(nodes: &[usize], succ: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
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
pub(crate) fn tarjan(n: usize, succ: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<usize>> {
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
