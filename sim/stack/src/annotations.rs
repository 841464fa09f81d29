//! Annotations: what the binary cannot tell. People write an annotation file (YAML, next to the
//! scenario: `kat.yaml` → `kat.stack.yaml`); [`AnnotationFile::resolve`] checks it against an ELF
//! and turns it into [`Annotations`], the form the analyzer reads.
//!
//! ```yaml
//! recursion:                       # most activations of a function on the stack at once
//!   "__rustc::rust_begin_unwind": 2
//! indirect:                        # extra targets of indirect call sites
//!   - site: "dispatch@1"           # function@N (N-th indirect site, from 1), function+0xOFF,
//!     targets: [op_add, op_mul]    #   or function (all its indirect sites)
//!   - via: malloc_hook             # every call whose target is loaded from this variable
//!     targets: [pool_alloc]        #   (or one slot: "drivers+4")
//! arrays:                          # function-pointer arrays: every entry is a target of `site`
//!   - site: dispatch
//!     symbol: ops
//!     stride: 4                    # bytes between entries (default 4)
//!     offset: 0                    # byte offset of the pointer in an entry (default 0)
//!     count: 4                     # entries (default: symbol size / stride)
//! infeasible:                      # call edges that cannot happen
//!   - { from: "core::fmt::write", to: ["core::panicking::panic_fmt"] }
//! frames:                          # frames of functions the analyzer cannot bound
//!   vla_sum: 104
//! priorities:                      # exception handlers that cannot preempt each other
//!   - [SysTick, UART0]             #   (same priority): only the deepest of a group nests
//! ```
//!
//! Without `priorities` every handler may preempt every other once (conservative); a handler
//! named in no group still nests with all the others.
//!
//! Functions are named by symbol or by demangled name (Rust names without their hash, so
//! keys survive rebuilds). Loading is strict: an unknown key is an error naming
//! `file:line:col`; [`AnnotationFile::resolve`] fails on a function or symbol the ELF does not
//! have, naming it and what to do.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use serde::{Deserialize, Serialize};

/// Annotations in the form the analyzer reads ([`AnnotationFile::resolve`] makes them from a
/// file): what the binary cannot tell.
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
    /// Why an entry holds, shown as the assumption of a bound resting on it (the shipped
    /// [packs](crate::packs) give one for each entry): `recursion:NAME` or `indirect:SITE` →
    /// reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<String, String>,
    /// Function-pointer variables (hooks, struct slots) and what they may point to: every
    /// indirect call whose target is loaded from the variable reaches only its targets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
}

/// A function-pointer variable (`indirect: [{ via: NAME, targets: [...] }]`), resolved to the
/// addresses its pointer occupies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hook {
    /// As written: `symbol` or `symbol+OFFSET`.
    pub name: String,
    /// First byte of the pointer (or of the whole symbol, when no offset is given).
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    pub targets: Vec<String>,
}

/// An annotation file as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotationFile {
    #[serde(default)]
    pub recursion: BTreeMap<String, u32>,
    #[serde(default)]
    pub indirect: Vec<IndirectSite>,
    #[serde(default)]
    pub arrays: Vec<FnArray>,
    #[serde(default)]
    pub infeasible: Vec<Infeasible>,
    #[serde(default)]
    pub frames: BTreeMap<String, u32>,
    /// Groups of exception handlers that cannot preempt each other (same priority).
    #[serde(default)]
    pub priorities: Vec<Vec<String>>,
    /// Where it was read from (for messages).
    #[serde(skip)]
    pub path: PathBuf,
    /// The text it was parsed from (to name the line of an entry in messages).
    #[serde(skip)]
    pub text: String,
}

/// An `indirect:` entry: the targets of one call site (`site`), or of every call through one
/// function-pointer variable (`via`). Exactly one of the two.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndirectSite {
    #[serde(default)]
    pub site: Option<String>,
    /// A function-pointer variable: `symbol` (the whole object: a hook, or every slot of a
    /// struct) or `symbol+OFFSET` (one slot, OFFSET in bytes, decimal or 0x hex).
    #[serde(default)]
    pub via: Option<String>,
    pub targets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FnArray {
    pub site: String,
    pub symbol: String,
    #[serde(default = "four")]
    pub stride: u32,
    #[serde(default)]
    pub offset: u32,
    #[serde(default)]
    pub count: Option<u32>,
}

