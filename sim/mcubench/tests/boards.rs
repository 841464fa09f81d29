//! Boards on real QEMU with real firmware (issue #11, point 5): the built-in lm3s6965evb (Zephyr's
//! qemu_cortex_m3) and mps2-an521 (two Cortex-M33s) with C firmware linked with their generated
//! `memory.x`, and boards a scenario defines for ELFs linked for a real part's memory map (C via
//! `mcubench boards --memory-x`, Rust through cargo with the board's `memory.x` in its build
//! directory). The Rust KAT on both new built-ins is in `plugin.rs` (exact counts against SysTick).

// Full test tier: needs QEMU and the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcubench::judge::verdict::Outcome;
use mcubench::report::CellReport;
use serde_json::Value;

fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `mcubench run --elf ELF --board BOARD --format json`: (exit code, the one cell).
fn run_elf(elf: &Path, board: &str) -> (Option<i32>, Value) {
    let out = common::mcubench()
        .args(["run", "--quiet", "--format", "json", "--board", board, "--elf"])
        .arg(elf)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (out.status.code(), json["cells"][0].clone())
}

/// `mcubench run SCENARIO --format json`: (exit code, the report).
fn run_scenario_file(scenario: &Path) -> (Option<i32>, Value) {
    let out = common::mcubench().args(["run", "--quiet", "--format", "json"]).arg(scenario).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (out.status.code(), json)
}

fn kat_counts(cell: &Value) -> Vec<(String, u64, u64)> {
    cell["kats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (k["id"].as_str().unwrap().to_string(), k["ticks"].as_u64().unwrap(), k["instructions"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn boards_lists_the_built_ins_and_a_scenarios_own() {
    let out = common::mcubench().arg("boards").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let list = String::from_utf8_lossy(&out.stdout);
    for name in ["mps2-an386", "netduinoplus2", "lm3s6965evb", "mps2-an521"] {
        assert!(list.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} missing:\n{list}");
    }
    let lm3s = list.lines().find(|l| l.starts_with("lm3s6965evb ")).unwrap();
    for part in [
        "Cortex-M3",
        "thumbv7m-none-eabi",
        "-machine lm3s6965evb",
        "FLASH 0x00000000  256K",
        "RAM 0x20000000   64K",
        "SysTick 12500000 Hz",
    ] {
        assert!(lm3s.contains(part), "`{part}` missing: {lm3s}");
    }
    assert!(list.contains("-machine mps2-an521"), "{list}");

    let dir = tempfile::tempdir().unwrap();
    let scenario = user_board_scenario(dir.path(), "app.elf");
    let out = common::mcubench().args(["boards", "--scenario"]).arg(&scenario).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let list = String::from_utf8_lossy(&out.stdout);
    let mine = list.lines().find(|l| l.starts_with("stm32h5-like ")).unwrap_or_else(|| panic!("{list}"));
    assert!(mine.contains("FLASH 0x10000000    2M  RAM 0x38000000  640K  SysTick 20000000 Hz  (scenario)"), "{mine}");

    // Its memory.x, as cargo builds get it and a C linker script can include it.
    let out = common::mcubench()
        .args(["boards", "--memory-x", "stm32h5-like", "--scenario"])
        .arg(&scenario)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let memory_x = String::from_utf8_lossy(&out.stdout);
    assert!(memory_x.contains("FLASH : ORIGIN = 0x10000000, LENGTH = 2M"), "{memory_x}");
    assert!(memory_x.contains("RAM   : ORIGIN = 0x38000000, LENGTH = 640K"), "{memory_x}");
    assert!(memory_x.contains(&format!("from the board `stm32h5-like` of {}", scenario.display())), "{memory_x}");
    // A built-in's is the committed file.
    let out = common::mcubench().args(["boards", "--memory-x", "lm3s6965evb"]).output().unwrap();
    let committed = std::fs::read_to_string(common::repo().join("linker/lm3s6965evb/memory.x")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), committed);
    let out = common::mcubench().args(["boards", "--memory-x", "stm32h5-like"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a scenario's own board needs --scenario FILE"),
        "{}",
        text(&out)
    );
}

/// The C KATs linked with linker/lm3s6965evb/memory.x pass on lm3s6965evb, contained, and QEMU's
/// start-up lines for this machine ("nic stellaris_enet.0 has no peer", "Timer with period zero,
/// disabling") never reach a verdict: a firmware that exits 1 without a word is `fail` /
/// `no-verdict` material, not "QEMU exited 1 before the firmware said anything: Timer with ...".
#[test]
fn lm3s6965evb_runs_c_firmware_linked_with_its_memory_map() {
    let elf = common::c_firmware("kat-crc32-lm3s6965evb");
    let (code, cell) = run_elf(&elf, "lm3s6965evb");
    assert_eq!(code, Some(0), "{cell}");
    assert_eq!(cell["verdict"]["outcome"], "pass", "{cell}");
    assert_eq!(cell["kats"].as_array().unwrap().len(), 4, "{cell}");
    assert_eq!(cell["instructions_per_tick"], 80.0, "12.5 MHz SysTick: {cell}");
    assert_eq!(cell["memory"]["flash"]["capacity"], 256 * 1024);
    assert_eq!(cell["memory"]["ram"]["capacity"], 64 * 1024);
    // The crc32 of "123456789" takes 6 ticks of 80 instructions (measured; one tick of
    // quantization either way).
    let check = cell["kats"].as_array().unwrap().iter().find(|k| k["id"] == "crc32/check-123456789").unwrap();
    assert!((5..=7).contains(&check["ticks"].as_u64().unwrap()), "{check}");

    // The same machine, stderr as QEMU writes it: the notes are there, and dropped.
    let b = mcubench::Board::find("lm3s6965evb").unwrap();
    let run =
        mcubench::exec::execute(&mcubench::exec::Launch::new(b, &elf, std::time::Duration::from_secs(20))).unwrap().run;
    assert!(!run.stderr.contains("Timer with period zero") && !run.stderr.contains("has no peer"), "{}", run.stderr);
    let raw = Command::new("qemu-system-arm")
        .args(["-machine", "lm3s6965evb", "-cpu", "cortex-m3", "-display", "none", "-monitor", "none"])
        .args(["-semihosting-config", "enable=on,target=native", "-icount", "shift=0", "-no-reboot", "-nic", "none"])
        .arg("-kernel")
        .arg(&elf)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&raw.stderr);
    assert!(
        stderr.starts_with(
            "qemu-system-arm: warning: nic stellaris_enet.0 has no peer\nTimer with period zero, disabling\n"
        ),
        "{stderr}"
    );
}

