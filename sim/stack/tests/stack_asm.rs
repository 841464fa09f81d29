//! Hand-written assembly (tests/asm/*.S, each with its expected bounds derived by hand in its
//! comments): size-0 function symbols with `bl` to local subroutines, SP loops with a trip
//! count the code shows (and an annotation request with candidates when it does not), a
//! bootloader's SP hand-off, vector tables that stop where they really end, and ARMv6-M switch
//! tables (`mov pc`/`add pc` through a table after the code) followed case by case.
//!
//! The fast tier analyses the committed ELFs (tests/data/asm-*.elf); the full tier rebuilds
//! them from source with tests/corpus/build-asm.sh and checks that the rebuild is identical to
//! the committed files.

use std::path::{Path, PathBuf};
#[cfg(feature = "full")]
use std::process::{Command, Stdio};

use mcubench_elf::ElfImage;
use mcubench_stack::{Annotations, Bound, CallKind, Frame, StackOptions, StackReport, analyze};

#[cfg(not(feature = "full"))]
fn elf(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/asm-{name}.elf"))
}

#[cfg(feature = "full")]
fn elf(name: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stack-asm");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/build-asm.sh");
        let ok = Command::new("bash").arg(script).arg(&out).stdout(Stdio::null()).status().expect("run script");
        assert!(ok.success(), "build-asm.sh failed (needs arm-none-eabi-gcc and -ld: bash ci/setup.sh)");
        out
    });
    dir.join(format!("asm-{name}.elf"))
}

