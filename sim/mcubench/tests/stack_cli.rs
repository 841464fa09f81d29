//! `mcubench stack` through the CLI binary: a scenario (every board × profile, filtered), an
//! ELF with --board, `priorities:` from the annotation file, and annotation entries that the
//! analysed builds lack (notes, not errors, when only part of the matrix is analysed).

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use common::{mcubench, repo};

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

fn usage_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn scenario_with_board_and_profile_filters() {
    let kat = repo().join("scenarios/kat.yaml");
    let text = ok(&mcubench()
        .args(["stack"])
        .arg(&kat)
        .args(["--board", "mps2-an386", "--profile", "size"])
        .output()
        .unwrap());
    assert_eq!(text.matches("\n== ").count() + usize::from(text.starts_with("== ")), 1, "one cell:\n{text}");
    assert!(text.starts_with("== mps2-an386 / size ("), "{text}");
    assert!(text.contains("[reset]: "), "{text}");
    assert!(text.contains("MSP (reset + nested handlers): "), "{text}");

    let json = ok(&mcubench()
        .args(["stack"])
        .arg(&kat)
        .args(["--board", "mps2-an386", "--profile", "size", "--format", "json"])
        .output()
        .unwrap());
    let cells: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let cells = cells.as_array().expect("an array of cells");
    assert_eq!(cells.len(), 1);
    let c = &cells[0];
    assert_eq!(c["board"], "mps2-an386");
    assert_eq!(c["profile"], "size");
    assert!(c["elf"].as_str().is_some_and(|e| e.ends_with("/kat")), "{}", c["elf"]);
    let reset = c["roots"].as_array().unwrap().iter().find(|r| r["role"] == "reset").expect("reset root");
    // kat.stack.yaml makes the reset path bounded.
    assert_eq!(reset["bound"]["kind"], "bounded", "{}", reset["bound"]);
    assert!(reset["bound"]["bytes"].as_u64().is_some_and(|b| b > 1000));
    assert!(c["msp"]["bytes"].as_u64() > reset["bound"]["bytes"].as_u64());

    // The same ELF analysed directly gives the same numbers.
    let elf = c["elf"].as_str().unwrap();
    let direct = ok(&mcubench()
        .args(["stack", elf, "--board", "mps2-an386", "--format", "json", "--annotations"])
        .arg(repo().join("scenarios/kat.stack.yaml"))
        .output()
        .unwrap());
    let direct: serde_json::Value = serde_json::from_str(&direct).unwrap();
    assert_eq!(direct["msp"], c["msp"]);
}

/// An annotation entry for a function that the analysed builds lack is normal across a build
/// matrix (`<core::fmt::Formatter>::pad` exists only in the size builds: inlined at opt-level 2
/// and 3): restricted to such builds, the run notes it and goes on; the whole matrix has it.
#[test]
fn an_entry_missing_from_the_analysed_profile_is_a_note_not_an_error() {
    let kat = repo().join("scenarios/kat.yaml");
    let out =
        mcubench().args(["stack"]).arg(&kat).args(["--board", "mps2-an386", "--profile", "speed"]).output().unwrap();
    let text = ok(&out);
    assert!(text.starts_with("== mps2-an386 / speed ("), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcubench: note: ")
            && stderr.contains("`<core::fmt::Formatter>::pad`")
            && stderr.contains("another board or profile of the scenario may"),
        "{stderr}"
    );
    // `mcubench run` the same way (one cell: build cached, one QEMU run): not refused either.
    let out = mcubench()
        .args(["run", "--quiet"])
        .arg(&kat)
        .args(["--board", "mps2-an386", "--profile", "speed"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("`<core::fmt::Formatter>::pad`"), "{stderr}");
    // The size build has the function: nothing to note for it.
    let out =
        mcubench().args(["stack"]).arg(&kat).args(["--board", "mps2-an386", "--profile", "size"]).output().unwrap();
    ok(&out);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("Formatter>::pad`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_filters_and_missing_board_are_usage_errors() {
    let kat = repo().join("scenarios/kat.yaml");
    let e = usage_error(&mcubench().arg("stack").arg(&kat).args(["--profile", "nope"]).output().unwrap());
    assert!(e.contains("--profile nope"), "{e}");
    let e = usage_error(&mcubench().arg("stack").arg(&kat).args(["--board", "nope"]).output().unwrap());
    assert!(e.contains("--board nope"), "{e}");
    let e = usage_error(&mcubench().args(["stack", "fw.elf"]).output().unwrap());
    assert!(e.contains("needs --board"), "{e}");
    let e = usage_error(
        &mcubench().args(["stack", "fw.elf", "--board", "mps2-an386", "--profile", "size"]).output().unwrap(),
    );
    assert!(e.contains("--profile needs a scenario"), "{e}");
}

/// firmware/c/stack-test (SysTick + IRQ 0 handlers), built by the analyzer's corpus script.
fn stack_test_elf() -> &'static PathBuf {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stack-cli");
        let ok = Command::new("bash")
            .arg(repo().join("sim/stack/tests/corpus/build-stack-test.sh"))
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .expect("bash runs");
        assert!(ok.success(), "build-stack-test.sh failed (needs arm-none-eabi-gcc and libnewlib-arm-none-eabi)");
        out.join("stack-test.elf")
    })
}

fn msp_with(annotations: &str) -> (u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stack-test.stack.yaml");
    std::fs::write(&file, annotations).unwrap();
    let out = mcubench()
        .arg("stack")
        .arg(stack_test_elf())
        .args(["--board", "mps2-an386", "--format", "json", "--annotations"])
        .arg(&file)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).expect("JSON");
    (v["msp"]["bytes"].as_u64().expect("bounded"), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn priorities_from_the_annotation_file_tighten_the_msp_bound() {
    let base = "recursion: { ping: 11 }\nframes: { vla_sum: 104, alloca_sum: 48 }\n\
                indirect:\n  - { site: dispatch, targets: [op_add, op_mul, op_buf, op_neg] }\n";
    let (ungrouped, _) = msp_with(base);
    let (grouped, notes) = msp_with(&format!("{base}priorities:\n  - [SysTick_Handler, Irq0_Handler]\n"));
    // SysTick_Handler (0 B) no longer nests on top of Irq0_Handler: its 108 B frame drops out.
    assert_eq!(grouped + 108, ungrouped, "grouped {grouped} B, ungrouped {ungrouped} B");
    assert!(notes.is_empty(), "{notes}");
    // A name that is not a handler of this ELF is refused (exit 2), naming file and entry.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stack-test.stack.yaml");
    std::fs::write(&file, format!("{base}priorities:\n  - [main, SysTick_Handler, Irq0_Handler]\n")).unwrap();
    let out = mcubench()
        .arg("stack")
        .arg(stack_test_elf())
        .args(["--board", "mps2-an386", "--annotations"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{}: priorities handler `main` is not an exception handler", file.display())));
    assert!(out.stdout.is_empty());
}