/// Links `source` (C, no C library) for `layout` (a directory holding a memory.x) with
/// firmware/c/link.ld.
fn link_c(source: &str, cpu: &str, layout: &Path, dir: &Path, name: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let elf = dir.join(format!("{name}.elf"));
    let out = Command::new("arm-none-eabi-gcc")
        .args([&format!("-mcpu={cpu}"), "-mthumb", "-masm-syntax-unified", "-O2", "-nostartfiles", "-nostdlib", "-T"])
        .arg(common::repo().join("firmware/c/link.ld"))
        .arg("-L")
        .arg(layout)
        .arg(&c)
        .arg("-o")
        .arg(&elf)
        .output()
        .expect("arm-none-eabi-gcc runs (bash ci/setup.sh installs it)");
    assert!(out.status.success(), "{}", text(&out));
    elf
}

/// Exits 1 through semihosting without a word.
const SILENT_EXIT_1: &str = r#"
#include <stdint.h>
extern uint32_t __stack_top[];
__attribute__((noreturn)) void Reset_Handler(void)
{
    register uint32_t r0 __asm__("r0") = 0x18;      /* SYS_EXIT */
    register uint32_t r1 __asm__("r1") = 0x20023;   /* ADP_Stopped_RunTimeErrorUnknown: exit 1 */
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    for (;;) {}
}
__attribute__((section(".vector_table"), used)) const void *const vectors[2] = { __stack_top, Reset_Handler };
"#;

