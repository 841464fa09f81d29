//! The `mcubench` command: a thin CLI over the library.
//!
//! Exit codes: 0 every run passed and every budget holds; 1 a run did not pass; 2 bad input or
//! usage (the message names the file and place); 3 every run passed but a budget was crossed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mcubench::report::memory_table;
use mcubench::scenario::{Budgets, Bytes, DEFAULT_TIMEOUT, Timeout};
use mcubench::{Board, RunOptions, Scenario, Status, run_scenario};
use mcubench_elf::{ElfImage, MemoryReport};

#[derive(Parser)]
#[command(
    name = "mcubench",
    version,
    about = "Run Cortex-M firmware under QEMU: KATs, instruction counts, memory, stack, budgets"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Build and run a scenario (or one prebuilt ELF) and print the results.
    Run {
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
        /// Wall-clock limit per run for --elf, e.g. `20s` (a scenario sets its own `timeout`).
        #[arg(long, requires = "elf")]
        timeout: Option<String>,
        /// Budgets for --elf: flash, static RAM and stack, e.g. `--flash-budget 24KiB`.
        #[arg(long, requires = "elf")]
        flash_budget: Option<String>,
        #[arg(long, requires = "elf")]
        ram_budget: Option<String>,
        #[arg(long, requires = "elf")]
        stack_budget: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Also write the JSON report to this file (written whole or not at all).
        #[arg(long, value_name = "FILE")]
        json_output: Option<PathBuf>,
        /// QEMU runs at once (default: number of CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// No progress lines on stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Memory report of any Cortex-M ELF (rustc or arm-none-eabi-gcc).
    Size {
        elf: PathBuf,
        /// Place sections into this board's flash and RAM (capacity and % used).
        #[arg(long)]
        board: Option<String>,
        /// How many of the largest symbols to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// List the boards mcubench can run on.
    Boards,
}

/// An input or usage error: printed as is, exit code 2.
struct InputError(String);

impl<E: std::fmt::Display> From<E> for InputError {
    fn from(e: E) -> Self {
        InputError(e.to_string())
    }
}

fn board(name: &str) -> Result<&'static Board, InputError> {
    Board::find(name)
        .ok_or_else(|| InputError(format!("unknown board `{name}`; known boards: {}", Board::names().join(", "))))
}

fn size_arg(flag: &str, value: &Option<String>) -> Result<Option<Bytes>, InputError> {
    value.as_deref().map(|v| Bytes::parse(v).map_err(|e| InputError(format!("{flag}: {e}")))).transpose()
}

/// Writes through a temporary file and a rename, so a reader never sees half a report.
fn write_atomically(path: &Path, contents: &str) -> Result<(), InputError> {
    let name = path.file_name().ok_or_else(|| InputError(format!("{}: not a file path", path.display())))?;
    let tmp = path.with_file_name(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, contents).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        InputError(format!("{}: cannot write the report: {e}", path.display()))
    })
}

fn run(cli: Cli) -> Result<ExitCode, InputError> {
    match cli.command {
        Command::Boards => {
            for b in mcubench::BOARDS {
                println!(
                    "{:<11} {:<10} {:<26} -machine {} -cpu {}",
                    b.name,
                    b.core.label(),
                    b.rust_target,
                    b.qemu_machine,
                    b.qemu_cpu
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Size { elf, board: board_name, top, format } => {
            let regions = board_name.as_deref().map(board).transpose()?.map(|b| b.regions());
            let image = ElfImage::read(&elf)?;
            let report = MemoryReport::analyze(&image, regions.as_ref().map(|r| &r[..]), top);
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                Format::Table => print!("{}", memory_table(&elf.display().to_string(), &report)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            scenario,
            elf,
            boards,
            profiles,
            timeout,
            flash_budget,
            ram_budget,
            stack_budget,
            format,
            json_output,
            jobs,
            quiet,
        } => {
            let mut scenario = match (scenario, elf) {
                (Some(path), None) => Scenario::load(&path)?,
                (None, Some(elf)) => {
                    let [name] = &boards[..] else {
                        return Err(InputError("--elf runs on exactly one --board".into()));
                    };
                    let budgets = Budgets {
                        flash: size_arg("--flash-budget", &flash_budget)?,
                        ram: size_arg("--ram-budget", &ram_budget)?,
                        stack: size_arg("--stack-budget", &stack_budget)?,
                    };
                    let timeout = match timeout {
                        Some(t) => Timeout::parse(&t).map_err(|e| InputError(format!("--timeout: {e}")))?.0,
                        None => DEFAULT_TIMEOUT,
                    };
                    if !elf.is_file() {
                        return Err(InputError(format!("{}: no such file", elf.display())));
                    }
                    Scenario::for_elf(&elf, board(name)?, budgets, timeout)
                }
                _ => unreachable!("clap enforces exactly one of SCENARIO and --elf"),
            };
            if !boards.is_empty() && matches!(scenario.firmware, mcubench::scenario::Firmware::Cargo { .. }) {
                for name in &boards {
                    if !scenario.boards.iter().any(|b| b.name == name) {
                        return Err(InputError(format!("--board {name}: the scenario has no such board")));
                    }
                }
                scenario.boards.retain(|b| boards.iter().any(|n| n == b.name));
            }
            if !profiles.is_empty() {
                for name in &profiles {
                    if !scenario.profiles.iter().any(|p| &p.name == name) {
                        return Err(InputError(format!("--profile {name}: the scenario has no such profile")));
                    }
                }
                scenario.profiles.retain(|p| profiles.contains(&p.name));
            }
            let mut options = RunOptions { progress: !quiet, ..RunOptions::default() };
            if let Some(j) = jobs {
                options.jobs = j.max(1);
            }
            let report = run_scenario(&scenario, &options);
            if let Some(path) = &json_output {
                write_atomically(path, &report.to_json())?;
            }
            let text = match format {
                Format::Json => report.to_json(),
                Format::Table => report.to_table(),
            };
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
            Ok(match report.status() {
                Status::Pass => ExitCode::SUCCESS,
                Status::RunFailed => ExitCode::from(1),
                Status::BudgetViolated => ExitCode::from(3),
            })
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(InputError(message)) => {
            eprintln!("mcubench: error: {message}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
