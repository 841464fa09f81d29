//! `mcubench run`: build and run a scenario (or one prebuilt ELF) and print the results.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use mcubench_elf::ElfImage;

use super::args::{self, ContainArgs, Format, TimingArgs};
use super::{Error, Exit};
use crate::config::board::Board;
use crate::config::rules::{ConsoleRules, ExitRule, Pattern, Record};
use crate::config::scenario::{Budgets, Bytes, CycleCounter, DEFAULT_TIMEOUT, Firmware, PREBUILT_PROFILE, Scenario};
use crate::shard::Shard;
use crate::{RunOptions, run_scenario};

/// Verdict rules for `--elf` firmware that does not speak the result protocol (a scenario's
/// `verdict:` key).
#[derive(Args)]
pub struct VerdictArgs {
    /// A console line must match this regular expression (repeatable).
    #[arg(long, requires = "elf", value_name = "REGEX", value_parser = Pattern::parse)]
    expect: Vec<Pattern>,
    /// ... and the `--expect` patterns must match in the order given.
    #[arg(long, requires = "expect")]
    ordered: bool,
    /// No console line may match this regular expression (repeatable).
    #[arg(long, requires = "elf", value_name = "REGEX", value_parser = Pattern::parse)]
    reject: Vec<Pattern>,
    /// The exit code a pass needs (with verdict rules; default 0); `loop`: the firmware ends in
    /// a branch to itself or an idle loop (`while (1) {}`, `while (1) { __WFI(); }`), where the run
    /// ends; `reset`: it asks for a system reset.
    #[arg(long, requires = "elf", value_name = "CODE|loop|reset", value_parser = ExitRule::parse)]
    exit_code: Option<ExitRule>,
    /// Named captures of this regular expression become report metrics (repeatable), e.g.
    /// `--record 'cycles: (?P<cycles>[0-9]+)'`.
    #[arg(long, requires = "elf", value_name = "REGEX", value_parser = Record::parse)]
    record: Vec<Record>,
}

impl VerdictArgs {
    /// The rules, when any flag asks for them.
    fn rules(&self) -> Result<Option<ConsoleRules>, Error> {
        if self.expect.is_empty() && self.reject.is_empty() && self.exit_code.is_none() && self.record.is_empty() {
            return Ok(None);
        }
        let rules = ConsoleRules {
            exit: self.exit_code.unwrap_or_default(),
            expect: self.expect.clone(),
            ordered: self.ordered,
            reject: self.reject.clone(),
            record: self.record.clone(),
        };
        rules.check().map_err(Error::Input)?;
        Ok(Some(rules))
    }
}

#[derive(Args)]
pub struct RunArgs {
    /// Scenario YAML file.
    #[arg(required_unless_present = "elf", conflicts_with = "elf")]
    scenario: Option<PathBuf>,
    /// Run this prebuilt ELF instead of a scenario (needs --board).
    #[arg(long, requires = "boards")]
    elf: Option<PathBuf>,
    /// Board to run on; with a scenario, restricts it to these boards.
    #[arg(long = "board", value_name = "NAME")]
    boards: Vec<String>,
    /// Restrict a scenario to these profiles.
    #[arg(long = "profile", value_name = "NAME")]
    profiles: Vec<String>,
    /// Run only shard I of N of the board × profile matrix (join shards with `merge`).
    #[arg(long, value_name = "I/N", value_parser = args::shard)]
    shard: Option<Shard>,
    /// Wall-clock limit per run for --elf, e.g. `20s` (a scenario sets its own `timeout`).
    #[arg(long, requires = "elf", value_parser = args::duration)]
    timeout: Option<Duration>,
    /// Budgets for --elf: flash, static RAM and stack, e.g. `--flash-budget 24KiB`.
    #[arg(long, requires = "elf", value_parser = args::bytes)]
    flash_budget: Option<Bytes>,
    #[arg(long, requires = "elf", value_parser = args::bytes)]
    ram_budget: Option<Bytes>,
    #[arg(long, requires = "elf", value_parser = args::bytes)]
    stack_budget: Option<Bytes>,
    /// Whole-run heap peak the firmware reports (`heap=` on `end`), e.g. `--heap-budget 4KiB`.
    #[arg(long, requires = "elf", value_parser = args::bytes)]
    heap_budget: Option<Bytes>,
    /// The host's copy of the KAT vectors for --elf (as `firmware.vectors` in a scenario):
    /// every `kat` record is checked against it, so a forged `result=pass` fails.
    #[arg(long, requires = "elf", value_name = "FILE")]
    vectors: Option<PathBuf>,
    /// What the firmware's loads of the DWT cycle counter read for --elf (as `cycle-counter:`
    /// in a scenario): `zero`, as QEMU, or `estimated`, the estimated cycles, as on the board.
    #[arg(long, requires = "elf", value_enum, value_name = "READS")]
    cycle_counter: Option<CycleCounter>,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    verdict: VerdictArgs,
    /// Print every cell's console (semihosting and UARTs) after the results, not only failing ones'.
    #[arg(long)]
    show_output: bool,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Also write the JSON report here (written whole or not at all).
    #[arg(long, value_name = "FILE")]
    json_output: Option<PathBuf>,
    /// Also write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    junit_output: Option<PathBuf>,
    /// Also write the Markdown summary here (e.g. "$GITHUB_STEP_SUMMARY", which is appended to).
    #[arg(long, value_name = "FILE")]
    markdown_output: Option<PathBuf>,
    /// Also write OpenMetrics text here (e.g. GitLab's `metrics.txt`; written whole or not at all).
    #[arg(long, value_name = "FILE")]
    metrics_output: Option<PathBuf>,
    /// QEMU runs at once (default: number of CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// The qemu-system-arm to run (default: $MCUBENCH_QEMU, else qemu-system-arm on PATH); its
    /// version picks the TCG plugin build (`mcubench doctor` shows both).
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    contain: ContainArgs,
}

