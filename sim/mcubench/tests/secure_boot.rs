//! The secure-boot scenario (`scenarios/secure-boot.yaml`) on the Cortex-M33 board: the verify-only
//! firmware passes every KAT, the tampered image is rejected by every row, and the secure-boot
//! table (Markdown and CSV, rendered from the report) is pinned by a snapshot in `snapshots/`.
//!
//! Only mps2-an505 runs here: building the firmware (RustCrypto SHA-2/3, RSA, ECDSA P-256/384/521,
//! Ed25519, Ed448, ML-DSA, SLH-DSA, plus their host copies for the build script) costs about
//! 110 s of CPU per memory layout cold, so the mps2-an386 row set is left to
//! `mcubench run scenarios/secure-boot.yaml`.

// Full test tier: needs QEMU and the thumb targets (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::Scenario;
use mcubench::judge::verdict::Outcome;
use mcubench::report::tables;

/// Most bytes the measurement's own frames (trampoline, closure) add to a boot KAT's `stack`.
const WRAPPER: u32 = 32;

#[test]
fn secure_boot_table_on_the_m33_is_real_and_pinned() {
    let mut scenario = Scenario::load(&common::repo().join("scenarios/secure-boot.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == "mps2-an505");
    let report = common::run(&scenario);
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert!(cell.budgets_hold(), "{:?}", cell.budgets);
    assert!(cell.budgets.iter().any(|b| b.metric == mcubench::gate::Metric::Time), "time budgets are checked");
    let spec = report.table.as_ref().expect("the scenario declares a table");
    assert_eq!(cell.table_rows.len(), spec.rows.len(), "one row per declared algorithm");
    for row in &spec.rows {
        // Fail closed: the tampered KAT passes only when the boot path returned "reject" (0).
        let tampered = cell.kats.iter().find(|k| k.id == format!("{row}/tampered")).expect("tampered KAT");
        assert_eq!(tampered.op, "reject");
        assert_eq!(
            tampered.result,
            mcubench::judge::protocol::KatResult::Pass,
            "{row}: the tampered image was accepted"
        );
        let boot = cell.kats.iter().find(|k| k.id == format!("{row}/boot")).expect("boot KAT");
        assert!(boot.cycles.is_some_and(|c| c > 0), "{row}: boot cycles measured");
        let facts = cell.table_rows.iter().find(|f| &f.row == row).unwrap();
        // The static bound of the boot path is never below the painted measurement, which also
        // holds the frames of measure()'s trampoline and the KAT's closure around the call
        // (16 B with this build: `run` pushes {r7, lr}, the closure 8 B more).
        if let Some(bound) = facts.stack_static {
            assert!(bound + WRAPPER >= boot.stack, "{row}: static {bound} B + {WRAPPER} B < measured {} B", boot.stack);
        }
        assert!(facts.verify_code.is_some_and(|b| b > 0), "{row}: verify-path code measured");
    }
    // Hybrids: corrupting either part of the signature alone is rejected (both must verify).
    for id in [
        "ml_dsa_65_ecdsa_p384/tampered-ml-dsa",
        "ml_dsa_65_ecdsa_p384/tampered-ecdsa",
        "ml_dsa_87_ecdsa_p521/tampered-ml-dsa",
        "ml_dsa_87_ecdsa_p521/tampered-ecdsa",
    ] {
        let k = cell.kats.iter().find(|k| k.id == id).unwrap_or_else(|| panic!("{id} ran"));
        assert_eq!((k.op.as_str(), &k.result), ("reject", &mcubench::judge::protocol::KatResult::Pass), "{id}");
    }
    // RSA keeps its big integers on the heap: its boot KATs report what they took (RSA-4096's
    // modulus alone is 512 B), the run its peak; the other rows allocate nothing (records carry
    // `heap=` once anything was allocated: the rows after RSA's).
    let heap = |id: &str| cell.kats.iter().find(|k| k.id == id).and_then(|k| k.heap);
    for bits in [2048u32, 3072, 4096] {
        let h = heap(&format!("rsa_{bits}/boot")).unwrap_or(0);
        assert!(h > bits / 8, "rsa_{bits}/boot: heap {h} B");
    }
    assert_eq!(heap("ml_dsa_87_ecdsa_p521/boot"), Some(0));
    assert!(cell.heap_peak >= heap("rsa_4096/boot"));
    // Official vectors ran and passed.
    for id in [
        "ed25519/rfc8032-1",
        "ed448/rfc8032-blank",
        "ecdsa_p256/cavp-1",
        "ecdsa_p384/cavp-1",
        "ecdsa_p521/cavp-1",
        "rsa_2048/wycheproof-3",
        "ml_dsa_44/acvp-sigver",
        "ml_dsa_65/acvp-sigver",
        "ml_dsa_87/acvp-sigver",
        "slh_dsa_sha2_128s/acvp-sigver-sha2-192s",
        "slh_dsa_sha2_128s/acvp-siggen-157",
        "sha256/fips-abc",
        "sha384/fips-abc",
        "sha3_256/fips-abc",
        "ecdsa_p521/fips-abc",
    ] {
        let k = cell.kats.iter().find(|k| k.id == id).unwrap_or_else(|| panic!("{id} ran"));
        assert_eq!(k.result, mcubench::judge::protocol::KatResult::Pass, "{id}");
    }
    let markdown = tables::to_markdown(&report).expect("markdown table");
    let csv = tables::to_csv(&report).expect("csv table");
    insta::with_settings!({
        snapshot_path => "../../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("secure-boot-mps2-an505-markdown", markdown);
        insta::assert_snapshot!("secure-boot-mps2-an505-csv", csv);
    });
}
