//! Calls through Rust trait-object vtables (`sim/stack/src/vtable.rs`) on real rustc output:
//! `tests/rust/dyn_calls.rs`, built here with rustc for thumbv7m-none-eabi (no cargo, no
//! crates: about 2 s). Every `dyn` call site of the program resolves to exactly the methods in
//! its slot of the four vtables (hand-checked against the ELF's `.rodata`: see the source's
//! header), not to the address-taken set, and the whole program is bounded with no
//! annotation; before, the `Formatter` writes reached `<u32 as Display>::fmt` through the
//! address-taken set and the reset path was an unbounded recursion.

// Full test tier: needs the thumb targets (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;
use std::process::Command;

use mcubench_elf::ElfImage;
use mcubench_stack::{Arch, Bound, Frame, StackOptions, analyze};

fn build() -> ElfImage {
    let dir = common::scratch("vtable");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rust");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--edition", "2021", "--target", "thumbv7m-none-eabi", "-C", "opt-level=2", "-C", "panic=abort"])
        .arg("-C")
        .arg(format!("link-arg=-T{}", src.join("dyn_calls.ld").display()))
        .arg("-o")
        .arg(dir.join("fw.elf"))
        .arg(src.join("dyn_calls.rs"))
        .output()
        .unwrap_or_else(|e| panic!("{rustc} could not be run ({e})"));
    assert!(
        out.status.success(),
        "rustc failed (rustup target add thumbv7m-none-eabi, see ci/setup.sh):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ElfImage::read(&dir.join("fw.elf")).expect("parses")
}

fn frame(r: &mcubench_stack::StackReport, name: &str) -> u32 {
    match r.function(name).unwrap_or_else(|| panic!("{name} in the ELF")).frame {
        Frame::Known { bytes } => bytes,
        ref f => panic!("{name}: {f:?}"),
    }
}

fn bound(r: &mcubench_stack::StackReport, name: &str) -> (u32, Vec<String>) {
    let i = r.functions.iter().position(|f| f.demangled == name || f.name == name).expect(name);
    match r.bound_of(i).expect("bound").0 {
        Bound::Bounded { bytes, assumptions } => (bytes, assumptions),
        Bound::Exact { bytes } => (bytes, Vec::new()),
        b => panic!("{name}: {b:?}"),
    }
}

#[test]
fn trait_object_calls_reach_exactly_their_vtable_slot() {
    let image = build();
    let options = StackOptions { arch: Arch::V7M, fpu: false, ..StackOptions::default() };
    let r = analyze(&image, &options).unwrap();

    // total_area: one call, slot 3 (byte 12) of a fat pointer loaded from the slice.
    let sites: Vec<_> = r.function("total_area").unwrap().calls.iter().map(|c| c.fat_slot).collect();
    assert_eq!(sites, vec![Some(12)]);
    let (b, why) = bound(&r, "total_area");
    let slot3 = "4 targets, the methods in that slot of the 4 vtables (core::fmt::Write ×2, dyn_calls::Shape ×2) and \
                 the 0 functions whose address is a word in data outside vtables";
    assert!(why.iter().any(|w| w.contains("vtable slot 3 (byte offset 12)") && w.contains(slot3)), "{why:#?}");
    // Its own frame plus the deepest of Square::area, Rect::area (a 160 B array) and the two
    // write_str: nothing else is reachable.
    let deepest = ["<dyn_calls::Square as dyn_calls::Shape>::area", "<dyn_calls::Rect as dyn_calls::Shape>::area"]
        .iter()
        .chain(
            ["<dyn_calls::Count as core::fmt::Write>::write_str", "<dyn_calls::Buf as core::fmt::Write>::write_str"]
                .iter(),
        )
        .map(|n| bound(&r, n).0)
        .max()
        .unwrap();
    let total_area_frame = frame(&r, "total_area");
    assert_eq!(b, total_area_frame + deepest, "total_area = frame {total_area_frame} + {deepest}");

    // Log::line: the `&mut dyn Write` field, written twice (a call, then a tail call).
    let line = r.function("dyn_calls::Log::line").unwrap();
    assert_eq!(line.calls.iter().map(|c| c.fat_slot).collect::<Vec<_>>(), vec![Some(12), Some(12)]);
    assert_eq!(bound(&r, "dyn_calls::Log::line").0, frame(&r, "dyn_calls::Log::line") + deepest);

    // emit: write_fmt (slot 5, byte 20) on the (data, vtable) pair passed in r0, r1: the two
    // `core::fmt::Write::write_fmt` instances, nothing else.
    let emit = r.function("emit").unwrap();
    assert_eq!(emit.calls.iter().map(|c| c.fat_slot).collect::<Vec<_>>(), vec![Some(20)]);
    let (_, why) = bound(&r, "emit");
    assert!(
        why.iter().any(|w| w.contains("vtable slot 5 (byte offset 20)")
            && w.contains("2 targets, the methods in that slot of the 2 vtables (core::fmt::Write ×2)")),
        "{why:#?}"
    );

    // The whole program is bounded with no annotation; no call is left to the address-taken set
    // but the formatter of `fmt::Argument` (a function pointer, not a vtable), whose targets
    // recurse nowhere.
    let reset = r.roots.iter().find(|x| x.role == "reset").unwrap();
    assert!(matches!(reset.bound, Bound::Bounded { .. }), "{:?}", reset.bound);
    assert!(r.unresolved.is_empty(), "{:#?}", r.unresolved);
}