impl RunArgs {
    /// The scenario to run: the file, or a one-cell scenario for `--elf` with the flags' budgets.
    fn scenario(&self) -> Result<Scenario, Error> {
        let scenario = match (&self.scenario, &self.elf) {
            (Some(path), None) => {
                let mut s = Scenario::load(path)?;
                // A prebuilt ELF scenario runs on the boards it names; `--board` picks among a
                // built scenario's boards.
                let boards = if matches!(s.firmware, Firmware::Elf { .. }) { &[][..] } else { &self.boards[..] };
                s.restrict(boards, &self.profiles).map_err(Error::Input)?;
                s
            }
            (None, Some(elf)) => {
                let [name] = &self.boards[..] else {
                    return Err(Error::Input("--elf runs on exactly one --board".into()));
                };
                let board: &'static Board = args::board(name).map_err(Error::Input)?;
                let budgets = Budgets {
                    flash: self.flash_budget,
                    ram: self.ram_budget,
                    stack: self.stack_budget,
                    stack_static: None,
                    heap: self.heap_budget,
                };
                if !elf.is_file() {
                    return Err(Error::Input(format!("{}: no such file", elf.display())));
                }
                let mut s = Scenario::for_elf(elf, board, budgets, self.timeout.unwrap_or(DEFAULT_TIMEOUT));
                if self.timing.timing.is_some() {
                    let measure = s.measures.entry(PREBUILT_PROFILE.to_string()).or_default();
                    measure.models.insert(board.name.to_string(), self.timing.model(board)?);
                }
                if let Some(path) = &self.vectors {
                    s.vectors = Some(crate::config::vectors::Vectors::load(path)?);
                }
                s.restrict(&[], &self.profiles).map_err(Error::Input)?;
                s.verdict = self.verdict.rules()?;
                s.cycle_counter = self.cycle_counter.unwrap_or_default();
                s
            }
            _ => unreachable!("clap enforces exactly one of SCENARIO and --elf"),
        };
        // Bad input before any work, so it exits 2 with no report written: an ELF that is not a
        // 32-bit little-endian ARM ELF, an impossible budget (see config/budgets.rs).
        if let Firmware::Elf { path } = &scenario.firmware {
            ElfImage::read(path)?;
        }
        for warning in crate::config::budgets::check(&scenario).map_err(Error::Input)? {
            eprintln!("mcubench: warning: {warning}");
        }
        Ok(scenario)
    }
}

pub fn run(a: RunArgs) -> Result<Exit, Error> {
    let scenario = a.scenario()?;
    // Only some cells of the scenario's matrix (a prebuilt-ELF scenario ignores `--board`).
    let restricted = a.scenario.is_some()
        && (!a.profiles.is_empty() || (!a.boards.is_empty() && !matches!(scenario.firmware, Firmware::Elf { .. })));
    if a.format == Format::Csv && scenario.table.is_none() {
        return Err(Error::Input(format!(
            "--format csv prints the scenario's declared table, and {} declares no `table:` (see docs/src/guide/secure-boot.md)",
            scenario.source.display()
        )));
    }
    // Bars and colours only for a person at a terminal: never in CI logs or pipes.
    let ci = std::env::var_os("CI").is_some();
    let color = !ci && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    let mut options = RunOptions {
        progress: !a.quiet,
        progress_bar: !a.quiet && !ci && std::io::stderr().is_terminal(),
        contain: !a.contain.no_contain,
        shard: a.shard,
        ..RunOptions::default()
    };
    if let Some(j) = a.jobs {
        options.jobs = j.max(1);
    }
    if let Some(qemu) = &a.qemu {
        options.qemu = qemu.clone();
    }
    // The scenario's stack annotation file is input too: malformed, it is refused before any
    // work; naming a function no cell has, after the run and before any report.
    for profile in &scenario.profiles {
        if let Some(file) = crate::analyze::stack::annotation_file(&scenario.source, &profile.name) {
            mcubench_stack::annotations::AnnotationFile::load(&file)?;
        }
    }
    let report = run_scenario(&scenario, &options);
    {
        // A shard, or a run restricted to some boards or profiles, sees only some builds: a name
        // may live in the others'.
        let whole_matrix = options.shard.is_none() && !restricted;
        let files: Vec<_> =
            report.cells.iter().map(|c| crate::analyze::stack::annotation_file(&scenario.source, &c.profile)).collect();
        let per_build: Vec<_> =
            report.cells.iter().zip(&files).map(|(c, f)| (f.as_deref(), c.annotations_ignored.as_slice())).collect();
        args::check_annotation_names(&per_build, whole_matrix)?;
    }
    if let Some(path) = &a.json_output {
        args::write_atomically(path, &report.to_json())?;
    }
    if let Some(path) = &a.junit_output {
        args::write_atomically(path, &crate::report::junit::to_junit(&report))?;
    }
    if let Some(path) = &a.markdown_output {
        args::append(path, &crate::report::markdown::to_markdown(&report, None))?;
    }
    if let Some(path) = &a.metrics_output {
        args::write_atomically(path, &crate::report::openmetrics::to_openmetrics(&report))?;
    }
    args::print(&match a.format {
        Format::Table => report.to_table_colored(color),
        other => args::render(&report, other),
    });
    if a.format == Format::Table {
        if let Some(table) = crate::report::tables::to_text(&report) {
            args::print(&format!("\n{table}"));
        }
        args::print(&report.console_text(a.show_output));
    }
    Ok(report.status().into())
}
