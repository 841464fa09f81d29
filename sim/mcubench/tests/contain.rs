//! Untrusted firmware stays contained: the hostile corpus (`firmware/c/hostile`) under the
//! contained runner ([`mcubench::exec::contain`]), with real QEMU. Each attack is classified, leaves no
//! file behind, and is decided within its timeout + 5 s. Host paths the attacks name are under
//! a per-test temporary directory, patched into a copy of the ELF.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcubench::Board;
use mcubench::exec::Execution;
use mcubench::exec::qemu::{self, OUTPUT_LIMIT, ProcessEnd};
use mcubench::exec::{self, Launch};
use mcubench::judge::protocol::Transcript;
use mcubench::judge::verdict::{Outcome, Verdict};

/// Every attack but the hang ends by itself within a second of QEMU time; the timeout only bounds
/// a broken run. Generous, so that a loaded machine (parallel tests, a 2-core CI runner) does not
/// turn a fault or an exit into a timeout.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Must match `hostile_arg` in firmware/c/hostile/main.c.
const PLACEHOLDER: &[u8] = b"@@MCUBENCH-HOSTILE-ARG@@";

fn board() -> &'static Board {
    Board::find("mps2-an386").unwrap()
}

/// A copy of `hostile-<name>.elf` in `dir`, with `arg` in place of the placeholder.
fn hostile(name: &str, arg: Option<&str>, dir: &Path) -> PathBuf {
    let src = common::c_firmware(&format!("hostile-{name}"));
    let mut bytes = std::fs::read(&src).unwrap();
    if let Some(arg) = arg {
        assert!(arg.len() < 200 && !arg.contains('\0'), "argument too long for the placeholder: {arg}");
        let at = bytes.windows(PLACEHOLDER.len()).position(|w| w == PLACEHOLDER).expect("placeholder in the ELF");
        bytes[at..at + arg.len()].copy_from_slice(arg.as_bytes());
        bytes[at + arg.len()..at + 256].fill(0);
    }
    let elf = dir.join(format!("hostile-{name}.elf"));
    std::fs::write(&elf, bytes).unwrap();
    elf
}

struct Outcome3 {
    run: Execution,
    verdict: Verdict,
    elapsed: Duration,
}

fn run(elf: &Path, timeout: Duration) -> Outcome3 {
    let started = Instant::now();
    let run = exec::execute(&Launch::new(board(), elf, timeout)).unwrap();
    let elapsed = started.elapsed();
    println!("{}: {elapsed:?}", elf.file_name().unwrap().display());
    let transcript = Transcript::parse(&run.run.stdout);
    let verdict = mcubench::judge::verdict::judge(&run, transcript.as_ref(), None, timeout.as_secs_f64(), &|pc| {
        format!("f@{pc:x}")
    });
    assert!(elapsed <= timeout + Duration::from_secs(5), "took {elapsed:?} (timeout {timeout:?}): {}", verdict.message);
    assert!(run.start_error.is_none(), "{:?}", run.start_error);
    Outcome3 { run, verdict, elapsed }
}

#[test]
fn sys_system_is_refused_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("system-ran");
    let command = format!("touch {}", marker.display());
    let r = run(&hostile("system", Some(&command), dir.path()), TIMEOUT);
    assert!(!marker.exists(), "SYS_SYSTEM ran a host command");
    assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
    let expected = format!("firmware attempted SYS_SYSTEM(`{command}`): refused (EACCES)");
    assert!(r.verdict.message.contains(&expected), "{}", r.verdict.message);
    assert_eq!(r.run.events.len(), 1, "{:?}", r.run.events);
    // The firmware saw the call fail (the shell could not start: exit status 127) and went on to
    // write its (unearned) end record.
    assert!(r.run.run.stdout.contains(&format!("system r={}\n", 127 << 8)), "{}", r.run.run.stdout);
    assert_eq!(r.run.run.end, ProcessEnd::Exited(0));
}

#[test]
fn a_host_file_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    let token = format!("secret-{}-{:?}", std::process::id(), Instant::now());
    std::fs::write(&secret, &token).unwrap();
    for path in [secret.clone(), PathBuf::from("/etc/hostname")] {
        let r = run(&hostile("read", Some(path.to_str().unwrap()), dir.path()), TIMEOUT);
        assert!(!r.run.run.stdout.contains(&token), "{}", r.run.run.stdout);
        if let Ok(host) = std::fs::read_to_string("/etc/hostname")
            && !host.trim().is_empty()
        {
            assert!(!r.run.run.stdout.contains("read: "), "{}", r.run.run.stdout);
        }
        assert!(r.run.run.stdout.contains("open r=4294967295"), "{}", r.run.run.stdout);
        assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
        let expected = format!("SYS_OPEN(`{}`, read): refused (EACCES)", path.display());
        assert!(r.verdict.message.contains(&expected), "{}", r.verdict.message);
    }
}

