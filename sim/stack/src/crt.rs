//! The C run-time start-up and shut-down code (newlib's `__libc_init_array` /
//! `__libc_fini_array`, `__call_exitprocs` behind `exit`), whose indirect calls go through
//! tables the ELF itself holds: resolved from the ELF's data, not from the address-taken set
//! (which would make every constructor, `main` and `exit` reach each other: recursion).
//!
//! - `__libc_init_array` calls each word from `__preinit_array_start` to `__init_array_end`
//!   (the linker's `.preinit_array`/`.init_array`: C constructors, C++ static initialisers);
//!   `__libc_fini_array` each word from `__fini_array_start` to `__fini_array_end`. The targets
//!   are exactly the functions in those words (every one of them IS a target).
//! - `__call_exitprocs` calls the functions registered with `atexit`, `on_exit`,
//!   `__cxa_atexit` or `__register_exitproc`: the targets are the constant function addresses
//!   passed to them, when every call of them outside themselves passes one and none of them has
//!   its address taken (else the site keeps the address-taken set).
//!
//! Weak undefined hooks (`_ITM_registerTMCloneTable`, libgloss's `hardware_init_hook`) are
//! handled where the call is decoded ([`crate::frame`]): a call through the constant 0 calls
//! nothing. Entries here are annotations with reasons, like a pack's, and a user's own entry
//! for the same function wins; what was done is reported as the `crt` pack.

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;

use crate::Annotations;
use crate::callgraph::Taken;
use crate::frame::{CallKind, FunctionStack};
use crate::packs::PackUse;

/// Functions that call through a linker-bounded table: (function, [(start, end) symbols]).
const TABLES: &[(&str, &[(&str, &str)])] = &[
    (
        "__libc_init_array",
        &[("__preinit_array_start", "__preinit_array_end"), ("__init_array_start", "__init_array_end")],
    ),
    ("__libc_fini_array", &[("__fini_array_start", "__fini_array_end")]),
];

/// Functions that register an exit handler, with the argument register of the handler
/// (newlib 3.3: `atexit(fn)`, `on_exit(fn, arg)`, `__cxa_atexit(fn, arg, d)`,
/// `__register_exitproc(type, fn, arg, d)`).
const REGISTER: &[(&str, u8)] = &[("atexit", 0), ("on_exit", 0), ("__cxa_atexit", 0), ("__register_exitproc", 1)];

/// The function that calls the registered exit handlers.
const EXITPROCS: &str = "__call_exitprocs";

/// Whether the user already annotates the indirect calls of `site`.
fn user_has(user: &Annotations, site: &str) -> bool {
    user.indirect
        .keys()
        .any(|k| k == site || k.strip_prefix(site).is_some_and(|r| r.starts_with('@') || r.starts_with('+')))
}

fn symbol(image: &ElfImage, name: &str) -> Option<u32> {
    image.symbols().iter().find(|s| s.name == name).map(|s| s.address as u32)
}

/// Add the crt entries to `out` (annotations already holding the user's and the packs'):
/// what was done, or `None` when the ELF has none of these functions.
pub(crate) fn apply(
    image: &ElfImage,
    fmap: &FunctionMap,
    functions: &[FunctionStack],
    taken: &Taken,
    user: &Annotations,
    out: &mut Annotations,
) -> Option<PackUse> {
    let mut u = PackUse {
        pack: "crt".into(),
        describes: "C run-time init/fini tables and exit handlers, read from the ELF".into(),
        applied: 0,
        notes: Vec::new(),
    };
    let mut seen = false;
    let fn_name = |w: u32| fmap.at(w).filter(|_| w & 1 == 1).map(|g| g.name.clone());
    'table: for (site, ranges) in TABLES {
        if fmap.by_name(site).is_none() {
            continue;
        }
        seen = true;
        if user_has(user, site) {
            continue;
        }
        let mut targets = Vec::new();
        let mut words = Vec::new();
        for (start, end) in *ranges {
            let (Some(a), Some(b)) = (symbol(image, start), symbol(image, end)) else {
                u.notes.push(format!(
                    "{site}: symbols {start}/{end} not in the ELF; its calls keep the address-taken set"
                ));
                continue 'table;
            };
            let mut at = a;
            while at + 4 <= b {
                let Some(w) = image.word_at(u64::from(at)) else {
                    u.notes.push(format!("{site}: the table word at 0x{at:08x} ({start}..{end}) is not in the ELF"));
                    continue 'table;
                };
                words.push((at, w));
                at += 4;
            }
        }
        for (at, w) in words {
            match fn_name(w) {
                Some(n) => targets.push(n),
                None => {
                    u.notes.push(format!(
                        "{site}: the table word at 0x{at:08x} is 0x{w:08x}, not a function's Thumb address; its calls \
                         keep the address-taken set"
                    ));
                    continue 'table;
                }
            }
        }
        targets.sort();
        targets.dedup();
        let what: Vec<String> = ranges.iter().map(|(s, e)| format!("{s}..{e}")).collect();
        out.indirect.insert(site.to_string(), targets);
        out.reasons.insert(
            format!("indirect:{site}"),
            format!("crt: {site} calls each function of the table {} in the ELF", what.join(", ")),
        );
        u.applied += 1;
    }
    if fmap.by_name(EXITPROCS).is_some() {
        seen = true;
        if !user_has(user, EXITPROCS) {
            match exit_handlers(fmap, functions, taken) {
                Ok(mut targets) => {
                    targets.sort();
                    targets.dedup();
                    out.indirect.insert(EXITPROCS.to_string(), targets);
                    out.reasons.insert(
                        format!("indirect:{EXITPROCS}"),
                        format!(
                            "crt: {EXITPROCS} calls only the handlers registered with atexit/on_exit/__cxa_atexit/\
                             __register_exitproc, each call of which passes a constant function"
                        ),
                    );
                    u.applied += 1;
                }
                Err(note) => u.notes.push(format!("{EXITPROCS}: {note}; its calls keep the address-taken set")),
            }
        }
    }
    seen.then_some(u)
}