fn report(name: &str, annotations: Annotations) -> StackReport {
    let image = ElfImage::read(&elf(name)).expect("ELF parses");
    analyze(&image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder")
}

fn bytes_of(r: &StackReport, f: &str) -> Bound {
    let i = r.functions.iter().position(|x| x.name == f).unwrap_or_else(|| panic!("no function {f}"));
    r.bound_of(i).expect("bound").0
}

fn frame_of(r: &StackReport, f: &str) -> Frame {
    r.function(f).unwrap_or_else(|| panic!("no function {f}")).frame.clone()
}

fn reset(r: &StackReport) -> Bound {
    r.roots.iter().find(|x| x.role == "reset").expect("reset root").bound.clone()
}

#[test]
fn bl_to_local_labels_calls_a_local_subroutine() {
    let r = report("localsub", Annotations::default());
    let text = r.to_text(&[]);
    assert_eq!(frame_of(&r, "leaf"), Frame::Known { bytes: 8 }, "{text}");
    // A `bl` whose target pops the caller's frame is a far branch, not a subroutine.
    assert_eq!(frame_of(&r, "far_jump"), Frame::Known { bytes: 8 }, "{text}");
    // work's own frame takes in its local subroutines: max(16, 16 + 12, 24 + 12, 24 + 24).
    assert_eq!(frame_of(&r, "work"), Frame::Known { bytes: 48 }, "{text}");
    assert_eq!(bytes_of(&r, "work"), Bound::Exact { bytes: 56 }, "{text}");
    assert_eq!(reset(&r), Bound::Exact { bytes: 56 }, "{text}");
    assert_eq!(r.msp, Bound::Exact { bytes: 56 }, "{text}");
    assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
    // The unsized work runs to the end of .text, past its literal pool.
    let work = r.function("work").expect("work");
    assert!(work.end > 0x44, "work ends at 0x{:x}", work.end);
}

#[test]
fn sp_loops_with_a_constant_trip_count_are_summarised() {
    let r = report("sploop", Annotations::default());
    let text = r.to_text(&[]);
    assert_eq!(frame_of(&r, "bn_const_pop"), Frame::Known { bytes: 100 }, "{text}");
    assert_eq!(frame_of(&r, "bn_const_push"), Frame::Known { bytes: 40 }, "{text}");
    assert_eq!(bytes_of(&r, "bn_const_push"), Bound::Exact { bytes: 48 }, "{text}");
    assert_eq!(frame_of(&r, "bn_count_up"), Frame::Known { bytes: 52 }, "{text}");
    // A count from an argument: no bound, and a frames: entry with the candidates.
    let var = r.function("bn_var").expect("bn_var");
    assert!(
        matches!(&var.frame, Frame::Divergent { detail, .. } if detail.contains("moves SP by -8 B per iteration")),
        "{:?}",
        var.frame
    );
    assert_eq!(var.frame_candidates, vec![(1, 28), (2, 36), (3, 44), (4, 52)]);
    assert!(matches!(reset(&r), Bound::Unbounded { .. }), "{text}");
    let ask = r.unresolved.iter().find(|u| u.function == "bn_var").expect("a frames suggestion for bn_var");
    assert_eq!(ask.annotation, r#"frames: { "bn_var": BYTES }"#);
    assert!(
        ask.what.contains(
            "28 B if it runs 1 time, 36 B if it runs 2 times, 44 B if it runs 3 times, 52 B if it runs 4 times"
        ),
        "{}",
        ask.what
    );
    // Annotated: the reset path is bn_const_pop's 100 B.
    let annotated: Annotations = serde_json::from_str(r#"{ "frames": { "bn_var": 52 } }"#).expect("annotations");
    let r = report("sploop", annotated);
    assert_eq!(reset(&r).bytes(), Some(100), "{}", r.to_text(&[]));
    assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
}

#[test]
fn sp_hand_off_ends_the_path_instead_of_being_alloca() {
    let r = report("handoff", Annotations::default());
    let text = r.to_text(&[]);
    for f in ["jump_msr", "jump_mov"] {
        let s = r.function(f).expect(f);
        assert_eq!(s.frame, Frame::Known { bytes: 8 }, "{f}: {text}");
        assert_eq!(s.handoffs.len(), 1, "{f}: {:?}", s.handoffs);
        assert!(s.calls.is_empty(), "{f}: the jump through the new reset vector is no call: {:?}", s.calls);
    }
    assert_eq!(reset(&r), Bound::Exact { bytes: 24 }, "{text}");
    assert_eq!(r.msp, Bound::Exact { bytes: 24 }, "{text}");
}

fn exception_roots(r: &StackReport) -> Vec<(String, String)> {
    r.roots.iter().map(|x| (x.name.clone(), x.role.clone())).collect()
}

#[test]
fn vector_table_ends_at_its_symbol_size() {
    let r = report("vectors", Annotations::default());
    let text = r.to_text(&[]);
    let roots = exception_roots(&r);
    let want: Vec<(String, String)> = [
        ("Reset_Handler", "reset"),
        ("NMI_Handler", "exception 2"),
        ("HardFault_Handler", "exception 3"),
        ("SysTick_Handler", "exception 15"),
        ("IRQ0_Handler", "exception 16"),
        ("IRQ1_Handler", "exception 17"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(roots, want, "{text}");
    assert!(
        r.address_taken.iter().any(|f| f == "op_add") && r.address_taken.iter().any(|f| f == "op_mul"),
        "{:?}",
        r.address_taken
    );
    assert_eq!(reset(&r).bytes(), Some(32), "{text}");
    assert_eq!(r.msp.bytes(), Some(624), "{text}");
}

#[test]
fn vector_table_inside_text_stops_at_the_first_word_that_is_no_handler() {
    let r = report("vectors-text", Annotations::default());
    let text = r.to_text(&[]);
    let roots = exception_roots(&r);
    let want: Vec<(String, String)> = [
        ("Reset_Handler", "reset"),
        ("NMI_Handler", "exception 2"),
        ("HardFault_Handler", "exception 3"),
        ("SysTick_Handler", "exception 15"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(roots, want, "{text}");
    assert!(
        r.address_taken.iter().any(|f| f == "op_add") && r.address_taken.iter().any(|f| f == "op_mul"),
        "{:?}",
        r.address_taken
    );
    assert_eq!(reset(&r).bytes(), Some(32), "{text}");
    assert_eq!(r.msp.bytes(), Some(364), "{text}");
}

#[test]
fn armv6m_switch_tables_are_followed_case_by_case() {
    let r = report("v6m-switch", Annotations::default());
    let text = r.to_text(&[]);
    // No `mov pc`/`add pc` of a switch is an indirect jump out of its function.
    for f in ["sw_words", "sw_bytes", "sw_guarded", "sw_gcc"] {
        let calls = &r.function(f).unwrap_or_else(|| panic!("no function {f}")).calls;
        assert!(!calls.iter().any(|c| matches!(c.kind, CallKind::IndirectTail)), "{f}: {text}");
    }
    assert_eq!(frame_of(&r, "sw_words"), Frame::Known { bytes: 8 }, "{text}");
    assert_eq!(frame_of(&r, "sw_bytes"), Frame::Known { bytes: 16 }, "{text}");
    // Table of case addresses: its deepest case calls `deep`: 8 + 80.
    assert_eq!(bytes_of(&r, "sw_words").bytes(), Some(88), "{text}");
    // Table of byte offsets (with a padding byte): 16 + 80.
    assert_eq!(bytes_of(&r, "sw_bytes").bytes(), Some(96), "{text}");
    // `cmp r0, #1; bhi`: two cases, not the pool word after them (which would give 88).
    assert_eq!(bytes_of(&r, "sw_guarded").bytes(), Some(16), "{text}");
    // GCC's `bl __gnu_thumb1_case_uqi` returns into a case: 8 + 80, not 8 + 4 (the helper).
    assert_eq!(frame_of(&r, "__gnu_thumb1_case_uqi"), Frame::Known { bytes: 4 }, "{text}");
    assert_eq!(bytes_of(&r, "sw_gcc").bytes(), Some(88), "{text}");
    assert_eq!(reset(&r).bytes(), Some(96), "{text}");
}

/// The committed ELFs are what the committed sources build to.
#[cfg(feature = "full")]
#[test]
fn committed_elfs_are_the_build_of_the_sources() {
    for name in ["localsub", "sploop", "handoff", "vectors", "vectors-text", "v6m-switch"] {
        let built = std::fs::read(elf(name)).expect("built ELF");
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/asm-{name}.elf"));
        let committed = std::fs::read(&committed).expect("committed ELF");
        assert!(
            built == committed,
            "tests/data/asm-{name}.elf differs from its source's build: run sim/stack/tests/corpus/build-asm.sh sim/stack/tests/data"
        );
    }
}