#[test]
fn a_host_file_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("written");
    let r = run(&hostile("write", Some(marker.to_str().unwrap()), dir.path()), TIMEOUT);
    assert!(!marker.exists(), "SYS_OPEN for writing created a host file");
    assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
    let expected = format!("SYS_OPEN(`{}`, write+create+truncate): refused (EACCES)", marker.display());
    assert!(r.verdict.message.contains(&expected), "{}", r.verdict.message);
}

#[test]
fn a_host_file_is_neither_renamed_nor_removed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let r = run(&hostile("remove", Some(victim.to_str().unwrap()), dir.path()), TIMEOUT);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!dir.path().join("victim.moved").exists());
    let calls: Vec<&str> = r.run.events.iter().map(|e| e.call.as_str()).collect();
    assert_eq!(calls, ["SYS_RENAME", "SYS_REMOVE"]);
    assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
    assert!(r.verdict.message.contains(&format!("SYS_REMOVE(`{}`)", victim.display())), "{}", r.verdict.message);
}

#[test]
fn a_silent_hang_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_secs(2);
    let r = run(&hostile("silent-hang", None, dir.path()), timeout);
    assert_eq!(r.verdict.outcome, Outcome::Timeout, "{}", r.verdict.message);
    assert!(r.run.run.stdout.is_empty());
    // Killed at its timeout: not before, and not long after (`run` bounds it at timeout + 5 s).
    assert!(r.elapsed >= timeout, "{:?}", r.elapsed);
}

#[test]
fn a_hardfault_lockup_and_stack_overflow_are_faults() {
    let dir = tempfile::tempdir().unwrap();
    // The recursion runs its stack through .bss, .data and then the whole address space below
    // RAM (unmapped: slow, ~3.5 s of QEMU natively too) before the core locks up.
    for (name, says, timeout) in [
        ("hardfault", "HardFault at pc=0x", TIMEOUT),
        ("lockup", "locked up at pc=0x", TIMEOUT),
        ("recursion", "locked up at pc=0x", Duration::from_secs(30)),
    ] {
        let r = run(&hostile(name, None, dir.path()), timeout);
        assert_eq!(r.verdict.outcome, Outcome::Fault, "{name}: {}", r.verdict.message);
        assert!(r.verdict.message.contains(says), "{name}: {}", r.verdict.message);
        assert!(r.run.events.is_empty(), "{name}: {:?}", r.run.events);
    }
}

#[test]
fn a_reset_and_an_exit_without_end_record_are_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["reset", "exit0"] {
        let r = run(&hostile(name, None, dir.path()), TIMEOUT);
        // QEMU exits 0 in both cases (-no-reboot turns the reset into an exit); the monitor's
        // SHUTDOWN event tells the reset apart.
        let end = if name == "reset" { ProcessEnd::Reset } else { ProcessEnd::Exited(0) };
        assert_eq!(r.run.run.end, end, "{name}");
        assert_eq!(r.verdict.outcome, Outcome::NoVerdict, "{name}: {}", r.verdict.message);
    }
    let r = run(&hostile("reset", None, dir.path()), TIMEOUT);
    assert!(
        r.verdict.message.starts_with("the firmware reset itself (a system reset request, e.g. `NVIC_SystemReset()`")
            && r.verdict.message.ends_with(" before its `end` record (last: line 1: begin fw=hostile)"),
        "{}",
        r.verdict.message
    );
}

#[test]
fn a_forged_end_record_does_not_pass() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&hostile("forged-end", None, dir.path()), TIMEOUT);
    assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
    assert!(r.verdict.message.contains("1 KAT(s) failed"), "{}", r.verdict.message);
}

#[test]
fn a_flood_of_output_is_cut_and_stopped_fast() {
    let dir = tempfile::tempdir().unwrap();
    // 1 GiB in 4 KiB writes.
    let r = run(&hostile("flood", None, dir.path()), Duration::from_secs(20));
    assert_eq!(r.run.run.end, ProcessEnd::OutputLimit);
    assert_eq!(r.run.run.stdout.len(), OUTPUT_LIMIT);
    assert_eq!(r.verdict.outcome, Outcome::Fail, "{}", r.verdict.message);
    assert!(r.verdict.message.contains("wrote more than 4 MiB"), "{}", r.verdict.message);
    // Stopped by the output cap (OutputLimit above), so before its timeout.
    assert!(r.elapsed < Duration::from_secs(20), "stopped after {:?}", r.elapsed);
}