fn four() -> u32 {
    4
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Infeasible {
    pub from: String,
    pub to: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AnnotationError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax { path: String, line: usize, column: usize, message: String },
    #[error("{path}: {message}")]
    Unknown { path: String, message: String },
}

/// The annotation file that belongs to a scenario file: `dir/name.yaml` → `dir/name.stack.yaml`.
pub fn path_for_scenario(scenario: &Path) -> PathBuf {
    let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
    scenario.with_file_name(format!("{stem}.stack.yaml"))
}

impl AnnotationFile {
    /// Read and parse `path` (strict: unknown keys are errors with line and column).
    pub fn load(path: &Path) -> Result<AnnotationFile, AnnotationError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| AnnotationError::Io { path: path.display().to_string(), source })?;
        Self::parse(path, &text)
    }

    /// [`AnnotationFile::load`] when the file exists, else an empty set.
    pub fn load_optional(path: &Path) -> Result<AnnotationFile, AnnotationError> {
        if path.exists() {
            Self::load(path)
        } else {
            Ok(AnnotationFile { path: path.to_owned(), ..Default::default() })
        }
    }

    pub fn parse(path: &Path, text: &str) -> Result<AnnotationFile, AnnotationError> {
        if text.trim().is_empty() {
            return Ok(AnnotationFile { path: path.to_owned(), ..Default::default() });
        }
        if let Some((key, first, second)) = duplicate_key(text) {
            return Err(AnnotationError::Syntax {
                path: path.display().to_string(),
                line: second,
                column: 1,
                message: format!(
                    "duplicate key `{key}`: first at {}:{first}, again at {}:{second} (keep one)",
                    path.display(),
                    path.display()
                ),
            });
        }
        let mut f: AnnotationFile = serde_yaml_ng::from_str(text).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            AnnotationError::Syntax { path: path.display().to_string(), line, column, message: e.to_string() }
        })?;
        for (k, e) in f.indirect.iter().enumerate() {
            if e.site.is_some() == e.via.is_some() {
                return Err(AnnotationError::Syntax {
                    path: path.display().to_string(),
                    line: nth_line_with(text, "indirect:", k).unwrap_or(0),
                    column: 1,
                    message: format!(
                        "indirect entry {} needs exactly one of `site` (a call site) and `via` (a function-pointer \
                         variable)",
                        k + 1
                    ),
                });
            }
        }
        f.path = path.to_owned();
        f.text = text.to_owned();
        Ok(f)
    }

    /// Check every name against `image` and turn the file into analyzer [`Annotations`]
    /// (function-pointer arrays become indirect targets read from the ELF).
    ///
    /// One file serves every profile of a scenario, and each profile inlines differently: an
    /// entry that names a function this ELF does not have is skipped and listed in the second
    /// value. `mcubench stack` refuses an entry that no analysed build has (a typo, exit 2) and
    /// notes one that only some builds lack ([`unknown_everywhere`]). Malformed entries (zero
    /// stride, an array that holds non-functions) are errors.
    pub fn resolve(&self, image: &ElfImage) -> Result<(Annotations, Vec<Ignored>), AnnotationError> {
        let fmap = FunctionMap::new(image);
        let path = self.path.display().to_string();
        let mut ignored = Vec::new();
        let mut present = |what: &'static str, name: &str| -> bool {
            let found = fmap.by_name(name).is_some();
            if !found {
                ignored.push(Ignored {
                    file: self.path.clone(),
                    what,
                    name: name.to_string(),
                    elf: image.path().to_path_buf(),
                });
            }
            found
        };
        let site_fn = |site: &str| -> String {
            if let Some((f, _)) = site.rsplit_once('@') {
                f.to_string()
            } else if let Some((f, off)) = site.rsplit_once('+')
                && off.starts_with("0x")
            {
                f.to_string()
            } else {
                site.to_string()
            }
        };
        let mut out = Annotations::default();
        for (name, &d) in &self.recursion {
            if present("recursion function", name) {
                out.recursion.insert(name.clone(), d);
            }
        }
        for (name, &b) in &self.frames {
            if present("frames function", name) {
                out.frames.insert(name.clone(), b);
            }
        }
        for s in &self.indirect {
            if let Some(via) = &s.via {
                out.hooks.push(self.hook(image, &fmap, via, &s.targets)?);
                continue;
            }
            let Some(site) = &s.site else { continue };
            if !present("indirect call site in function", &site_fn(site)) {
                continue;
            }
            let targets: Vec<String> = s.targets.iter().filter(|t| present("indirect target", t)).cloned().collect();
            out.indirect.entry(site.clone()).or_default().extend(targets);
        }
        for a in &self.arrays {
            if !present("arrays call site in function", &site_fn(&a.site)) {
                continue;
            }
            let sym = image.symbol(&a.symbol).ok_or_else(|| AnnotationError::Unknown {
                path: path.clone(),
                message: format!("arrays symbol `{}` is not in {}", a.symbol, image.path().display()),
            })?;
            if a.stride == 0 {
                return Err(AnnotationError::Unknown {
                    path: path.clone(),
                    message: "arrays stride must be > 0".into(),
                });
            }
            let count = a.count.unwrap_or((sym.size / u64::from(a.stride)) as u32);
            for k in 0..count {
                let at = sym.address + u64::from(k * a.stride + a.offset);
                let w = image.word_at(at).ok_or_else(|| AnnotationError::Unknown {
                    path: path.clone(),
                    message: format!("arrays entry {k} of `{}` at {at:#x} is not in a loaded section", a.symbol),
                })?;
                if w == 0 {
                    continue;
                }
                let f = fmap.at(w).ok_or_else(|| AnnotationError::Unknown {
                    path: path.clone(),
                    message: format!(
                        "arrays entry {k} of `{}` holds {w:#x}, not the address of a function (check stride/offset)",
                        a.symbol
                    ),
                })?;
                out.indirect.entry(a.site.clone()).or_default().push(f.name.clone());
            }
        }
        for i in &self.infeasible {
            if !present("infeasible caller", &i.from) {
                continue;
            }
            let to: Vec<String> = i.to.iter().filter(|t| present("infeasible callee", t)).cloned().collect();
            out.infeasible.entry(i.from.clone()).or_default().extend(to);
        }
        Ok((out, ignored))
    }
}

