//! mcubench installed, used from somewhere else: `cargo install --locked --path sim/mcubench` into
//! a temporary root, then runs in temporary directories outside this checkout, with `PATH` holding
//! only the installed root and the system's directories and an empty per-user cache. So the
//! installed executable carries everything it needs (its QEMU plugin for both APIs, the boards),
//! and nothing is found through the source tree.
//!
//! * A prebuilt C firmware and a scenario: the installed mcubench's report is byte for byte the
//!   report of this checkout's library on the same files, on QEMU 7.2 and on QEMU 10 (same
//!   verdicts, instruction counts and cycle estimates; only the `qemu` field differs).
//! * The GitHub Action (`action.yml`): a throw-away firmware repository (git, a C firmware built by
//!   a shell script, a scenario), and the action's `run:` steps executed as GitHub would (inputs
//!   through `env:`, `GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`); its `uses:` steps are checked, not run.
//!
//! The install builds in its own target directory under this target's tmp dir (kept between runs,
//! so only the first run pays for the build), with the release profile's optimization turned off
//! (`CARGO_PROFILE_RELEASE_OPT_LEVEL=0`, cargo's documented override of `profile.release`, for
//! this install and the action's): what is proven is that `cargo install --locked --path
//! sim/mcubench` builds and installs a complete, working mcubench outside the checkout, not how
//! fast an optimized one runs, and the unoptimized build costs a third of the optimized one's
//! CPU (78 s against 234 s cold, docs/src/explain/evidence.md). The embedded QEMU plugins are release builds either way (the
//! nested plugin builds drop the outer build's `CARGO_PROFILE_*` settings). QEMU 10 is
//! `/opt/qemu-10/usr/bin/qemu-system-arm` (ci/setup.sh) or `MCUBENCH_TEST_QEMU10`.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use mcubench::judge::verdict::Outcome;
use mcubench::report::{CountSource, RunReport};
use mcubench::{RunOptions, Scenario, run_scenario};
use serde_yaml_ng::Value;

/// The system's directories: all of `PATH` besides the installed root.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

fn qemu10() -> PathBuf {
    std::env::var_os("MCUBENCH_TEST_QEMU10")
        .map_or_else(|| PathBuf::from("/opt/qemu-10/usr/bin/qemu-system-arm"), PathBuf::from)
}

fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// The install's own target directory (reused between runs and by the action test's install).
fn install_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcubench-install")
}

/// The nested plugin builds of this test run's own build (`<target>/qemu-plugin`, see
/// sim/mcubench/build.rs): the install embeds the same two release builds, so it reuses them
/// instead of compiling them again (`MCUBENCH_PLUGIN_TARGET_DIR`).
fn plugin_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target/tmp").join("qemu-plugin")
}

/// The release profile's opt-level for the test's installs (see the module comment).
const INSTALL_OPT_LEVEL: (&str, &str) = ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0");

/// `cargo install --locked --path sim/mcubench --root <fresh temporary root>`, once per test
/// process; the root.
fn installed() -> &'static Path {
    static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::Builder::new().prefix("mcubench-root-").tempdir().unwrap();
        let out = Command::new(cargo())
            .current_dir(common::repo())
            .args(["install", "--locked", "--quiet", "--path", "sim/mcubench", "--root"])
            .arg(root.path())
            .env("CARGO_TARGET_DIR", install_target_dir())
            .env("MCUBENCH_PLUGIN_TARGET_DIR", plugin_target_dir())
            .env(INSTALL_OPT_LEVEL.0, INSTALL_OPT_LEVEL.1)
            .output()
            .unwrap();
        assert!(out.status.success(), "cargo install failed:\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(root.path().join("bin/mcubench").is_file());
        root
    })
    .path()
}

