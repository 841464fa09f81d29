//! Rust trait-object vtables and the calls through them.
//!
//! rustc lays out every vtable as `[drop_in_place or 0, size, align, method, …]` in read-only
//! data ([`scan`]). A method call on a `&dyn Trait` / `&mut dyn Trait` / `Box<dyn Trait>` is
//! compiled as: the fat pointer's two words `(data, vtable)` loaded together (`ldrd rD, rV,
//! [rP, #k]`), the method loaded from its slot (`ldr rX, [rV, #slot]`) and called with the
//! data word as its receiver (`mov r0, rD; blx rX`). [`crate::frame`] marks indirect calls of
//! exactly that shape ([`crate::CallSite::fat_slot`]); [`Vtables::site_targets`] resolves them.
//!
//! # Why the slot's methods are the targets
//! - rustc calls a vtable method only through the slot of its method in the trait's layout,
//!   at a fixed byte offset from the vtable's start, and every vtable is a constant rustc
//!   emits into the image: there is no dynamic loading on these targets, vtables are never
//!   built at run time. So a call through slot `k` reaches a function stored at offset `k` of
//!   some vtable in the ELF.
//! - The structural scan can miss a vtable (one whose first method slot is 0, or whose size
//!   word looks like no size); hand-made tables of the same shape (core's `RawWakerVTable`
//!   behind a `RawWaker { data, vtable }`, a C `{ ctx, ops }` pair) are not rustc vtables at
//!   all. Their functions are words in the ELF's data outside the vtables found, so the
//!   targets also hold every function whose address is a word in data
//!   ([`Vtables::data_free`]).
//! - Left out: functions whose address only code builds (`movw`/`movt`, or a PC-relative `ldr`
//!   of a literal-pool word that nothing else addresses: [`crate::branch_literal`]), which reach
//!   memory only through stores at run time. That is the assumption: *a function table reached
//!   through the second word of a (receiver, table) pair is never assembled at run time from
//!   such addresses* (true of every rustc vtable; a hand-made table would have to be built in
//!   RAM and leaked as `&'static`). It is listed among the analyzer's limitations.
//! - The trait of the pointer at the call site is not known from the machine code (core is
//!   shipped with line tables only: no parameter types; most vtables carry no DWARF address),
//!   so the call may reach the slot of every vtable; each vtable's trait, named from its
//!   methods' symbols, is reported with the resolution.

use std::collections::{BTreeMap, BTreeSet};

use mcubench_elf::functions::FunctionMap;

/// One vtable found in read-only data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vtable {
    pub(crate) addr: u32,
    /// (address of the word, byte offset in the vtable, function address without the Thumb
    /// bit) of its `drop_in_place` (offset 0, when not 0) and each method.
    pub(crate) words: Vec<(u32, u32, u32)>,
}

/// Rust vtables in the read-only words `words` (address, value), contiguous runs of
/// `[drop_in_place or 0, size, align, method, …]` with at least one method.
pub(crate) fn scan(words: &[(u32, u32)], is_fn: &dyn Fn(u32) -> bool) -> Vec<Vtable> {
    let mut out = Vec::new();
    let mut k = 0;
    while k + 3 < words.len() {
        let w = |i: usize| words[k + i].1;
        let contiguous = (0..4).all(|i| words[k + i].0 == words[k].0 + 4 * i as u32);
        let drop_ok = w(0) == 0 || is_fn(w(0));
        let size_ok = w(1) < (1 << 24);
        let align_ok = w(2).is_power_of_two() && w(2) <= 4096 && (w(1) % w(2) == 0);
        if contiguous && drop_ok && size_ok && align_ok && is_fn(w(3)) {
            let mut v = Vtable { addr: words[k].0, words: Vec::new() };
            if w(0) != 0 {
                v.words.push((words[k].0, 0, w(0) & !1));
            }
            let mut j = 3;
            while k + j < words.len() && words[k + j].0 == words[k].0 + 4 * j as u32 && is_fn(words[k + j].1) {
                v.words.push((words[k + j].0, 4 * j as u32, words[k + j].1 & !1));
                j += 1;
            }
            out.push(v);
            k += j;
        } else {
            k += 1;
        }
    }
    out
}

/// The trait a method symbol belongs to: `Trait` of `<T as Trait>::method` (generic
/// arguments kept), `None` for any other name (inherent functions, default methods, drop
/// glue, whose names do not say).
pub(crate) fn trait_of(demangled: &str) -> Option<String> {
    let inner = demangled.strip_prefix('<')?;
    // The `>` that closes the leading `<...>`, then ` as ` at depth 0 inside it.
    let (mut depth, mut close) = (0i32, None);
    for (i, ch) in inner.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' if depth == 0 => {
                close = Some(i);
                break;
            }
            '>' => depth -= 1,
            _ => {}
        }
    }
    let head = &inner[..close?];
    let (mut depth, mut at) = (0i32, None);
    let bytes = head.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b' ' if depth == 0 && head[i..].starts_with(" as ") => at = Some(i),
            _ => {}
        }
    }
    Some(head[at? + 4..].to_string())
}

