//! Summary of the stack analysis of ELFs: `cargo run -p mcubench-stack --example stack-summary -- FILE...`.
use mcubench_elf::ElfImage;
use mcubench_stack::{Frame, StackOptions, analyze};
use mcubench_thumb::Arch;

fn main() {
    for path in std::env::args().skip(1) {
        let image = ElfImage::read(path.as_ref()).unwrap_or_else(|e| panic!("{e}"));
        let (arch, fpu) = if path.contains("v6m") {
            (Arch::V6M, false)
        } else if path.contains("v7m") {
            (Arch::V7M, false)
        } else if path.contains("v8m") {
            (Arch::V8MMain, true)
        } else {
            (Arch::V7EM, true)
        };
        let t = std::time::Instant::now();
        let annotations =
            std::env::var("STACK_ANNOTATIONS").map(|a| serde_json::from_str(&a).expect("JSON")).unwrap_or_default();
        let r = analyze(&image, &StackOptions { arch, fpu, annotations, ..StackOptions::default() }).expect("decoder");
        let el = t.elapsed();
        let bad: Vec<_> = r.functions.iter().filter(|f| !matches!(f.frame, Frame::Known { .. })).collect();
        let indirect = r
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .filter(|c| matches!(c.kind, mcubench_stack::CallKind::Indirect | mcubench_stack::CallKind::IndirectTail))
            .count();
        println!(
            "{path}: {} functions, {} not known, {indirect} indirect sites, {} unresolved, taken {}, {:?}",
            r.functions.len(),
            bad.len(),
            r.unresolved.len(),
            r.address_taken.len(),
            el
        );
        for f in &bad {
            println!("   {} {:?}", f.demangled, f.frame);
        }
        for root in &r.roots {
            println!("   root {} {} {:?} path {:?}", root.role, root.name, root.bound.bytes(), root.path.len());
            if let mcubench_stack::Bound::Unbounded { reason } = &root.bound {
                println!("      {reason}");
            }
        }
        println!("   msp {:?}", r.msp.bytes());
        for u in &r.unresolved {
            println!("   unresolved {} {}", u.what, u.annotation);
        }
        if std::env::var("VERBOSE").is_ok() {
            for root in &r.roots {
                println!("   {:?}", root.path);
            }
        }
    }
}
