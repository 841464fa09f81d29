//! The throughput scenario (`scenarios/throughput.yaml`) on the Cortex-M33 board: every measured
//! operation of the throughput firmware passes its known-answer test, the cycles-per-byte budgets
//! are checked, and the throughput table and (from the same report) the profile table are pinned
//! by snapshots in `snapshots/`. A table row the firmware does not measure is an error naming the
//! ones it does.
//!
//! A smaller variant of the scenario runs here, to keep the test tier's build small: mps2-an505
//! only, and the firmware without its `p256` feature (ECDSA/ECDH P-256: the largest crates). The
//! same build also carries the profile scenario's second ML-DSA implementation for one parameter
//! set (features `fips204`, `ml-dsa-44`: keygen, sign and verify on NIST ACVP vectors), so
//! `scenarios/profiles.yaml`'s new code runs here without a build of its own. The second board,
//! P-256, RustCrypto's ML-DSA profiles and ML-DSA-65/87 are left to `mcubench run`
//! (docs/src/guide/throughput.md and profiles.md have their output and timings).

// Full test tier: needs QEMU and the thumb targets (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::Scenario;
use mcubench::config::scenario::Firmware;
use mcubench::config::table::TableKind;
use mcubench::judge::protocol::KatResult;
use mcubench::judge::verdict::Outcome;
use mcubench::report::tables;

const SIZED: [&str; 9] = [
    "sha256",
    "sha512",
    "sha3_256",
    "shake128",
    "shake256",
    "aes128_cbc",
    "aes128_ctr",
    "aes128_gcm",
    "chacha20poly1305",
];

#[test]
fn throughput_table_on_the_m33_is_real_checked_and_pinned() {
    let mut scenario = Scenario::load(&common::repo().join("scenarios/throughput.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == "mps2-an505");
    let Firmware::Cargo { features, .. } = &mut scenario.firmware else { panic!("cargo firmware") };
    features.retain(|f| f != "p256");
    features.extend(["fips204".to_string(), "ml-dsa-44".to_string()]);
    let report = common::run(&scenario);
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    for k in &cell.kats {
        assert_eq!(k.result, KatResult::Pass, "{}", k.id);
        assert!(k.cycles.is_some_and(|c| c > 0), "{}: cycles measured", k.id);
    }
    // Official vectors of every algorithm ran (their ids name the source).
    for id in [
        "sha256/fips180-abc",
        "sha512/fips180-abc",
        "sha3_256/fips202-abc",
        "shake128/fips202-empty",
        "shake256/fips202-empty",
        "aes128_cbc/sp800-38a-f21",
        "aes128_ctr/sp800-38a-f51",
        "aes128_gcm/gcm-tc2",
        "chacha20poly1305/rfc8439-282",
        "ed25519/keygen",
        "ed25519/sign",
        "ed25519/verify",
        "x25519/keygen",
        "x25519/shared",
        "ml_dsa_44/keygen",
        "ml_dsa_44/sign",
        "ml_dsa_44/verify",
    ] {
        assert!(cell.kats.iter().any(|k| k.id == id), "{id} ran");
    }
    // Per algorithm: six sizes, and the per-call overhead amortises (16 KiB is cheaper per byte
    // than 16 B).
    for alg in SIZED {
        let cpb = |label: &str| {
            let id = format!("{alg}/{label}");
            cell.kats.iter().find(|k| k.id == id).and_then(|k| k.cycles_per_byte).unwrap_or_else(|| panic!("{id}"))
        };
        assert!(cpb("16KiB") < cpb("16B"), "{alg}: {} cpb at 16 KiB, {} at 16 B", cpb("16KiB"), cpb("16B"));
    }
    // The cycles-per-byte budgets are checked (and hold).
    let cpb: Vec<_> = cell.budgets.iter().filter(|b| b.metric == mcubench::gate::Metric::Cpb).collect();
    assert_eq!(cpb.len(), 3, "{:?}", cell.budgets);
    assert!(cell.budgets_hold(), "{:?}", cell.budgets);

    let markdown = tables::to_markdown(&report).expect("markdown table");
    let csv = tables::to_csv(&report).expect("csv table");
    assert!(markdown.contains("MB/s @250 MHz (stm32h563), 16 KiB"), "{markdown}");
    // The same report as the profile table (one profile here; scenarios/profiles.yaml has three).
    let mut as_profiles = report.clone();
    let spec = as_profiles.table.as_mut().unwrap();
    spec.kind = TableKind::Profiles;
    spec.rows = vec!["ed25519".into(), "x25519".into(), "ml_dsa_44".into()];
    let profiles = tables::to_markdown(&as_profiles).expect("profile table");
    insta::with_settings!({
        snapshot_path => "../../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("throughput-mps2-an505-markdown", markdown);
        insta::assert_snapshot!("throughput-mps2-an505-csv", csv);
        insta::assert_snapshot!("profiles-mps2-an505-markdown", profiles);
    });

    // Bad input: a row and a size the firmware does not measure are errors listing what it has
    // (the build is reused; the run takes about a second).
    let mut bad = scenario.clone();
    bad.table.as_mut().unwrap().rows = vec!["sha256".into(), "sha384".into()];
    let report = common::run(&bad);
    let v = &report.cells[0].verdict;
    assert_eq!(v.outcome, Outcome::SetupError, "{}", v.message);
    assert!(
        v.message.contains("table.rows: `sha384` is not an algorithm the firmware measured")
            && v.message.contains("it measured: sha256, sha512, sha3_256, shake128"),
        "{}",
        v.message
    );
    assert!(tables::to_text(&report).unwrap().contains("no measured cells"));
}
