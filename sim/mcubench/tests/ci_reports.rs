//! CI reports on real runs: the JSON report round-trips, `diff` of two firmware variants that
//! differ in a known way (a 1 KiB CRC table) gives the expected deltas and exit codes, budget vs
//! regression exit codes, sharding + merge reproduce the full run, JUnit parses as JUnit, and the
//! Markdown summary is pinned by a snapshot.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use mcubench::report::RunReport;

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `elf` on mps2-an386 as `kat-crc32` (the scenario name comes from the file name, so both
/// variants must have the same name to be compared) and writes the JSON report to `dir`.
fn report_of(elf: &Path, dir: &Path, extra: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let named = dir.join("kat-crc32.elf");
    std::fs::copy(elf, &named).unwrap();
    let json = dir.join("report.json");
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--format", "json", "--json-output"])
        .arg(&json)
        .args(extra)
        .arg("--elf")
        .arg(&named)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    json
}

fn scenario_with(dir: &Path, regressions: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("limits.yaml");
    std::fs::write(
        &path,
        format!(
            "name: kat-crc32\nfirmware: {{ elf: kat-crc32.elf }}\nboards: [mps2-an386]\nregressions: {regressions}\n"
        ),
    )
    .unwrap();
    std::fs::copy(common::c_firmware("kat-crc32"), dir.join("kat-crc32.elf")).unwrap();
    path
}

#[test]
fn the_json_report_round_trips_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(report_of(&common::c_firmware("kat-crc32"), dir.path(), &[])).unwrap();
    let back = RunReport::from_json(&json).unwrap();
    assert_eq!(back.to_json(), json);
    assert_eq!(back.schema, "mcubench-run/1");

    let err = RunReport::from_json(&json.replace("mcubench-run/1", "mcubench-run/9")).unwrap_err();
    assert!(err.contains("mcubench-run/9"), "{err}");
    // A renamed field is a missing one (added fields are accepted: see report/json.rs).
    let err = RunReport::from_json(&json.replacen("\"board\"", "\"bord\"", 1)).unwrap_err();
    assert!(err.contains("missing field `board`"), "{err}");
}

#[test]
fn diff_of_two_variants_shows_the_known_change_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let base = report_of(&common::c_firmware("kat-crc32"), &dir.path().join("base"), &[]);
    let head = report_of(&common::c_firmware("kat-crc32-table"), &dir.path().join("head"), &[]);

    // No limits: the deltas are reported, nothing fails.
    let out = common::mcubench().args(["diff", "--format", "json"]).arg(&base).arg(&head).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let flash = d["deltas"].as_array().unwrap().iter().find(|x| x["metric"] == "flash").expect("flash delta");
    let change = flash["change"].as_i64().unwrap();
    // The table is 1024 B; the table loop is a little shorter than the bitwise one.
    assert!((1000..=1100).contains(&change), "flash grew by {change} B");
    let table =
        d["symbols"].as_array().unwrap().iter().find(|s| s["symbol"] == "crc32_table").expect("the table symbol");
    assert_eq!(table["head"], 1024);
    assert!(table["base"].is_null());

    // A 1 % flash limit is crossed: regression, exit 4.
    let limits = scenario_with(&dir.path().join("strict"), "{ flash: 1 % }");
    let out = common::mcubench().args(["diff", "--scenario"]).arg(&limits).arg(&base).arg(&head).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(text(&out).contains("regression"), "{}", text(&out));
    // A generous one is not.
    let limits = scenario_with(&dir.path().join("lax"), "{ flash: 50 %, ram: 0 B }");
    let out = common::mcubench().args(["diff", "--scenario"]).arg(&limits).arg(&base).arg(&head).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Shrinking never regresses: HEAD → BASE under the strict limit passes.
    let limits = scenario_with(&dir.path().join("strict2"), "{ flash: 0 % }");
    let out = common::mcubench().args(["diff", "--scenario"]).arg(&limits).arg(&head).arg(&base).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A HEAD over its budget is a budget violation (exit 3), told apart from a regression.
    let over =
        report_of(&common::c_firmware("kat-crc32-table"), &dir.path().join("over"), &["--flash-budget", "4 KiB"]);
    let limits = scenario_with(&dir.path().join("strict3"), "{ flash: 1 % }");
    let out = common::mcubench().args(["diff", "--scenario"]).arg(&limits).arg(&base).arg(&over).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(text(&out).contains("budget"), "{}", text(&out));
}