/// The firmware writes QEMU's lockup dump and the plugin's error line on the semihosting console,
/// then exits with failure. The console is not QEMU's stderr, so the run stays a failure: not a
/// fault at a PC of the firmware's choosing, not a setup error. Both runners.
#[test]
fn firmware_cannot_relabel_its_failure_through_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let elf = hostile("relabel", None, dir.path());
    let r = run(&elf, TIMEOUT);
    let native = exec::execute(&Launch::new(board(), &elf, TIMEOUT).contained(false)).unwrap();
    for (execution, runner) in [(&r.run, "contained"), (&native, "native")] {
        let transcript = Transcript::parse(&execution.run.stdout);
        let v = mcubench::judge::verdict::judge(execution, transcript.as_ref(), None, 5.0, &|pc| format!("f@{pc:x}"));
        assert_eq!(execution.run.end, ProcessEnd::Exited(1), "{runner}");
        assert!(execution.run.console.contains("R15=00001234"), "{runner}: {}", execution.run.console);
        assert!(!execution.run.stderr.contains("R15="), "{runner}: {}", execution.run.stderr);
        assert!(
            !matches!(v.outcome, Outcome::Fault | Outcome::SetupError | Outcome::Pass),
            "{runner}: {:?}: {}",
            v.outcome,
            v.message
        );
    }
}

#[test]
fn one_huge_write_is_refused_by_qemu() {
    let dir = tempfile::tempdir().unwrap();
    // One SYS_WRITE of 2 GiB from address 0: QEMU cannot map that much guest memory, writes
    // nothing and returns the count not written (the firmware then ends normally).
    let r = run(&hostile("big-write", None, dir.path()), Duration::from_secs(20));
    println!("{}", r.run.run.stdout);
    assert!(r.run.run.stdout.len() < 4096, "{}", r.run.run.stdout.len());
    assert!(r.run.run.stdout.contains(&format!("write r={}\n", 0x8000_0000u32)), "{}", r.run.run.stdout);
}

#[test]
fn console_calls_are_served_without_events() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&hostile("probe", None, dir.path()), TIMEOUT);
    assert!(r.run.events.is_empty(), "{:?}", r.run.events);
    assert_eq!(r.verdict.outcome, Outcome::Pass, "{}", r.verdict.message);
    // With stdout a pipe: not a tty, length 0, no seek. (SYS_READC is not probed: it waits for
    // console input forever, and the run times out. SYS_TIME is host time: QEMU answers it.)
    for line in ["istty r=0\n", "flen r=0\n", "seek r=4294967295\n"] {
        assert!(r.run.run.stdout.contains(line), "{line:?} in {}", r.run.run.stdout);
    }
    // SYS_WRITEC and SYS_WRITE0 go to stderr, as natively.
    assert_eq!(r.run.run.console, "Cwrite0\n", "{}", r.run.run.stderr);
}

/// The contained runner counts what the native one does, byte for byte: SysTick ticks, the
/// plugin's whole results file (instruction and cycle totals, region counts), for C and Rust KAT
/// firmware. Semihosting is served natively, so containment costs the guest no virtual time.
#[test]
fn kat_counts_are_the_same_as_with_the_native_runner() {
    let board = board();
    let scenario = common::scenario(&format!(
        "name: kat\nfirmware: {{ cargo: {} }}\nboards: [mps2-an386]\nprofiles: {{ speed: {{ opt-level: 3 }} }}\n",
        common::repo().join("firmware/kat").display()
    ));
    let package_dir = common::repo().join("firmware/kat");
    let root = mcubench::build::target_directory(&package_dir).unwrap();
    let firmware = mcubench::build::CargoFirmware { package_dir: &package_dir, bin: "kat", features: &[] };
    let rust_kat = mcubench::build::build(&firmware, &root, board, &scenario.profiles[0]).unwrap();
    let so = mcubench::exec::plugin::locate().unwrap().expect("this test needs the plugin");
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_secs(30);
    for (i, elf) in [common::c_firmware("kat-crc32"), rust_kat].into_iter().enumerate() {
        let image = mcubench_elf::ElfImage::read(&elf).unwrap();
        let markers = mcubench::exec::plugin::find_markers(&image).unwrap();
        let out = |name: &str| dir.path().join(format!("{i}-{name}"));
        let option = |name: &str| {
            let args = mcubench_wire::PluginArgs {
                markers,
                core: Some(board.core),
                ..mcubench_wire::PluginArgs::new(out(name))
            };
            args.to_option(&so)
        };
        let native =
            exec::execute(&Launch::new(board, &elf, timeout).with_plugin(Some(&option("native"))).contained(false))
                .map(|e| e.run)
                .unwrap();
        let contained =
            exec::execute(&Launch::new(board, &elf, timeout).with_plugin(Some(&option("contained")))).unwrap();
        let (n, c) = (Transcript::parse(&native.stdout).unwrap(), Transcript::parse(&contained.run.stdout).unwrap());
        let kats = |t: &Transcript| t.kats().map(|k| (k.id.clone(), k.out.clone(), k.region)).collect::<Vec<_>>();
        assert!(!kats(&n).is_empty(), "{}", native.stdout);
        assert_eq!(kats(&n), kats(&c), "{}", elf.display());
        assert_eq!(native.stdout, contained.run.stdout, "{}", elf.display());
        let results = |name: &str| std::fs::read_to_string(out(name)).unwrap();
        assert_eq!(results("native"), results("contained"), "{}", elf.display());
        let v = mcubench::judge::verdict::judge(&contained, Ok(&c), None, 30.0, &|pc| format!("{pc:x}"));
        assert_eq!(v.outcome, Outcome::Pass, "{}", v.message);
        assert_eq!(contained.run.end, native.end);
        assert!(contained.events.is_empty());
    }
}

