//! The stack analyzer's call graph on real C (firmware/c/stack-calls, arm-none-eabi-gcc -O2):
//! every recursion cycle and every indirect call resolved too widely listed in one run of
//! `mcubench stack`, as one annotation file that bounds the firmware once its placeholders are
//! filled in; indirect calls through constant tables and struct slots resolved per site (an
//! unrelated deep address-taken function stays out of their bounds); one `via:` entry for a
//! malloc-style hook called from three places; errors naming file and line for a hook that does
//! not exist.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use common::{c_firmware, mcubench};
use mcubench_elf::ElfImage;
use mcubench_stack::annotations::AnnotationFile;
use mcubench_stack::{Bound, CallKind, StackOptions, StackReport, analyze};

fn stack_text(elf: &Path, annotations: Option<&Path>) -> String {
    let mut cmd = mcubench();
    cmd.arg("stack").arg(elf).args(["--board", "mps2-an386"]);
    if let Some(a) = annotations {
        cmd.arg("--annotations").arg(a);
    }
    let out = cmd.output().expect("mcubench runs");
    assert!(out.status.success(), "exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The annotation file `mcubench stack` prints for the unresolved sites.
fn template(text: &str) -> String {
    let start = text.find("unresolved (").unwrap_or_else(|| panic!("no unresolved block:\n{text}"));
    let body = &text[start..];
    let body = &body[body.find('\n').expect("header line") + 1..];
    body[..body.find("(end of unresolved)").expect("end marker")].to_string()
}

/// The report of the firmware with the annotation file `text` (resolved against the ELF).
fn report(image: &ElfImage, text: &str) -> StackReport {
    let file = AnnotationFile::parse(Path::new("stack-calls.stack.yaml"), text).expect("parses");
    let (annotations, ignored) = file.resolve(image).expect("resolves");
    assert!(ignored.is_empty(), "{ignored:?}");
    analyze(image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder")
}

fn bound(r: &StackReport, name: &str) -> Bound {
    let i = r.functions.iter().position(|f| f.name == name).unwrap_or_else(|| panic!("no function {name}"));
    r.bound_of(i).expect("bound").0
}

fn frame(r: &StackReport, name: &str) -> u32 {
    r.function(name).and_then(|f| f.frame.bytes()).unwrap_or_else(|| panic!("no known frame for {name}"))
}

/// The template with DEPTH and TARGET filled in with the firmware's facts (its source says them).
fn filled(t: &str) -> String {
    t.replace("DEPTH", "4")
        .replace("{ via: \"log_hook\", targets: [TARGET] }", "{ via: \"log_hook\", targets: [log_uart] }")
        .replace(
            "{ site: \"run_jobs@1\", targets: [TARGET] }",
            "{ site: \"run_jobs@1\", targets: [job_blink, job_count] }",
        )
}

#[test]
fn every_cycle_and_widely_resolved_call_in_one_run_and_the_pasted_entries_bound_it() {
    let elf = c_firmware("stack-calls");
    let text = stack_text(&elf, None);
    assert!(text.contains("Reset_Handler [reset]: unbounded"), "{text}");
    let t = template(&text);
    // Three independent recursions, each entry named after the function its closing call
    // re-enters, and the two indirect calls whose resolution to every address-taken function
    // closes a false cycle: pointed at by call site and by hook variable.
    for entry in [
        "\"tree_depth\": DEPTH",
        "\"parse_expr\": DEPTH",
        "\"emit_list\": DEPTH",
        "- { via: \"log_hook\", targets: [TARGET] }",
        "- { site: \"run_jobs@1\", targets: [TARGET] }",
    ] {
        assert!(t.lines().any(|l| l.trim_start() == entry.trim_start()), "no `{entry}` in:\n{t}");
    }
    assert!(text.contains("unresolved (5)"), "{text}");
    // The false cycles are blamed on the indirect calls, not on the functions they re-enter.
    let entries: Vec<&str> = t.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
    assert!(!entries.iter().any(|l| l.contains("job_count") || l.contains("cmd_flush")), "{t}");
    assert!(t.contains("goes through the indirect call at run_jobs+0x"), "{t}");
    assert!(t.contains("goes through the indirect call at log_event+0x"), "{t}");
    // The reset root's printed path reaches the recursion that makes it unbounded.
    let reset_path: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Reset_Handler [reset]"))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    let last = *reset_path.last().expect("a path");
    assert!(reset_path[..reset_path.len() - 1].contains(&last), "path does not close a cycle: {reset_path:?}");

    // Filled in and pasted: every root is bounded, nothing is left unresolved.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stack-calls.stack.yaml");
    std::fs::write(&file, filled(&t)).unwrap();
    let text = stack_text(&elf, Some(&file));
    assert!(text.contains("Reset_Handler [reset]: ") && !text.contains("[reset]: unbounded"), "{text}");
    assert!(!text.contains("unresolved ("), "{text}");
    assert!(text.contains("tree_depth has at most 4 activations"), "{text}");
}

#[test]
fn constant_tables_and_struct_slots_resolve_per_site() {
    let image = ElfImage::read(&c_firmware("stack-calls")).expect("ELF");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    // deep_report's address is taken (build_ids[]), so a call resolved to the address-taken
    // set would reach its 2 KiB frame.
    assert!(r.address_taken.iter().any(|a| a == "deep_report"), "{:?}", r.address_taken);
    let deep = frame(&r, "deep_report");
    assert!(deep >= 2048, "{deep}");
    let depth_at_indirect = |name: &str| {
        let f = r.function(name).expect("function");
        let c: Vec<_> =
            f.calls.iter().filter(|c| matches!(c.kind, CallKind::Indirect | CallKind::IndirectTail)).collect();
        assert_eq!(c.len(), 1, "{name}: {:?}", f.calls);
        assert!(c[0].loaded_from.is_some(), "{name}: {:?}", c[0]);
        c[0].depth
    };
    // apply: ops[i % 3](a, b), a constant table: its bound is the deepest op.
    let ops = ["op_add", "op_sub", "op_mul"].map(|o| frame(&r, o)).into_iter().max().unwrap();
    let apply = bound(&r, "apply").bytes().expect("apply bounded");
    assert_eq!(apply, (depth_at_indirect("apply") + ops).max(frame(&r, "apply")));
    // driver_write: uart_driver.write(s, n), a slot of a constant struct: exactly uart_write.
    let b = bound(&r, "driver_write");
    assert_eq!(b, Bound::Exact { bytes: depth_at_indirect("driver_write") + frame(&r, "uart_write") }, "{b:?}");
    assert!(apply < deep && b.bytes().unwrap() < deep);
    // handle_command: commands[i % 2](arg) reaches cmd_flush and cmd_status only; the view
    // names the table as the assumption.
    let v = r.view(&["handle_command", "apply"]);
    let text = serde_json::to_string(&v.functions).unwrap();
    assert!(!text.contains("deep_report"), "{text}");
    assert!(text.contains("the index stays within the constant table ops"), "{text}");
}

#[test]
fn a_hook_called_from_three_places_is_annotated_once() {
    let image = ElfImage::read(&c_firmware("stack-calls")).expect("ELF");
    let base = filled(&template(&stack_text(&c_firmware("stack-calls"), None)));
    let before = report(&image, &base);
    let with_hook = report(&image, &format!("{base}  - {{ via: alloc_hook, targets: [pool_alloc] }}\n"));
    let deep = frame(&before, "deep_report");
    let pool = bound(&with_hook, "pool_alloc").bytes().expect("pool_alloc");
    for caller in ["make_buffer", "make_node", "make_string"] {
        // Without the entry each call through the hook reaches every address-taken function,
        // deep_report among them.
        let b = bound(&before, caller).bytes().expect("bounded");
        assert!(b >= deep, "{caller}: {b} B without the hook entry");
        match bound(&with_hook, caller) {
            Bound::Bounded { bytes, assumptions } => {
                assert!(bytes < deep && bytes >= pool, "{caller}: {bytes} B");
                assert!(
                    assumptions.iter().any(|a| a == "calls through alloc_hook reach only its annotated targets"),
                    "{caller}: {assumptions:?}"
                );
                assert!(!assumptions.iter().any(|a| a.contains("address-taken")), "{caller}: {assumptions:?}");
            }
            other => panic!("{caller}: {other:?}"),
        }
    }
    let reset = |r: &StackReport| r.root("Reset_Handler").and_then(|x| x.bound.bytes()).expect("reset bounded");
    assert!(reset(&with_hook) < reset(&before), "{} vs {}", reset(&with_hook), reset(&before));
}

#[test]
fn hook_entries_naming_what_does_not_exist_are_errors_with_file_and_line() {
    let image = ElfImage::read(&c_firmware("stack-calls")).expect("ELF");
    let resolve = |text: &str| {
        AnnotationFile::parse(Path::new("hooks.stack.yaml"), text)
            .and_then(|f| f.resolve(&image))
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = resolve("recursion: { tree_depth: 4 }\nindirect:\n  - { via: alloc_hoook, targets: [pool_alloc] }\n");
    assert!(e.starts_with("hooks.stack.yaml:3:") && e.contains("alloc_hoook"), "{e}");
    let e = resolve("indirect:\n  - via: alloc_hook\n    targets: [pool_aloc]\n");
    assert!(e.starts_with("hooks.stack.yaml:2:") && e.contains("pool_aloc"), "{e}");
    let e = resolve("indirect:\n  - { via: make_node, targets: [pool_alloc] }\n");
    assert!(e.contains("is a function"), "{e}");
    let e = resolve("indirect:\n  - { via: \"uart_driver+8\", targets: [uart_write] }\n");
    assert!(e.contains("past the end"), "{e}");
    let e = resolve("indirect:\n  - { site: make_node, via: alloc_hook, targets: [pool_alloc] }\n");
    assert!(e.contains("exactly one of `site`"), "{e}");
}

#[test]
fn without_the_address_taken_set_every_call_with_no_target_is_listed_once_per_entry() {
    // address_taken off: an indirect call the analysis cannot read is unresolved, not widened.
    let image = ElfImage::read(&c_firmware("stack-calls")).expect("ELF");
    let r = analyze(&image, &StackOptions { address_taken: false, ..StackOptions::default() }).expect("decoder");
    let no_target: Vec<&str> =
        r.unresolved.iter().filter(|u| u.what.contains("with no known target")).map(|u| u.function.as_str()).collect();
    // The hook's three callers, the job table and the log hook; not the calls through the
    // constant tables and the constant struct (apply, handle_command, driver_write).
    let mut sorted = no_target.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["log_event", "make_buffer", "make_node", "make_string", "run_jobs"], "{:?}", r.unresolved);
    // The three calls through alloc_hook share one entry.
    let t = r.annotation_template();
    assert_eq!(t.matches("- { via: \"alloc_hook\", targets: [TARGET] }").count(), 1, "{t}");
    assert_eq!(t.matches("DEPTH\n").count(), 3, "{t}");
}