#[test]
fn shards_cover_the_matrix_once_and_merge_back_to_the_full_run() {
    // Prebuilt ELF on one board: build a 1×1 matrix is too small; use the KAT scenario's
    // size profile on three boards (3 cells) and 2 shards.
    let dir = tempfile::tempdir().unwrap();
    let scenario = common::repo().join("scenarios/kat.yaml");
    let run = |extra: &[&str], out: &Path| {
        let o = common::mcubench()
            .args([
                "run",
                "--quiet",
                "--profile",
                "size",
                "--board",
                "mps2-an386",
                "--board",
                "mps2-an385",
                "--board",
                "microbit",
                "--format",
                "json",
                "--json-output",
            ])
            .arg(out)
            .args(extra)
            .arg(&scenario)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    };
    run(&[], &dir.path().join("full.json"));
    std::fs::create_dir_all(dir.path().join("shards")).unwrap();
    run(&["--shard", "1/2"], &dir.path().join("shards/1.json"));
    run(&["--shard", "2/2"], &dir.path().join("shards/2.json"));
    let one = RunReport::from_json(&std::fs::read_to_string(dir.path().join("shards/1.json")).unwrap()).unwrap();
    let two = RunReport::from_json(&std::fs::read_to_string(dir.path().join("shards/2.json")).unwrap()).unwrap();
    assert_eq!((one.cells.len(), two.cells.len()), (2, 1));

    let out = common::mcubench().arg("merge").arg(dir.path().join("shards")).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let full = std::fs::read_to_string(dir.path().join("full.json")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), full, "merged shards = the unsharded run, byte for byte");

    // Merging a shard twice is refused.
    let out = common::mcubench()
        .arg("merge")
        .arg(dir.path().join("shards/1.json"))
        .arg(dir.path().join("shards/1.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("appears in two reports"), "{}", text(&out));
}

#[test]
fn junit_is_valid_junit_for_a_real_parser() {
    let dir = tempfile::tempdir().unwrap();
    let report = report_of(&common::c_firmware("kat-crc32"), &dir.path().join("a"), &[]);
    let report = RunReport::from_json(&std::fs::read_to_string(report).unwrap()).unwrap();
    let xml = dir.path().join("junit.xml");
    std::fs::write(&xml, mcubench::report::junit::to_junit(&report)).unwrap();
    // junitparser (PyPI) is the JUnit reader of many CI tools; ci/setup.sh installs it.
    let check = r#"
import sys
from junitparser import JUnitXml, TestSuite
xml = JUnitXml.fromfile(sys.argv[1])
suites = list(xml) if not isinstance(xml, TestSuite) else [xml]
cases = [c for s in suites for c in s]
assert len(suites) == 1, len(suites)
assert len(cases) == 4, [c.name for c in cases]
assert all(c.is_passed for c in cases), [(c.name, c.result) for c in cases]
assert {c.name for c in cases} >= {"crc32/empty", "crc32/check-123456789"}
print("ok", len(cases))
"#;
    let out = std::process::Command::new("python3").arg("-c").arg(check).arg(&xml).output().expect("python3 runs");
    assert!(out.status.success(), "junitparser rejected the file: {}", text(&out));
}

#[test]
fn openmetrics_is_read_by_the_prometheus_parser_and_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics.txt");
    let flag = ["--metrics-output", metrics.to_str().unwrap()];
    let json = report_of(&common::c_firmware("kat-crc32"), &dir.path().join("a"), &flag);
    let report = RunReport::from_json(&std::fs::read_to_string(json).unwrap()).unwrap();
    // The CLI's file is the report's OpenMetrics rendering.
    let written = std::fs::read_to_string(&metrics).unwrap();
    assert_eq!(written, mcubench::report::openmetrics::to_openmetrics(&report));
    // prometheus-client's OpenMetrics parser is strict (families whole, `# EOF`, escaping, units);
    // ci/setup.sh installs it.
    let check = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
families = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
assert families["mcubench_run_passed"].samples[0].value == 1, families["mcubench_run_passed"]
assert families["mcubench_flash_bytes"].unit == "bytes"
kats = families["mcubench_kat_instructions"].samples
assert len(kats) == 4 and all(s.value > 0 for s in kats), kats
assert {s.labels["kat"] for s in kats} >= {"crc32/empty", "crc32/check-123456789"}
print("ok", len(families))
"#;
    let out = std::process::Command::new("python3").arg("-c").arg(check).arg(&metrics).output().expect("python3 runs");
    assert!(out.status.success(), "the OpenMetrics parser rejected the file: {}\n{written}", text(&out));
    // And a failing report, pinned.
    let failing = RunReport::from_json(include_str!("data/failing-report.json")).unwrap();
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("openmetrics-failing", mcubench::report::openmetrics::to_openmetrics(&failing));
    });
}

