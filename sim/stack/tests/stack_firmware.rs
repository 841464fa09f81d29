//! The stack analyzer on firmware/c/stack-test (see firmware/c/stack-test/EXPECTED.md for the
//! hand derivation of every number asserted here), and static bound ≥ painted high-water mark
//! measured under QEMU.

use std::path::{Path, PathBuf};
#[cfg(feature = "full")]
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use mcubench_elf::ElfImage;
use mcubench_stack::{Annotations, Arch, Bound, CallKind, Frame, StackOptions, StackReport, analyze};

/// The fast test tier analyses the committed copy (`tests/data/stack-test.elf`, debug info
/// stripped); the full tier rebuilds it from source with arm-none-eabi-gcc.
#[cfg(not(feature = "full"))]
fn firmware() -> &'static Path {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stack-test.elf"))
}

#[cfg(feature = "full")]
fn firmware() -> &'static Path {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stack-test-fw");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/build-stack-test.sh");
        let ok = Command::new("bash").arg(script).arg(&out).stdout(Stdio::null()).status().expect("run script");
        assert!(ok.success(), "build-stack-test.sh failed (needs arm-none-eabi-gcc and libnewlib-arm-none-eabi)");
        out.join("stack-test.elf")
    })
}

fn annotations() -> Annotations {
    serde_json::from_str(
        r#"{ "recursion": { "ping": 11 },
             "frames": { "vla_sum": 104, "alloca_sum": 48 },
             "indirect": { "dispatch": ["op_add", "op_mul", "op_buf", "op_neg"] } }"#,
    )
    .expect("annotations")
}

