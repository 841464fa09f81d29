//! The secure-boot scenario (`scenarios/secure-boot.yaml`) on the Cortex-M33 board: the verify-only
//! firmware passes every KAT, the tampered image is rejected by every row, and the secure-boot
//! table (Markdown and CSV, rendered from the report) is pinned by a snapshot in `snapshots/`.
//!
//! A C bootloader that knows nothing of mcubench (`scenarios/bootloader.yaml`: Mbed TLS, newlib,
//! console on UART0, built with make at two optimisation levels) gets the same table from its
//! function regions, judged by its console lines.
//!
//! Only mps2-an505 runs here: building the firmware (RustCrypto SHA-2/3, RSA, ECDSA P-256/384/521,
//! Ed25519, Ed448, ML-DSA, SLH-DSA, LMS, XMSS, plus their host copies for the build script) costs about
//! 110 s of CPU per memory layout cold, so the mps2-an386 row set is left to
//! `mcubench run scenarios/secure-boot.yaml`.

// Full test tier: needs QEMU and the thumb targets (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::Scenario;
use mcubench::judge::verdict::Outcome;
use mcubench::report::tables;

/// Most bytes the measurement's own frames (trampoline, closure) add to a boot KAT's `stack`, for
/// a hash row (`sb_boot_<row>(image, hdr)`: `run` pushes {r7, lr}, the closure 8 B more) and for
/// a signature row, whose four slices (eight words) put four words on the stack: there `run`
/// holds 40 B (`push {r4-r7, lr}`, `str r8`, `sub sp, #16`, read in the disassembly of the
/// LMS and XMSS rows, whose static bounds are sound).
const WRAPPER: u32 = 32;
const WRAPPER_SIGNED: u32 = 40;

