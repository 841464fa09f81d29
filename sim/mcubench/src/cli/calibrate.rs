//! `mcubench calibrate`: fit a board timing profile's free parameters to cycles measured on a
//! board (the library's [`crate::calibrate`] does the work; format: docs/src/reference/calibrate.md).

use std::path::PathBuf;

use clap::Args;

use super::{Error, Exit};
use crate::RunOptions;
use crate::calibrate::{Calibration, Pricing, calibrate};

#[derive(Args)]
pub struct CalibrateArgs {
    /// The measured rows: a YAML file (`.yaml`/`.yml`: `timing`, `model`, `free`, `rows`) or a
    /// CSV file (header `source,board,profile,measure,cycles`).
    #[arg(value_name = "ROWS")]
    rows: PathBuf,
    /// The board timing profile to fit (replaces the file's `timing:`).
    #[arg(long, value_name = "PROFILE")]
    timing: Option<String>,
    /// The parameters to fit, comma-separated: branch-refill, flash.wait-states, divide,
    /// m7-mispredict, m7-history (default: branch-refill, plus flash.wait-states when the model
    /// has flash).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    free: Option<Vec<String>>,
    /// QEMU processes (and trace replays) at once.
    #[arg(long, short, value_name = "N")]
    jobs: Option<usize>,
    /// Run every cell under QEMU once per parameter set instead of once with its run trace
    /// (slow; the same figures: for checking the replay and for benchmarks).
    #[arg(long)]
    live: bool,
    /// Print the wall time of the calibration on stderr.
    #[arg(long)]
    time: bool,
}

pub fn run(a: CalibrateArgs) -> Result<Exit, Error> {
    let c = Calibration::load(&a.rows, a.timing.as_deref(), a.free.as_deref())?;
    let mut options = RunOptions::default();
    if let Some(j) = a.jobs {
        options.jobs = j.max(1);
    }
    let pricing = if a.live { Pricing::Live } else { Pricing::Replay };
    let started = std::time::Instant::now();
    let fitted = calibrate(&c, options, pricing)?;
    print!("{}", fitted.render());
    if a.time {
        // Host time goes to stderr only: the report stays byte-identical between runs.
        eprintln!(
            "mcubench calibrate: {:.1} s wall ({} pricing, {} QEMU runs, {} parameter sets)",
            started.elapsed().as_secs_f64(),
            if a.live { "live" } else { "trace replay" },
            fitted.qemu_runs,
            fitted.evaluations
        );
    }
    Ok(Exit::Pass)
}