fn report(annotations: Annotations) -> StackReport {
    let image = ElfImage::read(firmware()).expect("stack-test.elf parses");
    analyze(&image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder")
}

fn frame(r: &StackReport, name: &str) -> Frame {
    r.function(name).unwrap_or_else(|| panic!("no function {name}")).frame.clone()
}

#[test]
fn frames_match_the_hand_derivation() {
    let r = report(Annotations::default());
    for (name, bytes) in [
        ("op_add", 0),
        ("op_buf", 24),
        ("dispatch", 8),
        ("ping", 16),
        ("pong", 8),
        ("fp_poly", 16),      // push {r3, lr} + vpush {d8}
        ("classify", 0),      // TBB
        ("classify_wide", 0), // TBH
        ("tail_after_frame", 64),
        ("Irq0_Handler", 48),
        ("main", 88),
        ("reset_c", 8),
        ("Reset_Handler", 0),
    ] {
        assert_eq!(frame(&r, name), Frame::Known { bytes }, "{name}");
    }
    assert!(matches!(frame(&r, "vla_sum"), Frame::Dynamic { bytes: 8, .. }), "{:?}", frame(&r, "vla_sum"));
    assert!(matches!(frame(&r, "alloca_sum"), Frame::Dynamic { bytes: 8, .. }));
}

#[test]
fn call_sites_carry_the_sp_offset() {
    let r = report(Annotations::default());
    let tail = r.function("tail_after_frame").expect("tail_after_frame");
    let finish = r.function("finish").expect("finish").start;
    let step = r.function("step").expect("step").start;
    // The frame is popped before `b.w finish`: the tail call costs 0 B of the caller's frame.
    assert!(tail.calls.iter().any(|c| c.kind == CallKind::Tail { target: finish } && c.depth == 0), "{:?}", tail.calls);
    assert!(tail.calls.iter().any(|c| c.kind == CallKind::Call { target: step } && c.depth == 64));
    let dispatch = r.function("dispatch").expect("dispatch");
    assert!(dispatch.calls.iter().any(|c| c.kind == CallKind::Indirect && c.depth == 8));
    // op_* are address-taken (the ops[] table), and init_bias through .init_array.
    for f in ["op_add", "op_mul", "op_buf", "op_neg", "init_bias"] {
        assert!(r.address_taken.iter().any(|a| a == f), "{f} not address-taken: {:?}", r.address_taken);
    }
}

#[test]
fn without_annotations_recursion_and_alloca_are_unbounded_and_listed() {
    let r = report(Annotations::default());
    let reset = r.root("Reset_Handler").expect("reset root");
    assert!(matches!(reset.bound, Bound::Unbounded { .. }), "{:?}", reset.bound);
    assert!(matches!(r.msp, Bound::Unbounded { .. }));
    assert!(!r.unresolved.is_empty());
    assert!(
        r.unresolved.iter().all(|u| ["recursion:", "indirect:", "frames:"].iter().any(|k| u.annotation.starts_with(k)))
    );
    // The recursion and the alloca, each with its entry, in one run.
    assert!(r.unresolved.iter().any(|u| u.annotation.starts_with("recursion:")), "{:?}", r.unresolved);
    assert!(r.unresolved.iter().any(|u| u.annotation.starts_with("frames:")), "{:?}", r.unresolved);
}

#[test]
fn annotated_bounds() {
    let r = report(annotations());
    let bytes = |name: &str| r.root(name).unwrap_or_else(|| panic!("no root {name}")).bound.bytes();
    // reset_c 8 + main 88 + mb_kat 1128 + mb_emit.part.0 24.
    assert_eq!(bytes("Reset_Handler"), Some(1248));
    // Irq0_Handler 48 + dispatch 8 + op_buf 24.
    assert_eq!(bytes("Irq0_Handler"), Some(80));
    assert_eq!(r.root("SysTick_Handler").expect("SysTick").bound, Bound::Exact { bytes: 0 });
    // 1248 + Σ handlers (24 + 1096 + 0 + 80) + 4 levels × (104 + 4) B stacked.
    assert_eq!(r.msp.bytes(), Some(1248 + 24 + 1096 + 80 + 4 * 108));
    assert!(matches!(r.msp, Bound::Bounded { .. }));
}

/// Painted whole-run high-water mark from the `end` record of a QEMU run.
#[cfg(feature = "full")]
fn measured_stack() -> Option<u32> {
    let out = Command::new("timeout")
        .args(["30", "qemu-system-arm", "-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic", "-no-reboot"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(firmware())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let end = text.lines().find(|l| l.starts_with("@mcubench/1 end "))?;
    assert!(end.contains("failed=0"), "stack-test KATs failed: {text}");
    end.split(' ').find_map(|f| f.strip_prefix("stack=")).and_then(|v| v.parse().ok())
}

#[test]
#[cfg(feature = "full")]
fn static_bound_is_not_below_the_measured_high_water_mark() {
    let measured = measured_stack().expect("QEMU run of stack-test with an end record (needs qemu-system-arm)");
    let r = report(annotations());
    let msp = r.msp.bytes().expect("bounded with annotations");
    assert!(measured > 1000, "measured {measured}");
    assert!(msp >= measured, "static MSP bound {msp} B below measured high-water mark {measured} B");
    let reset = r.root("Reset_Handler").and_then(|x| x.bound.bytes()).expect("reset bound");
    eprintln!("stack-test: measured {measured} B, static reset path {reset} B, MSP with handlers {msp} B");
}

#[test]
fn exception_frames_per_core() {
    use mcubench_stack::{Arch, exception_frame};
    // Basic 32 B / extended 104 B, +4 B alignment.
    assert_eq!(exception_frame(Arch::V6M, false, false), 36);
    assert_eq!(exception_frame(Arch::V7M, false, true), 36, "no Security Extension before ARMv8-M");
    assert_eq!(exception_frame(Arch::V7EM, true, false), 108);
    // ARMv8-M with the Security Extension: + 40 B additional state context, + 64 B S16–S31.
    assert_eq!(exception_frame(Arch::V8MMain, true, false), 108);
    assert_eq!(exception_frame(Arch::V8MMain, false, true), 76);
    assert_eq!(exception_frame(Arch::V8MMain, true, true), 212);
}

#[test]
fn armv8m_security_extension_is_counted_by_default() {
    let image = ElfImage::read(firmware()).expect("stack-test.elf parses");
    let msp = |security: Option<bool>| {
        let options = StackOptions {
            arch: Arch::V8MMain,
            annotations: annotations(),
            security_extension: security,
            ..StackOptions::default()
        };
        analyze(&image, &options).expect("decoder").msp
    };
    let base = 1248 + 24 + 1096 + 80;
    assert_eq!(msp(Some(false)).bytes(), Some(base + 4 * 108));
    let default = msp(None);
    assert_eq!(default.bytes(), Some(base + 4 * 212), "4 levels × (104 + 40 + 64 + 4) B");
    let Bound::Bounded { assumptions, .. } = default else { panic!("{default:?}") };
    assert!(assumptions.iter().any(|a| a.contains("Security Extension")), "{assumptions:?}");
}

#[test]
#[cfg(feature = "full")]
fn priority_groups_tighten_the_msp_bound_and_stay_sound() {
    let image = ElfImage::read(firmware()).expect("stack-test.elf parses");
    let msp = |groups: Option<Vec<Vec<String>>>| {
        let options = StackOptions { annotations: annotations(), priority_groups: groups, ..StackOptions::default() };
        analyze(&image, &options).expect("decoder").msp.bytes().expect("bounded")
    };
    let ungrouped = msp(None);
    // SysTick and IRQ 0 at one priority: only the deeper of them (Irq0_Handler, 80 B) nests.
    let grouped = msp(Some(vec![vec!["SysTick_Handler".into(), "Irq0_Handler".into()]]));
    assert_eq!(ungrouped, 1248 + 24 + 1096 + 80 + 4 * 108);
    assert_eq!(grouped, ungrouped - 108, "SysTick_Handler (0 B) and its stacked frame drop out");
    // A group naming an unknown handler changes nothing; a handler in no group still nests.
    assert_eq!(msp(Some(vec![vec!["No_Such_Handler".into()]])), ungrouped);
    let measured = measured_stack().expect("QEMU run of stack-test with an end record (needs qemu-system-arm)");
    assert!(grouped < ungrouped && grouped >= measured, "measured {measured} B, grouped {grouped} B");
}