/// The ELF the run used: the build under firmware/target/mcubench/ whose SHA-256 the report gives.
fn built_elf(sha256: &str) -> std::path::PathBuf {
    use sha2::Digest as _;
    let builds = common::repo().join("firmware/target/mcubench");
    std::fs::read_dir(&builds)
        .unwrap()
        .filter_map(|d| Some(d.ok()?.path().join("thumbv8m.main-none-eabihf/release/secure-boot")))
        .find(|p| std::fs::read(p).is_ok_and(|b| format!("{:x}", sha2::Sha256::digest(&b)) == sha256))
        .unwrap_or_else(|| panic!("no build under {} has SHA-256 {sha256}", builds.display()))
}

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
        // (`WRAPPER`, `WRAPPER_SIGNED`).
        let wrapper = if facts.signature.is_some() { WRAPPER_SIGNED } else { WRAPPER };
        if let Some(bound) = facts.stack_static {
            assert!(bound + wrapper >= boot.stack, "{row}: static {bound} B + {wrapper} B < measured {} B", boot.stack);
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
        "lms_h10_w8/rfc8554-tc1",
        "lms_h10_w8/rfc8554-tc2",
        "xmss_sha2_10_256/ref-kat-0",
        "slh_dsa_sha2_128s/acvp-siggen-157",
        "sha256/fips-abc",
        "sha384/fips-abc",
        "sha3_256/fips-abc",
        "ecdsa_p521/fips-abc",
        "sha256_asm/fips-abc",
        "sha384_asm/fips-abc",
        "sha3_256_asm/fips-abc",
        "sha256_asm/fips-448",
        "sha384_asm/fips-896",
        "sha3_256_asm/fips-448",
    ] {
        let k = cell.kats.iter().find(|k| k.id == id).unwrap_or_else(|| panic!("{id} ran"));
        assert_eq!(k.result, mcubench::judge::protocol::KatResult::Pass, "{id}");
    }
    // The rows with assembly run wolfSSL's Thumb-2 hash cores, and the stack analyzer bounds their
    // boot paths (push/sub sp in hand-written assembly) with no annotation.
    let elf = mcubench_elf::ElfImage::read(&built_elf(cell.elf_sha256.as_deref().unwrap())).unwrap();
    for (row, core) in
        [("sha256_asm", "Transform_Sha256_Len"), ("sha384_asm", "Transform_Sha512_Len"), ("sha3_256_asm", "BlockSha3")]
    {
        let facts = cell.table_rows.iter().find(|f| f.row == row).unwrap();
        assert_eq!(facts.stack_static_kind, "exact", "{row}: {facts:?}");
        let hash = cell.kats.iter().find(|k| k.id == format!("{row}/hash")).unwrap();
        assert_eq!(hash.result, mcubench::judge::protocol::KatResult::Pass, "{row}/hash");
        assert!(elf.symbol(core).is_some_and(|s| s.size > 0), "{row}: wolfSSL's {core} is in the ELF");
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

/// A vendor's C bootloader without the result protocol: the verdict comes from its UART lines
/// (each row boots the genuine image and rejects a tampered one), the table's measured columns
/// from the function regions `sb_boot_<row>`, `sb_hash_<row>`, `sb_verify_<row>`, its code,
/// static stack and header columns from the ELF, as for the Rust firmware.
#[test]
fn a_c_bootloader_without_the_protocol_gets_its_table_from_function_regions() {
    let scenario = Scenario::load(&common::repo().join("scenarios/bootloader.yaml")).unwrap();
    let report = common::run(&scenario);
    assert_eq!(report.cells.len(), 2, "one cell per optimisation level");
    for cell in &report.cells {
        assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}: {}", cell.profile, cell.verdict.message);
        assert!(cell.kats.is_empty(), "the firmware speaks no protocol");
        // Its budgets gate the regions: boot cycles, and boot time at the table's clock.
        assert!(cell.budgets_hold(), "{:?}", cell.budgets);
        assert!(cell.budgets.iter().any(|b| b.metric == mcubench::gate::Metric::Time), "{:?}", cell.budgets);
        let rows: Vec<&str> = cell.table_rows.iter().map(|f| f.row.as_str()).collect();
        assert_eq!(rows, ["ecdsa_p256", "sha256"], "{}", cell.profile);
        // (longest call's cycles, stack probe bytes) of a region; genuine and tampered image:
        // two completed calls each.
        let region = |name: &str| {
            let r = cell.regions.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!((r.calls, r.open), (2, 0), "{name}");
            (r.cycles.as_ref().unwrap().max, r.stack_probe_bytes)
        };
        for facts in &cell.table_rows {
            let row = &facts.row;
            let (boot, probed) = region(&format!("sb_boot_{row}"));
            let (hash, _) = region(&format!("sb_hash_{row}"));
            let (verify, _) = region(&format!("sb_verify_{row}"));
            // The boot path contains the hash and the check: its longest call costs more than both.
            assert!(boot > hash + verify - 1, "{row}: boot {boot}, hash {hash}, verify {verify}");
            // 100 KiB of SHA-256 in Mbed TLS's C: tens of cycles per byte on the Cortex-M4.
            let cpb = hash as f64 / 102_400.0;
            assert!((20.0..100.0).contains(&cpb), "{row}: {cpb} cycles/B");
            let probed = probed.expect("stack probe");
            let bound = facts.stack_static.unwrap_or_else(|| panic!("{row}: {}", facts.stack_static_kind));
            assert!(probed <= bound, "{row}: probed {probed} B > static bound {bound} B");
            assert!(facts.verify_code.is_some_and(|b| b > 0), "{row}");
        }
        let ecdsa = cell.table_rows.iter().find(|f| f.row == "ecdsa_p256").unwrap();
        assert_eq!((ecdsa.signature, ecdsa.public_key), (Some(64), Some(65)));
    }
    let csv = tables::to_csv(&report).expect("csv table");
    insta::with_settings!({
        snapshot_path => "../../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("bootloader-mps2-an386-csv", csv);
    });
    // The same report as a profile table: a row per build profile and function region (operation
    // `call`), Mcycles of its longest call, the profile's static RAM and flash.
    let mut profiles = report.clone();
    profiles.table = Some(mcubench::config::table::TableSpec {
        kind: mcubench::config::table::TableKind::Profiles,
        clock_hz: None,
        rows: vec!["sb_boot_ecdsa_p256".into()],
        sizes: vec![],
        columns: vec![],
    });
    let csv = tables::to_csv(&profiles).expect("profile table");
    for cell in &report.cells {
        let boot = cell.regions.iter().find(|r| r.name == "sb_boot_ecdsa_p256").unwrap();
        let mcycles = format!("{:.3}", boot.cycles.as_ref().unwrap().max as f64 / 1e6);
        let line = format!("mps2-an386,{},sb_boot_ecdsa_p256,{mcycles},", cell.profile);
        assert!(csv.lines().any(|l| l.starts_with(&line)), "{line}\n{csv}");
    }
    assert!(csv.starts_with("board,profile,scheme,call_mcycles,call_stack_kib,"), "{csv}");
}

