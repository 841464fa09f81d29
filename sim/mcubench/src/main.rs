//! The `mcubench` command: a thin CLI over the library.
//!
//! Exit codes: 0 every run passed and every budget holds; 1 a run did not pass; 2 bad input or
//! usage (the message names the file and place); 3 every run passed but a budget was crossed;
//! 4 (`diff`) a metric grew past its regression limit.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mcubench::diff::{self, DiffStatus};
use mcubench::report::{RunReport, memory_table};
use mcubench::scenario::{Budgets, Bytes, DEFAULT_TIMEOUT, Regressions, Timeout};
use mcubench::shard::Shard;
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
    Markdown,
    Junit,
    /// OpenMetrics text (GitLab's `metrics.txt`, dashboards).
    Openmetrics,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum TextFormat {
    Table,
    Json,
}

// Parsed once per process: the size of the `run` variant's options costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Build and run a scenario (or one prebuilt ELF) and print the results.
    ///
    /// Usable as a cargo runner: `runner = "mcubench run --board mps2-an386 --elf"` in a firmware's
    /// `.cargo/config.toml` makes `cargo run` print the firmware's results.
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
        /// Run only shard I of N of the board × profile matrix (join shards with `merge`).
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
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
        /// Whole-run heap peak the firmware reports (`heap=` on `end`), e.g. `--heap-budget 4KiB`.
        #[arg(long, requires = "elf")]
        heap_budget: Option<String>,
        /// The host's copy of the KAT vectors for --elf (as `firmware.vectors` in a scenario):
        /// every `kat` record is checked against it, so a forged `result=pass` fails.
        #[arg(long, requires = "elf", value_name = "FILE")]
        vectors: Option<PathBuf>,
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
        /// No progress lines on stderr.
        #[arg(long, short)]
        quiet: bool,
        /// Run QEMU without containment, for trusted firmware only: semihosting then reaches
        /// host files and commands. By default every run is contained (file access and host
        /// commands refused and reported; see README "Untrusted firmware").
        #[arg(long)]
        no_contain: bool,
    },
    /// Compare two run reports (files, or directories of shard reports): deltas per board ×
    /// profile, symbols behind flash/RAM changes, regression limits from the scenario.
    Diff {
        base: PathBuf,
        head: PathBuf,
        /// Scenario whose `regressions` limits apply (none: report deltas, never fail on them).
        #[arg(long)]
        scenario: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Join shard reports (files or directories) into one report in the scenario's order.
    Merge {
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Write the merged report here instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Format of the merged report (JSON can be merged and diffed again).
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
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
        format: TextFormat,
    },
    /// Worst-case stack bounds from the call graph of any Cortex-M ELF, or of every board ×
    /// profile of a scenario (built as `run` does).
    Stack {
        /// An ELF (needs --board), or a scenario file (`.yaml`/`.yml`): one section per board ×
        /// profile, with the scenario's annotation file (`NAME.stack.yaml`) when it has one.
        #[arg(value_name = "ELF|SCENARIO")]
        elf: PathBuf,
        /// The board whose core runs the code (instruction set, FPU, exception frames); for a
        /// scenario, only this board.
        #[arg(long)]
        board: Option<String>,
        /// For a scenario: only this build profile.
        #[arg(long)]
        profile: Option<String>,
        /// Also bound these functions (symbol or demangled name).
        #[arg(long = "function", value_name = "NAME")]
        functions: Vec<String>,
        /// Annotation file (YAML): recursion depths, indirect-call targets, infeasible edges.
        #[arg(long)]
        annotations: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: TextFormat,
    },
    /// Per-function self and inclusive estimated cycles of a whole run, with a folded-stacks file
    /// and a flame graph (SVG).
    Profile {
        /// Scenario YAML file (or use --elf).
        #[arg(required_unless_present = "elf", conflicts_with = "elf")]
        scenario: Option<PathBuf>,
        #[arg(long)]
        elf: Option<PathBuf>,
        /// Board to run on (a scenario's first board by default).
        #[arg(long)]
        board: Option<String>,
        /// Build profile of the scenario (its first by default).
        #[arg(long)]
        profile: Option<String>,
        /// Directory for `<board>-<profile>.folded` and `.svg`.
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Functions listed in the table.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Wall-clock limit for the run.
        #[arg(long, default_value = "60s")]
        timeout: String,
        /// Run QEMU without containment (trusted firmware only; see `run --no-contain`).
        #[arg(long)]
        no_contain: bool,
    },
    /// List the boards mcubench can run on.
    Boards,
}