impl AnnotationFile {
    /// The `via:` entry `via`: the symbol (and slot) it names and its targets, all of which
    /// must exist (a pointer variable and the functions stored in it are never inlined away);
    /// an error names the file and the entry's line.
    fn hook(
        &self,
        image: &ElfImage,
        fmap: &FunctionMap,
        via: &str,
        targets: &[String],
    ) -> Result<Hook, AnnotationError> {
        let line = line_with(&self.text, via).unwrap_or(0);
        let err = |message: String| AnnotationError::Syntax {
            path: self.path.display().to_string(),
            line,
            column: 1,
            message,
        };
        let (name, offset) = match via.rsplit_once('+') {
            Some((n, o)) => {
                let o = o.trim();
                let v = match o.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => o.parse::<u32>().ok(),
                };
                (n.trim(), Some(v.ok_or_else(|| err(format!("via `{via}`: `{o}` is not a byte offset")))?))
            }
            None => (via.trim(), None),
        };
        let sym = image.symbol(name).ok_or_else(|| {
            err(format!(
                "via `{name}` is not a symbol of {} (name the function-pointer variable, e.g. `malloc_hook`, or a \
                 struct and a byte offset, `ops+4`)",
                image.path().display()
            ))
        })?;
        if sym.kind == mcubench_elf::SymbolKind::Function {
            return Err(err(format!("via `{name}` is a function, not a function-pointer variable")));
        }
        let size = sym.size.max(4) as u32;
        let (start, end) = match offset {
            Some(o) if o + 4 > size => {
                return Err(err(format!("via `{via}`: offset {o} is past the end of `{name}` ({size} B)")));
            }
            Some(o) => (sym.address as u32 + o, sym.address as u32 + o + 4),
            None => (sym.address as u32, sym.address as u32 + size),
        };
        if let Some(t) = targets.iter().find(|t| fmap.by_name(t).is_none()) {
            return Err(err(format!(
                "via `{via}`: target `{t}` is not a function of {} (names are symbols or demangled names, as \
                 `mcubench stack` prints them)",
                image.path().display()
            )));
        }
        Ok(Hook { name: via.to_string(), start, end, targets: targets.to_vec() })
    }
}

/// The line (from 1) of the first line of `text` that holds `needle` after a `via:` key.
fn line_with(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.find("via:").is_some_and(|k| l[k..].contains(needle))).map(|n| n + 1)
}

/// The line (from 1) of the `k`-th list item (from 0) after the line that starts with `key`.
fn nth_line_with(text: &str, key: &str, k: usize) -> Option<usize> {
    let start = text.lines().position(|l| l.starts_with(key))?;
    text.lines()
        .enumerate()
        .skip(start + 1)
        .filter(|(_, l)| l.trim_start().starts_with("- "))
        .nth(k)
        .map(|(n, _)| n + 1)
}