/// A command with nothing of this process's environment: `PATH` is `path`, the per-user cache
/// (where the plugin is extracted) is `home`'s, the working directory is `dir`.
fn isolated(program: &Path, path: &str, home: &Path, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir).env_clear().env("PATH", path).env("HOME", home).env("LANG", "C.UTF-8");
    c
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_installed_mcubench_runs_a_scenario_outside_the_checkout_on_both_qemus() {
    let root = installed();
    let work = tempfile::Builder::new().prefix("mcubench-user-").tempdir().unwrap();
    let (dir, home) = (work.path().join("project"), work.path().join("home"));
    std::fs::create_dir_all(dir.join("fw")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(common::c_firmware("kat-crc32"), dir.join("fw/kat-crc32.elf")).unwrap();
    let scenario = dir.join("bench.yaml");
    std::fs::write(
        &scenario,
        "name: installed\nfirmware: { elf: fw/kat-crc32.elf }\nboards: [mps2-an386]\nbudgets: { flash: 64 KiB, stack: 4 KiB }\n",
    )
    .unwrap();
    let path = format!("{}:{SYSTEM_PATH}", root.join("bin").display());
    let mcubench = root.join("bin/mcubench");

    let out = isolated(&mcubench, &path, &home, &dir)
        .args(["run", "bench.yaml", "--quiet", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let installed = RunReport::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let cell = &installed.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert_eq!(cell.kats.len(), 4, "the four CRC-32 KATs");
    for k in &cell.kats {
        assert_eq!(k.instructions_source, CountSource::Plugin, "{}: counted by the installed plugin", k.id);
        let cycles = k.cycles.unwrap_or_else(|| panic!("{}: no cycle estimate", k.id));
        assert!(
            k.instructions > 0 && cycles >= k.instructions,
            "{}: {} instructions, {cycles} cycles",
            k.id,
            k.instructions
        );
    }
    // The same files through this checkout's library (its own embedded plugin): the same report.
    let library = run_scenario(&Scenario::load(&scenario).unwrap(), &RunOptions { jobs: 1, ..RunOptions::default() });
    assert_eq!(installed.to_json(), library.to_json(), "the installed mcubench and the library disagree");
    let cached = home.join(".cache/mcubench/plugins");
    let v1: Vec<_> = walk(&cached).into_iter().filter(|p| p.ends_with("libmcubench_qemu_plugin_v1.so")).collect();
    assert_eq!(v1.len(), 1, "the v1 plugin extracted once into the user's cache: {v1:?}");

    // QEMU 10 (plugin API v3): same numbers.
    let out = isolated(&mcubench, &path, &home, &dir)
        .args(["run", "bench.yaml", "--quiet", "--format", "json"])
        .env("MCUBENCH_QEMU", qemu10())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let newer = RunReport::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert!(newer.cells[0].qemu.as_deref().is_some_and(|v| v.starts_with("10.")), "{:?}", newer.cells[0].qemu);
    assert_eq!(newer.cells[0].verdict, cell.verdict);
    let kats = |c: &mcubench::report::CellReport| serde_json::to_value(&c.kats).unwrap();
    assert_eq!(kats(&newer.cells[0]), kats(cell), "the KATs' counts and cycles on QEMU 10 and 7.2");
    assert!(walk(&cached).iter().any(|p| p.ends_with("libmcubench_qemu_plugin_v3.so")), "the v3 plugin extracted");

    // doctor names the extracted plugin and passes (rustc is not on this PATH: optional).
    let out = isolated(&mcubench, &path, &home, &dir).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let plugin_line = report.lines().find(|l| l.starts_with("plugin")).unwrap_or_default();
    assert!(plugin_line.contains(&v1[0].display().to_string()) && plugin_line.contains("plugin API v1"), "{report}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() { found.extend(walk(&p)) } else { found.push(p) }
    }
    found
}

/// A firmware repository of its own: the CRC-32 KAT firmware's C sources, built by `build.sh`
/// with arm-none-eabi-gcc (the scenario's `command`), and two scenarios, one with a flash budget
/// the firmware crosses.
fn firmware_repository(dir: &Path) {
    let c = common::repo().join("firmware/c");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for (from, to) in [
        (c.join("kat-crc32/main.c"), "src/main.c"),
        (c.join("kat-crc32/startup.c"), "src/startup.c"),
        (c.join("kat-crc32/crc32_table.h"), "src/crc32_table.h"),
        (c.join("include/mcubench.h"), "src/mcubench.h"),
        (c.join("link.ld"), "link.ld"),
        (common::repo().join("linker/mps2/memory.x"), "memory.x"),
    ] {
        std::fs::copy(&from, dir.join(to)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    std::fs::write(
        dir.join("build.sh"),
        "set -eu\nmkdir -p build\narm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -O2 -g -std=c11 -ffunction-sections \
         -fdata-sections -ffreestanding -nostartfiles --specs=nano.specs -Isrc -T link.ld -L . -Wl,--gc-sections \
         src/startup.c src/main.c -o build/crc32.elf\n",
    )
    .unwrap();
    let scenario = |name: &str, flash: &str| {
        format!(
            "name: {name}\nfirmware: {{ command: sh build.sh, elf: build/crc32.elf }}\nboards: [mps2-an386]\n\
             budgets: {{ flash: {flash} }}\n"
        )
    };
    std::fs::write(dir.join("mcubench.yaml"), scenario("crc32", "64 KiB")).unwrap();
    std::fs::write(dir.join("tight.yaml"), scenario("crc32-tight", "1 KiB")).unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "firmware"],
    ] {
        let out = Command::new("git").current_dir(dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    }
}

/// `action.yml`'s steps: each a map with `run` (and `shell`, `env`) or `uses` (and `with`).
fn action_steps() -> Vec<Value> {
    let path = common::repo().join("action.yml");
    let action: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    action["runs"]["steps"].as_sequence().expect("runs.steps").clone()
}

/// The action's default inputs, with `given` over them.
fn inputs(given: &[(&str, &str)]) -> BTreeMap<String, String> {
    let path = common::repo().join("action.yml");
    let action: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut inputs = BTreeMap::new();
    for (name, spec) in action["inputs"].as_mapping().unwrap() {
        let default = spec.get("default").and_then(Value::as_str).unwrap_or_default();
        inputs.insert(name.as_str().unwrap().to_string(), default.to_string());
    }
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "action.yml has no input `{k}`");
        inputs.insert(k.to_string(), v.to_string());
    }
    inputs
}

/// `value` with its `${{ ... }}` expressions replaced: `inputs.<name>` and `github.action_path`
/// (what the steps' `env:` may use); any other expression fails the test.
fn expand(value: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").unwrap_or_else(|| panic!("unclosed expression in `{value}`")) + start;
        let expression = rest[start + 3..end].trim();
        out.push_str(&match expression.strip_prefix("inputs.") {
            Some(name) => inputs.get(name).unwrap_or_else(|| panic!("no input `{name}`")).clone(),
            None if expression == "github.action_path" => common::repo().display().to_string(),
            None => panic!("the test does not know the expression `{expression}` (in `{value}`)"),
        });
        rest = &rest[end + 2..];
    }
    out + rest
}

/// What running the action's steps left.
struct ActionRun {
    /// Exit status of each `run:` step, by name.
    steps: Vec<(String, Option<i32>)>,
    summary: String,
    /// `GITHUB_OUTPUT` of the run step, as `name=value` pairs.
    outputs: BTreeMap<String, String>,
}

/// Runs `steps` (all of the action's, or those named in `only`) in `repo` as GitHub's runner
/// would: `bash --noprofile --norc -eo pipefail` per `run:` step, with the step's `env:`, and
/// the runner's files. Stops at the first failing step, except for `if: always()` steps.
fn run_action(repo: &Path, given: &[(&str, &str)], only: Option<&[&str]>, env: &[(&str, String)]) -> ActionRun {
    let inputs = inputs(given);
    let runner = tempfile::Builder::new().prefix("mcubench-runner-").tempdir().unwrap();
    let summary = runner.path().join("step_summary.md");
    let mut result = ActionRun { steps: Vec::new(), summary: String::new(), outputs: BTreeMap::new() };
    let mut failed = false;
    for step in action_steps() {
        let name = step["name"].as_str().expect("every step has a name").to_string();
        if only.is_some_and(|o| !o.contains(&name.as_str())) {
            continue;
        }
        // The conditions action.yml uses.
        let (always, wanted) = match step.get("if").and_then(Value::as_str) {
            None => (false, true),
            Some("always()") => (true, true),
            Some("always() && inputs.scenario != ''") => (true, !inputs["scenario"].is_empty()),
            Some(other) => panic!("step `{name}`: the test does not know the condition `{other}`"),
        };
        if !wanted || (failed && !always) {
            continue;
        }
        if let Some(uses) = step.get("uses").and_then(Value::as_str) {
            // Not run here; the upload must take the report directory.
            assert!(uses.starts_with("actions/upload-artifact@"), "step `{name}` uses {uses}");
            assert_eq!(
                step["with"]["path"].as_str(),
                Some("${{ inputs.report-dir }}"),
                "step `{name}` uploads the reports"
            );
            assert!(always, "step `{name}` must upload the report also when the run fails");
            continue;
        }
        let script = step["run"].as_str().unwrap_or_else(|| panic!("step `{name}` has neither run nor uses"));
        assert_eq!(step["shell"].as_str(), Some("bash"), "composite steps name their shell: `{name}`");
        assert!(
            !script.contains("${{"),
            "step `{name}`: inputs reach scripts through env:, never `${{{{ }}}}` in run:"
        );
        let output = runner.path().join(format!("output-{}", result.steps.len()));
        std::fs::write(&output, "").unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(repo)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_WORKSPACE", repo)
            .env("GITHUB_ACTION_PATH", common::repo())
            .env("RUNNER_TEMP", runner.path())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        for (k, v) in step.get("env").and_then(Value::as_mapping).into_iter().flatten() {
            command.env(k.as_str().unwrap(), expand(v.as_str().unwrap(), &inputs));
        }
        let out = command.output().unwrap();
        eprintln!("step `{name}`: {}", text(&out));
        result.steps.push((name.clone(), out.status.code()));
        failed |= !out.status.success();
        for line in std::fs::read_to_string(&output).unwrap().lines() {
            let (k, v) = line.split_once('=').unwrap_or_else(|| panic!("step `{name}`: `{line}` in GITHUB_OUTPUT"));
            result.outputs.insert(k.to_string(), v.to_string());
        }
    }
    result.summary = std::fs::read_to_string(&summary).unwrap_or_default();
    result
}

#[test]
fn the_github_action_runs_a_scenario_in_a_firmware_repository() {
    let root = installed();
    let work = tempfile::Builder::new().prefix("mcubench-action-").tempdir().unwrap();
    let repo = work.path().join("firmware");
    firmware_repository(&repo);
    // The runner: tools found on PATH (so the install steps skip apt), cargo installing into a
    // root of its own, reusing the install test's build.
    let cargo_bin = cargo().parent().map(Path::to_path_buf).unwrap_or_default();
    let cargo_root = work.path().join("cargo-root");
    // The test's own PATH (rustup's proxies pick the repository's toolchain), then the cargo
    // running the tests, should PATH lack one.
    let path =
        format!("{}:{}:{}", cargo_root.join("bin").display(), std::env::var("PATH").unwrap(), cargo_bin.display());
    let env = [
        ("PATH", path),
        ("CARGO_INSTALL_ROOT", cargo_root.display().to_string()),
        ("CARGO_TARGET_DIR", install_target_dir().display().to_string()),
        ("MCUBENCH_PLUGIN_TARGET_DIR", plugin_target_dir().display().to_string()),
        (INSTALL_OPT_LEVEL.0, INSTALL_OPT_LEVEL.1.to_string()),
    ];
    assert!(root.join("bin/mcubench").is_file(), "the install test's build is reused");

    let all = run_action(&repo, &[("scenario", "mcubench.yaml"), ("shard", "1/1"), ("format", "junit")], None, &env);
    assert!(all.steps.iter().all(|(_, code)| *code == Some(0)), "{:?}", all.steps);
    assert_eq!(all.steps.len(), 5, "every run: step ran: {:?}", all.steps);
    assert_eq!(all.outputs.get("exit-code").map(String::as_str), Some("0"));
    let report_path = repo.join(&all.outputs["report"]);
    assert_eq!(all.outputs["report"], "mcubench-report/shard-1.json");
    let report = RunReport::from_json(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report.cells.len(), 1);
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert_eq!(cell.kats_passed(), 4);
    assert!(cell.kats.iter().all(|k| k.cycles.is_some()), "cycle estimates in the action's report");
    assert!(repo.join("mcubench-report/shard-1.xml").is_file(), "format: junit writes the JUnit file");
    // The job summary is the report's Markdown.
    assert_eq!(all.summary, mcubench::report::markdown::to_markdown(&report, None), "the step summary");
    assert!(all.summary.contains("crc32") && all.summary.contains("4/4 KATs"), "{}", all.summary);

    // A crossed budget: reported, the step passes with budgets-gate false and fails with true.
    let run_only: &[&str] = &["Run the scenario"];
    let report_only = run_action(&repo, &[("scenario", "tight.yaml"), ("budgets-gate", "false")], Some(run_only), &env);
    assert_eq!(report_only.steps, vec![("Run the scenario".to_string(), Some(0))]);
    assert_eq!(report_only.outputs.get("exit-code").map(String::as_str), Some("3"));
    assert!(report_only.summary.contains("flash"), "{}", report_only.summary);
    let gate = run_action(&repo, &[("scenario", "tight.yaml")], Some(run_only), &env);
    assert_eq!(gate.steps, vec![("Run the scenario".to_string(), Some(3))]);
    let bad = run_action(&repo, &[("scenario", "mcubench.yaml"), ("format", "yaml")], Some(run_only), &env);
    assert_eq!(bad.steps, vec![("Run the scenario".to_string(), Some(2))]);
}
