//! C++ (Itanium ABI) demangling: every `_Z` symbol g++ emits for tests/corpus/cpp_names.cpp
//! demangles as `arm-none-eabi-c++filt` prints it, and Rust legacy symbols (which share the
//! `_ZN…E` form) still lose their hash.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcubench_elf::demangle;

fn tool(name: &str) -> String {
    let t = format!("arm-none-eabi-{name}");
    assert!(
        Command::new(&t).arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success()),
        "{t} not found (apt-get install gcc-arm-none-eabi)"
    );
    t
}

/// Symbol names of the corpus file compiled at -O0 (everything emitted).
fn gxx_symbols() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/cpp_names.cpp");
    let obj = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpp_names.o");
    let ok = Command::new(tool("g++"))
        .args(["-mcpu=cortex-m4", "-mthumb", "-O0", "-fno-exceptions", "-fno-rtti", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("run g++");
    assert!(ok.success(), "g++ failed on {}", src.display());
    let out = Command::new(tool("nm")).arg(&obj).output().expect("run nm");
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn cxxfilt(names: &[String]) -> Vec<String> {
    let out = Command::new(tool("c++filt")).args(names).output().expect("run c++filt");
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn gxx_symbols_demangle_like_cxxfilt() {
    let names: Vec<String> = gxx_symbols().into_iter().filter(|n| n.starts_with("_Z")).collect();
    assert!(names.len() >= 10, "{names:?}");
    let expected = cxxfilt(&names);
    assert_eq!(expected.len(), names.len());
    let mismatches: Vec<String> = names
        .iter()
        .zip(&expected)
        .filter(|(n, e)| demangle(n) != **e)
        .map(|(n, e)| format!("{n}: ours `{}`, c++filt `{e}`", demangle(n)))
        .collect();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

#[test]
fn known_cpp_names() {
    // Strings as g++ 13 emits them for cpp_names.cpp.
    assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
    assert_eq!(demangle("_ZN3foo3barEi"), "foo::bar(int)");
    assert_eq!(demangle("_ZN3foo5twiceIiEET_S1_"), "int foo::twice<int>(int)");
    assert_eq!(demangle("_ZNK3foo3BufIjLi4EE3sumEv"), "foo::Buf<unsigned int, 4>::sum() const");
    assert_eq!(demangle("_ZN12_GLOBAL__N_16hiddenEPKc"), "(anonymous namespace)::hidden(char const*)");
    // GCC's unified constructor/destructor names, thunks, vtables.
    assert_eq!(demangle("_ZN3foo1SC5Ei"), "foo::S::S(int)");
    assert_eq!(demangle("_ZN3foo1SD5Ev"), "foo::S::~S()");
    assert_eq!(demangle("_ZThn8_N1C1gEv"), "non-virtual thunk to C::g()");
    assert_eq!(demangle("_ZTv0_n12_N1W1hEv"), "virtual thunk to W::h()");
    assert_eq!(demangle("_ZTVN3foo1SE"), "vtable for foo::S");
    // GCC clones keep their suffix.
    assert!(demangle("_ZN3foo3barEi.part.0").starts_with("foo::bar(int)"), "{}", demangle("_ZN3foo3barEi.part.0"));
    // Rust legacy symbols are `_ZN…E` too: still Rust, hash dropped.
    assert_eq!(demangle("_ZN4core3fmt9Formatter3pad17h1a2b3c4d5e6f7a8bE"), "core::fmt::Formatter::pad");
    assert_eq!(demangle("_ZN3kat4main17hdeadbeefdeadbeefE.llvm.1234"), "kat::main");
    // Rust segments may hold dots (`..` for `::` inside impl paths): still Rust.
    assert_eq!(
        demangle("_ZN44_$LT$$RF$T$u20$as$u20$core..fmt..Display$GT$3fmt17hdff25859992a6206E"),
        "<&T as core::fmt::Display>::fmt"
    );
    assert_eq!(
        demangle("_ZN44_$LT$$RF$T$u20$as$u20$core..fmt..Display$GT$3fmt17hdff25859992a6206E.llvm.42"),
        "<&T as core::fmt::Display>::fmt"
    );
    // Not a valid mangling: unchanged.
    assert_eq!(demangle("_Zfoo"), "_Zfoo");
    assert_eq!(demangle("__aeabi_fadd"), "__aeabi_fadd");
}
