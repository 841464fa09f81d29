//! Prints the stack report of an ELF:
//! `cargo run -p mcubench-stack --example stack -- FILE.elf [v6m|v7m|v7em|v8m] [--json] [FUNCTION...]`.
//! Annotations (JSON, analyzer form) from the STACK_ANNOTATIONS environment variable.
use mcubench_elf::ElfImage;
use mcubench_stack::{Arch, StackOptions, analyze};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: stack FILE.elf [arch] [--json] [FUNCTION...]");
    let image = ElfImage::read(path.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut options = StackOptions::default();
    let mut json = false;
    let mut names = Vec::new();
    for a in &args[1..] {
        match a.as_str() {
            "v6m" => (options.arch, options.fpu) = (Arch::V6M, false),
            "v7m" => (options.arch, options.fpu) = (Arch::V7M, false),
            "v7em" => (options.arch, options.fpu) = (Arch::V7EM, true),
            "v8m" => (options.arch, options.fpu) = (Arch::V8MMain, true),
            "--json" => json = true,
            n => names.push(n),
        }
    }
    if let Ok(a) = std::env::var("STACK_ANNOTATIONS") {
        options.annotations = serde_json::from_str(&a).expect("STACK_ANNOTATIONS is JSON");
    }
    let report = analyze(&image, &options).expect("decoder");
    if json {
        println!("{}", serde_json::to_string_pretty(&report.view(&names)).unwrap());
    } else {
        print!("{}", report.to_text(&names));
    }
}
