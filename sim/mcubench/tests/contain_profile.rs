//! `mcubench profile` on ordinary newlib firmware, contained (issue 11, point 8): containment
//! blames the firmware for its own semihosting calls only, never for QEMU's; and `profile` keeps
//! to the scenario's timeout and prints what it has when the run does not end.
//!
//! `newlib-calltree` (firmware/c/newlib-calltree) has so many call paths that the TCG plugin's
//! call tree makes glibc's malloc, in QEMU's vCPU thread (the thread that serves semihosting),
//! shrink an arena for the first time after the guest started: glibc then opens
//! `/proc/sys/vm/overcommit_memory`, which mcubench used to report as the firmware's SYS_OPEN.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcubench::Board;
use mcubench::exec::qemu::ProcessEnd;
use mcubench::exec::{self, Execution, Launch, plugin};

const OVERCOMMIT: &str = "/proc/sys/vm/overcommit_memory";

fn board() -> &'static Board {
    Board::find("mps2-an386").unwrap()
}

/// Runs `elf` contained with the plugin's profiler, as `mcubench profile` does.
fn run_profiled(elf: &Path, dir: &Path) -> Execution {
    let so = plugin::locate().unwrap().expect("this test needs the plugin");
    let image = mcubench_elf::ElfImage::read(elf).unwrap();
    let functions = dir.join("functions.txt");
    std::fs::write(&functions, plugin::functions_file(&plugin::function_table(&image), &[])).unwrap();
    let args = mcubench_wire::PluginArgs {
        core: Some(board().core),
        functions: Some(functions),
        profile: true,
        ..mcubench_wire::PluginArgs::new(dir.join("results.txt"))
    };
    let option = args.to_option(&so);
    exec::execute(&Launch::new(board(), elf, Duration::from_secs(30)).with_plugin(Some(&option))).unwrap()
}

/// QEMU opened `/proc/sys/vm/overcommit_memory` itself after the guest started (glibc's malloc,
/// `O_CLOEXEC`), and it was refused without being held against the firmware.
fn assert_qemus_own_open_was_refused_unblamed(execution: &Execution) {
    let own = format!("openat(`{OVERCOMMIT}`, read+cloexec): refused (EACCES)");
    assert!(
        execution.qemu_calls.iter().any(|c| c == &own),
        "QEMU's own open did not happen (or was not told apart); QEMU's calls: {:?}, the firmware's: {:?}",
        execution.qemu_calls,
        execution.events
    );
    assert!(execution.events.iter().all(|e| !e.detail.contains("cloexec")), "{:?}", execution.events);
}

