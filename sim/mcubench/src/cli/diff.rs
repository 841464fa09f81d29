//! `mcubench diff`: compare two run reports.

use std::path::PathBuf;

use clap::Args;

use super::args::{self, Format};
use super::{Error, Exit};
use crate::config::scenario::{Regressions, Scenario};
use crate::report::RunReport;

#[derive(Args)]
pub struct DiffArgs {
    base: PathBuf,
    head: PathBuf,
    /// Scenario whose `regressions` limits apply (none: report deltas, never fail on them).
    #[arg(long)]
    scenario: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

pub fn run(a: DiffArgs) -> Result<Exit, Error> {
    let limits = a.scenario.as_deref().map(Scenario::load).transpose()?;
    let base_reports = crate::diff::load_reports(&a.base)?;
    let head_reports = crate::diff::load_reports(&a.head)?;
    let lookup = |profile: &str| limits.as_ref().map_or(Regressions::default(), |s| s.regressions(profile));
    let d = crate::diff::diff(&a.base, &base_reports, &a.head, &head_reports, &lookup)?;
    let text = match a.format {
        Format::Table => d.to_table(),
        Format::Json => format!("{}\n", serde_json::to_string_pretty(&d).expect("serializable")),
        Format::Markdown => {
            let merged = RunReport::merge(head_reports).map_err(Error::Input)?;
            crate::report::markdown::to_markdown(&merged, Some(&d))
        }
        Format::Junit | Format::Openmetrics | Format::Csv => {
            return Err(Error::Input("diff prints table, json or markdown".into()));
        }
    };
    args::print(&text);
    Ok(d.status.into())
}
