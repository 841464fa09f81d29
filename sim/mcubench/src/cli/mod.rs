//! The `mcubench` command line: one module per subcommand, shared options in [`args`], and the
//! exit codes in one place ([`exit`]). The binary is `main` → [`main`].

pub mod args;
mod boards;
mod calibrate;
mod diff;
mod doctor;
pub mod exit;
mod merge;
mod profile;
mod run;
mod size;
mod stack;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use crate::Error;
pub use exit::Exit;

#[derive(Parser)]
#[command(
    name = "mcubench",
    version,
    about = "Run Cortex-M firmware under QEMU: KATs, instruction counts, memory, stack, budgets"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the `run` variant's options costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Build and run a scenario (or one prebuilt ELF) and print the results.
    ///
    /// Usable as a cargo runner: `runner = "mcubench run --board mps2-an386 --elf"` in a firmware's
    /// `.cargo/config.toml` makes `cargo run` print the firmware's results.
    Run(run::RunArgs),
    /// Compare two run reports (files, or directories of shard reports): deltas per board ×
    /// profile, symbols behind flash/RAM changes, regression limits from the scenario.
    Diff(diff::DiffArgs),
    /// Join shard reports (files or directories) into one report in the scenario's order.
    Merge(merge::MergeArgs),
    /// Memory report of any Cortex-M ELF (rustc or arm-none-eabi-gcc).
    Size(size::SizeArgs),
    /// Worst-case stack bounds from the call graph of any Cortex-M ELF, or of every board ×
    /// profile of a scenario (built as `run` does).
    Stack(stack::StackArgs),
    /// Per-function self and inclusive estimated cycles of a whole run, with a folded-stacks file
    /// and a flame graph (SVG).
    Profile(profile::ProfileArgs),
    /// List the boards mcubench can run on (with `--scenario`, the scenario's own boards too),
    /// or print one board's memory.x.
    Boards(boards::BoardsArgs),
    /// Check this machine: QEMU (path, version, plugin API), the TCG plugin, containment, the Arm
    /// GCC and Rust thumb targets; says what to install when something is missing (exit 1 if
    /// `run` cannot work).
    Doctor(doctor::DoctorArgs),
    /// Fit the free parameters of a cycle model (a board timing profile) to cycles measured on a
    /// board: prints the fitted profile as YAML, per-row residuals and the leave-one-out error.
    Calibrate(calibrate::CalibrateArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Size(a) => size::run(a),
        Command::Stack(a) => stack::run(a),
        Command::Profile(a) => profile::run(a),
        Command::Boards(a) => boards::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Calibrate(a) => calibrate::run(a),
    }
}

/// The whole program: parse, run, print an error, exit with its code. Usage errors are clap's
/// (exit 2, like bad input).
pub fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("mcubench: error: {e}");
            e.exit().into()
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_definition_is_consistent() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn exit_codes_are_the_documented_ones() {
        use super::Exit;
        let codes = [Exit::Pass, Exit::RunFailed, Exit::BadInput, Exit::BudgetViolated, Exit::Regression];
        assert_eq!(codes.map(|e| e as u8), [0, 1, 2, 3, 4]);
        assert_eq!(super::Error::Setup("build failed".into()).exit(), Exit::RunFailed);
        assert_eq!(super::Error::Run("timeout".into()).exit(), Exit::RunFailed);
        assert_eq!(super::Error::Input("bad".into()).exit(), Exit::BadInput);
    }
}
