//! Every bad outcome is caught, with real firmware under real QEMU: a wrong expected value fails,
//! a hang times out, a fault is reported with its PC, an exit without an end record is no
//! verdict, a lockup is a fault, a missing QEMU or an ELF for another board is a setup error, and
//! a tightened budget makes `mcubench run` exit non-zero.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::time::Duration;

use mcubench::Board;
use mcubench::exec::qemu;
use mcubench::exec::{self, Launch};
use mcubench::judge::verdict::Outcome;

fn misbehave(bin: &str, board: &str) -> String {
    format!(
        "name: {bin}\nfirmware: {{ cargo: {}, bin: {bin} }}\nboards: [{board}]\ntimeout: 3 s\n",
        common::repo().join("firmware/misbehave").display()
    )
}

#[test]
fn a_wrong_expected_value_fails_naming_the_kat() {
    let yaml = format!(
        "name: wrong\nfirmware: {{ cargo: {}, features: [wrong-vector] }}\nboards: [mps2-an386]\n",
        common::repo().join("firmware/kat").display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    assert_eq!(cell.verdict.outcome, Outcome::Fail, "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("1 KAT(s) failed"), "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains(": expected "), "{}", cell.verdict.message);
    assert_eq!(cell.kats.len() - cell.kats_passed(), 1);
}

#[test]
fn a_hang_times_out_and_names_the_last_record() {
    let cell = common::only_cell(common::run(&common::scenario(&misbehave("hang", "mps2-an386"))));
    assert_eq!(cell.verdict.outcome, Outcome::Timeout, "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("no exit within 3 s"), "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("begin fw=hang"), "{}", cell.verdict.message);
}

/// A timeout shorter than QEMU's start-up is a timeout that says so, not a setup error, and the
/// runner does not talk to QEMU's monitor before it is ready (contained runs ask it where the
/// core was at a timeout).
#[test]
fn a_timeout_shorter_than_qemus_start_up_is_a_timeout_that_says_so() {
    let yaml = misbehave("hang", "mps2-an386").replace("timeout: 3 s", "timeout: 1 ms");
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    assert_eq!(cell.verdict.outcome, Outcome::Timeout, "{}", cell.verdict.message);
    assert!(
        cell.verdict.message.starts_with("no exit within 0.001 s, and QEMU had not started the guest by then (")
            && cell.verdict.message.ends_with("): the scenario's `timeout` is shorter than QEMU's start-up"),
        "{}",
        cell.verdict.message
    );
}

#[rstest::rstest]
fn a_fault_is_reported_with_its_pc(#[values("mps2-an386", "microbit")] board: &str) {
    let cell = common::only_cell(common::run(&common::scenario(&misbehave("fault", board))));
    assert_eq!(cell.verdict.outcome, Outcome::Fault, "{}", cell.verdict.message);
    // The PC is resolved to the function that faulted.
    assert!(cell.verdict.message.contains("HardFault at pc=0x"), "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("fault"), "{}", cell.verdict.message);
    assert!(!cell.verdict.message.contains("(no symbol)"), "{}", cell.verdict.message);
}

#[rstest::rstest]
fn exit_zero_without_end_record_is_no_verdict(#[values("mps2-an386", "microbit")] board: &str) {
    let cell = common::only_cell(common::run(&common::scenario(&misbehave("no-verdict", board))));
    assert_eq!(cell.verdict.outcome, Outcome::NoVerdict, "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("without an `end` record"), "{}", cell.verdict.message);
}

#[test]
fn a_lockup_is_a_fault() {
    let cell = common::only_cell(common::run(&common::scenario(&misbehave("lockup", "mps2-an386"))));
    assert_eq!(cell.verdict.outcome, Outcome::Fault, "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("locked up"), "{}", cell.verdict.message);
}

#[test]
fn a_missing_qemu_is_a_setup_error_that_says_what_to_install() {
    let elf = common::c_firmware("kat-crc32");
    let board = Board::find("mps2-an386").unwrap();
    let err = exec::execute(
        &Launch::new(board, &elf, Duration::from_secs(5))
            .with_qemu("/nonexistent/qemu-system-arm".as_ref())
            .contained(false),
    )
    .map(|e| e.run)
    .unwrap_err();
    assert!(matches!(err, qemu::QemuError::NotFound), "{err}");
    assert!(err.to_string().contains("ci/setup.sh"), "{err}");
}

#[test]
fn an_elf_for_another_board_is_refused_before_running() {
    // The C firmware is linked at 0x0 for mps2; the an505 boots from 0x10000000.
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an505", "--elf"])
        .arg(common::c_firmware("kat-crc32"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("setup-error"), "{stdout}");
    assert!(stdout.contains("outside mps2-an505's flash"), "{stdout}");
}

#[test]
fn a_tightened_budget_makes_run_exit_non_zero() {
    let elf = common::c_firmware("kat-crc32");
    let ok = common::mcubench().args(["run", "--quiet", "--board", "mps2-an386", "--elf"]).arg(&elf).output().unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));

    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--flash-budget", "64", "--stack-budget", "8", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("budget: flash"), "{stdout}");
    assert!(stdout.contains("exceeds the budget of 64 B"), "{stdout}");
    assert!(stdout.contains("budget: stack"), "{stdout}");
}

#[test]
fn a_scenario_budget_is_checked_per_profile() {
    let yaml = format!(
        "name: tight\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nbudgets: {{ ram: 1 B }}\n",
        common::c_firmware("kat-crc32").display()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tight.yaml");
    std::fs::write(&path, yaml).unwrap();
    let out = common::mcubench().args(["run", "--quiet"]).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("budget: ram"), "{stdout}");
}

#[test]
fn a_panic_fails_with_its_message() {
    let cell = common::only_cell(common::run(&common::scenario(&misbehave("panic", "mps2-an386"))));
    assert_eq!(cell.verdict.outcome, Outcome::Fail, "{}", cell.verdict.message);
    assert!(cell.verdict.message.starts_with("firmware panicked: "), "{}", cell.verdict.message);
}

#[test]
fn an_elf_without_code_is_a_setup_error() {
    // What a stray RUSTFLAGS does to a cortex-m-rt build: an ELF with data but no code and no
    // vector table. QEMU would "run" it; mcubench refuses it first.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("empty.c");
    std::fs::write(&src, "int counter = 1;\n").unwrap();
    let elf = dir.path().join("empty.elf");
    let status = std::process::Command::new("arm-none-eabi-gcc")
        .args(["-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-nostartfiles", "-Wl,-e,0", "-o"])
        .arg(&elf)
        .arg(&src)
        .status()
        .expect("arm-none-eabi-gcc runs; install it with `bash ci/setup.sh`");
    assert!(status.success());
    let out = common::mcubench().args(["run", "--quiet", "--board", "mps2-an386", "--elf"]).arg(&elf).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("setup-error"), "{stdout}");
    assert!(stdout.contains("no code or no vector table"), "{stdout}");
}

#[test]
fn a_cpu_the_machine_does_not_have_is_a_setup_error() {
    let elf = common::c_firmware("kat-crc32");
    let wrong = Board { qemu_cpu: "cortex-m3", ..*Board::find("mps2-an386").unwrap() };
    let run =
        exec::execute(&Launch::new(&wrong, &elf, Duration::from_secs(10)).contained(false)).map(|e| e.run).unwrap();
    let transcript = mcubench::judge::protocol::Transcript::parse(&run.stdout);
    let verdict = mcubench::judge::verdict::judge_run(&run, transcript.as_ref(), None, 10.0, &|_| String::new());
    assert_eq!(verdict.outcome, Outcome::SetupError, "{}", verdict.message);
    assert!(verdict.message.contains("cortex-m4"), "QEMU's own explanation is kept: {}", verdict.message);
}
