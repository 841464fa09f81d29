//! Options and value parsers shared by several subcommands, and the output helpers they use.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::Error;
use crate::config::board::Board;
use crate::config::timing::{CycleModel, ModelSettings, TimingProfile};
use crate::config::units::{Bytes, Timeout};
use crate::report::RunReport;
use crate::shard::Shard;

/// Output formats of commands that print a run report.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Junit,
    /// OpenMetrics text (GitLab's `metrics.txt`, dashboards).
    Openmetrics,
    /// The scenario's declared `table:` (e.g. the secure-boot table) as CSV.
    Csv,
}

/// Output formats of the analysis commands.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    Table,
    Json,
}

/// `--no-contain`, for the commands that run firmware.
#[derive(Args, Clone, Copy)]
pub struct ContainArgs {
    /// Run QEMU without containment, for trusted firmware only: semihosting then reaches
    /// host files and commands. By default every run is contained (file access and host
    /// commands refused and reported; see docs/src/explain/containment.md).
    #[arg(long)]
    pub no_contain: bool,
}

/// `--timing`, for the commands that run one prebuilt ELF (a scenario names its own `timing:`).
#[derive(Args, Clone, Default)]
pub struct TimingArgs {
    /// Board timing profile for --elf (e.g. `stm32f407`): its memory system and clock give the
    /// cycle estimates and time, as a scenario's `timing:` does. `mcubench boards` lists them.
    #[arg(long, requires = "elf", value_name = "PROFILE")]
    pub timing: Option<String>,
}

impl TimingArgs {
    /// The cycle model of `board` with `--timing`'s profile, or with the board's core alone.
    pub fn model(&self, board: &Board) -> Result<CycleModel, Error> {
        let profile = match &self.timing {
            None => None,
            Some(name) => Some(TimingProfile::find(name).ok_or_else(|| {
                Error::Input(format!(
                    "--timing: unknown board timing profile `{name}`; known profiles: {}",
                    TimingProfile::names().join(", ")
                ))
            })?),
        };
        CycleModel::resolve(board, profile, &ModelSettings::default()).map_err(|e| Error::Input(e.to_string()))
    }
}

/// A built-in board by name.
pub fn board(name: &str) -> Result<&'static Board, String> {
    Board::find(name).ok_or_else(|| format!("unknown board `{name}`; known boards: {}", Board::names().join(", ")))
}

/// A size such as `24KiB`.
pub fn bytes(text: &str) -> Result<Bytes, String> {
    Bytes::parse(text)
}

/// A duration such as `20s`.
pub fn duration(text: &str) -> Result<Duration, String> {
    Timeout::parse(text).map(|t| t.0)
}

/// `I/N`.
pub fn shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

/// The report in `format`.
pub fn render(report: &RunReport, format: Format) -> String {
    match format {
        Format::Json => report.to_json(),
        Format::Table => report.to_table(),
        Format::Markdown => crate::report::markdown::to_markdown(report, None),
        Format::Junit => crate::report::junit::to_junit(report),
        Format::Openmetrics => crate::report::openmetrics::to_openmetrics(report),
        // `run` refuses csv for a scenario without a table before any work; a report read back
        // without one says so.
        Format::Csv => crate::report::tables::to_csv(report)
            .unwrap_or_else(|| "# this report's scenario declares no `table:`; csv renders a declared table\n".into()),
    }
}

/// Writes through a temporary file and a rename, so a reader never sees half a report.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), Error> {
    let name = path.file_name().ok_or_else(|| Error::Input(format!("{}: not a file path", path.display())))?;
    let tmp = path.with_file_name(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, contents).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::Input(format!("{}: cannot write the report: {e}", path.display()))
    })
}

/// `$GITHUB_STEP_SUMMARY` collects several steps' output: append instead of replacing.
pub fn append(path: &Path, contents: &str) -> Result<(), Error> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(contents.as_bytes()))
        .map_err(|e| Error::Input(format!("{}: cannot write the summary: {e}", path.display())))
}

pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Reports from files or directories of shard reports.
pub fn load_reports(paths: &[PathBuf]) -> Result<Vec<RunReport>, Error> {
    let mut reports = Vec::new();
    for p in paths {
        reports.extend(crate::diff::load_reports(p)?);
    }
    Ok(reports)
}

/// Checks a scenario's annotation entries against the builds analysed (`per_build`: each build's
/// annotation file and the entries it ignored). An entry that some builds lack is normal across a
/// build matrix (the function was inlined there): a note. One that no analysed build has is a
/// typo or a stale entry, an error, when the whole matrix was analysed; when only part of it was
/// (`--board`, `--profile`, a shard), the other builds may have it, so it is a note too.
pub fn check_annotation_names(
    per_build: &[(Option<&std::path::Path>, &[mcubench_stack::annotations::Ignored])],
    whole_matrix: bool,
) -> Result<(), Error> {
    let unknown = mcubench_stack::annotations::unknown_everywhere(per_build);
    if whole_matrix && !unknown.is_empty() {
        return Err(unknown_annotations(&unknown, per_build.len()));
    }
    let mut seen: Vec<&mcubench_stack::annotations::Ignored> = Vec::new();
    for (_, ignored) in per_build {
        for note in ignored.iter() {
            if unknown.iter().any(|u| u.same_entry(note)) {
                if !seen.iter().any(|s| s.same_entry(note)) {
                    seen.push(note);
                    eprintln!(
                        "mcubench: note: {note}: entry ignored; none of the {} builds analysed here has it, \
                         another board or profile of the scenario may (a run of the whole matrix checks)",
                        per_build.len()
                    );
                }
            } else {
                eprintln!("mcubench: note: {note}: entry ignored for this build (inlined?)");
            }
        }
    }
    Ok(())
}

/// The error for annotation entries that name nothing in any of the `builds` analysed.
pub fn unknown_annotations(unknown: &[mcubench_stack::annotations::Ignored], builds: usize) -> Error {
    let lines: Vec<String> = unknown.iter().map(|u| u.to_string()).collect();
    let scope = if builds == 1 { "this build".to_string() } else { format!("any of the {builds} builds") };
    Error::Input(format!("{}\n(not in {scope}: fix the name or remove the entry)", lines.join("\n")))
}