/// The error for annotation entries that name nothing in any of the `builds` analysed.
fn unknown_annotations(unknown: &[mcubench_stack::annotations::Ignored], builds: usize) -> InputError {
    let lines: Vec<String> = unknown.iter().map(|u| u.to_string()).collect();
    let scope = if builds == 1 { "this build".to_string() } else { format!("any of the {builds} builds") };
    InputError(format!("{}\n(not in {scope}: fix the name or remove the entry)", lines.join("\n")))
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

/// `$GITHUB_STEP_SUMMARY` collects several steps' output: append instead of replacing.
fn append(path: &Path, contents: &str) -> Result<(), InputError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(contents.as_bytes()))
        .map_err(|e| InputError(format!("{}: cannot write the summary: {e}", path.display())))
}

fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

fn render(report: &RunReport, format: Format) -> String {
    match format {
        Format::Json => report.to_json(),
        Format::Table => report.to_table(),
        Format::Markdown => mcubench::markdown::to_markdown(report, None),
        Format::Junit => mcubench::junit::to_junit(report),
        Format::Openmetrics => mcubench::openmetrics::to_openmetrics(report),
    }
}

fn load_all(paths: &[PathBuf]) -> Result<Vec<RunReport>, InputError> {
    let mut reports = Vec::new();
    for p in paths {
        reports.extend(diff::load_reports(p)?);
    }
    Ok(reports)
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
                TextFormat::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                TextFormat::Table => print(&memory_table(&elf.display().to_string(), &report)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Stack { elf, board: board_name, profile, functions, annotations, format } => {
            let names: Vec<&str> = functions.iter().map(String::as_str).collect();
            if mcubench::stack::is_scenario_path(&elf) {
                let cells = mcubench::stack::analyze_scenario(
                    &elf,
                    board_name.as_deref(),
                    profile.as_deref(),
                    annotations.as_deref(),
                )
                .map_err(InputError)?;
                let per_build: Vec<&[_]> = cells.iter().map(|c| c.ignored.as_slice()).collect();
                let unknown = mcubench_stack::annotations::unknown_everywhere(&per_build);
                if !unknown.is_empty() {
                    return Err(unknown_annotations(&unknown, cells.len()));
                }
                // Missing from some builds only: inlined there.
                for note in cells.iter().flat_map(|c| &c.ignored) {
                    eprintln!("mcubench: note: {note}: entry ignored for this build (inlined?)");
                }
                match format {
                    TextFormat::Json => println!(
                        "{}",
                        serde_json::to_string_pretty(&mcubench::stack::cells_json(&cells, &names))
                            .expect("serializable")
                    ),
                    TextFormat::Table => print(&mcubench::stack::cells_text(&cells, &names)),
                }
                return Ok(ExitCode::SUCCESS);
            }
            if profile.is_some() {
                return Err(InputError("--profile needs a scenario file, not an ELF".into()));
            }
            let board_name =
                board_name.ok_or_else(|| InputError(format!("{}: an ELF needs --board", elf.display())))?;
            let board = board(&board_name)?;
            let image = ElfImage::read(&elf)?;
            let (report, ignored) =
                mcubench::stack::analyze(&image, board, annotations.as_deref()).map_err(InputError)?;
            if !ignored.is_empty() {
                return Err(unknown_annotations(&ignored, 1));
            }
            let view = report.view(&names);
            if let Some(missing) = view.not_found.first() {
                return Err(InputError(format!(
                    "{}: no function `{missing}` (give a symbol or a demangled name without its hash)",
                    elf.display()
                )));
            }
            match format {
                TextFormat::Json => println!("{}", serde_json::to_string_pretty(&view).expect("serializable")),
                TextFormat::Table => print(&report.to_text(&names)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Profile { scenario, elf, board: board_name, profile, out, top, timeout, no_contain } => {
            let timeout = Timeout::parse(&timeout).map_err(|e| InputError(format!("--timeout: {e}")))?.0;
            let (elf, board, profile_name) =
                match (scenario, elf) {
                    (None, Some(elf)) => {
                        let name = board_name.ok_or_else(|| InputError("--elf needs --board".into()))?;
                        (elf, board(&name)?, "prebuilt".to_string())
                    }
                    (Some(path), None) => {
                        let s = Scenario::load(&path)?;
                        let board =
                            match &board_name {
                                Some(n) => *s.boards.iter().find(|b| b.name == n).ok_or_else(|| {
                                    InputError(format!("--board {n}: the scenario has no such board"))
                                })?,
                                None => s.boards[0],
                            };
                        let p = match &profile {
                            Some(n) => s.profiles.iter().find(|p| &p.name == n).ok_or_else(|| {
                                InputError(format!("--profile {n}: the scenario has no such profile"))
                            })?,
                            None => &s.profiles[0],
                        };
                        let elf = match &s.firmware {
                            mcubench::scenario::Firmware::Elf { path } => path.clone(),
                            mcubench::scenario::Firmware::Cargo { package_dir, bin, features } => {
                                let root = mcubench::build::target_directory(package_dir)?;
                                let fw = mcubench::build::CargoFirmware { package_dir, bin, features };
                                mcubench::build::build(&fw, &root, board, p)?
                            }
                        };
                        (elf, board, p.name.clone())
                    }
                    _ => unreachable!("clap enforces exactly one of SCENARIO and --elf"),
                };
            let result = mcubench::profile::profile(board, &elf, timeout, !no_contain).map_err(InputError)?;
            std::fs::create_dir_all(&out).map_err(|e| InputError(format!("{}: {e}", out.display())))?;
            let stem = out.join(format!("{}-{profile_name}", board.name));
            let folded = stem.with_extension("folded");
            write_atomically(&folded, &result.folded)?;
            let svg = stem.with_extension("svg");
            let title = format!("{} on {} ({profile_name}): est. cycles", elf.display(), board.name);
            let bytes = result.flame_graph_svg(&title).map_err(InputError)?;
            write_atomically(&svg, &String::from_utf8_lossy(&bytes))?;
            print(&result.table(top));
            println!();
            eprintln!("mcubench: wrote {} and {}", folded.display(), svg.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { reports, output, format } => {
            let merged = RunReport::merge(load_all(&reports)?).map_err(InputError)?;
            let text = render(&merged, format);
            match output {
                Some(path) => write_atomically(&path, &text)?,
                None => print(&text),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff { base, head, scenario, format } => {
            let limits = scenario.as_deref().map(Scenario::load).transpose()?;
            let base_reports = diff::load_reports(&base)?;
            let head_reports = diff::load_reports(&head)?;
            let lookup = |profile: &str| limits.as_ref().map_or(Regressions::default(), |s| s.regressions(profile));
            let d = diff::diff(&base, &base_reports, &head, &head_reports, &lookup)?;
            let text = match format {
                Format::Table => d.to_table(),
                Format::Json => format!("{}\n", serde_json::to_string_pretty(&d).expect("serializable")),
                Format::Markdown => {
                    let merged = RunReport::merge(head_reports).map_err(InputError)?;
                    mcubench::markdown::to_markdown(&merged, Some(&d))
                }
                Format::Junit | Format::Openmetrics => {
                    return Err(InputError("diff prints table, json or markdown".into()));
                }
            };
            print(&text);
            Ok(match d.status {
                DiffStatus::Pass => ExitCode::SUCCESS,
                DiffStatus::RunFailed => ExitCode::from(1),
                DiffStatus::BudgetViolated => ExitCode::from(3),
                DiffStatus::Regression => ExitCode::from(4),
            })
        }
        Command::Run {
            scenario,
            elf,
            boards,
            profiles,
            shard,
            timeout,
            flash_budget,
            ram_budget,
            stack_budget,
            heap_budget,
            vectors,
            format,
            json_output,
            junit_output,
            markdown_output,
            metrics_output,
            jobs,
            quiet,
            no_contain,
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
                        stack_static: None,
                        heap: size_arg("--heap-budget", &heap_budget)?,
                    };
                    let timeout = match timeout {
                        Some(t) => Timeout::parse(&t).map_err(|e| InputError(format!("--timeout: {e}")))?.0,
                        None => DEFAULT_TIMEOUT,
                    };
                    if !elf.is_file() {
                        return Err(InputError(format!("{}: no such file", elf.display())));
                    }
                    let mut scenario = Scenario::for_elf(&elf, board(name)?, budgets, timeout);
                    if let Some(path) = &vectors {
                        scenario.vectors = Some(mcubench::vectors::Vectors::load(path)?);
                    }
                    scenario
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
            // Bad input before any work, so it exits 2 with no report written: an ELF that is not a
            // 32-bit little-endian ARM ELF, an impossible budget (see budget_check.rs).
            if let mcubench::scenario::Firmware::Elf { path } = &scenario.firmware {
                ElfImage::read(path)?;
            }
            for warning in mcubench::budget_check::check(&scenario).map_err(InputError)? {
                eprintln!("mcubench: warning: {warning}");
            }
            // Bars and colours only for a person at a terminal: never in CI logs or pipes.
            let ci = std::env::var_os("CI").is_some();
            let color = !ci && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
            let mut options = RunOptions {
                progress: !quiet,
                progress_bar: !quiet && !ci && std::io::stderr().is_terminal(),
                contain: !no_contain,
                ..RunOptions::default()
            };
            if let Some(j) = jobs {
                options.jobs = j.max(1);
            }
            options.shard = shard
                .as_deref()
                .map(str::parse::<Shard>)
                .transpose()
                .map_err(|e| InputError(format!("--shard: {e}")))?;
            // The scenario's stack annotation file is input too: malformed, it is refused before
            // any work; naming a function no cell has, after the run and before any report.
            let annotations = mcubench_stack::annotations::path_for_scenario(&scenario.source);
            if annotations.is_file() {
                mcubench_stack::annotations::AnnotationFile::load(&annotations)?;
            }
            let report = run_scenario(&scenario, &options);
            if options.shard.is_none() {
                // A shard sees only some builds: a name may live in another shard's.
                let per_build: Vec<&[_]> = report.cells.iter().map(|c| c.annotations_ignored.as_slice()).collect();
                let unknown = mcubench_stack::annotations::unknown_everywhere(&per_build);
                if !unknown.is_empty() {
                    return Err(unknown_annotations(&unknown, report.cells.len()));
                }
            }
            if let Some(path) = &json_output {
                write_atomically(path, &report.to_json())?;
            }
            if let Some(path) = &junit_output {
                write_atomically(path, &mcubench::junit::to_junit(&report))?;
            }
            if let Some(path) = &markdown_output {
                append(path, &mcubench::markdown::to_markdown(&report, None))?;
            }
            if let Some(path) = &metrics_output {
                write_atomically(path, &mcubench::openmetrics::to_openmetrics(&report))?;
            }
            print(&match format {
                Format::Table => report.to_table_colored(color),
                other => render(&report, other),
            });
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