/// The first key given twice in one block mapping of `text`: (key, first line, second line),
/// lines from 1. Block mappings only (one key per line, as annotation files are written); a
/// duplicate inside a one-line flow mapping is left to the YAML parser. Scoped by indentation
/// and list items, so the same key in two list entries (`- site: a` / `- site: b`) is fine.
pub(crate) fn duplicate_key(text: &str) -> Option<(String, usize, usize)> {
    let mut scopes: Vec<(usize, BTreeMap<String, usize>)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = match raw.find(" #") {
            Some(k) => &raw[..k],
            None if raw.trim_start().starts_with('#') => "",
            None => raw,
        };
        if line.trim().is_empty() || line.trim_start().starts_with("---") {
            continue;
        }
        let mut indent = line.len() - line.trim_start().len();
        let mut content = line.trim_start();
        let mut item = false;
        while let Some(rest) = content.strip_prefix("- ") {
            let rest_trim = rest.trim_start();
            indent += content.len() - rest_trim.len();
            content = rest_trim;
            item = true;
        }
        while scopes.last().is_some_and(|(i, _)| *i > indent || (item && *i == indent)) {
            scopes.pop();
        }
        let Some(key) = block_key(content) else { continue };
        if scopes.last().is_none_or(|(i, _)| *i != indent) {
            scopes.push((indent, BTreeMap::new()));
        }
        let (_, keys) = scopes.last_mut().expect("pushed");
        if let Some(&first) = keys.get(&key) {
            return Some((key, first, n + 1));
        }
        keys.insert(key, n + 1);
    }
    None
}

/// The key of a block-mapping line (`key:` or `key: value`, plain or quoted), if it is one.
fn block_key(content: &str) -> Option<String> {
    if content.starts_with(['{', '[', '|', '>']) {
        return None;
    }
    let (key, rest) = if let Some(q) = content.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = content[1..].find(q)? + 1;
        (&content[1..end], &content[end + 1..])
    } else {
        let k = content.find(": ").or_else(|| content.ends_with(':').then(|| content.len() - 1))?;
        (&content[..k], &content[k..])
    };
    rest.trim_start().starts_with(':').then(|| key.trim().to_string())
}

/// An annotation entry that names a function (or, for `priorities`, an exception handler) the
/// analysed ELF does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The annotation file.
    pub file: PathBuf,
    /// Which kind of entry, e.g. `recursion function`.
    pub what: &'static str,
    pub name: String,
    pub elf: PathBuf,
}

impl Ignored {
    /// Whether `self` and `other` are the same entry (in builds that may differ).
    pub fn same_entry(&self, other: &Ignored) -> bool {
        (&self.file, self.what, &self.name) == (&other.file, other.what, &other.name)
    }
}

/// The entries that every build which read their file ignored: names no such build has, i.e.
/// typos or stale entries rather than inlining. `per_build` is each analysed build's annotation
/// file (if it read one) and the entries it ignored.
pub fn unknown_everywhere(per_build: &[(Option<&Path>, &[Ignored])]) -> Vec<Ignored> {
    let mut out: Vec<Ignored> = Vec::new();
    for i in per_build.iter().flat_map(|(_, ignored)| ignored.iter()) {
        if out.iter().any(|o| o.same_entry(i)) {
            continue;
        }
        let mut readers = per_build.iter().filter(|(file, _)| *file == Some(i.file.as_path()));
        if readers.all(|(_, ignored)| ignored.iter().any(|j| j.same_entry(i))) {
            out.push(i.clone());
        }
    }
    out
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind =
            if self.what == "priorities handler" { "an exception handler in the vector table" } else { "a function" };
        write!(
            f,
            "{}: {} `{}` is not {kind} of {} (names are symbols or demangled names without hash, as \
             `mcubench stack` prints)",
            self.file.display(),
            self.what,
            self.name,
            self.elf.display()
        )
    }
}

