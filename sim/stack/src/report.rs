//! The result of the analysis: per-function frames and call sites, the bound of every root and
//! of the main stack, what needs an annotation; and the views `mcubench stack` prints.

use serde::{Deserialize, Serialize};

use crate::bound::{Assumptions, to_bound};
use crate::frame::{CallKind, FunctionStack};

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
    /// A YAML line for the annotations file (`recursion: {...}`, `indirect: [...]` or
    /// `frames: {...}`); [`StackReport::annotation_template`] merges them into one file.
    pub annotation: String,
    /// For a recursion: the cycle the entry is about, one call per step (`f+0x1c → g`, an
    /// indirect call marked as such), back to its first function.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<String>,
}

impl Unresolved {
    /// The top-level key and the entry under it (`"f": DEPTH` or `- { site: ..., ... }`).
    fn entry(&self) -> Option<(&str, String)> {
        let (key, rest) = self.annotation.split_once(": ")?;
        let inner = rest.trim().strip_prefix(['{', '['])?.strip_suffix(['}', ']'])?.trim();
        Some(match key {
            "indirect" => (key, format!("  - {inner}")),
            _ => (key, format!("  {inner}")),
        })
    }
}

/// The result of [`analyze`](crate::analyze).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackReport {
    pub functions: Vec<FunctionStack>,
    pub roots: Vec<RootBound>,
    /// Worst main-stack (MSP) use: reset path plus nested exception handlers.
    pub msp: Bound,
    /// Functions whose address is taken (possible targets of indirect calls).
    pub address_taken: Vec<String>,
    pub unresolved: Vec<Unresolved>,
    /// The shipped annotation packs whose library the ELF holds: applied entries, and why a
    /// pack or entry was not applied.
    #[serde(default)]
    pub packs: Vec<crate::packs::PackUse>,
    /// The function that adds the most to the reset root's worst path.
    #[serde(default)]
    pub top: Option<Contributor>,
    /// The bounds without panic/abort paths and fault handlers: what dominates the sound bound.
    /// Informative only: never a bound of the program.
    #[serde(default)]
    pub excluding_panic: Option<ExcludingPanic>,
    /// Bound, assumptions and worst path (function indices) of every function, indexed like
    /// `functions`; [`StackReport::bound_of`] turns one into a [`Bound`]. Kept compact (the
    /// assumptions as a set of indices into `assumption_text`): a function's assumptions are
    /// those of all its callees, and listing them for every function of a large ELF is
    /// quadratic.
    #[serde(skip)]
    pub(crate) bounds: Vec<(Result<u32, String>, Assumptions, Vec<usize>)>,
    #[serde(skip)]
    pub(crate) assumption_text: Vec<String>,
    /// Every function's bound with the calls into panic/abort functions cut (see
    /// [`ExcludingPanic`]), indexed like `functions`; `None`: unbounded even so.
    #[serde(skip)]
    pub(crate) excluding_bounds: Vec<Option<u32>>,
}

/// The function that adds the most bytes to a worst path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contributor {
    pub function: String,
    /// Its own frame (bytes).
    pub frame: u32,
    /// What it adds to the path: its bound less the next step's (all its activations, when it
    /// recurses), or its bound when it is the last step.
    pub bytes: u32,
}