/// The functions registered as exit handlers, or why they cannot be known.
fn exit_handlers(fmap: &FunctionMap, functions: &[FunctionStack], taken: &Taken) -> Result<Vec<String>, String> {
    let registrar = |addr: u32| -> Option<(&str, u8)> {
        let g = fmap.at(addr)?;
        REGISTER.iter().find(|(n, _)| g.name == *n).map(|&(n, r)| (n, r))
    };
    if let Some(g) = REGISTER.iter().filter_map(|(n, _)| fmap.by_name(n)).find(|g| taken.all.contains(&g.start)) {
        return Err(format!("the address of {} is taken, so it may be called with any function", g.name));
    }
    let mut out = Vec::new();
    for f in functions {
        if registrar(f.start).is_some() {
            continue; // atexit → __register_exitproc passes its own argument on
        }
        for c in &f.calls {
            let (CallKind::Call { target } | CallKind::Tail { target }) = c.kind else { continue };
            let Some((name, reg)) = registrar(target) else { continue };
            match c.fn_args.iter().find(|(r, _)| *r == reg) {
                Some(&(_, a)) => out.push(fmap.at(a | 1).map_or_else(|| format!("0x{a:08x}"), |g| g.name.clone())),
                None => {
                    return Err(format!(
                        "{}+0x{:x} calls {name} with a handler that is not a constant function address",
                        f.name,
                        c.at - f.start
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Calls that restart the stack: a function whose first act sets SP (crt0's `_mainCRTStartup`
/// setting SP to `__stack`, [`FunctionStack::stack_reset`]) that the reset handler calls or
/// jumps to directly, called again from code it reaches itself (an indirect call resolved to
/// every address-taken function, when its address is taken), discards the stack in use and
/// starts over at the top: that use is the function's own bound, already part of the reset
/// handler's. Such edges are removed (they would be false recursion through `main`); every
/// other call of it keeps counting its caller's depth. `reset`: the reset handler's index.
pub(crate) fn cut_stack_restarts(
    functions: &[FunctionStack],
    reset: Option<usize>,
    edges: &mut [Vec<crate::callgraph::Edge>],
) {
    let Some(r) = reset else { return };
    let entered: Vec<usize> = edges[r]
        .iter()
        .filter_map(|e| e.as_ref().ok())
        .filter(|c| c.how == crate::callgraph::Resolution::Direct && functions[c.to].stack_reset.is_some())
        .map(|c| c.to)
        .chain(functions[r].stack_reset.map(|_| r))
        .collect();
    for f in entered {
        // Everything f reaches: calls from there back to f restart the stack.
        let mut seen = vec![false; functions.len()];
        let mut work = vec![f];
        seen[f] = true;
        while let Some(i) = work.pop() {
            for c in edges[i].iter().filter_map(|e| e.as_ref().ok()) {
                if !seen[c.to] {
                    seen[c.to] = true;
                    work.push(c.to);
                }
            }
        }
        for (i, es) in edges.iter_mut().enumerate() {
            if seen[i] && i != r {
                es.retain(|e| !matches!(e, Ok(c) if c.to == f));
            }
        }
    }
}