/// The vtables of an image and the facts a call through one rests on.
#[derive(Debug, Default)]
pub(crate) struct Vtables {
    pub(crate) tables: Vec<Vtable>,
    /// Functions whose address is a word in data (read-only or not, and literal-pool words
    /// that something other than a PC-relative `ldr` may address) outside the method slots of
    /// the vtables found: possibly in a table the scan did not recognise ([module docs](self)).
    pub(crate) data_free: BTreeSet<u32>,
    /// The ELF holds Rust code (functions of `core`): only then are (receiver, table) pairs
    /// taken for trait objects. A C program's `{ ctx, ops }` pairs keep the address-taken set.
    pub(crate) rust: bool,
}

/// Whether `fmap` holds Rust's `core` (legacy `_ZN4core` or v0 `_R` mangling, demangled to a
/// `core::` path).
pub(crate) fn has_rust_core(fmap: &FunctionMap) -> bool {
    fmap.functions().iter().any(|f| {
        (f.name.starts_with("_ZN") || f.name.starts_with("_R"))
            && (f.demangled.starts_with("core::") || f.demangled.starts_with("<core::"))
    })
}

impl Vtables {
    /// Targets of a call through slot `slot` of the vtable of a fat pointer (a
    /// [`crate::CallSite::fat_slot`]) and the text of the fact; `None` for an image without
    /// Rust's `core` (the caller falls back to the address-taken set). When no vtable has a
    /// function in that slot (typically slot 0, `drop_in_place`, of a `Box<dyn Trait>` whose
    /// vtables all have no drop glue, called only when not null), the targets are the
    /// functions in data outside vtables alone: the same argument as for any slot.
    pub(crate) fn site_targets(&self, slot: u32, fmap: &FunctionMap) -> Option<(BTreeSet<u32>, String)> {
        if !self.rust {
            return None;
        }
        let mut methods = BTreeSet::new();
        let mut traits: BTreeMap<String, usize> = BTreeMap::new();
        let mut unnamed = 0usize;
        for v in &self.tables {
            let Some(&(_, _, f)) = v.words.iter().find(|(_, o, _)| *o == slot) else { continue };
            methods.insert(f);
            match self.trait_name(v, fmap) {
                Some(t) => *traits.entry(t).or_default() += 1,
                None => unnamed += 1,
            }
        }
        let n_tables: usize = traits.values().sum::<usize>() + unnamed;
        let mut named: Vec<String> = traits.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
        if unnamed > 0 {
            named.push(format!("unnamed ×{unnamed}"));
        }
        let extra = self.data_free.difference(&methods).count();
        let mut targets = methods;
        targets.extend(self.data_free.iter().copied());
        let why = format!(
            "a trait-object call through vtable slot {} (byte offset {slot}) of a fat pointer, of unknown trait: \
             {} targets, the methods in that slot of the {n_tables} vtables ({}) and the {extra} functions whose \
             address is a word in data outside vtables",
            slot / 4,
            targets.len(),
            named.join(", "),
        );
        Some((targets, why))
    }

    /// The trait of `v`, from its methods' symbols (`<T as Trait>::m`); several for a vtable
    /// of a trait with supertraits (joined with ` + `).
    fn trait_name(&self, v: &Vtable, fmap: &FunctionMap) -> Option<String> {
        let mut names: Vec<String> = Vec::new();
        for &(_, off, f) in &v.words {
            if off == 0 {
                continue;
            }
            if let Some(t) = fmap.at(f | 1).and_then(|g| trait_of(&g.demangled))
                && !names.contains(&t)
            {
                names.push(t);
            }
        }
        (!names.is_empty()).then(|| names.join(" + "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traits_come_from_qualified_method_names() {
        assert_eq!(
            trait_of("<mcubench_support::Line as core::fmt::Write>::write_str").as_deref(),
            Some("core::fmt::Write")
        );
        assert_eq!(trait_of("<&mut W as core::fmt::Write>::write_fmt").as_deref(), Some("core::fmt::Write"));
        assert_eq!(
            trait_of("<core::option::Option<&[u8]> as core::fmt::Debug>::fmt").as_deref(),
            Some("core::fmt::Debug")
        );
        assert_eq!(
            trait_of("<<T as Foo>::Out as core::ops::function::FnOnce<(A,)>>::call_once").as_deref(),
            Some("core::ops::function::FnOnce<(A,)>")
        );
        assert_eq!(trait_of("core::fmt::Write::write_char"), None);
        assert_eq!(trait_of("<core::fmt::Formatter>::pad"), None);
    }

    #[test]
    fn a_vtable_is_drop_size_align_then_methods() {
        let is_fn = |w: u32| w & 1 == 1 && (0x100..0x200).contains(&w);
        // A 2-method vtable (size 8, align 4), a word that is no method, then a vtable
        // without drop glue and one method.
        let words = [
            (0x1000, 0x101),
            (0x1004, 8),
            (0x1008, 4),
            (0x100c, 0x111),
            (0x1010, 0x121),
            (0x1014, 7),
            (0x1018, 0),
            (0x101c, 1),
            (0x1020, 1),
            (0x1024, 0x131),
        ];
        let v = scan(&words, &is_fn);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].words, vec![(0x1000, 0, 0x100), (0x100c, 12, 0x110), (0x1010, 16, 0x120)]);
        assert_eq!(v[1].words, vec![(0x1024, 12, 0x130)]);
    }
}