/// The bounds with the edges into panic/abort functions (see [`is_panic_or_abort`]) cut, so
/// that everything reachable only through them drops out, and with the handlers that only
/// fault vectors (HardFault, MemManage, BusFault, UsageFault, SecureFault) name left out of the
/// main stack. It shows what dominates the sound bound; it is no bound of the program (a panic
/// or fault does run that code).
///
/// [`is_panic_or_abort`]: crate::is_panic_or_abort
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludingPanic {
    pub reset: Bound,
    pub msp: Bound,
    /// The reset root's worst path without them.
    pub path: Vec<String>,
    /// The function that adds the most to that path.
    pub top: Option<Contributor>,
    /// The panic/abort functions found (their calls were cut).
    pub panic_functions: Vec<String>,
    /// The fault handlers left out of the main stack.
    pub fault_handlers: Vec<String>,
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
    /// The shipped annotation packs that recognised (or nearly recognised) the ELF.
    pub packs: Vec<crate::packs::PackUse>,
    /// The function that adds the most to the reset root's worst path.
    pub top: Option<Contributor>,
    /// The bounds without panic/abort paths and fault handlers (informative, not a bound).
    pub excluding_panic: Option<ExcludingPanic>,
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

    /// The step of `path` (function indices, root first) that adds the most bytes (the first of
    /// equals): what its bound adds to the next step's (`bound_of`), which counts every
    /// activation of a recursive function; its SP depth at the call to the next step, or its
    /// frame when last, where a bound is unknown. `None` when the path's root has no bound.
    pub(crate) fn top_of(&self, path: &[usize], bound_of: &dyn Fn(usize) -> Option<u32>) -> Option<Contributor> {
        bound_of(*path.first()?)?;
        let mut best: Option<Contributor> = None;
        let steps = self.steps(path);
        for (k, s) in steps.into_iter().enumerate() {
            let Some(frame) = s.frame else { continue };
            let here = bound_of(path[k]);
            let next = path.get(k + 1).map(|&j| bound_of(j));
            let bytes = match (here, next) {
                (Some(h), None) => h,
                (Some(h), Some(Some(n))) => h.saturating_sub(n),
                _ => s.call_depth.unwrap_or(frame),
            };
            if best.as_ref().is_none_or(|b| bytes > b.bytes) {
                best = Some(Contributor { function: s.function, frame, bytes });
            }
        }
        best
    }

    /// Bound and worst path (function indices) of function `i` (indexed like `functions`).
    /// Function `i`'s bound with its panic/abort paths cut (informative, like
    /// [`StackReport::excluding_panic`]: never a sound bound); `None` when unbounded even so.
    pub fn excluding_panic_bound_of(&self, i: usize) -> Option<u32> {
        self.excluding_bounds.get(i).copied().flatten()
    }

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
        StackView {
            roots,
            msp: self.msp.clone(),
            functions: named,
            unresolved: self.unresolved.clone(),
            not_found,
            packs: self.packs.clone(),
            top: self.top.clone(),
            excluding_panic: self.excluding_panic.clone(),
        }
    }

    /// Every entry of [`StackReport::unresolved`] as one annotation file (each key once, each
    /// entry after a comment saying what it is about): paste it, replace DEPTH, TARGET and
    /// BYTES with the facts, and the run resolves all of them at once. Empty when nothing is
    /// unresolved.
    pub fn annotation_template(&self) -> String {
        use std::collections::{BTreeMap, BTreeSet};
        use std::fmt::Write as _;
        // `site: "f@N"` entries that cover every indirect call of f become one `site: "f"`.
        let mut ordinals: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
        for u in &self.unresolved {
            if let Some((f, n)) = site_ordinal(&u.annotation) {
                ordinals.entry(f).or_default().insert(n);
            }
        }
        let whole: BTreeSet<&str> = ordinals
            .iter()
            .filter(|(f, ns)| {
                let sites = self.functions.iter().find(|g| g.name == **f || g.demangled == **f).map_or(0, |g| {
                    g.calls.iter().filter(|c| matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail)).count()
                });
                sites > 1 && ns.len() == sites && ns.iter().copied().eq(1..=sites)
            })
            .map(|(f, _)| *f)
            .collect();
        let mut s = String::new();
        for key in ["recursion", "indirect", "frames"] {
            // Entries in order of first appearance, each with everything it resolves.
            let mut groups: Vec<(String, Vec<&Unresolved>)> = Vec::new();
            for u in &self.unresolved {
                let Some((k, mut entry)) = u.entry() else { continue };
                if k != key {
                    continue;
                }
                if let Some((f, _)) = site_ordinal(&u.annotation).filter(|(f, _)| whole.contains(f)) {
                    entry = format!("  - {{ site: \"{f}\", targets: [TARGET] }}");
                }
                match groups.iter_mut().find(|(e, _)| *e == entry) {
                    Some((_, us)) => us.push(u),
                    None => groups.push((entry, vec![u])),
                }
            }
            if groups.is_empty() {
                continue;
            }
            let _ = writeln!(s, "{key}:");
            for (entry, us) in groups {
                for u in us {
                    for (n, line) in u.what.lines().enumerate() {
                        let _ = writeln!(s, "  {} {line}", if n == 0 { "#" } else { "#  " });
                    }
                    if !u.cycle.is_empty() {
                        let _ = writeln!(s, "  #   calls: {}", u.cycle.join("; "));
                    }
                }
                let _ = writeln!(s, "{entry}");
            }
        }
        s
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
        if let Some(t) = &self.top {
            let _ =
                writeln!(s, "top contributor: {} ({} B on the worst path, frame {} B)", t.function, t.bytes, t.frame);
        }
        if let Some(x) = &self.excluding_panic {
            let _ = writeln!(
                s,
                "bound excl. panic/fault paths (informative, not a bound): reset {}, MSP {}",
                bound_text(&x.reset),
                bound_text(&x.msp)
            );
            let _ = writeln!(s, "    worst path: {}", x.path.join(" > "));
            if let Some(t) = &x.top {
                let _ = writeln!(s, "    top contributor: {} ({} B, frame {} B)", t.function, t.bytes, t.frame);
            }
            let _ = writeln!(
                s,
                "    cut: calls to {} panic/abort function(s){}",
                x.panic_functions.len(),
                if x.fault_handlers.is_empty() {
                    String::new()
                } else {
                    format!("; fault handlers left out: {}", x.fault_handlers.join(", "))
                }
            );
        }
        for f in &v.functions {
            one(&mut s, f);
        }
        for n in &v.not_found {
            let _ = writeln!(s, "{n}: no such function");
        }
        if !v.unresolved.is_empty() {
            let _ = writeln!(
                s,
                "unresolved ({}): paste this into the annotation file, with DEPTH (most activations at once), \
                 TARGET (function names) and BYTES filled in:",
                v.unresolved.len()
            );
            s.push_str(&self.annotation_template());
            let _ = writeln!(s, "(end of unresolved)");
        }
        for p in &self.packs {
            let _ = writeln!(s, "annotation pack {} ({}): {} entries applied", p.pack, p.describes, p.applied);
            for n in &p.notes {
                let _ = writeln!(s, "  {n}");
            }
        }
        s
    }
}

/// The function and ordinal of an `indirect: [{ site: "f@N", ... }]` annotation.
fn site_ordinal(annotation: &str) -> Option<(&str, usize)> {
    let rest = annotation.strip_prefix("indirect: [{ site: \"")?;
    let site = &rest[..rest.find('"')?];
    let (f, n) = site.rsplit_once('@')?;
    Some((f, n.parse().ok()?))
}
