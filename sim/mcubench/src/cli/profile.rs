//! `mcubench profile`: per-function estimated cycles of a whole run, folded stacks, flame graph.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::args::{self, ContainArgs, TimingArgs};
use super::{Error, Exit};
use crate::build::ElfSource;
use crate::config::rules::ExitRule;
use crate::config::scenario::{CycleCounter, Measure, PREBUILT_PROFILE, Scenario};

#[derive(Args)]
pub struct ProfileArgs {
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
    /// Wall-clock limit for the run, e.g. `20s` (default: the scenario's `timeout`, or 60 s with
    /// --elf). At the limit the profile of the part that ran is printed, marked partial, and the
    /// exit code is 1.
    #[arg(long, value_parser = args::duration)]
    timeout: Option<Duration>,
    /// End the run at the first branch to itself or idle loop outside every exception handler
    /// (firmware that ends in `while (1) {}` or `while (1) { __WFI(); }`), as a scenario's
    /// `verdict: { exit: loop }` does.
    #[arg(long)]
    loop_end: bool,
    /// What the firmware's loads of the DWT cycle counter read (default: the scenario's
    /// `cycle-counter`, else `zero`): `estimated` makes them read the estimated cycles.
    #[arg(long, value_enum, value_name = "READS")]
    cycle_counter: Option<CycleCounter>,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    contain: ContainArgs,
}

/// The wall-clock limit of `profile --elf` without `--timeout`.
pub const DEFAULT_ELF_TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(a: ProfileArgs) -> Result<Exit, Error> {
    let (elf, board, profile_name, timeout, measure, loop_end, counter) = match (&a.scenario, &a.elf) {
        (None, Some(elf)) => {
            let name = a.board.as_deref().ok_or_else(|| Error::Input("--elf needs --board".into()))?;
            let board = args::board(name).map_err(Error::Input)?;
            let mut measure = Measure::default();
            if a.timing.timing.is_some() {
                measure.models.insert(board.name.to_string(), a.timing.model(board)?);
            }
            let timeout = a.timeout.unwrap_or(DEFAULT_ELF_TIMEOUT);
            let counter = a.cycle_counter.unwrap_or_default();
            (elf.clone(), board, PREBUILT_PROFILE.to_string(), timeout, measure, a.loop_end, counter)
        }
        (Some(path), None) => {
            let mut s = Scenario::load(path)?;
            let boards: Vec<String> = a.board.iter().cloned().collect();
            let profiles: Vec<String> = a.profile.iter().cloned().collect();
            s.restrict(&boards, &profiles).map_err(Error::Input)?;
            let (board, profile) = (s.boards[0], &s.profiles[0]);
            let elf = ElfSource::new(&s.firmware)?.elf(board, profile)?;
            // The cell's cycle model: the scenario's `timing:` and `model:` with the profile's.
            let measure = s.measure(&profile.name);
            let loop_end = a.loop_end || s.verdict.as_ref().is_some_and(|r| r.exit == ExitRule::Loop);
            let counter = a.cycle_counter.unwrap_or(s.cycle_counter);
            (elf, board, profile.name.clone(), a.timeout.unwrap_or(s.timeout), measure, loop_end, counter)
        }
        _ => unreachable!("clap enforces exactly one of SCENARIO and --elf"),
    };
    let result = crate::profile::profile(board, &elf, timeout, !a.contain.no_contain, &measure, loop_end, counter)?;
    std::fs::create_dir_all(&a.out).map_err(|e| Error::Input(format!("{}: {e}", a.out.display())))?;
    let stem = a.out.join(format!("{}-{profile_name}", board.name));
    let folded = stem.with_extension("folded");
    args::write_atomically(&folded, &result.folded)?;
    let svg = stem.with_extension("svg");
    let mut title = format!("{} on {} ({profile_name}): est. cycles", elf.display(), board.name);
    if let Some(note) = result.partial_note() {
        title.push_str(&format!(" ({note})"));
    }
    let bytes = result.flame_graph_svg(&title).map_err(Error::Setup)?;
    args::write_atomically(&svg, &String::from_utf8_lossy(&bytes))?;
    args::print(&result.table(a.top));
    println!();
    eprintln!("mcubench: wrote {} and {}", folded.display(), svg.display());
    if let Some(note) = result.partial_note() {
        // The run did not end: the profile is of the part that ran.
        eprintln!("mcubench: {note}");
        return Ok(Exit::RunFailed);
    }
    Ok(Exit::Pass)
}