/// The throughput table from the same C firmware's function regions: a region with bytes per
/// call is a cycles-per-byte row (`sb_hash_sha256`: 100 KiB a call), one without a
/// per-operation row (`sb_verify_ecdsa_p256`), every figure the region's longest call; a row the
/// firmware does not have is refused with the ones it has. Then its profile table, the regions
/// placed with `as: <row>/<operation>`: one row, an operation column per function.
#[test]
fn a_c_bootloader_without_the_protocol_gets_the_throughput_table_from_function_regions() {
    let fw = common::repo().join("firmware/c/bootloader");
    let build = tempfile::tempdir().unwrap();
    let scenario = |regions: &str, table: &str| {
        format!(
            "name: bootloader-throughput\nfirmware:\n  command: make -s -C {fw} OPT=O2 BUILD={b}\n  elf: {b}/bootloader-O2.elf\n\
             boards: [mps2-an386]\nverdict: {{ exit: 0, expect: ['^all rows passed'], reject: ['FAIL'] }}\n\
             regions:\n{regions}stack-probe: true\ntable: {{ {table} }}\n",
            fw = fw.display(),
            b = build.path().display()
        )
    };
    let yaml = |rows: &str| {
        scenario(
            "  - { name: sb_hash_sha256, bytes: 100 KiB }\n  - sb_verify_ecdsa_p256\n",
            &format!("kind: throughput, clock: 168 MHz{rows}"),
        )
    };
    let path = build.path().join("s.yaml");
    let report = common::run(&Scenario::from_yaml(&path, &yaml("")).unwrap());
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let region = |name: &str| cell.regions.iter().find(|r| r.name == name).unwrap();
    let hash = region("sb_hash_sha256").cycles.as_ref().unwrap().max;
    let verify = region("sb_verify_ecdsa_p256").cycles.as_ref().unwrap().max;
    let csv = tables::to_csv(&report).expect("csv table");
    let line =
        |id: &str| csv.lines().find(|l| l.split(',').nth(3) == Some(id)).unwrap_or_else(|| panic!("{id}: {csv}"));
    let cpb = format!("{:.3}", hash as f64 / 102_400.0);
    assert!(line("sb_hash_sha256/102400").contains(&format!(",region,102400,{hash},{cpb},")), "{csv}");
    assert!(line("sb_verify_ecdsa_p256/call").contains(&format!(",call,,{verify},,")), "{csv}");
    let text = tables::to_text(&report).unwrap();
    assert!(text.contains("rows from their function regions"), "{text}");
    // A row the firmware does not measure: a setup error naming what it has.
    let report = common::run(&Scenario::from_yaml(&path, &yaml(", rows: [sha512]")).unwrap());
    let message = &report.cells[0].verdict.message;
    assert_eq!(report.cells[0].verdict.outcome, Outcome::SetupError, "{message}");
    assert!(message.contains("sha512") && message.contains("sb_hash_sha256, sb_verify_ecdsa_p256"), "{message}");

    let regions = ["boot", "hash", "verify"]
        .map(|op| format!("  - {{ name: sb_{op}_ecdsa_p256, as: ecdsa-p256/{op} }}\n"))
        .concat();
    let report = common::run(&Scenario::from_yaml(&path, &scenario(&regions, "kind: profiles")).unwrap());
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let mcycles = |op: &str| {
        let r = cell.regions.iter().find(|r| r.name == format!("sb_{op}_ecdsa_p256")).unwrap();
        assert_eq!(r.table_entry.as_deref(), Some(format!("ecdsa-p256/{op}").as_str()), "the report keeps `as`");
        format!("{:.3}", r.cycles.as_ref().unwrap().max as f64 / 1e6)
    };
    let csv = tables::to_csv(&report).expect("profile table");
    assert!(csv.starts_with("board,profile,scheme,boot_mcycles,hash_mcycles,verify_mcycles,boot_stack_kib,"), "{csv}");
    let row = format!(
        "mps2-an386,{},ecdsa-p256,{},{},{},",
        cell.profile,
        mcycles("boot"),
        mcycles("hash"),
        mcycles("verify")
    );
    assert!(csv.lines().nth(1).is_some_and(|l| l.starts_with(&row)), "{row}\n{csv}");
    assert_eq!(csv.lines().count(), 2, "one row: {csv}");
}
