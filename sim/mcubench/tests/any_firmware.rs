//! Any firmware, unmodified (issue #11): C firmware that has never heard of mcubench — plain
//! newlib programs (firmware/c/newlib), a make-built matrix (firmware/c/matrix) and real
//! third-party C (Mbed TLS's own self-test program, from Debian's `mbedtls` source package, built
//! by firmware/c/third-party/build-mbedtls.sh outside the checkout) — judged by the scenario's
//! verdict rules from its own console and exit code.
//!
//! The first tests check the firmware corpus itself, running each ELF directly under
//! `qemu-system-arm` (what it prints, where, and its exit code), so the evidence does not hinge on
//! the CLI; the rest run the same firmware through `mcubench` with the scenario's `verdict:`
//! rules (`exit`, `expect`, `ordered`, `reject`, `record`), `firmware: { command, elf }`
//! templates with a `matrix:`, and check the JSON `console` streams and recorded `metrics`.
//!
//! A scenario's relative paths (including inside `command`) are relative to the scenario file's
//! directory, and `command` runs with that directory as its working directory.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde_json::Value;

// ---- helpers ---------------------------------------------------------------------------------

fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The cargo target directory (CARGO_TARGET_TMPDIR is `<target>/tmp`): where ci/setup.sh and
/// build-mbedtls.sh keep the third-party source, outside the checkout.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target dir").to_path_buf()
}

fn third_party_src() -> PathBuf {
    target_dir().join("third-party/src")
}

/// Mbed TLS's self-test ELF, fetched (first time only) and built once per test binary.
fn mbedtls_selftest() -> PathBuf {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mbedtls");
        let status = Command::new("bash")
            .arg(common::repo().join("firmware/c/third-party/build-mbedtls.sh"))
            .arg(&out)
            .env("MCUBENCH_THIRD_PARTY_SRC", third_party_src())
            .status()
            .expect("bash runs");
        assert!(status.success(), "build-mbedtls.sh failed; run `bash ci/setup.sh` (deb-src entry, dpkg-dev)");
        out.join("mbedtls-selftest.elf")
    })
    .clone()
}

