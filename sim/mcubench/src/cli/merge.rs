//! `mcubench merge`: join shard reports into one.

use std::path::PathBuf;

use clap::Args;

use super::args::{self, Format};
use super::{Error, Exit};
use crate::report::RunReport;

#[derive(Args)]
pub struct MergeArgs {
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Write the merged report here instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Format of the merged report (JSON can be merged and diffed again).
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
}

pub fn run(a: MergeArgs) -> Result<Exit, Error> {
    let merged = RunReport::merge(args::load_reports(&a.reports)?).map_err(Error::Input)?;
    let text = args::render(&merged, a.format);
    match a.output {
        Some(path) => args::write_atomically(&path, &text)?,
        None => args::print(&text),
    }
    Ok(Exit::Pass)
}