#[test]
fn profile_of_a_newlib_firmware_passes_contained() {
    let elf = common::c_firmware("newlib-calltree");
    let out = tempfile::tempdir().unwrap();
    let output = common::mcubench()
        .args(["profile", "--elf"])
        .arg(&elf)
        .args(["--board", "mps2-an386", "--top", "12", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    println!("{stdout}{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("firmware attempted"), "{stderr}");
    assert!(stdout.contains("mps2-an386: ") && stdout.contains("est. cycles"), "{stdout}");
    for function in ["walk_left", "walk_right", "_malloc_r"] {
        assert!(stdout.contains(function), "{function} in {stdout}");
    }
    assert!(!stdout.contains("partial"), "{stdout}");
    assert!(out.path().join("mps2-an386-prebuilt.folded").is_file());
    assert!(out.path().join("mps2-an386-prebuilt.svg").is_file());
}

#[test]
fn a_qemu_side_open_is_not_blamed_on_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let execution = run_profiled(&common::c_firmware("newlib-calltree"), dir.path());
    assert_eq!(execution.run.end, ProcessEnd::Exited(0), "{}", execution.run.stderr);
    assert!(execution.run.stdout.contains("newlib-calltree: depth 14, checksum "), "{}", execution.run.stdout);
    assert_qemus_own_open_was_refused_unblamed(&execution);
    // Nothing for the verdict to hold against the firmware.
    assert!(execution.events.is_empty() && execution.events_dropped == 0, "{:?}", execution.events);
}

/// The same run with the firmware opening that very path itself: QEMU's open stays QEMU's, the
/// guest's is blamed, once.
#[test]
fn a_guest_sys_open_of_the_same_path_is_still_blamed() {
    let dir = tempfile::tempdir().unwrap();
    let execution = run_profiled(&common::c_firmware("newlib-calltree-open"), dir.path());
    assert_eq!(execution.run.end, ProcessEnd::Exited(0), "{}", execution.run.stderr);
    assert!(execution.run.stdout.contains(&format!("fopen({OVERCOMMIT}): refused")), "{}", execution.run.stdout);
    assert_qemus_own_open_was_refused_unblamed(&execution);
    let events: Vec<String> = execution.events.iter().map(|e| e.to_string()).collect();
    assert_eq!(events, [format!("firmware attempted SYS_OPEN(`{OVERCOMMIT}`, read): refused (EACCES)")]);
    // And `profile` refuses to profile it, naming the attempt.
    let error = mcubench::profile::profile(
        board(),
        &common::c_firmware("newlib-calltree-open"),
        Duration::from_secs(30),
        true,
        &Default::default(),
        false,
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains(&events[0]) && error.matches("firmware attempted").count() == 1, "{error}");
}

/// A scenario for a prebuilt ELF with the given `timeout:`.
fn scenario_file(dir: &Path, elf: &Path, timeout: &str) -> PathBuf {
    let path = dir.join("hang.yaml");
    let yaml =
        format!("name: hang\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntimeout: {timeout}\n", elf.display());
    std::fs::write(&path, yaml).unwrap();
    path
}

/// `profile` of a firmware that never ends: the scenario's timeout holds (a `--timeout` flag
/// overrides it), and the profile of the part that ran is printed, marked partial, exit code 1.
#[test]
fn profile_keeps_to_the_scenario_timeout_and_prints_a_partial_profile() {
    let hang = common::c_firmware("hostile-silent-hang");
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario_file(dir.path(), &hang, "2 s");
    for (flag, seconds) in [(None, 2u64), (Some("1s"), 1)] {
        let out = dir.path().join(format!("out-{seconds}"));
        let mut cmd = common::mcubench();
        cmd.arg("profile").arg(&scenario).arg("--out").arg(&out);
        if let Some(flag) = flag {
            cmd.args(["--timeout", flag]);
        }
        let started = Instant::now();
        let output = cmd.output().unwrap();
        let elapsed = started.elapsed();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        println!("{elapsed:?}\n{stdout}{stderr}");
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        let note = format!("partial: the run timed out after {seconds} s");
        assert!(stdout.starts_with(&format!("{note}\nmps2-an386: ")), "{stdout}");
        assert!(stderr.contains(&note), "{stderr}");
        assert!(stdout.lines().any(|l| l.starts_with("main ")), "the hanging main has cycles: {stdout}");
        let timeout = Duration::from_secs(seconds);
        assert!(elapsed >= timeout && elapsed < timeout + Duration::from_secs(5), "{elapsed:?}");
        let folded = std::fs::read_to_string(out.join("mps2-an386-prebuilt.folded")).unwrap();
        assert!(folded.lines().any(|l| l.contains("main ")), "{folded}");
    }
}

/// Uncontained, QEMU is asked to quit by a signal instead of QMP: the same partial profile.
#[test]
fn an_uncontained_profile_that_times_out_is_partial_too() {
    let hang = common::c_firmware("hostile-silent-hang");
    let p = mcubench::profile::profile(
        board(),
        &hang,
        Duration::from_secs(1),
        false,
        &Default::default(),
        false,
        Default::default(),
    )
    .unwrap();
    assert_eq!(p.timed_out_after, Some(Duration::from_secs(1)));
    assert!(p.table(5).starts_with("partial: the run timed out after 1 s\n"), "{}", p.table(5));
    assert!(p.functions.iter().any(|f| f.name == "main" && f.self_cycles > 0), "{}", p.table(5));
    assert_eq!(p.functions.iter().map(|f| f.self_cycles).sum::<u64>(), p.cycles);
}