/// Runs `elf` on `board` under qemu-system-arm as mcubench does (semihosting on, -icount,
/// -no-reboot, no NIC), with `serial` as every UART's backend args. Returns (exit code, stdout).
fn qemu(board: &str, elf: &Path, serial: &[&str]) -> (Option<i32>, String) {
    let b = mcubench::Board::find(board).expect("board");
    let out = Command::new("timeout")
        .args(["30", "qemu-system-arm", "-machine", b.qemu_machine, "-cpu", b.qemu_cpu, "-display", "none"])
        .args(["-monitor", "none", "-semihosting-config", "enable=on,target=native", "-icount", "shift=0"])
        .args(["-no-reboot", "-nic", "none"])
        .args(serial)
        .arg("-kernel")
        .arg(elf)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("qemu-system-arm runs (bash ci/setup.sh)");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `mcubench run <scenario> --format json`: (process exit code, parsed report, raw output).
fn run_json(scenario: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let _build = committed_build_lock(scenario);
    let out = common::mcubench()
        .args(["run", "--quiet", "--format", "json"])
        .args(extra)
        .arg(scenario)
        .env("MCUBENCH_THIRD_PARTY_SRC", third_party_src())
        .output()
        .unwrap();
    let raw = text(&out);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {raw}"));
    (out.status.code(), json, raw)
}

/// Held while a committed scenario runs: their build commands write into the checkout
/// (`firmware/c/*/build`), and two tests running one scenario at once on a fresh clone would
/// each link the ELF while the other reads it.
fn committed_build_lock(scenario: &Path) -> Option<MutexGuard<'static, ()>> {
    static BUILD: Mutex<()> = Mutex::new(());
    scenario
        .starts_with(common::repo().join("scenarios"))
        .then(|| BUILD.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// A scenario's YAML text that runs the C firmware `fw` (firmware/c, built by build.sh) on
/// `boards`, with `rest` (`verdict`, `timeout`, ...) after.
fn elf_yaml(fw: &str, boards: &str, rest: &str) -> String {
    format!("name: {fw}\nfirmware: {{ elf: '{}' }}\nboards: [{boards}]\n{rest}", common::c_firmware(fw).display())
}

/// A scenario file in a temporary directory (kept alive by the returned guard).
fn scenario_file(yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    (dir, path)
}

/// The text of every stream of the cell's `console`, in order.
fn console_text(cell: &Value) -> String {
    let streams = cell["console"].as_array().unwrap_or_else(|| panic!("no `console` in the cell: {cell}"));
    streams.iter().map(|s| s["text"].as_str().expect("stream text")).collect()
}

/// A `record` capture from the cell's metrics.
fn metric(cell: &Value, name: &str) -> f64 {
    cell["metrics"][name].as_f64().unwrap_or_else(|| panic!("no metric `{name}` in the cell: {cell}"))
}

fn one_cell(json: &Value) -> &Value {
    let cells = json["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 1, "{json}");
    &cells[0]
}

/// The verdict rules of the newlib self-test (scenarios/newlib.yaml) for an ELF given by path.
fn newlib_scenario(elf: &Path, board: &str, console: &str) -> String {
    format!(
        r#"name: newlib
firmware: {{ elf: '{}' }}
boards: [{board}]
verdict:
  exit: 0
  expect: ['^newlib self-test \(console: {console}', '^sig bytes: [0-9]+', '^self-test passed']
  ordered: true
  reject: ['FAILED']
  record: ['^sig bytes: (?P<sig_bytes>[0-9]+)', '^cycles: (?P<cycles>[0-9]+)']
timeout: 10 s
"#,
        elf.display()
    )
}

// ---- the firmware corpus itself (passes today) -----------------------------------------------

#[test]
fn newlib_selftest_prints_its_lines_on_semihosting_and_exits_0() {
    let (code, out) = qemu("mps2-an386", &common::c_firmware("newlib-selftest"), &["-serial", "null"]);
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "newlib self-test (console: semihosting)",
        "ok: crc32(\"123456789\") = 0xcbf43926",
        "ok: crc32(sig) = 0x78d93883",
        "sig bytes: 2420",
        "self-test passed",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    assert!(out.lines().any(|l| l.strip_prefix("cycles: ").is_some_and(|n| n.parse::<u32>().is_ok())), "{out}");
}

#[test]
fn newlib_selftest_fail_prints_failed_and_exits_1() {
    let (code, out) = qemu("mps2-an386", &common::c_firmware("newlib-selftest-fail"), &["-serial", "null"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAILED: crc32(\"123456789\") = 0xcbf43926, expected 0xcbf43927\n"), "{out}");
    assert!(out.contains("FAILED: 1 check(s) failed\n"), "{out}");
    assert!(!out.contains("self-test passed"), "{out}");
}

/// The UART firmware writes to UART0/USART1, which QEMU connects to its first serial port
/// (serial0): with serial0 in a file and nothing on semihosting, the lines are in the file only.
#[rstest::rstest]
#[case("mps2-an386", "newlib-uart-mps2", "UART0 (CMSDK APB UART at 0x40004000)")]
#[case("netduinoplus2", "newlib-uart-netduinoplus2", "USART1 (STM32 USART at 0x40011000)")]
fn uart_firmware_prints_on_serial0_and_exits_0(#[case] board: &str, #[case] fw: &str, #[case] uart: &str) {
    let dir = tempfile::tempdir().unwrap();
    let serial0 = dir.path().join("serial0.txt");
    let serial1 = dir.path().join("serial1.txt");
    let (code, stdout) = qemu(
        board,
        &common::c_firmware(fw),
        &["-serial", &format!("file:{}", serial0.display()), "-serial", &format!("file:{}", serial1.display())],
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout, "", "nothing on semihosting");
    let uart_text = std::fs::read_to_string(&serial0).unwrap();
    assert!(uart_text.starts_with(&format!("newlib self-test (console: {uart})\r\n")), "{uart_text:?}");
    assert!(uart_text.contains("sig bytes: 2420\r\n"), "{uart_text:?}");
    assert!(uart_text.ends_with("self-test passed\r\n"), "{uart_text:?}");
    assert_eq!(std::fs::read_to_string(&serial1).unwrap(), "", "serial1 stays silent");
}

#[test]
fn matrix_makefile_builds_four_variants_that_pass() {
    let build = tempfile::tempdir().unwrap();
    for (alg, result) in [("crc32", "0x399208a7"), ("adler32", "0xbc8bf86a")] {
        for opt in ["O2", "Os"] {
            let out = Command::new("make")
                .arg("-C")
                .arg(common::repo().join("firmware/c/matrix"))
                .arg(format!("ALG={alg}"))
                .arg(format!("OPT={opt}"))
                .arg(format!("BUILD={}", build.path().display()))
                .output()
                .expect("make runs");
            assert!(out.status.success(), "{}", text(&out));
            let elf = build.path().join(format!("{alg}-{opt}.elf"));
            let (code, out) = qemu("mps2-an386", &elf, &["-serial", "null"]);
            assert_eq!(code, Some(0), "{alg}-{opt}: {out}");
            assert!(
                out.starts_with(&format!("matrix: alg={alg} opt={opt}\nbytes: 4096\nresult: {result}\ncycles: ")),
                "{out}"
            );
            assert!(out.ends_with(&format!("PASS: {alg} check value ok\n")), "{out}");
        }
    }
    // An unknown variable value is refused by the Makefile, naming the choices.
    let out = Command::new("make")
        .arg("-C")
        .arg(common::repo().join("firmware/c/matrix"))
        .args(["ALG=sha1", "OPT=O2"])
        .arg(format!("BUILD={}", build.path().display()))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown ALG=sha1; use one of: crc32 adler32"),
        "{}",
        text(&out)
    );
}

/// Real third-party C from a registry package: Mbed TLS's self-test, unmodified, passes under
/// QEMU on mps2-an386.
#[test]
fn mbedtls_selftest_from_the_debian_source_package_passes_under_qemu() {
    let elf = mbedtls_selftest();
    let (code, out) = qemu("mps2-an386", &elf, &["-serial", "null"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("  SHA-256 test #1: passed\n"), "{out}");
    assert!(out.contains("  [ All tests PASS ]\n"), "{out}");
    assert!(!out.contains("failed"), "{out}");
    // Built from the source package fetched outside the checkout, never from the repository.
    assert!(
        std::fs::read_dir(third_party_src()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("mbedtls-2."))
    );
    assert!(
        !common::repo().join("firmware/c/third-party").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("mbedtls-"))
    );
}

// ---- through the CLI: need issue #11's features ----------------------------------------------

#[test]
fn a_passing_newlib_firmware_passes_with_its_console_and_metrics() {
    let (_dir, s) =
        scenario_file(&newlib_scenario(&common::c_firmware("newlib-selftest"), "mps2-an386", "semihosting"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "pass", "{raw}");
    let console = console_text(cell);
    assert!(console.contains("newlib self-test (console: semihosting)"), "{console}");
    assert!(console.contains("self-test passed"), "{console}");
    assert_eq!(metric(cell, "sig_bytes"), 2420.0);
    assert!(metric(cell, "cycles") > 0.0, "{cell}");
}

/// Plain C measured by a function region on a board timing profile: the report gives the region's
/// calls and the whole run in time at the profile's clock (STM32F407, 168 MHz), as the cycles
/// are priced; the terminal table shows the longest call's time.
#[test]
fn a_newlib_firmware_on_a_timing_profile_gets_time_at_its_clock() {
    let yaml = newlib_scenario(&common::c_firmware("newlib-selftest"), "mps2-an386", "semihosting");
    let (_dir, s) = scenario_file(&format!("{yaml}timing: stm32f407\nregions: [malloc]\n"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["clock_hz"], 168_000_000, "{cell}");
    let us = |cycles: &Value| cycles.as_f64().unwrap() / 168.0;
    let total = cell["time_total_us"].as_f64().unwrap();
    assert!((total - us(&cell["cycles_total"])).abs() < 1e-6, "{cell}");
    let region = &cell["regions"][0];
    assert!(region["calls"].as_u64().unwrap() > 0, "{region}");
    for k in ["total", "min", "max"] {
        let t = region["time_us"][k].as_f64().unwrap();
        assert!((t - us(&region["cycles"][k])).abs() < 1e-6, "{k}: {region}");
    }
    let out = common::mcubench().arg("run").arg(&s).output().unwrap();
    let table = text(&out);
    assert!(table.contains("time max") && table.contains("mps2-an386/prebuilt: 168 MHz, whole run"), "{table}");
}

/// A board benchmark that times crc32 with the DWT cycle counter (firmware/c/cyccnt) and prints
/// the difference: QEMU's counter reads 0, so it prints 0, and the report gives the estimated
/// cycles between each pair of consecutive reads instead. Around the call they are the call's own
/// (its function region) plus the `bl` before it and the second read; in the poll loop, one
/// iteration a pair, every time alike. A device read costs what its instruction costs: the build
/// that polls 1000 times more runs exactly 1000 more iterations of that loop (before device
/// accesses were taken back, QEMU's re-run of each one added the rest of its block again:
/// 11 instructions an iteration instead of 6).
#[test]
fn dwt_cycle_counter_reads_get_the_estimated_cycles_between_them() {
    let scenario = |elf: &str| {
        format!(
            "name: cyccnt\nfirmware: {{ elf: '{}' }}\nboards: [mps2-an386]\nregions: [crc32]\n\
             verdict: {{ exit: 0, expect: ['^crc32\\(64 B\\) = 84c86088: 0 cycles$', '^poll: 0$'] }}\n",
            common::c_firmware(elf).display()
        )
    };
    let (_dir, s) = scenario_file(&scenario("cyccnt"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    let pairs = cell["cycle_counter"].as_array().expect("cycle_counter");
    let pair = |from: &str, to: &str, count: u64| {
        pairs
            .iter()
            .find(|p| {
                p["from"].as_str().unwrap().starts_with(from)
                    && p["to"].as_str().unwrap().starts_with(to)
                    && p["count"] == count
            })
            .unwrap_or_else(|| panic!("no {from} → {to} × {count}: {pairs:?}"))
    };
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    let region = &cell["regions"][0];
    assert_eq!(region["calls"], 3, "{region}");
    let call = pair("bench_crc32+", "bench_crc32+", 3);
    let (insns, cycles) = (&call["instructions"], &call["cycles"]);
    assert_eq!(n(insns, "min"), n(insns, "max"), "{call}");
    assert_eq!(n(insns, "min"), n(&region["instructions"], "min") + 2, "bl, the call, the second read: {call}");
    assert_eq!(n(cycles, "min"), n(cycles, "max"), "{call}");
    assert!(n(cycles, "min") >= n(&region["cycles"], "min") + 2, "{call} {region}");
    let poll = pair("poll+", "poll+", 999);
    let (poll_insns, poll_cycles) = (n(&poll["instructions"], "min"), n(&poll["cycles"], "min"));
    assert_eq!((n(&poll["instructions"], "max"), n(&poll["cycles"], "max")), (poll_insns, poll_cycles), "{poll}");
    assert!((3..=8).contains(&poll_insns), "{poll}");

    let (_dir2, s2) = scenario_file(&scenario("cyccnt-2000"));
    let (code, json2, raw) = run_json(&s2, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let more = one_cell(&json2);
    for (key, per_iteration) in [("instructions_total", poll_insns), ("cycles_total", poll_cycles)] {
        assert_eq!(n(more, key) - n(cell, key), 1000 * per_iteration, "{key}");
    }

    let out = common::mcubench().arg("run").arg(&s).output().unwrap();
    let table = text(&out);
    assert!(
        table.contains("DWT cycle counter (CYCCNT reads 0 under QEMU)") && table.contains("poll#1..poll#1"),
        "{table}"
    );
}

/// The other common way to time a call on a board: zero the counter (`DWT->CYCCNT = 0`), call,
/// print what the counter reads (`cyccnt-reset`). The write starts the interval the read ends, so
/// the pair around the call is the call (its function region) plus the argument set-up, the `bl`
/// and the read, as with two reads; no interval runs from one read to the next across the
/// `printf` and the write.
#[test]
fn a_write_of_the_dwt_cycle_counter_starts_the_interval_its_next_read_ends() {
    let yaml = format!(
        "name: reset\nfirmware: {{ elf: '{}' }}\nboards: [mps2-an386]\nregions: [crc32]\n\
         verdict: {{ exit: 0, expect: ['^crc32\\(64 B\\) = 84c86088: 0 cycles$'] }}\n",
        common::c_firmware("cyccnt-reset").display()
    );
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    let pairs = cell["cycle_counter"].as_array().expect("cycle_counter");
    let names: Vec<String> = pairs
        .iter()
        .map(|p| format!("{}..{}", p["from_name"].as_str().unwrap(), p["to_name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, ["bench_crc32#1..bench_crc32#2", "bench_crc32#2..poll#1", "poll#1..poll#1"], "{pairs:?}");
    let (call, region) = (&pairs[0], &cell["regions"][0]);
    assert_eq!(call["count"], 3, "{call}");
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert_eq!(n(&call["instructions"], "max"), n(&call["instructions"], "min"), "{call}");
    // After the write: the argument register set-up, the `bl`, the call, the read.
    assert_eq!(n(&call["instructions"], "min"), n(&region["instructions"], "min") + 3, "{call} {region}");
    assert!(n(&call["cycles"], "min") > n(&region["cycles"], "min"), "{call} {region}");
}

/// CI on a board benchmark that times itself with the DWT cycle counter: a pull request that
/// makes the timed call 25 % slower (`cyccnt-slower`: 80 bytes a call instead of 64, and a
/// warm-up call that moves the reads) is a regression of the pair of reads around the call, by
/// the reads' names (`bench_crc32#1..bench_crc32#2`, which the move keeps), and of the function
/// region; a budget on the pair by that name holds on the base and is crossed on the head; the
/// pull-request summary and the OpenMetrics file carry the pairs.
#[test]
fn a_slower_call_between_dwt_reads_is_a_regression_and_crosses_its_budget_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // One scenario per firmware and budget; both firmware run as scenario `cyccnt`, so diff pairs them.
    let run = |elf: &str, budget: u64| {
        let stem = dir.path().join(format!("{elf}-{budget}"));
        let scenario = stem.with_extension("yaml");
        std::fs::write(
            &scenario,
            format!(
                "name: cyccnt\nfirmware: {{ elf: '{}' }}\nboards: [mps2-an386]\nregions: [crc32]\n\
                 verdict: {{ exit: 0 }}\nbudgets: {{ cycles: {{ bench_crc32#1..bench_crc32#2: {budget} }} }}\n\
                 regressions: {{ cycles: 5 %, cycle-counter: 5 % }}\n",
                common::c_firmware(elf).display()
            ),
        )
        .unwrap();
        let (json, metrics) = (stem.with_extension("json"), stem.with_extension("txt"));
        let out = common::mcubench()
            .args(["run", "--quiet", "--json-output"])
            .arg(&json)
            .arg("--metrics-output")
            .arg(&metrics)
            .arg(&scenario)
            .output()
            .unwrap();
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (out, scenario, json, report, std::fs::read_to_string(metrics).unwrap())
    };
    let diff = |format: &str, limits: &Path, base: &Path, head: &Path| {
        common::mcubench()
            .args(["diff", "--format", format, "--scenario"])
            .arg(limits)
            .arg(base)
            .arg(head)
            .output()
            .unwrap()
    };
    let (base_out, limits, base, base_report, _) = run("cyccnt", 4000);
    let (head_out, _, head, head_report, head_metrics) = run("cyccnt-slower", 4000);
    assert_eq!(base_out.status.code(), Some(0), "{}", text(&base_out));
    assert_eq!(head_out.status.code(), Some(3), "the budget is crossed: {}", text(&head_out));
    let crossed = text(&head_out);
    assert!(
        crossed.contains("budget: cycles bench_crc32#1..bench_crc32#2 ")
            && crossed.contains("exceeds the budget of 4000 cycles"),
        "{crossed}"
    );
    // The warm-up call moved the reads; their names did not change.
    let around = |r: &Value| -> Value {
        let pairs = one_cell(r)["cycle_counter"].as_array().unwrap();
        pairs.iter().find(|i| i["from_name"] == "bench_crc32#1").cloned().unwrap_or_else(|| panic!("{pairs:?}"))
    };
    let (b, h) = (around(&base_report), around(&head_report));
    assert_eq!((&b["to_name"], &h["to_name"]), (&"bench_crc32#2".into(), &"bench_crc32#2".into()));
    assert_ne!(b["from_address"], h["from_address"], "{b} {h}");
    let budget = &one_cell(&head_report)["budgets"][0];
    assert_eq!((&budget["subject"], &budget["status"]), (&"bench_crc32#1..bench_crc32#2".into(), &"exceeded".into()));
    assert_eq!(budget["actual"], h["cycles"]["max"]);

    let out = diff("json", &limits, &base, &head);
    assert_eq!(out.status.code(), Some(3), "a budget violation outranks the regression: {}", text(&out));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let delta = |metric: &str| {
        let deltas = d["deltas"].as_array().unwrap();
        deltas.iter().find(|x| x["metric"] == metric).cloned().unwrap_or_else(|| panic!("no `{metric}`: {d}"))
    };
    let reads = delta("cycle counter bench_crc32#1..bench_crc32#2");
    assert_eq!((&reads["base"], &reads["head"]), (&b["cycles"]["max"], &h["cycles"]["max"]));
    let grew = reads["percent"].as_f64().unwrap();
    assert!((20.0..30.0).contains(&grew), "80 bytes a call instead of 64: {reads}");
    assert!(reads["regression"].as_str().unwrap().ends_with("> 5%"), "{reads}");
    assert!(delta("cycles crc32")["regression"].is_string(), "{d}");
    assert!(delta("instructions crc32")["regression"].is_null(), "no instruction limit: {d}");
    // The other pairs (the printf between measurements, the poll loop) moved by less than 5 %.
    let mut others = d["deltas"].as_array().unwrap().iter().filter(|x| {
        let m = x["metric"].as_str().unwrap();
        m.starts_with("cycle counter ") && !m.ends_with("bench_crc32#1..bench_crc32#2")
    });
    assert!(others.all(|x| x["regression"].is_null()), "{d}");

    // With room in the budget the same change is a regression (exit 4), shown in the summary.
    let (out, _, roomy_head, _, _) = run("cyccnt-slower", 9000);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = diff("markdown", &limits, &base, &roomy_head);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("### ❌ mcubench `cyccnt`: 1/1 runs pass · budgets hold · **2 regression(s)**"), "{md}");
    assert!(md.contains("| cycle counter bench_crc32#1..bench_crc32#2 |") && md.contains("⚠️"), "{md}");
    assert!(md.contains("| DWT `bench_crc32#1..bench_crc32#2` | 3 |"), "{md}");
    let sample = "mcubench_cycle_counter_cycles{scenario=\"cyccnt\",board=\"mps2-an386\",profile=\"prebuilt\",\
                  accesses=\"bench_crc32#1..bench_crc32#2\"}";
    assert!(head_metrics.contains(sample), "{head_metrics}");

    // A pair the run does not have is `unknown`, which fails, and the message lists the pairs it has.
    let typo = dir.path().join("typo.yaml");
    let yaml = std::fs::read_to_string(&limits).unwrap().replace("bench_crc32#2: 4000", "bench_crc32#3: 4000");
    std::fs::write(&typo, yaml).unwrap();
    let out = common::mcubench().args(["run", "--quiet"]).arg(&typo).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains(
            "cycles bench_crc32#1..bench_crc32#3 unknown (no function region in `regions`, KAT or pair of DWT \
             cycle-counter accesses with that name ran with a count and a cycle model): cannot show it is within \
             4000 cycles; the run's pairs of DWT cycle-counter accesses are bench_crc32#1..bench_crc32#2, \
             bench_crc32#2..bench_crc32#1, bench_crc32#2..poll#1, poll#1..poll#1"
        ),
        "{}",
        text(&out)
    );
}

/// C firmware whose fault handlers loop forever (firmware/c/newlib's start-up, like most) faults
/// silently and hangs; at the timeout mcubench stops the core and reads it through QEMU's monitor,
/// so the verdict is the fault: which one, the faulting instruction from the exception frame, the
/// fault status registers in words, and the handler it hung in. `fault` calls through a function
/// pointer without its Thumb bit (INVSTATE); on the Cortex-M3 the same M4 build faults earlier,
/// on a DSP instruction (`uadd8`) in newlib's `strlen` (UNDEFINSTR). Both QEMUs.
#[test]
fn a_fault_in_a_looping_handler_is_the_fault_with_its_cause_not_a_timeout() {
    let yaml = elf_yaml("fault", "mps2-an386, mps2-an385", "verdict: { exit: 0 }\ntimeout: 1 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let cells = json["cells"].as_array().unwrap();
    let message = |board: &str| {
        let cell = cells.iter().find(|c| c["board"] == board).unwrap();
        assert_eq!(cell["verdict"]["outcome"], "fault", "{cell}");
        cell["verdict"]["message"].as_str().unwrap().to_string()
    };
    let m4 = message("mps2-an386");
    assert!(m4.starts_with("HardFault at pc=0x") && m4.contains(" (twice+0x0), lr=0x"), "{m4}");
    assert!(m4.contains("UsageFault: INVSTATE — invalid state") && m4.contains("FORCED"), "{m4}");
    assert!(
        m4.ends_with("the core was in its HardFault handler at pc=0x00000040 (Default_Handler+0x0) when the time ran out (a handler that loops), so the run never ended"),
        "{m4}"
    );
    let m3 = message("mps2-an385");
    assert!(m3.contains("(strlen+0x") && m3.contains("UsageFault: UNDEFINSTR"), "{m3}");

    // A HardFault_Handler of the program's own prints a line (pushing LR, then EXC_RETURN,
    // first) and loops: the frame is above what it pushed, found by its frame at the stop.
    let yaml = elf_yaml("fault-printing", "mps2-an386", "verdict: { exit: 0 }\ntimeout: 1 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (_, json, raw) = run_json(&s, &[]);
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "fault", "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.starts_with("HardFault at pc=0x") && message.contains(" (twice+0x0), lr=0x"), "{message}");
    assert!(
        message.contains("the core was in its HardFault handler at pc=0x")
            && message.contains(" (HardFault_Handler+0x"),
        "{message}"
    );
    assert!(console_text(cell).contains("HardFault!"), "{raw}");
}

/// Firmware built for a board has no semihosting: its `exit` (libnosys's `_exit`) is a branch to
/// itself, so under QEMU it never ends and times out. `verdict.exit: loop` ends the run at the
/// first such loop outside every exception handler, with the counts of the work before it: the
/// same program (newlib self-test on the UART) gives within a few instructions of its build that
/// exits through semihosting, the same report in every run, and its console still decides. A
/// fault handler's loop does not end it (the fault is judged at the timeout); firmware that exits
/// is not what `loop` asks for; without `loop` the timeout says how to ask. QEMU 7.2 and 10.
#[test]
fn firmware_that_ends_in_a_loop_on_itself_ends_there_with_its_counts() {
    let board = common::repo().join("scenarios/newlib-board-mps2.yaml");
    let (code, json, raw) = run_json(&board, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "pass", "{raw}");
    assert_eq!(cell["loop_end"].as_str().unwrap().split_once(' ').unwrap().1, "(_exit+0x0)", "{cell}");
    assert!(console_text(cell).contains("self-test passed"), "{cell}");
    // Deterministic: the counts stop at the loop, not when QEMU is stopped.
    let (_, again, _) = run_json(&board, &[]);
    assert_eq!(json, again);
    // `profile` ends there too (the scenario's `exit: loop`): a whole profile, the same counts.
    let out = tempfile::tempdir().unwrap();
    let profiled = common::mcubench().args(["profile", "--out"]).arg(out.path()).arg(&board).output().unwrap();
    let first = String::from_utf8_lossy(&profiled.stdout).lines().next().unwrap_or_default().to_string();
    assert_eq!(profiled.status.code(), Some(0), "{}", text(&profiled));
    let count = |c: &Value, k: &str| c[k].as_u64().unwrap_or_else(|| panic!("no `{k}`: {c}"));
    let insns = count(cell, "instructions_total");
    assert!(first.ends_with(&format!(" {insns} instructions")) && !first.contains("partial"), "{first}");
    // The same program exiting through semihosting SYS_EXIT: its `_exit` sets up the call.
    let (code, uart, raw) = run_json(&common::repo().join("scenarios/newlib-uart-mps2.yaml"), &[]);
    assert_eq!(code, Some(0), "{raw}");
    let (looped, exited) = (count(cell, "instructions_total"), count(one_cell(&uart), "instructions_total"));
    assert!(looped < exited && exited - looped < 16, "loop end {looped}, exit {exited}");
    let (looped, exited) = (count(cell, "cycles_total"), count(one_cell(&uart), "cycles_total"));
    assert!(looped < exited && exited - looped < 32, "loop end {looped} cycles, exit {exited}");

    // The console decides: the failing build ends in the same loop and fails on its words.
    let yaml = std::fs::read_to_string(&board).unwrap().replace("newlib-board-mps2.elf", "newlib-board-fail-mps2.elf");
    let (_dir, s) = scenario_file(&yaml.replace("../firmware", &common::repo().join("firmware").display().to_string()));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "fail", "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.contains("matches the `reject` pattern `FAILED`"), "{cell}");
    assert!(message.contains("; the run ended at the loop at pc=0x") && message.ends_with(" (_exit+0x0)"), "{cell}");
    assert!(cell["loop_end"].is_string(), "{cell}");

    // A fault handler's `b .` is no end: the run still faults.
    let yaml = elf_yaml("fault", "mps2-an386", "verdict: { exit: loop }\ntimeout: 1 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (_, json, raw) = run_json(&s, &[]);
    assert_eq!(one_cell(&json)["verdict"]["outcome"], "fault", "{raw}");
    assert!(one_cell(&json)["loop_end"].is_null(), "{raw}");

    // Firmware that exits is not what `loop` asks for.
    let yaml = elf_yaml("newlib-uart-mps2", "mps2-an386", "verdict: { exit: loop }\n");
    let (_dir, s) = scenario_file(&yaml);
    let (_, json, raw) = run_json(&s, &[]);
    let message = one_cell(&json)["verdict"]["message"].as_str().unwrap().to_string();
    assert!(message.starts_with("the firmware exited with code 0 instead of ending in a branch to itself"), "{raw}");

    // Without `loop`: a timeout that names the loop and says how to end there (`run --elf`).
    let out = common::mcubench()
        .args(["run", "--quiet", "--board", "mps2-an386", "--timeout", "1s", "--expect", "^self-test passed", "--elf"])
        .arg(common::c_firmware("newlib-board-mps2"))
        .output()
        .unwrap();
    let raw = text(&out);
    assert_eq!(out.status.code(), Some(1), "{raw}");
    assert!(raw.contains("timeout: no exit within 1 s"), "{raw}");
    assert!(raw.contains("(_exit+0x0); if that loop is where the firmware ends"), "{raw}");
    assert!(raw.contains("`verdict: { exit: loop }` (`--exit-code loop`) ends the run there"), "{raw}");
}

/// Firmware that waits on the DWT cycle counter (a driver's delay) hangs under QEMU, where the
/// counter stays 0: the timeout says where the core hung (read from the stopped core: in
/// `delay_cycles`) and, since that function reads the counter, names the functions that read it,
/// found in the code (`bench_crc32` and `poll` read it too; `main`, which only enables it, does not),
/// and what makes the wait end. The code scan finds each load and the register it loads.
#[test]
fn a_wait_on_the_dwt_cycle_counter_times_out_with_the_reason() {
    let yaml = elf_yaml("cyccnt-wait", "mps2-an386", "verdict: { exit: 0 }\ntimeout: 2 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (_, json, raw) = run_json(&s, &[]);
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "timeout", "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(
        message.contains("reads the DWT cycle counter (in bench_crc32, poll, delay_cycles), which stays 0 under QEMU"),
        "{message}"
    );
    assert!(
        message.contains("`cycle-counter: estimated` (`--cycle-counter estimated`) makes its loads read"),
        "{message}"
    );
    // Where it hung, read from the stopped core: in the wait.
    assert!(message.contains("; when the time ran out the core was in delay_cycles; "), "{message}");
    let image = mcubench_elf::ElfImage::read(&common::c_firmware("cyccnt")).unwrap();
    let decoder = mcubench_thumb::Decoder::for_core(mcubench_wire::Core::CortexM4F).unwrap();
    assert_eq!(mcubench::analyze::debug_units::cycle_counter_readers(&image, &decoder), ["bench_crc32", "poll"]);
    // `ldr r6, [r5, #4]` before the call, `ldr r2, [r5, #4]` after it, `ldr r2, [r4, #4]` in poll's loop.
    let functions = mcubench::analyze::decoded_functions(&image, &decoder);
    let loads = mcubench::analyze::debug_units::cycle_counter_loads(&image, &functions);
    let at = |name: &str| image.symbol(name).unwrap_or_else(|| panic!("no {name}")).address as u32;
    let found: Vec<(u32, u8)> = loads.iter().map(|l| (l.pc, l.rt)).collect();
    assert_eq!(found, [(at("bench_crc32") + 0x12, 6), (at("bench_crc32") + 0x18, 2), (at("poll") + 0xc, 2)]);
}

/// With `cycle-counter: estimated` the firmware's own loads of the counter read the estimate (the
/// runner serves each over QEMU's gdbstub), contained or not: `cyccnt` prints, for each timed call,
/// the cycles of the report's pair of reads around it, and `cyccnt-reset`, which zeroes the
/// counter before the call, the cycles of its pair from the write to the read. The instructions
/// from one read to the next are those of the run whose counter reads 0 (stopping at the loads
/// adds none), and two runs give the same report.
#[rstest::rstest]
#[case("cyccnt", &[])]
#[case("cyccnt", &["--no-contain"])]
#[case("cyccnt-reset", &[])]
fn the_live_cycle_counter_makes_the_firmware_print_the_estimate(#[case] fw: &str, #[case] extra: &[&str]) {
    let pairs_of = |json: &Value| -> Vec<(String, u64, u64)> {
        let cell = one_cell(json);
        let pairs = cell["cycle_counter"].as_array().unwrap_or_else(|| panic!("no cycle_counter: {cell}"));
        pairs
            .iter()
            .map(|p| {
                let name = format!("{}..{}", p["from_name"].as_str().unwrap(), p["to_name"].as_str().unwrap());
                (name, p["instructions"]["max"].as_u64().unwrap(), p["cycles"]["max"].as_u64().unwrap())
            })
            .collect()
    };
    let (_dir, zero) = scenario_file(&elf_yaml(fw, "mps2-an386", "verdict: { exit: 0 }\n"));
    let (code, zero_json, raw) = run_json(&zero, extra);
    assert_eq!(code, Some(0), "{raw}");
    let (_dir2, live) = scenario_file(&elf_yaml(fw, "mps2-an386", "verdict: { exit: 0 }\ncycle-counter: estimated\n"));
    let (code, json, raw) = run_json(&live, extra);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    let console = console_text(cell);
    let call = pairs_of(&json).into_iter().find(|p| p.0 == "bench_crc32#1..bench_crc32#2").expect("the call's pair");
    let zero_call = pairs_of(&zero_json).into_iter().find(|p| p.0 == call.0).expect("the call's pair");
    assert_eq!(call, zero_call, "the same instructions and cycles between the reads");
    assert!(call.2 > 1000, "{call:?}");
    let printed = format!("crc32(64 B) = 84c86088: {} cycles\n", call.2);
    assert_eq!(console.matches(&printed).count(), 3, "{console}");
    // Every load ran with the estimate: 2 per timed call and the poll loop's 1000 (cyccnt-reset
    // reads once per call).
    let loads = if fw == "cyccnt" { 3 * 2 + 1000 } else { 3 + 1000 };
    assert_eq!(cell["cycle_counter_served"], loads, "{raw}");
    let (_, again, _) = run_json(&live, extra);
    assert_eq!(again, json, "two runs, one report");
}

/// A delay on the counter (`cyccnt-wait`: `while (DWT->CYCCNT - start < 1000)`), which hangs
/// where the counter reads 0, ends with `cycle-counter: estimated`: the firmware runs on and
/// exits 0, after polling until 1000 estimated cycles had passed, as on the board. Also on the
/// Cortex-M33 of mps2-an505, whose second core QEMU's gdbstub shows as a second thread.
#[rstest::rstest]
#[case("cyccnt-wait", "mps2-an386")]
#[case("cyccnt-wait-m33", "mps2-an505")]
fn a_wait_on_the_live_cycle_counter_ends(#[case] fw: &str, #[case] board: &str) {
    let yaml = elf_yaml(fw, board, "verdict: { exit: 0 }\ncycle-counter: estimated\ntimeout: 20 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    let pairs = cell["cycle_counter"].as_array().expect("cycle_counter");
    let poll = pairs
        .iter()
        .find(|p| p["from_name"] == "delay_cycles#2" && p["to_name"] == "delay_cycles#2")
        .unwrap_or_else(|| panic!("no poll of the delay: {pairs:?}"));
    let (count, cycles) = (poll["count"].as_u64().unwrap(), poll["cycles"]["total"].as_u64().unwrap());
    let first = pairs
        .iter()
        .find(|p| p["from_name"] == "delay_cycles#1" && p["to_name"] == "delay_cycles#2")
        .map_or(0, |p| p["cycles"]["total"].as_u64().unwrap());
    // It stops at the first poll that reads 1000 or more after the start.
    let per_poll = cycles / count;
    assert!(first + cycles >= 1000 && first + cycles - per_poll < 1000, "{poll} {first}");
    let table = text(&common::mcubench().arg("run").arg(&s).output().unwrap());
    assert!(table.contains("DWT cycle counter (live: its loads read the estimated cycles)"), "{table}");
}

/// A delay on the live counter longer than the scenario's `timeout` (`cyccnt-longwait`: 10^8
/// cycles, a stop of QEMU per poll) is a timeout that says the loads read the estimate and why the
/// time ran out; how many loads ran before it is left out, so two runs give the same report.
#[test]
fn a_long_wait_on_the_live_cycle_counter_times_out_the_same_every_time() {
    let yaml =
        elf_yaml("cyccnt-longwait", "mps2-an386", "verdict: { exit: 0 }\ncycle-counter: estimated\ntimeout: 1 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (_, json, raw) = run_json(&s, &[]);
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "timeout", "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.contains("the core was in delay_cycles"), "{message}");
    assert!(message.contains("whose loads read the estimated cycles (`cycle-counter: estimated`)"), "{message}");
    assert!(message.contains("a long delay on the counter needs a longer `timeout`"), "{message}");
    assert!(cell.get("cycle_counter_served").is_none(), "{cell}");
    let (_, again, _) = run_json(&s, &[]);
    assert_eq!(again, json);
}

/// Board firmware that ends in an idle loop, `while (1) { __WFI(); }` (`loop-end-wfi`; GCC
/// unrolls it to `wfi; wfi; b`) or `while (1) { __DSB(); __WFI(); }` (`loop-end-dsb-wfi`), where
/// QEMU's core sleeps for good (no interrupt is enabled): with `exit: loop` the run ends before the
/// core sleeps, at the loop's first WFI, with the same counts every time; without it the timeout
/// says the core sleeps in that idle loop and how to end there.
#[rstest::rstest]
#[case("loop-end-wfi")]
#[case("loop-end-dsb-wfi")]
fn a_run_ends_at_an_idle_loop_on_wfi(#[case] fw: &str) {
    let image = mcubench_elf::ElfImage::read(&common::c_firmware(fw)).unwrap();
    let decoder = mcubench_thumb::Decoder::for_core(mcubench_wire::Core::CortexM4F).unwrap();
    let idle = mcubench::analyze::idle::idle_loops(&mcubench::analyze::decoded_functions(&image, &decoder));
    assert!(!idle.is_empty() && idle.iter().all(|&a| image.symbolize(u64::from(a)).unwrap().0 == "main"), "{idle:x?}");
    let (_dir, s) = scenario_file(&elf_yaml(fw, "mps2-an386", "verdict: { exit: loop }\n"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(
        cell["loop_end"].as_str().unwrap(),
        format!("0x{:08x} (main+0x{:x})", idle[0], idle[0] - image.symbol("main").unwrap().address as u32),
        "{raw}"
    );
    // The work: 1000 passes of the loop, a few instructions each.
    let insns = cell["instructions_total"].as_u64().unwrap();
    assert!((3000..10_000).contains(&insns), "{insns}");
    let (_, again, _) = run_json(&s, &[]);
    assert_eq!(again, json, "two runs, one report");

    let (_dir2, s2) = scenario_file(&elf_yaml(fw, "mps2-an386", "verdict: { exit: 0 }\ntimeout: 1 s\n"));
    let (_, json, raw) = run_json(&s2, &[]);
    let message = one_cell(&json)["verdict"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("the core was in main, asleep in WFI"), "{raw}");
    assert!(message.contains("if that idle loop is where the firmware ends (`while (1) { __WFI(); }`)"), "{message}");
}

/// The end at a loop on the other core models: the Cortex-M0 (microbit, ARMv6-M) and the
/// Cortex-M33 on mps2-an505, whose second core is held off (the plugin exits from vCPU 0's
/// thread): the run ends at libnosys's `_exit`, with the same counts every time.
#[rstest::rstest]
#[case("loop-end-m0", "microbit")]
#[case("loop-end-m33", "mps2-an505")]
fn the_end_at_a_loop_works_on_every_core_model(#[case] fw: &str, #[case] board: &str) {
    let yaml = elf_yaml(fw, board, "verdict: { exit: loop }\n");
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["loop_end"].as_str().unwrap().split_once(' ').unwrap().1, "(_exit+0x0)", "{raw}");
    // The work: 1000 passes of the loop, a few instructions each.
    let insns = cell["instructions_total"].as_u64().unwrap();
    assert!((5000..20_000).contains(&insns), "{raw}");
    let (_, again, _) = run_json(&s, &[]);
    assert_eq!(json, again);
}

/// Firmware that ends in a system reset (`NVIC_SystemReset()`, as a bootloader does after an
/// update) ends the run, QEMU running with `-no-reboot`; the monitor's `SHUTDOWN` event tells
/// it from an exit with status 0: `exit: reset` passes it, `exit: 0` names the reset.
#[test]
fn firmware_that_ends_in_a_system_reset_passes_with_exit_reset_only() {
    let yaml = |fw: &str, exit: &str| {
        elf_yaml(fw, "mps2-an386", &format!("verdict: {{ exit: {exit}, expect: ['^self-test passed'] }}\n"))
    };
    let (_dir, s) = scenario_file(&yaml("newlib-board-reset-mps2", "reset"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(0), "{raw}");
    assert!(one_cell(&json)["instructions_total"].as_u64().is_some(), "{raw}");
    let (_dir, s) = scenario_file(&yaml("newlib-board-reset-mps2", "0"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let message = one_cell(&json)["verdict"]["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(
            "the firmware reset itself (a system reset request, e.g. `NVIC_SystemReset()`; QEMU runs with \
             `-no-reboot`, so the run ended there) instead of exiting with code 0 (`verdict.exit: 0`)"
        ),
        "{message}"
    );
    // And `exit: reset` does not pass an exit.
    let exits = yaml("newlib-uart-mps2", "reset");
    let (_dir, s) = scenario_file(&exits);
    let (_, json, raw) = run_json(&s, &[]);
    let message = one_cell(&json)["verdict"]["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("the firmware exited with code 0 instead of resetting (`verdict.exit: reset`)"),
        "{raw}"
    );
}

/// printf through the ITM (SWV, as STM32CubeIDE's examples retarget it) prints nothing under
/// QEMU, which does not model the ITM: a run whose console rules then fail says why, naming the
/// function that uses it (found in the code), and where the run ended.
#[test]
fn a_console_through_the_itm_fails_saying_qemu_does_not_model_it() {
    let yaml = elf_yaml("newlib-itm-mps2", "mps2-an386", "verdict: { exit: loop, expect: ['^self-test passed'] }\n");
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "fail", "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.starts_with("no console line matched the `expect` pattern `^self-test passed`; the firmware printed nothing; the run ended at the loop at pc=0x"), "{message}");
    assert!(
        message.ends_with(
            "(_exit+0x0); the firmware uses the ITM (in _write), which QEMU does not model: its enable registers read \
             0, so what it prints there (printf over SWO) never arrives; print through a UART or semihosting in \
             builds for QEMU"
        ),
        "{message}"
    );
    // The UART build of the same program does not use it.
    let image = mcubench_elf::ElfImage::read(&common::c_firmware("newlib-uart-mps2")).unwrap();
    let decoder = mcubench_thumb::Decoder::for_core(mcubench_wire::Core::CortexM4F).unwrap();
    assert!(mcubench::analyze::debug_units::itm_users(&image, &decoder).is_empty());
}

/// Vendor start-up code waits for the crystal (`RCC_CR.HSERDY`) before anything else, which
/// QEMU's netduinoplus2 never reports: the timeout names the register the loop reads (found from
/// the loop's code and the stopped core's registers) and what QEMU's memory map has there (`info
/// mtree -f`): QEMU 7.2 leaves the STM32F4's RCC out (reads 0), QEMU 10 models its registers but
/// not the oscillator. The message is the same in every run of one QEMU.
#[test]
fn a_wait_on_a_device_qemu_does_not_model_names_the_register_and_the_device() {
    let yaml = elf_yaml("clock-wait", "netduinoplus2", "verdict: { exit: 0 }\ntimeout: 1 s\n");
    let (_dir, s) = scenario_file(&yaml);
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "timeout", "{raw}");
    assert!(console_text(cell).contains("switching to the crystal"), "{raw}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    let (device, what) = match cell["qemu"].as_str().unwrap().split('.').next() {
        Some("7") => ("RCC", "a device QEMU's model of this board leaves out (it reads 0 and ignores writes)"),
        _ => ("stm32.rcc", "a device of QEMU's model of this board, which never gave the value the firmware waits for"),
    };
    assert!(
        message.contains(&format!(
            "the core was in main; the loop it was in reads 0x40023800, in `{device}` (0x40023800–0x40023bff), {what}"
        )),
        "{message}"
    );
    let (_, again, _) = run_json(&s, &[]);
    assert_eq!(one_cell(&again)["verdict"], cell["verdict"]);
}

/// A delay on the tick a timer interrupt counts (STM32 HAL with TIM6 as its time base) never ends
/// on netduinoplus2, whose QEMU model has no TIM6: the timeout names the variable the loop reads
/// through the function it calls (`get_tick`, as `HAL_GetTick`) and what may set it. The core
/// stops in `main`'s loop or in `get_tick`; either way the message names `main`, the loop's
/// function, so it is the same in every run.
#[test]
fn a_wait_on_an_interrupt_that_never_comes_names_the_variable() {
    let yaml = elf_yaml("tick-wait", "netduinoplus2", "verdict: { exit: 0 }\ntimeout: 300 ms\n");
    let (_dir, s) = scenario_file(&yaml);
    let mut verdicts = Vec::new();
    for _ in 0..3 {
        let (code, json, raw) = run_json(&s, &[]);
        assert_eq!(code, Some(1), "{raw}");
        verdicts.push(one_cell(&json)["verdict"].clone());
    }
    assert_eq!(verdicts[0]["outcome"], "timeout");
    let message = verdicts[0]["message"].as_str().unwrap();
    let ticks =
        mcubench_elf::ElfImage::read(&common::c_firmware("tick-wait")).unwrap().symbol("ticks").unwrap().address;
    assert!(
        message.ends_with(&format!(
            "; when the time ran out the core was in main; the loop it was in reads `ticks` (0x{ticks:08x}, RAM) and \
             waits for something else to change it: if an interrupt handler does, that interrupt never came (QEMU's \
             model of this board may not raise it, e.g. a timer it leaves out)"
        )),
        "{message}"
    );
    assert!(verdicts.iter().all(|v| *v == verdicts[0]), "{verdicts:?}");
    // The same delay sleeping in WFI between ticks: the core sleeps for ever, and says so.
    let (_dir, s) =
        scenario_file(&elf_yaml("tick-wait-sleep", "netduinoplus2", "verdict: { exit: 0 }\ntimeout: 300 ms\n"));
    let (_, json, raw) = run_json(&s, &[]);
    let message = one_cell(&json)["verdict"]["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("; when the time ran out the core was in main, asleep in WFI (waiting for an interrupt); the loop it was in reads `ticks`"),
        "{raw}"
    );
}

#[test]
fn a_failing_newlib_firmware_fails_with_exit_1_and_its_console_shown() {
    let (_dir, s) =
        scenario_file(&newlib_scenario(&common::c_firmware("newlib-selftest-fail"), "mps2-an386", "semihosting"));
    let (code, json, raw) = run_json(&s, &[]);
    assert_eq!(code, Some(1), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "fail", "{raw}");
    // The message says why: the firmware's exit status and/or the rejected line.
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.contains('1') || message.contains("FAILED"), "{message}");
    let console = console_text(cell);
    assert!(console.contains("FAILED: crc32(\"123456789\") = 0xcbf43926, expected 0xcbf43927"), "{console}");
    // The table shows the console of a failed run.
    let out = common::mcubench().args(["run", "--quiet"]).arg(&s).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAILED: 1 check(s) failed"), "{}", text(&out));
}

/// A non-zero firmware exit is `fail` even when every expected line is there, and a rejected or
/// out-of-order line fails a firmware that exits 0.
#[test]
fn verdict_rules_judge_real_console_output() {
    let elf = common::c_firmware("newlib-selftest");
    let base = newlib_scenario(&elf, "mps2-an386", "semihosting");
    let rejected = base.replace("reject: ['FAILED']", "reject: ['FAILED', '^ok: crc32\\(sig\\)']");
    let out_of_order = base.replace(
        "expect: ['^newlib self-test \\(console: semihosting', '^sig bytes: [0-9]+', '^self-test passed']",
        "expect: ['^self-test passed', '^sig bytes: [0-9]+']",
    );
    assert_ne!(out_of_order, base);
    let wrong_exit = base.replace("exit: 0", "exit: 3");
    for (what, yaml) in [("reject", rejected), ("ordered", out_of_order), ("exit", wrong_exit)] {
        let (_dir, s) = scenario_file(&yaml);
        let (code, json, raw) = run_json(&s, &[]);
        assert_eq!(code, Some(1), "{what}: {raw}");
        assert_eq!(one_cell(&json)["verdict"]["outcome"], "fail", "{what}: {raw}");
    }
}

/// UART output is captured (not silenced by `-serial none`), on an MPS2 board and on the
/// STM32-addressed netduinoplus2 (ELF linked at 0x08000000), from the committed scenarios.
#[rstest::rstest]
#[case("newlib-uart-mps2.yaml", "UART0 (CMSDK APB UART at 0x40004000)")]
#[case("newlib-uart-netduinoplus2.yaml", "USART1 (STM32 USART at 0x40011000)")]
fn uart_firmware_is_captured(#[case] scenario: &str, #[case] uart: &str) {
    let (code, json, raw) = run_json(&common::repo().join("scenarios").join(scenario), &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "pass", "{raw}");
    let console = console_text(cell);
    assert!(console.contains(&format!("newlib self-test (console: {uart})")), "{console}");
    assert!(console.contains("sig bytes: 2420"), "{console}");
    assert!(console.contains("self-test passed"), "{console}");
    // The capture works on lines that ended in "\r\n" on the serial line.
    assert!(metric(cell, "cycles") > 0.0, "{cell}");
}

#[test]
fn the_committed_newlib_scenario_passes() {
    let (code, json, raw) = run_json(&common::repo().join("scenarios/newlib.yaml"), &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "pass", "{raw}");
    assert_eq!(metric(cell, "sig_bytes"), 2420.0);
}

/// One scenario, a make command and an ELF template over `matrix: { alg, opt }`: four cells, each
/// built by its own make invocation and each passing on its own output.
#[test]
fn a_make_built_matrix_runs_four_cells_from_one_scenario() {
    let (code, json, raw) = run_json(&common::repo().join("scenarios/matrix.yaml"), &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cells = json["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 4, "{raw}");
    let mut seen = Vec::new();
    for cell in cells {
        assert_eq!(cell["verdict"]["outcome"], "pass", "{cell}");
        let console = console_text(cell);
        let first = console.lines().find(|l| l.starts_with("matrix: ")).unwrap_or_else(|| panic!("{console}"));
        seen.push(first.to_string());
        assert!(console.contains("PASS: "), "{console}");
        assert_eq!(metric(cell, "bytes"), 4096.0);
        assert!(metric(cell, "cycles") > 0.0, "{cell}");
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "matrix: alg=adler32 opt=O2",
            "matrix: alg=adler32 opt=Os",
            "matrix: alg=crc32 opt=O2",
            "matrix: alg=crc32 opt=Os"
        ]
    );
}

/// Each matrix variant may have an annotation file of its own (`NAME.VARIANT.stack.yaml`) beside
/// the scenario's shared one: an entry in one variant's file that names no function is refused
/// (exit 2) naming that file, so it is read for that variant alone.
#[test]
fn a_matrix_variant_reads_its_own_annotation_file() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = common::repo().join("firmware/c/matrix");
    let scenario = dir.path().join("m.yaml");
    // Its own build directory: the committed matrix scenario, run by a test beside this one,
    // builds into firmware/c/matrix/build, and a link there would race this test's read of it.
    let build = dir.path().join("build");
    std::fs::write(
        &scenario,
        format!(
            "name: m\nfirmware:\n  command: make -s -C {m} ALG={{alg}} OPT={{opt}} BUILD={b}\n  elf: {b}/{{alg}}-{{opt}}.elf\n\
             matrix: {{ alg: [crc32], opt: [O2, Os] }}\nboards: [mps2-an386]\nverdict: {{ expect: ['^PASS: '] }}\n",
            m = matrix.display(),
            b = build.display()
        ),
    )
    .unwrap();
    let (code, _, raw) = run_json(&scenario, &[]);
    assert_eq!(code, Some(0), "{raw}");
    std::fs::write(dir.path().join("m.crc32-Os.stack.yaml"), "recursion: { no_such_function: 2 }\n").unwrap();
    let out = common::mcubench().args(["run", "--quiet"]).arg(&scenario).output().unwrap();
    let raw = text(&out);
    assert_eq!(out.status.code(), Some(2), "{raw}");
    assert!(raw.contains("m.crc32-Os.stack.yaml"), "{raw}");
    assert!(raw.contains("no_such_function"), "{raw}");
}

/// Real third-party C in the test suite: Mbed TLS's unmodified self-test, from Debian's source
/// package, as a scenario whose verdict is the program's own "[ All tests PASS ]" and exit 0.
#[test]
fn mbedtls_selftest_passes_as_a_scenario_with_its_own_verdict() {
    let (code, json, raw) = run_json(&common::repo().join("scenarios/mbedtls.yaml"), &[]);
    assert_eq!(code, Some(0), "{raw}");
    let cell = one_cell(&json);
    assert_eq!(cell["verdict"]["outcome"], "pass", "{raw}");
    let console = console_text(cell);
    assert!(console.contains("[ All tests PASS ]"), "{console}");
    assert_eq!(metric(cell, "suites"), 12.0);
}

/// `--show-output` prints a passing cell's console after the table (a failing cell's is printed
/// anyway); without it a passing cell's console stays out of the table output.
#[test]
fn show_output_prints_a_passing_cells_console() {
    let scenario = common::repo().join("scenarios/newlib.yaml");
    let run = |extra: &[&str]| {
        let _build = committed_build_lock(&scenario);
        let out = common::mcubench().args(["run", "--quiet"]).args(extra).arg(&scenario).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let plain = run(&[]);
    assert!(!plain.contains("self-test passed"), "{plain}");
    let shown = run(&["--show-output"]);
    assert!(shown.contains("mps2-an386 / prebuilt: console semihosting:"), "{shown}");
    assert!(shown.contains("  self-test passed"), "{shown}");
}
