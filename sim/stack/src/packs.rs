//! Annotation packs: what the binary cannot tell about the C runtime libraries, shipped with
//! mcubench (`sim/stack/packs/*.yaml`) and applied without the user writing anything.
//!
//! A pack is made for one library version (newlib 3.3 as Debian 12 ships it; newlib 4.3–4.5 as
//! the Arm GNU Toolchain and Debian 13 ship it; each with the linking GCC's libgcc). It is
//! recognised by the ELF's symbols: the library's `family` symbols say the library is linked,
//! `version_any` (with stdio linked) and `version_none` (always) say it is this version. Packs of
//! one `library` are versions of it: when one is applied, the others' mismatch is not reported. Every entry carries its
//! reason (shown as the assumption of a bound that rests on it) and, for recursion, the `cycle`
//! it cuts, checked against the ELF's direct calls. A pack whose family is present but whose
//! version check fails, and an entry whose check fails, are reported
//! ([`StackReport::packs`](crate::StackReport::packs)), never applied silently. A user's own
//! annotation for the same function or call site wins over the pack's.

use std::collections::HashMap;

use mcubench_elf::functions::FunctionMap;
use serde::{Deserialize, Serialize};

use crate::Annotations;
use crate::frame::{CallKind, FunctionStack};

/// The packs mcubench ships.
pub const PACKS: &[(&str, &str)] = &[
    ("newlib-3.3.yaml", include_str!("../packs/newlib-3.3.yaml")),
    ("newlib-4.yaml", include_str!("../packs/newlib-4.yaml")),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pack {
    pub name: String,
    /// The library, whatever its version (`newlib`): when the pack of the ELF's version is
    /// applied, the other versions' packs are not reported. Default: the pack's name.
    #[serde(default)]
    pub library: Option<String>,
    pub describes: String,
    pub recognise: Recognise,
    #[serde(default)]
    pub recursion: Vec<PackRecursion>,
    #[serde(default)]
    pub indirect: Vec<PackIndirect>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recognise {
    /// Any of these linked: the library is in the ELF.
    pub family: Vec<String>,
    /// Any of these linked: the part of the library the version check is about is linked.
    #[serde(default)]
    pub stdio: Vec<String>,
    /// With `stdio` linked: one of these must be linked ...
    #[serde(default)]
    pub version_any: Vec<String>,
    /// ... and, stdio linked or not, none of these (symbols only other versions have).
    #[serde(default)]
    pub version_none: Vec<String>,
    /// Linked: streams may have hooks the pack does not list (`stream_hooks` entries are off).
    #[serde(default)]
    pub other_hooks: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackRecursion {
    pub function: String,
    pub depth: u32,
    /// The cycle the entry cuts, each calling the next (the last calls the first) directly.
    pub cycle: Vec<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackIndirect {
    /// A function: all its indirect call sites.
    pub site: String,
    pub targets: Vec<String>,
    /// The targets are the FILE hooks: not applied when `other_hooks` are linked.
    #[serde(default)]
    pub stream_hooks: bool,
    /// Not applied when one of these is linked (what could install other targets).
    #[serde(default)]
    pub unless_linked: Vec<String>,
    pub reason: String,
}

/// What a pack did for one ELF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackUse {
    pub pack: String,
    pub describes: String,
    /// Entries applied (their function is in the ELF and their check passed).
    pub applied: usize,
    /// Why the pack or some of its entries were not applied.
    pub notes: Vec<String>,
}

/// The shipped packs, parsed (they are part of the program: an error is a bug, caught by the
/// unit test below).
pub fn shipped() -> Vec<Pack> {
    PACKS.iter().map(|(file, text)| parse(file, text).unwrap_or_else(|e| panic!("{e}"))).collect()
}

/// One pack file. A key given twice in one mapping, and two `indirect` entries for one site or
/// two `recursion` entries for one function and cycle (the later would silently replace the
/// earlier), are errors naming both lines.
pub fn parse(file: &str, text: &str) -> Result<Pack, String> {
    if let Some((key, first, second)) = crate::annotations::duplicate_key(text) {
        return Err(format!("pack {file}: duplicate key `{key}`: first at {file}:{first}, again at {file}:{second}"));
    }
    let pack: Pack = serde_yaml_ng::from_str(text).map_err(|e| format!("pack {file}: {e}"))?;
    // Line of the n-th (from 0) entry of a list whose items start with `- <key>:`.
    let entry_line = |key: &str, n: usize| {
        text.lines()
            .enumerate()
            .filter(|(_, l)| l.trim_start().strip_prefix("- ").is_some_and(|r| r.trim_start().starts_with(key)))
            .nth(n)
            .map_or(0, |(k, _)| k + 1)
    };
    for (b, e) in pack.indirect.iter().enumerate() {
        if let Some(a) = pack.indirect[..b].iter().position(|x| x.site == e.site) {
            return Err(format!(
                "pack {file}: two `indirect` entries for site `{}`: first at {file}:{}, again at {file}:{}",
                e.site,
                entry_line("site:", a),
                entry_line("site:", b)
            ));
        }
    }
    for (b, e) in pack.recursion.iter().enumerate() {
        if let Some(a) = pack.recursion[..b].iter().position(|x| x.function == e.function && x.cycle == e.cycle) {
            return Err(format!(
                "pack {file}: two `recursion` entries for `{}` and one cycle: first at {file}:{}, again at {file}:{}",
                e.function,
                entry_line("function:", a),
                entry_line("function:", b)
            ));
        }
    }
    Ok(pack)
}

/// Name without GCC's clone suffixes (`__sinit.part.0` → `__sinit`).
fn base_name(name: &str) -> &str {
    let mut n = name;
    for suffix in [".part.", ".constprop.", ".isra.", ".cold"] {
        if let Some(k) = n.find(suffix) {
            n = &n[..k];
        }
    }
    n
}

/// Apply the shipped packs that recognise this ELF to `user` (its entries win): the annotations
/// to analyse with and what each pack did.
pub(crate) fn apply(
    image: &mcubench_elf::ElfImage,
    fmap: &FunctionMap,
    functions: &[FunctionStack],
    user: &Annotations,
) -> (Annotations, Vec<PackUse>) {
    let mut out = user.clone();
    let mut uses = Vec::new();
    let has = |n: &str| fmap.by_name(n).is_some();
    // Direct callees of each function, by base name.
    let mut by_base: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, f) in functions.iter().enumerate() {
        by_base.entry(base_name(&f.name)).or_default().push(i);
    }
    let calls = |a: &str, b: &str| -> bool {
        by_base.get(a).into_iter().flatten().any(|&i| {
            functions[i].calls.iter().any(|c| match c.kind {
                CallKind::Call { target } | CallKind::Tail { target } => {
                    fmap.at(target).is_some_and(|g| base_name(&g.name) == b)
                }
                _ => false,
            })
        })
    };
    // Packs of another version of a library whose pack for this version was applied: their
    // "not this version" note is only noise.
    let mut mismatched: Vec<(usize, String)> = Vec::new();
    let mut matched_libraries: Vec<String> = Vec::new();
    for pack in shipped() {
        let r = &pack.recognise;
        let library = pack.library.clone().unwrap_or_else(|| pack.name.clone());
        // The family may be recognised by a data symbol (`_global_impure_ptr`, `_impure_ptr`): a
        // program without stdio still links newlib's reentrancy data and exit.
        let has_symbol = |n: &str| has(n) || image.symbols().iter().any(|s| s.name == n);
        if !r.family.iter().any(|s| has_symbol(s)) {
            continue;
        }
        let mut u =
            PackUse { pack: pack.name.clone(), describes: pack.describes.clone(), applied: 0, notes: Vec::new() };
        {
            // Data symbols count (`__sglue`, `_global_impure_ptr`): the version is in the
            // library's data as much as in its functions.
            let stdio = r.stdio.iter().any(|s| has(s));
            let any = !stdio || r.version_any.is_empty() || r.version_any.iter().any(|s| has_symbol(s));
            let none: Vec<&String> = r.version_none.iter().filter(|s| has_symbol(s)).collect();
            if !any || !none.is_empty() {
                u.notes.push(format!(
                    "not applied: the library is linked but is not the version this pack describes ({}; symbols \
                     expected: one of {:?}, found: {:?}); annotate its recursion and indirect calls yourself",
                    pack.describes, r.version_any, none
                ));
                mismatched.push((uses.len(), library));
                uses.push(u);
                continue;
            }
            matched_libraries.push(library);
        }
        let other_hooks: Vec<&String> = r.other_hooks.iter().filter(|s| has(s)).collect();
        for e in &pack.recursion {
            if !by_base.contains_key(e.function.as_str()) {
                continue;
            }
            if e.cycle.iter().any(|m| !by_base.contains_key(m.as_str())) {
                continue; // a member is not linked: no cycle to cut
            }
            let n = e.cycle.len();
            let broken: Vec<String> = (0..n)
                .filter(|&k| !calls(&e.cycle[k], &e.cycle[(k + 1) % n]))
                .map(|k| format!("{} → {}", e.cycle[k], e.cycle[(k + 1) % n]))
                .collect();
            if !broken.is_empty() {
                // The cycle the entry is about does not exist in this build (another
                // configuration of the library): nothing to cut, and applying it could hide
                // some other recursion through the function.
                continue;
            }
            for &i in &by_base[e.function.as_str()] {
                let name = &functions[i].name;
                if !user.recursion.contains_key(name) && !out.recursion.contains_key(name) {
                    out.recursion.insert(name.clone(), e.depth);
                    out.reasons.insert(format!("recursion:{name}"), format!("{} pack: {}", pack.name, e.reason));
                }
            }
            u.applied += 1;
        }
        for e in &pack.indirect {
            if !has(&e.site) {
                continue;
            }
            if e.stream_hooks && !other_hooks.is_empty() {
                u.notes.push(format!(
                    "entry `indirect: {}` not applied: {:?} linked, so streams may have other hooks",
                    e.site, other_hooks
                ));
                continue;
            }
            if e.unless_linked.iter().any(|s| has(s)) {
                continue;
            }
            let user_has = user.indirect.keys().any(|k| {
                k == &e.site
                    || k.strip_prefix(e.site.as_str()).is_some_and(|r| r.starts_with('@') || r.starts_with('+'))
            });
            if user_has {
                continue;
            }
            let targets: Vec<String> = e.targets.iter().filter(|t| has(t)).cloned().collect();
            out.indirect.insert(e.site.clone(), targets);
            out.reasons.insert(format!("indirect:{}", e.site), format!("{} pack: {}", pack.name, e.reason));
            u.applied += 1;
        }
        uses.push(u);
    }
    let superseded: Vec<usize> =
        mismatched.into_iter().filter(|(_, library)| matched_libraries.contains(library)).map(|(k, _)| k).collect();
    let uses = uses.into_iter().enumerate().filter(|(k, _)| !superseded.contains(k)).map(|(_, u)| u).collect();
    (out, uses)
}

#[cfg(test)]
mod tests {
    #[test]
    fn shipped_packs_parse_and_every_entry_has_a_reason() {
        for p in super::shipped() {
            assert!(!p.recognise.family.is_empty(), "{}", p.name);
            assert!(p.recursion.iter().all(|e| !e.reason.is_empty() && e.cycle.contains(&e.function)));
            assert!(
                p.indirect
                    .iter()
                    .all(|e| !e.reason.is_empty() && (!e.targets.is_empty() || !e.unless_linked.is_empty()))
            );
        }
    }

    const MINIMAL: &str = "name: p\ndescribes: d\nrecognise:\n  family: [f]\n";

    #[test]
    fn a_duplicate_key_in_a_pack_is_an_error_naming_both_lines() {
        let text = format!("{MINIMAL}indirect:\n  - site: a\n    targets: [b]\n    targets: [c]\n    reason: r\n");
        let e = super::parse("p.yaml", &text).unwrap_err();
        assert!(e.contains("duplicate key `targets`") && e.contains("p.yaml:7") && e.contains("p.yaml:8"), "{e}");
    }

    #[test]
    fn two_entries_for_one_site_or_cycle_are_an_error_naming_both_lines() {
        let entry = "  - site: a\n    targets: [b]\n    reason: r\n";
        let text = format!("{MINIMAL}indirect:\n{entry}  - site: x\n    targets: [b]\n    reason: r\n{entry}");
        let e = super::parse("p.yaml", &text).unwrap_err();
        assert!(e.contains("site `a`") && e.contains("p.yaml:6") && e.contains("p.yaml:12"), "{e}");
        let entry = "  - function: f\n    depth: 1\n    cycle: [f, g]\n    reason: r\n";
        let text = format!("{MINIMAL}recursion:\n{entry}{entry}");
        let e = super::parse("p.yaml", &text).unwrap_err();
        assert!(e.contains("`f`") && e.contains("p.yaml:6") && e.contains("p.yaml:10"), "{e}");
        // The same function with another cycle is another entry (newlib's two __sbprintf cycles).
        let other = "  - function: f\n    depth: 1\n    cycle: [f, h]\n    reason: r\n";
        assert!(super::parse("p.yaml", &format!("{MINIMAL}recursion:\n{entry}{other}")).is_ok());
    }

    #[test]
    fn each_newlib_pack_rejects_the_other_versions_symbols() {
        // The version checks of the two newlib packs exclude each other: a symbol one requires
        // (or only its version has) is one the other refuses.
        let packs = super::shipped();
        let by =
            |n: &str| packs.iter().find(|p| p.name == n).unwrap_or_else(|| panic!("{n} shipped")).recognise.clone();
        let (v3, v4) = (by("newlib-3.3"), by("newlib-4"));
        assert!(v4.version_any.iter().all(|s| v3.version_none.contains(s)), "{v3:?} {v4:?}");
        assert!(v3.version_any.iter().any(|s| v4.version_none.contains(s)), "{v3:?} {v4:?}");
        assert!(
            v3.version_none.contains(&"_impure_data".to_string())
                && v4.version_none.contains(&"_global_impure_ptr".to_string())
        );
        let library = |n: &str| packs.iter().find(|p| p.name == n).and_then(|p| p.library.clone());
        assert_eq!(library("newlib-3.3").as_deref(), Some("newlib"), "one library: the superseded note is dropped");
        assert_eq!(library("newlib-4").as_deref(), Some("newlib"));
        // newlib 4's family symbols are 4.x-only: a 3.x ELF never matches it.
        assert!(v4.family.iter().all(|s| v3.version_none.contains(s)), "{v4:?}");
    }

    #[test]
    fn clone_suffixes_are_dropped() {
        assert_eq!(super::base_name("__sinit.part.0"), "__sinit");
        assert_eq!(super::base_name("f.constprop.0.isra.0"), "f");
        assert_eq!(super::base_name("main"), "main");
    }
}
