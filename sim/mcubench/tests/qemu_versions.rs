//! The same firmware on QEMU 7.2 (plugin API v1) and on QEMU 10 (plugin API v3) gives the same
//! report: every KAT of the `scenarios/kat.yaml` matrix (all five boards × three profiles) has the
//! same verdict, exact instruction count, cycle estimate, SysTick ticks and stack figures, and so
//! do the whole-run totals; only the `qemu` field differs. Also: an unsupported QEMU is a setup
//! error naming its version and the supported range, a plugin built for the other API is refused
//! before QEMU runs, and `mcubench doctor` passes on both.
//!
//! QEMU 7.2 is `qemu-system-arm` on PATH (Debian 12's); QEMU 10 is
//! `/opt/qemu-10/usr/bin/qemu-system-arm` (ci/setup.sh unpacks bookworm-backports' there) or the
//! path in `MCUBENCH_TEST_QEMU10`.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use mcubench::exec::plugin::{self, PluginApi};
use mcubench::exec::version::{self, QemuInfo};
use mcubench::judge::verdict::Outcome;
use mcubench::{RunOptions, Scenario, run_scenario};

/// The two QEMUs: (API v1, API v3).
fn qemus() -> (QemuInfo, QemuInfo) {
    let old = version::probe(Path::new("qemu-system-arm")).unwrap_or_else(|e| panic!("{e}"));
    let new_path = std::env::var_os("MCUBENCH_TEST_QEMU10")
        .map_or_else(|| PathBuf::from("/opt/qemu-10/usr/bin/qemu-system-arm"), PathBuf::from);
    let new = version::probe(&new_path).unwrap_or_else(|e| {
        panic!("{e}\nthis test needs QEMU 9.1 to 10.x beside the system's 7.2: run `bash ci/setup.sh` (Debian 12), or set MCUBENCH_TEST_QEMU10")
    });
    assert_eq!(old.api, PluginApi::V1, "qemu-system-arm on PATH must be QEMU 7.2 to 8.2: {}", old.description);
    assert_eq!(new.api, PluginApi::V3, "{}: {}", new_path.display(), new.description);
    (old, new)
}

fn run_on(scenario: &Scenario, qemu: &QemuInfo) -> mcubench::RunReport {
    run_scenario(scenario, &RunOptions { jobs: 2, qemu: qemu.path.clone(), ..RunOptions::default() })
}

#[test]
fn the_kat_matrix_is_identical_on_qemu_7_2_and_qemu_10() {
    let (old, new) = qemus();
    let scenario = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    let (a, b) = (run_on(&scenario, &old), run_on(&scenario, &new));
    assert_eq!(a.cells.len(), 15, "5 boards × 3 profiles");
    assert_eq!(a.cells.len(), b.cells.len());
    let mut kats = 0;
    for (x, y) in a.cells.iter().zip(&b.cells) {
        let cell = format!("{}/{}", x.board, x.profile);
        assert_eq!(x.verdict.outcome, Outcome::Pass, "{cell} on QEMU {}: {}", old.version, x.verdict.message);
        assert_eq!(y.verdict, x.verdict, "{cell}");
        assert_eq!(x.qemu.as_deref(), Some(&*old.version.to_string()), "{cell}");
        assert_eq!(y.qemu.as_deref(), Some(&*new.version.to_string()), "{cell}");
        assert!(x.cycle_model.is_some() && x.kats.iter().all(|k| k.cycles.is_some()), "{cell}: cycle estimates");
        assert_eq!(x.kats.len(), y.kats.len(), "{cell}");
        for (k, l) in x.kats.iter().zip(&y.kats) {
            let row = |k: &mcubench::report::KatReport| {
                (
                    k.id.clone(),
                    k.result.clone(),
                    k.instructions,
                    k.instructions_source,
                    k.cycles,
                    k.ticks,
                    k.stack,
                    k.stack_lowest,
                )
            };
            assert_eq!(row(l), row(k), "{cell} {}: QEMU {} (left) vs QEMU {}", k.id, new.version, old.version);
            kats += 1;
        }
        assert_eq!((y.instructions_total, y.cycles_total), (x.instructions_total, x.cycles_total), "{cell}");
        // Everything else too: the whole cell but the QEMU version.
        let json = |c: &mcubench::report::CellReport| {
            let mut v = serde_json::to_value(c).unwrap();
            v.as_object_mut().unwrap().remove("qemu");
            v
        };
        assert_eq!(json(y), json(x), "{cell}");
    }
    assert!(kats >= 15 * 50, "every KAT ran: {kats}");
}

/// The memory system too: with the STM32F407 profile (5 wait states, prefetch, ART caches) the
/// KAT firmware's estimates are the same on both QEMUs, although QEMU 10 cuts long straight-line
/// blocks (SHA-3's rounds) that 7.2 translates whole: the cycles spent in a flash line add up
/// over the blocks that run in it. (It differed by 0.03 % before: 26 662 249 vs 26 655 564.)
#[test]
fn memory_system_estimates_are_identical_on_qemu_7_2_and_qemu_10() {
    let (old, new) = qemus();
    let scenario = common::kat_speed_as_stm32f407();
    let (a, b) = (run_on(&scenario, &old), run_on(&scenario, &new));
    let (x, y) = (&a.cells[0], &b.cells[0]);
    assert_eq!(x.verdict.outcome, Outcome::Pass, "{}", x.verdict.message);
    assert!(x.cycle_model.as_deref().is_some_and(|m| m.contains("memory system")), "{:?}", x.cycle_model);
    assert!(x.kats.len() >= 50 && x.kats.iter().all(|k| k.cycles.is_some()));
    for (k, l) in x.kats.iter().zip(&y.kats) {
        assert_eq!(l.cycles, k.cycles, "{}: QEMU {} (left) vs QEMU {}", k.id, new.version, old.version);
    }
    assert_eq!(y.cycles_total, x.cycles_total);
}