/// The seccomp sandbox and the rlimits leave the TCG plugin working: it loads and writes its
/// results file.
#[test]
fn the_plugin_runs_inside_the_sandbox() {
    let Some(so) = mcubench::exec::plugin::locate().unwrap() else {
        panic!("this test needs the plugin; unset {}", mcubench::exec::plugin::ENV)
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results.txt");
    let elf = common::c_firmware("kat-crc32");
    let option = mcubench_wire::PluginArgs::new(&out).to_option(&so);
    let run = exec::execute(&Launch::new(board(), &elf, TIMEOUT).with_plugin(Some(&option))).unwrap();
    assert_eq!(run.run.end, ProcessEnd::Exited(0), "{}", run.run.stderr);
    let results = mcubench::exec::plugin::read_results(&out).unwrap();
    assert!(results.errors.is_empty(), "{:?}", results.errors);
}

/// The MPS2 boards have an Ethernet controller, which QEMU by default wires to its user
/// networking: the hostile firmware's TCP SYNs to 10.0.2.2:<port> become a connection to the
/// host's 127.0.0.1:<port>. First shown without `-nic none` (so this test can fail), then
/// refused by mcubench's command line, contained or not.
#[test]
fn firmware_reaches_no_network() {
    use std::net::TcpListener;
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let elf = hostile("network", Some(&port.to_string()), dir.path());
    let connected = |within: Duration| {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if listener.accept().is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    };

    // QEMU's default: the attack works.
    let mut args = qemu::command_line(board(), &elf, None, None);
    let nic = args.iter().position(|a| a == "-nic").expect("mcubench passes -nic none");
    assert_eq!(args.drain(nic..nic + 2).collect::<Vec<_>>(), ["-nic", "none"]);
    let mut child = std::process::Command::new(qemu::QEMU)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reached = connected(Duration::from_secs(10));
    let _ = child.kill();
    let _ = child.wait();
    assert!(reached, "the firmware could not reach the host even with QEMU's default network");

    // mcubench's runners: no connection, and the firmware ran to its end.
    let r = run(&elf, TIMEOUT);
    assert!(r.run.run.stdout.contains(&format!("syn r={port}\n")), "{}", r.run.run.stdout);
    let native = exec::execute(&Launch::new(board(), &elf, TIMEOUT).contained(false)).map(|e| e.run).unwrap();
    assert!(native.stdout.contains(&format!("syn r={port}\n")), "{}", native.stdout);
    assert!(!connected(Duration::from_secs(1)), "the firmware reached the host's loopback");
}

/// A QEMU that never starts the guest (here a stand-in that only sleeps, so no QMP greeting
/// comes) is a setup error that says so, not a firmware timeout, and the runner kills it at the
/// timeout instead of waiting for it (it would sleep for ten minutes).
#[test]
fn a_qemu_that_never_starts_the_guest_is_a_setup_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("qemu-system-arm");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let elf = common::c_firmware("kat-crc32");
    let timeout = Duration::from_secs(2);
    let started = Instant::now();
    let run = exec::execute(&Launch::new(board(), &elf, timeout).with_qemu(&fake).with_plugin(None)).unwrap();
    assert!(started.elapsed() < timeout + Duration::from_secs(120), "{:?}", started.elapsed());
    assert_eq!(run.run.end, ProcessEnd::TimedOut);
    assert!(run.events.is_empty(), "{:?}", run.events);
    let verdict =
        mcubench::judge::verdict::judge(&run, Transcript::parse(&run.run.stdout).as_ref(), None, 2.0, &|pc| {
            format!("{pc:x}")
        });
    assert_eq!(verdict.outcome, Outcome::SetupError, "{}", verdict.message);
    assert!(verdict.message.contains("QEMU never started the guest"), "{}", verdict.message);
}