#[test]
fn junit_reports_failures_and_errors() {
    let report = RunReport::from_json(include_str!("data/failing-report.json")).unwrap();
    let xml = mcubench::report::junit::to_junit(&report);
    assert!(xml.contains("tests=\"5\" failures=\"3\" errors=\"1\""), "{xml}");
    assert!(xml.contains("name=\"budget.stack\""), "{xml}");
    assert!(xml.contains("<failure message=\"AES-128 encrypt: KAT failed"), "{xml}");
    assert!(xml.contains("<error message=\"timeout: no exit within 5 s"), "{xml}");
    assert!(xml.contains("&lt;script&gt;"), "escaped: {xml}");
}

#[test]
fn markdown_summary_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let base = report_of(&common::c_firmware("kat-crc32"), &dir.path().join("base"), &[]);
    let head = report_of(&common::c_firmware("kat-crc32-table"), &dir.path().join("head"), &[]);
    let limits = scenario_with(&dir.path().join("l"), "{ flash: 1 % }");
    let out = common::mcubench()
        .args(["diff", "--format", "markdown", "--scenario"])
        .arg(&limits)
        .arg(&base)
        .arg(&head)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("markdown-diff-kat-crc32", String::from_utf8_lossy(&out.stdout));
    });

    let failing = RunReport::from_json(include_str!("data/failing-report.json")).unwrap();
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("markdown-failing", mcubench::report::markdown::to_markdown(&failing, None));
    });
}

#[test]
fn run_elf_works_as_a_cargo_runner() {
    // `runner = "mcubench run --quiet --board mps2-an386 --elf"` in a firmware's cargo config makes
    // `cargo run` print the results; the environment variable form is the same setting.
    let runner = format!("{} run --quiet --board mps2-an386 --elf", env!("CARGO_BIN_EXE_mcubench"));
    let out = std::process::Command::new("cargo")
        .current_dir(common::repo().join("firmware"))
        .args(["run", "--quiet", "--release", "-p", "kat", "--target", "thumbv7em-none-eabihf"])
        .args(["--target-dir", "target/mcubench/cargo-runner"])
        .env("CARGO_TARGET_THUMBV7EM_NONE_EABIHF_RUNNER", runner)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("mps2-an386  Cortex-M4F  prebuilt  pass"), "{stdout}");
}

/// Every field path of a real report, pinned: renaming, removing or retyping a field shows up as
/// a snapshot change, which must come with a `schema` bump (docs/src/reference/report-schema.md says when).
#[test]
fn the_report_schema_is_stable() {
    fn paths(v: &serde_json::Value, at: String, out: &mut std::collections::BTreeSet<String>) {
        let kind = match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "bool",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        };
        out.insert(format!("{at}: {kind}"));
        match v {
            serde_json::Value::Array(items) => items.iter().for_each(|i| paths(i, format!("{at}[]"), out)),
            serde_json::Value::Object(map) => map.iter().for_each(|(k, i)| paths(i, format!("{at}.{k}"), out)),
            _ => {}
        }
    }
    // The Rust KAT firmware: markers (exact counts, cycles), KATs, a bounded static stack.
    let mut scenario = mcubench::Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == "microbit");
    scenario.profiles.retain(|p| p.name == "size");
    let json = common::run(&scenario).to_json();
    let mut set = std::collections::BTreeSet::new();
    paths(&serde_json::from_str(&json).unwrap(), String::new(), &mut set);
    // C firmware with function regions (per call, bytes per call, split by caller) and KATs that
    // report their bytes, on a board timing profile (clock, times, memory system): the fields the
    // Rust KATs do not have.
    let percall = common::scenario(&format!(
        "name: percall\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntiming: stm32f407\n\
         regions: [{{ name: crc32, split: caller }}, {{ name: crc32_64, bytes: 64, split: caller }}]\n",
        common::c_firmware("percall").display()
    ));
    let json = common::run(&percall).to_json();
    paths(&serde_json::from_str(&json).unwrap(), String::new(), &mut set);
    // C firmware that times itself with the DWT cycle counter: the pairs of reads.
    let cyccnt = common::scenario(&format!(
        "name: cyccnt\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntiming: stm32f407\n",
        common::c_firmware("cyccnt").display()
    ));
    let json = common::run(&cyccnt).to_json();
    paths(&serde_json::from_str(&json).unwrap(), String::new(), &mut set);
    let listing: Vec<String> = set.into_iter().collect();
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!("report-schema", listing.join("\n"));
    });
}