/// QEMU's own start-up and run on QEMU 10 pass the containment's system-call filter: the
/// hostile corpus's attacks are refused and named there too, and the contained counts equal the
/// native ones (the whole contain.rs suite also runs on QEMU 10 in .ci/run).
#[test]
fn containment_works_on_qemu_10() {
    let (_, new) = qemus();
    // Unpatched, the firmware's SYS_SYSTEM command is its placeholder text: refused either way.
    let scenario = common::scenario(&format!(
        "name: hostile\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntimeout: 10 s\n",
        common::c_firmware("hostile-system").display()
    ));
    let cell = common::only_cell(run_on(&scenario, &new));
    assert_eq!(cell.qemu.as_deref(), Some(&*new.version.to_string()));
    assert_eq!(cell.verdict.outcome, Outcome::Fail, "{}", cell.verdict.message);
    assert!(cell.verdict.message.contains("SYS_SYSTEM"), "{}", cell.verdict.message);
}

/// An unsupported QEMU is a setup error for every cell, naming its version and the supported
/// range; nothing runs.
#[test]
fn an_unsupported_qemu_is_a_setup_error_naming_the_range() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("qemu-system-arm");
    std::fs::write(&fake, "#!/bin/sh\necho 'QEMU emulator version 6.2.0 (Debian 1:6.2+dfsg-2ubuntu6)'\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let scenario = common::scenario(&format!(
        "name: old\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\n",
        common::c_firmware("kat-crc32").display()
    ));
    let report = run_scenario(&scenario, &RunOptions { qemu: fake.clone(), ..RunOptions::default() });
    let cell = common::only_cell(report);
    assert_eq!(cell.verdict.outcome, Outcome::SetupError);
    assert!(
        cell.verdict
            .message
            .starts_with(&format!("QEMU 6.2.0 is not supported: mcubench runs on {}", version::SUPPORTED)),
        "{}",
        cell.verdict.message
    );
    assert_eq!(cell.qemu, None);
    // The CLI says the same and exits 1.
    let out = Command::new(env!("CARGO_BIN_EXE_mcubench"))
        .args(["run", "--elf"])
        .arg(common::c_firmware("kat-crc32"))
        .args(["--board", "mps2-an386", "--qemu"])
        .arg(&fake)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("QEMU 6.2.0 is not supported"), "{stdout}");
}

/// A plugin built for the other API (here: given with MCUBENCH_QEMU_PLUGIN) is refused with a
/// message naming both APIs before QEMU runs, on either QEMU; never loaded to fail or crash.
#[test]
fn a_plugin_for_the_other_api_is_refused() {
    let (old, new) = qemus();
    for (qemu, other) in [(&old, &new), (&new, &old)] {
        let so = plugin::locate_for(other.api).unwrap().expect("plugin enabled");
        let out = Command::new(env!("CARGO_BIN_EXE_mcubench"))
            .args(["run", "-q", "--elf"])
            .arg(common::c_firmware("kat-crc32"))
            .args(["--board", "mps2-an386", "--format", "json"])
            .env("MCUBENCH_QEMU", &qemu.path)
            .env(plugin::ENV, &so)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let verdict = &report["cells"][0]["verdict"];
        assert_eq!(verdict["outcome"], "setup-error", "{verdict}");
        let message = verdict["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                "is built for plugin API {}, but this QEMU ({}) needs plugin API {} ({})",
                other.api,
                qemu.api.qemu_range(),
                qemu.api,
                qemu.api.file_name()
            )),
            "{message}"
        );
    }
}

/// `mcubench doctor` on this machine: everything there, on both QEMUs (exit 0), with the QEMU
/// version, the plugin API and build, and the contained self-test in its output; a missing QEMU
/// fails it with what to install.
#[test]
fn doctor_passes_on_both_qemus_and_says_what_is_missing() {
    let (old, new) = qemus();
    for q in [&old, &new] {
        let out =
            Command::new(env!("CARGO_BIN_EXE_mcubench")).arg("doctor").env("MCUBENCH_QEMU", &q.path).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        println!("{text}");
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains(&format!("({}), plugin API {}", q.description, q.api)), "{text}");
        assert!(text.contains(q.api.file_name()), "{text}");
        assert!(text.contains(&format!("a contained self-test run on QEMU {} passed", q.version)), "{text}");
        assert!(text.contains("arm-none-eabi-gcc") && text.contains("thumbv7em-none-eabihf"), "{text}");
        assert!(text.ends_with("mcubench can run firmware here.\n"), "{text}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mcubench"))
        .args(["doctor", "--qemu", "/nonexistent/qemu-system-arm"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("MISSING") && text.contains("fix: install qemu-system-arm"), "{text}");
    assert!(text.ends_with("check(s) failed.\n"), "{text}");
}
