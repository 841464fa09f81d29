//! Functions known not to return, by name, each with the reason: a call to one ends the path
//! in the caller ([`frame`](crate::frame)), so code after it (padding, a literal pool, another
//! block reached with a different SP) is not taken for a continuation of that path. The callee's
//! own stack still counts: the call is an edge like any other.
//!
//! Only names whose contract is "never returns" are listed (the C standard, the toolchain's
//! ABI, Rust's `-> !`); a program that defines one of them with a return breaks that contract
//! (undefined behaviour in C). Functions that do not return because of their code (a semihosting
//! SYS_EXIT, an infinite loop) need no entry: [`frame`](crate::frame) sees that in their code.

/// C library and toolchain functions: (symbol, why it never returns).
pub const C_NORETURN: &[(&str, &str)] = &[
    ("abort", "C11 7.22.4.1: abort does not return to its caller"),
    ("exit", "C11 7.22.4.4: exit does not return to its caller"),
    ("_exit", "POSIX _exit / newlib's libgloss _exit: terminates the process, never returns"),
    ("_Exit", "C11 7.22.4.5: _Exit does not return to its caller"),
    ("quick_exit", "C11 7.22.4.7: quick_exit does not return to its caller"),
    ("__stack_chk_fail", "GCC's stack protector: called on a smashed canary, declared noreturn"),
    ("__assert_func", "newlib's assert failure: declared _ATTRIBUTE((__noreturn__)), calls abort"),
    ("__assert", "newlib's assert failure (old entry): declared noreturn, calls __assert_func"),
    ("__assert_fail", "glibc-style assert failure: declared noreturn"),
    ("rust_begin_unwind", "the Rust #[panic_handler] (`fn(&PanicInfo) -> !`)"),
    ("__rustc::rust_begin_unwind", "the Rust #[panic_handler] (`fn(&PanicInfo) -> !`)"),
];

/// Rust functions by demangled path prefix: (prefix, why).
pub const RUST_NORETURN: &[(&str, &str)] = &[
    ("core::panicking::", "core::panicking's functions all return `!` (they call the panic handler)"),
    ("core::result::unwrap_failed", "core::result::unwrap_failed returns `!` (a panic)"),
    ("core::option::unwrap_failed", "core::option::unwrap_failed returns `!` (a panic)"),
    ("core::option::expect_failed", "core::option::expect_failed returns `!` (a panic)"),
    ("core::slice::index::slice_", "core::slice::index's *_fail functions return `!` (a panic)"),
    ("core::str::slice_error_fail", "core::str::slice_error_fail returns `!` (a panic)"),
    ("core::cell::panic_already_", "core::cell's panic_already_* functions return `!` (a panic)"),
];

/// Why the function with symbol `name` (demangled: `demangled`) never returns, if it is one of
/// the known ones. Closures and other items nested in a listed function are not listed.
pub fn reason(name: &str, demangled: &str) -> Option<&'static str> {
    if let Some((_, why)) = C_NORETURN.iter().find(|(n, _)| *n == name || *n == demangled) {
        return Some(why);
    }
    if demangled.contains("{{") || demangled.contains('{') {
        return None;
    }
    RUST_NORETURN
        .iter()
        .find(|(p, _)| {
            demangled.starts_with(p)
                && (p.ends_with("::") || p.ends_with('_') || demangled.len() == p.len() || {
                    // `core::result::unwrap_failed` but not `core::result::unwrap_failed_x`.
                    !demangled[p.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        })
        .map(|(_, why)| *why)
        .filter(|_| {
            // Only the panicking items themselves: `core::slice::index::slice_*_fail`.
            !demangled.starts_with("core::slice::index::slice_") || demangled.ends_with("_fail")
        })
}

/// Functions that only ever end the program by a panic or abort: the no-return functions above
/// except the normal exits (`exit`, `quick_exit`: atexit handlers and stdio flushing run on every
/// normal exit), plus panic machinery that is only reached on a panic but is not listed above
/// because not all of it returns `!` (`__rust_start_panic`, `std::panicking::*`,
/// `core::panic::*`, allocation failures, the out-of-line `*_fail` paths of slices and strings)
/// and mcubench's Rust support crate's failure exit (`mcubench_support::fail_with`: a `panic`
/// record, then exit). Cutting the calls into them removes exactly the panic/abort paths (and
/// what only they reach), never a path that goes on; used for the informative bound without
/// panic paths, never to end a path.
pub fn is_panic_or_abort(name: &str, demangled: &str) -> bool {
    const NORMAL_EXIT: [&str; 2] = ["exit", "quick_exit"];
    // rustc >= 1.89 mangles the panic handler as `__rustc::...`.
    const PANIC_NAMES: [&str; 3] = ["__rust_start_panic", "__rustc::__rust_start_panic", "mcubench_support::fail_with"];
    const PANIC_PREFIXES: [&str; 2] = ["std::panicking::", "core::panic::"];
    const ALLOC_FAILURES: [&str; 3] =
        ["alloc::alloc::handle_alloc_error", "alloc::raw_vec::handle_error", "alloc::raw_vec::capacity_overflow"];
    // Demangled Rust names may end in `::h<hash>` (legacy mangling).
    let base = match demangled.rsplit_once("::h") {
        Some((b, h)) if h.len() == 16 && h.bytes().all(|c| c.is_ascii_hexdigit()) => b,
        _ => demangled,
    };
    if reason(name, base).is_some() {
        return !NORMAL_EXIT.contains(&name) && !NORMAL_EXIT.contains(&base);
    }
    // `core::slice::copy_from_slice_impl::len_mismatch_fail`, `core::str::slice_error_fail`, ...
    let slice_or_str_failure = (base.starts_with("core::slice::") || base.starts_with("core::str::"))
        && (base.ends_with("_fail") || base.contains("_fail::"));
    PANIC_NAMES.contains(&name)
        || PANIC_NAMES.contains(&base)
        || PANIC_PREFIXES.iter().any(|p| base.starts_with(p))
        || slice_or_str_failure
        || ALLOC_FAILURES.iter().any(|f| base == *f || base.starts_with(&format!("{f}::")))
}

#[cfg(test)]
mod tests {
    use super::{is_panic_or_abort, reason};

    #[test]
    fn known_no_return_functions_have_reasons() {
        for n in ["abort", "_exit", "__stack_chk_fail", "__assert_func", "rust_begin_unwind"] {
            assert!(reason(n, n).is_some(), "{n}");
        }
        assert!(reason("_ZN4core9panicking9panic_fmt17h0E", "core::panicking::panic_fmt").is_some());
        assert!(reason("x", "core::panicking::assert_failed").is_some());
        assert!(reason("x", "core::result::unwrap_failed").is_some());
        assert!(reason("x", "core::slice::index::slice_end_index_len_fail").is_some());
        assert!(reason("x", "core::slice::index::slice_index_mut").is_none());
        assert!(reason("x", "core::result::unwrap_failed_not").is_none());
        assert!(reason("x", "core::panicking::panic_fmt::{{closure}}").is_none());
        assert!(reason("printf", "printf").is_none());
        assert!(reason("main", "main").is_none());
    }

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