/// A silent exit 1 on lm3s6965evb is judged by what the firmware did, not turned into "QEMU
/// exited 1 before the firmware said anything: ... Timer with period zero, disabling" (a setup
/// error) by QEMU's start-up notes.
#[test]
fn lm3s6965evbs_start_up_notes_never_make_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let elf = link_c(SILENT_EXIT_1, "cortex-m3", &common::repo().join("linker/lm3s6965evb"), dir.path(), "exit1");
    let (code, cell) = run_elf(&elf, "lm3s6965evb");
    assert_eq!(code, Some(1), "{cell}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert_ne!(cell["verdict"]["outcome"], "setup-error", "{cell}");
    assert!(!message.contains("Timer") && !message.contains("no peer"), "{message}");
    // On mps2-an385 (same core, its own map and nic note) the verdict is the same.
    let elf385 = link_c(SILENT_EXIT_1, "cortex-m3", &common::repo().join("linker/mps2"), dir.path(), "exit1-mps2");
    let (_, cell385) = run_elf(&elf385, "mps2-an385");
    assert_eq!(cell["verdict"], cell385["verdict"]);
}

/// mps2-an521 has two Cortex-M33s in QEMU 7.2 and refuses `-smp 1`. The second is powered off at
/// reset, so the plugin's counts are the first core's: the same ELF counts exactly what it counts
/// on mps2-an505 (one M33, same memory and SysTick), KAT by KAT and in total.
#[test]
fn mps2_an521_counts_exactly_what_mps2_an505_counts() {
    let refused = Command::new("qemu-system-arm")
        .args(["-machine", "mps2-an521", "-cpu", "cortex-m33", "-smp", "1", "-display", "none", "-kernel", "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("min CPUs supported by machine 'mps2-an521' is 2"),
        "{}",
        text(&refused)
    );

    let elf = common::c_firmware("kat-crc32-mps2-an505");
    let (code, an521) = run_elf(&elf, "mps2-an521");
    assert_eq!(code, Some(0), "{an521}");
    assert_eq!(an521["verdict"]["outcome"], "pass", "{an521}");
    let (_, an505) = run_elf(&elf, "mps2-an505");
    assert_eq!(an505["verdict"]["outcome"], "pass", "{an505}");
    assert!(an521["instructions_total"].as_u64().unwrap() > 1_000_000, "{an521}");
    assert_eq!(an521["instructions_total"], an505["instructions_total"]);
    assert_eq!(an521["cycles_total"], an505["cycles_total"]);
    assert_eq!(kat_counts(&an521), kat_counts(&an505));
}

/// Firmware that powers the second core on (firmware/c/second-core: CPUWAIT cleared): the
/// plugin cannot tell the cores' instructions apart, so the run has no counts and is a setup
/// error that says why, never numbers that mix two cores.
#[test]
fn mps2_an521_with_the_second_core_running_has_no_counts() {
    let dir = tempfile::tempdir().unwrap();
    let elf = second_core(dir.path());
    let (code, cell) = run_elf(&elf, "mps2-an521");
    assert_eq!(code, Some(1), "{cell}");
    assert_eq!(cell["verdict"]["outcome"], "setup-error", "{cell}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(message.contains("vCPU 1 ran code (the firmware started a second core)"), "{message}");
    assert!(cell["instructions_total"].is_null(), "{cell}");
}

/// firmware/c/second-core, linked for mps2-an505's layout (the Secure aliases) into `dir`.
fn second_core(dir: &Path) -> PathBuf {
    let source = std::fs::read_to_string(common::repo().join("firmware/c/second-core/main.c")).unwrap();
    link_c(&source, "cortex-m33", &common::repo().join("linker/mps2-an505"), dir, "second-core")
}

/// A scenario with the stm32h5-like board of the book (run on mps2-an505) and the firmware `elf`.
fn user_board_scenario(dir: &Path, elf: &str) -> PathBuf {
    let path = dir.join("h5.yaml");
    std::fs::write(
        &path,
        format!(
            "name: h5\nfirmware: {{ elf: {elf} }}\nboards:\n  - name: stm32h5-like\n    core: cortex-m33\n    \
             qemu: {{ machine: mps2-an505, cpu: cortex-m33 }}\n    memory: {{ flash: {{ origin: 0x10000000, length: 2 MiB }}, \
             ram: {{ origin: 0x38000000, length: 640 KiB }} }}\n    systick-hz: 20000000\n    \
             rust-target: thumbv8m.main-none-eabihf\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join(elf), b"").unwrap();
    path
}

/// C firmware linked for a board the scenario defines, with the `memory.x` mcubench prints for
/// it, passes on it; the memory report uses the board's map; an ELF linked for another map is
/// refused naming the board and the address.
#[test]
fn a_scenarios_own_board_runs_c_firmware_linked_for_its_map() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = user_board_scenario(dir.path(), "kat.elf");
    let layout = dir.path().join("layout");
    std::fs::create_dir_all(&layout).unwrap();
    let out = common::mcubench()
        .args(["boards", "--memory-x", "stm32h5-like", "--scenario"])
        .arg(&scenario)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(layout.join("memory.x"), &out.stdout).unwrap();
    let c = common::repo().join("firmware/c");
    let elf = dir.path().join("kat.elf");
    let out = Command::new("arm-none-eabi-gcc")
        .args(["-mcpu=cortex-m33", "-mfloat-abi=soft", "-mthumb", "-O2", "-std=c11", "-ffunction-sections"])
        .args(["-fdata-sections", "-ffreestanding", "-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections", "-I"])
        .arg(c.join("include"))
        .arg("-T")
        .arg(c.join("link.ld"))
        .arg("-L")
        .arg(&layout)
        .arg(c.join("kat-crc32/startup.c"))
        .arg(c.join("kat-crc32/main.c"))
        .arg("-o")
        .arg(&elf)
        .output()
        .expect("arm-none-eabi-gcc runs (bash ci/setup.sh installs it)");
    assert!(out.status.success(), "{}", text(&out));

    let (code, json) = run_scenario_file(&scenario);
    let cell = &json["cells"][0];
    assert_eq!(code, Some(0), "{cell}");
    assert_eq!((cell["board"].as_str(), cell["core"].as_str()), (Some("stm32h5-like"), Some("Cortex-M33")));
    assert_eq!(cell["verdict"]["outcome"], "pass", "{cell}");
    assert_eq!(cell["kats"].as_array().unwrap().len(), 4, "{cell}");
    assert_eq!(cell["instructions_per_tick"], 50.0);
    assert_eq!(cell["memory"]["flash"]["origin"], 0x1000_0000);
    assert_eq!(cell["memory"]["flash"]["capacity"], 2 * 1024 * 1024);
    assert_eq!(cell["memory"]["ram"]["origin"], 0x3800_0000);
    assert_eq!(cell["memory"]["ram"]["capacity"], 640 * 1024);
    // The stack starts at the top of the board's RAM: this map, not mps2-an505's 4 MiB.
    let vt = mcubench_elf::ElfImage::read(&elf).unwrap().vector_table().unwrap();
    assert_eq!((vt.address, vt.initial_sp), (0x1000_0000, 0x3800_0000 + 640 * 1024));

    // `size --board` with the scenario knows the board too.
    let out = common::mcubench()
        .args(["size", "--format", "json", "--board", "stm32h5-like", "--scenario"])
        .arg(&scenario)
        .arg(&elf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let size: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(size["ram"]["capacity"], 640 * 1024, "{size}");

    // An ELF linked for mps2 (flash at 0): refused before QEMU, naming the board and the address;
    // `size` exits 2 naming the sections, never FLASH 0.
    std::fs::copy(common::c_firmware("kat-crc32"), &elf).unwrap();
    let (code, json) = run_scenario_file(&scenario);
    let cell = &json["cells"][0];
    assert_eq!(code, Some(1), "{cell}");
    assert_eq!(cell["verdict"]["outcome"], "setup-error", "{cell}");
    let message = cell["verdict"]["message"].as_str().unwrap();
    assert!(
        message.contains("the vector table is at 0x00000000, outside stm32h5-like's flash 0x10000000..0x10200000"),
        "{message}"
    );
    let out = common::mcubench()
        .args(["size", "--board", "stm32h5-like", "--scenario"])
        .arg(&scenario)
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("outside stm32h5-like's memory map (FLASH 0x10000000..0x10200000, RAM 0x38000000..0x380a0000)"),
        "{}",
        text(&out)
    );
}

/// Rust firmware for a board the scenario defines: cargo builds it with the board's memory.x
/// (in the build directory), and the KATs pass with exact counts.
#[test]
fn a_scenarios_own_board_runs_the_rust_kat_built_for_its_map() {
    let repo = common::repo();
    let yaml = std::fs::read_to_string(repo.join("scenarios/kat.yaml")).unwrap().replace(
        "boards: [mps2-an386, mps2-an385, mps2-an500, mps2-an505, microbit]",
        "boards:\n  - name: stm32f4-96k\n    core: cortex-m4f\n    qemu: { machine: netduinoplus2 }\n    \
             memory: { flash: { origin: 0x08000000, length: 512 KiB }, ram: { origin: 0x20000000, length: 96 KiB } }",
    );
    assert!(yaml.contains("stm32f4-96k"), "scenarios/kat.yaml changed its boards line");
    let mut scenario = mcubench::Scenario::from_yaml(&repo.join("scenarios/kat-user-board.yaml"), &yaml).unwrap();
    scenario.profiles.retain(|p| p.name == "speed");
    let board = scenario.boards[0];
    assert!(board.is_user());
    assert_eq!(
        (board.rust_target, board.systick_hz, board.qemu_cpu),
        ("thumbv7em-none-eabihf", 168_000_000, "cortex-m4")
    );
    let cell: CellReport = common::only_cell(common::run(&scenario));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert!(cell.kats.len() >= 50, "{}", cell.kats.len());
    assert!(cell.kats.iter().all(|k| k.instructions_source == mcubench::report::CountSource::Plugin));
    let memory = cell.memory.as_ref().unwrap();
    let json = serde_json::to_value(memory).unwrap();
    assert_eq!(json["ram"]["capacity"], 96 * 1024, "{json}");
    assert_eq!(json["flash"]["origin"], 0x0800_0000, "{json}");
    // Built with this board's memory.x: cortex-m-rt put the initial stack pointer at the top of
    // its 96 KiB of RAM (netduinoplus2's own layout has 128 KiB).
    assert_eq!(stack_top_of(&scenario, board), 0x2000_0000 + 96 * 1024);
}

/// The initial SP of the Rust KAT built for `board` (the first word of its vector table).
fn stack_top_of(scenario: &mcubench::Scenario, board: &'static mcubench::Board) -> u32 {
    let mcubench::config::scenario::Firmware::Cargo { package_dir, bin, features } = &scenario.firmware else {
        unreachable!()
    };
    let root = mcubench::build::target_directory(package_dir).unwrap();
    let firmware = mcubench::build::CargoFirmware { package_dir, bin, features };
    let elf = mcubench::build::build(&firmware, &root, board, &scenario.profiles[0]).unwrap();
    mcubench_elf::ElfImage::read(&elf).unwrap().vector_table().unwrap().initial_sp
}

/// The plugin without cycles (no `core=`: no exec callback of its own) still watches the vCPUs on
/// a two-core machine: counts while the second core is off, none once it runs.
#[test]
fn the_plugin_watches_the_second_core_without_cycles_too() {
    use mcubench::exec::{self, Launch, plugin};
    let so = plugin::locate().unwrap().expect("plugin enabled");
    let an521 = mcubench::Board::find("mps2-an521").unwrap();
    let run = |elf: &Path, board: &'static mcubench::Board| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results");
        let option = mcubench_wire::PluginArgs::new(&out).to_option(&so);
        let launch =
            Launch::new(board, elf, std::time::Duration::from_secs(20)).with_plugin(Some(&option)).contained(false);
        let run = exec::execute(&launch).unwrap().run;
        (run, plugin::read_results(&out))
    };
    let kat = common::c_firmware("kat-crc32-mps2-an505");
    let (r521, results521) = run(&kat, an521);
    assert_eq!(r521.end, mcubench::exec::ProcessEnd::Exited(0), "{}", r521.stderr);
    let (_, results505) = run(&kat, mcubench::Board::find("mps2-an505").unwrap());
    assert_eq!(results521.unwrap().insns, results505.unwrap().insns);

    let dir = tempfile::tempdir().unwrap();
    let (r, results) = run(&second_core(dir.path()), an521);
    assert!(r.stderr.contains("mcubench-qemu-plugin: error: vCPU 1 ran code"), "{}", r.stderr);
    assert!(results.is_err(), "no results when two cores ran: {results:?}");
}

/// Reads SysTick (processor clock, no interrupt) around a loop of 2,000,000 instructions and
/// prints the tick count in hex on semihosting; ARMv6-M code, so it runs on every machine.
const SYSTICK_PROBE: &str = r#"
#include <stdint.h>
#define CSR (*(volatile uint32_t *)0xE000E010u)
#define RVR (*(volatile uint32_t *)0xE000E014u)
#define CVR (*(volatile uint32_t *)0xE000E018u)
extern uint32_t __stack_top[];
static uint32_t semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
__attribute__((noreturn)) void Reset_Handler(void)
{
    CSR = 0; RVR = 0x00ffffffu; CVR = 0; CSR = 5; /* ENABLE | CLKSOURCE (processor clock) */
    uint32_t a = CVR;
    __asm__ volatile("ldr r0, =1000000\n1: subs r0, #1\nbne 1b\n" ::: "r0", "cc");
    uint32_t b = CVR;
    uint32_t ticks = (a - b) & 0x00ffffffu;
    char text[] = "ticks=0x00000000\n";
    for (int i = 0; i < 8; i++) text[6 + 2 + i] = "0123456789abcdef"[(ticks >> (28 - 4 * i)) & 15];
    semihost(0x04, text); /* SYS_WRITE0 */
    semihost(0x18, (void *)0x20026); /* SYS_EXIT: exit 0 */
    for (;;) {}
}
__attribute__((section(".vector_table"), used)) const void *const vectors[2] = { __stack_top, Reset_Handler };
"#;

/// Every machine's SysTick clock in the machine table is what QEMU 7.2 models: 2,000,000
/// instructions under `-icount shift=0` are 2 ms of virtual time, so `2e-3 × systick_hz` ticks.
/// The probe runs from a flash and RAM of each machine's map (Secure aliases where it boots
/// Secure), which also shows that those maps run code.
#[test]
fn every_machines_systick_clock_is_what_qemu_models() {
    use mcubench::config::board::{Layout, Region};
    use mcubench::config::machine::MACHINES;
    let dir = tempfile::tempdir().unwrap();
    for m in MACHINES {
        let secure = |origin: u64| !m.secure_boot || origin & (1 << 28) != 0;
        let flash = m.memory.iter().find(|r| secure(r.origin)).unwrap();
        let ram = m.memory.iter().find(|r| r.writable && secure(r.origin) && r.name != flash.name).unwrap();
        let layout = Layout {
            name: m.name,
            about: &[],
            flash: Region { origin: flash.origin, length: flash.length.min(64 * 1024) },
            ram: Region { origin: ram.origin, length: ram.length.min(8 * 1024) },
            defined_in: None,
        };
        m.check_layout(&layout).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        let layout_dir = dir.path().join(m.name);
        std::fs::create_dir_all(&layout_dir).unwrap();
        std::fs::write(layout_dir.join("memory.x"), layout.memory_x()).unwrap();
        let elf = link_c(SYSTICK_PROBE, "cortex-m0", &layout_dir, dir.path(), &format!("systick-{}", m.name));
        let out = Command::new("qemu-system-arm")
            .args(["-machine", m.name, "-cpu", m.cpu, "-display", "none", "-monitor", "none", "-serial", "none"])
            .args([
                "-semihosting-config",
                "enable=on,target=native",
                "-icount",
                "shift=0",
                "-no-reboot",
                "-nic",
                "none",
            ])
            .arg("-kernel")
            .arg(&elf)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{}: {all}", m.name);
        let hex = all.split("ticks=0x").nth(1).and_then(|t| t.get(..8)).unwrap_or_else(|| panic!("{}: {all}", m.name));
        let ticks = u64::from_str_radix(hex, 16).unwrap();
        let expected = 2_000_000 * m.systick_hz / 1_000_000_000;
        assert!(
            ticks.abs_diff(expected) <= 2,
            "{}: {ticks} ticks for 2,000,000 instructions, table says {expected}",
            m.name
        );
    }
}
