//! The C run-time's own indirect calls, resolved from the ELF (crate `crt` module): real
//! arm-none-eabi-gcc + newlib firmware started by libgloss's `_mainCRTStartup`
//! (`--specs=nosys.specs`, default start files) with a constructor, a destructor and an atexit
//! handler is bounded with no annotations, and the bound is the hand-checked worst path
//! reset → `_mainCRTStartup` → `__libc_init_array` → `ctor` (its 600-byte buffer) → `touch`.
#![cfg(feature = "full")]

mod common;

use mcubench_elf::ElfImage;
use mcubench_stack::frame::{CallKind, FunctionStack};
use mcubench_stack::{StackOptions, analyze};

fn frame(fs: &[FunctionStack], name: &str) -> (u32, Vec<(CallKind, u32)>) {
    let f = fs.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{name} not in the report"));
    (f.frame.bytes().expect("known frame"), f.calls.iter().map(|c| (c.kind.clone(), c.depth)).collect())
}

#[test]
fn crt_init_fini_and_atexit_targets_come_from_the_elf() {
    let dir = common::scratch("crt");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/crt/crt.c");
    let src = src.to_str().unwrap();
    common::run(
        "arm-none-eabi-gcc",
        &["-mcpu=cortex-m4", "-mthumb", "-O2", "-g", "--specs=nosys.specs", "-o", "crt.elf", src],
        &dir,
    );
    let image = ElfImage::read(&dir.join("crt.elf")).expect("ELF parses");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
    let bound = reset.bound.bytes().unwrap_or_else(|| panic!("reset unbounded: {:?}\n{text}", reset.bound));
    let crt = r.packs.iter().find(|p| p.pack == "crt").unwrap_or_else(|| panic!("{:?}", r.packs));
    assert_eq!(crt.applied, 3, "{crt:?}");

    let by_name = |a: u32| r.functions.iter().find(|f| f.start == a & !1).map(|f| f.name.clone());
    // Hand-checked worst path: the depth of each caller at its call, then the leaf's frame.
    let (_, crt0) = frame(&r.functions, "_mainCRTStartup");
    let at_init = crt0
        .iter()
        .find(
            |(k, _)| matches!(k, CallKind::Call { target } if by_name(*target).as_deref() == Some("__libc_init_array")),
        )
        .expect("_mainCRTStartup calls __libc_init_array")
        .1;
    let (_, init) = frame(&r.functions, "__libc_init_array");
    let at_ctor = init.iter().filter(|(k, _)| matches!(k, CallKind::Indirect)).map(|c| c.1).max().expect("blx");
    let (ctor_frame, ctor_calls) = frame(&r.functions, "ctor");
    let (touch_frame, _) = frame(&r.functions, "touch");
    let at_touch = ctor_calls.iter().map(|c| c.1).max().expect("ctor calls touch");
    assert!(ctor_frame >= 600, "ctor frame {ctor_frame}");
    let worst = at_init + at_ctor + (ctor_frame.max(at_touch + touch_frame));
    assert_eq!(bound, worst, "{text}");
    assert!(reset.path.iter().any(|p| p.contains("ctor")), "{:?}", reset.path);
    assert!(r.msp.bytes().is_some(), "MSP unbounded: {:?}", r.msp);
}
