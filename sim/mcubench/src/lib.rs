//! mcubench: runs Cortex-M firmware under QEMU and reports known-answer-test results, instruction
//! counts and cycle estimates, flash/RAM/stack per build profile, and budget violations.
//!
//! The modules follow the data flow of a run:
//!
//! ```text
//! config ──► build ──► exec ──► judge ──► analyze ──► report ──► gate
//! (scenario, (cargo,   (QEMU,   (protocol, (memory,    (model,     (budgets)
//!  boards,    command)  plugin,  console,  static      formats)
//!  rules)              contain) verdict)   stack)
//! ```
//!
//! - [`config`]: scenario files, boards, units, verdict rules, budgets, KAT vectors.
//! - [`build`]: where a cell's ELF comes from: cargo, a build command over matrix variables, or
//!   a prebuilt file.
//! - [`exec`]: runs an ELF under QEMU (contained or not) with the TCG plugin; one `execute`.
//! - [`judge`]: the firmware's result records, its console, and the run's verdict.
//! - [`analyze`]: what the ELF shows without running it (static stack bound, toolchain, fit).
//! - [`report`]: the report model and its formats (table, JSON, Markdown, JUnit, OpenMetrics).
//! - [`gate`]: budgets and regression limits against the measurements.
//! - [`pipeline`] drives these stages for every cell of a scenario's matrix; [`shard`] picks a
//!   slice of that matrix; [`diff`] compares two reports; [`profile`] runs one cell for a flame
//!   graph; [`error`] says whose fault a failure is.
//!
//! [`cli`] is the command line; the `mcubench` binary only calls [`cli::main`].

pub mod analyze;
pub mod build;
pub mod calibrate;
pub mod cli;
pub mod config;
pub mod diff;
pub mod error;
pub mod exec;
pub mod fuzzing;
pub mod gate;
pub mod judge;
pub mod pipeline;
pub mod profile;
pub mod replay;
pub mod report;
pub mod shard;

pub use config::board::{BOARDS, Board};
pub use config::scenario::Scenario;
pub use error::Error;
pub use pipeline::{RunOptions, run_scenario};
pub use report::{RunReport, Status};