impl AnnotationFile {
    /// The `priorities` groups for the analyzer (`None` when the file has none), with a note
    /// for every name that is not a vector-table handler of `image` (skipped, like the entries
    /// [`AnnotationFile::resolve`] ignores).
    pub fn priority_groups(&self, image: &ElfImage) -> (Option<Vec<Vec<String>>>, Vec<Ignored>) {
        if self.priorities.is_empty() {
            return (None, Vec::new());
        }
        let fmap = FunctionMap::new(image);
        let handlers: Vec<u32> = image
            .vector_table()
            .and_then(|vt| {
                let n = image.section_by_name(&vt.section)?.size / 4;
                Some((2..n).filter_map(|k| image.word_at(vt.address + 4 * k)).filter(|w| w & 1 == 1).collect())
            })
            .unwrap_or_default();
        let mut ignored = Vec::new();
        let groups = self
            .priorities
            .iter()
            .map(|g| {
                g.iter()
                    .filter(|name| {
                        let ok = fmap.by_name(name).is_some_and(|f| handlers.contains(&(f.start | 1)));
                        if !ok {
                            ignored.push(Ignored {
                                file: self.path.clone(),
                                what: "priorities handler",
                                name: name.to_string(),
                                elf: image.path().to_path_buf(),
                            });
                        }
                        ok
                    })
                    .cloned()
                    .collect()
            })
            .collect();
        (Some(groups), ignored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_entries_missing_from_every_build_are_unknown() {
        let entry = |name: &str, elf: &str| Ignored {
            file: "s.stack.yaml".into(),
            what: "recursion function",
            name: name.into(),
            elf: elf.into(),
        };
        // `typo` is in no build; `inlined` is missing from the size build only.
        let speed = [entry("typo", "speed.elf")];
        let size = [entry("inlined", "size.elf"), entry("typo", "size.elf")];
        let file = Some(Path::new("s.stack.yaml"));
        let unknown = unknown_everywhere(&[(file, &speed), (file, &size)]);
        assert_eq!(unknown, [entry("typo", "speed.elf")]);
        assert!(unknown_everywhere(&[]).is_empty());
        assert_eq!(
            unknown[0].to_string(),
            "s.stack.yaml: recursion function `typo` is not a function of speed.elf (names are symbols or \
             demangled names without hash, as `mcubench stack` prints)"
        );
        // A file read by one build only (a matrix variant's own): that build decides.
        let other = [entry("inlined", "other.elf")];
        let unknown = unknown_everywhere(&[(file, &other), (Some(Path::new("general.stack.yaml")), &[])]);
        assert_eq!(unknown, [entry("inlined", "other.elf")]);
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let e = AnnotationFile::parse(Path::new("x.stack.yaml"), "recursion: {a: 2}\nrecursoin: {}\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("x.stack.yaml:2:"), "{msg}");
        assert!(msg.contains("recursoin"), "{msg}");
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let e = AnnotationFile::parse(Path::new("d.stack.yaml"), "recursion:\n  ping: 2\n  pong: 3\n  ping: 4\n")
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("duplicate") && msg.contains("ping"), "{msg}");
        assert!(msg.contains(":2") && msg.contains(":4"), "names both lines: {msg}");
    }

    #[test]
    fn indirect_entries_take_a_site_or_a_via() {
        let f = AnnotationFile::parse(
            Path::new("h.stack.yaml"),
            "indirect:\n  - { site: \"f@1\", targets: [a] }\n  - { via: malloc_hook, targets: [pool_alloc] }\n",
        )
        .expect("parses");
        assert_eq!(f.indirect[1].via.as_deref(), Some("malloc_hook"));
        assert_eq!(f.indirect[1].site, None);
        for (text, line) in [
            ("recursion: {a: 1}\nindirect:\n  - { site: f, via: h, targets: [a] }\n", 3),
            ("indirect:\n  - { site: f, targets: [a] }\n  - targets: [a]\n", 3),
        ] {
            let e = AnnotationFile::parse(Path::new("h.stack.yaml"), text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("h.stack.yaml:{line}:")), "{e}");
            assert!(e.contains("exactly one of `site`"), "{e}");
        }
    }

    #[test]
    fn parses_all_sections() {
        let f = AnnotationFile::parse(
            Path::new("a.yaml"),
            "recursion: {ping: 11}\nindirect:\n  - site: dispatch@1\n    targets: [op_add]\narrays:\n  - { site: dispatch, symbol: ops }\ninfeasible:\n  - { from: a, to: [b] }\nframes: {vla_sum: 104}\npriorities:\n  - [SysTick_Handler, Irq0_Handler]\n",
        )
        .expect("parses");
        assert_eq!(f.priorities, vec![vec!["SysTick_Handler".to_string(), "Irq0_Handler".to_string()]]);
        assert_eq!(f.recursion["ping"], 11);
        assert_eq!(f.arrays[0].stride, 4);
        assert_eq!(f.infeasible[0].to, vec!["b".to_string()]);
    }
}
