//! `mcubench size`: the memory report of any Cortex-M ELF.

use std::path::PathBuf;

use clap::Args;
use mcubench_elf::{ElfImage, MemoryReport};

use super::args::{self, TextFormat};
use super::{Error, Exit};
use crate::config::board::Board;
use crate::report::memory_table;

#[derive(Args)]
pub struct SizeArgs {
    elf: PathBuf,
    /// Place sections into this board's flash and RAM (capacity and % used).
    #[arg(long)]
    board: Option<String>,
    /// Where `--board` may also name a board the scenario defines.
    #[arg(long, value_name = "FILE", requires = "board")]
    scenario: Option<PathBuf>,
    /// How many of the largest symbols to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[arg(long, value_enum, default_value = "table")]
    format: TextFormat,
}

pub fn run(a: SizeArgs) -> Result<Exit, Error> {
    let board: Option<&'static Board> = match (&a.board, &a.scenario) {
        (None, _) => None,
        (Some(name), None) => Some(args::board(name).map_err(Error::Input)?),
        (Some(name), Some(path)) => {
            let scenario = crate::Scenario::load(path).map_err(|e| Error::Input(e.to_string()))?;
            let found = scenario.boards.iter().copied().find(|b| b.name == name.as_str()).or_else(|| Board::find(name));
            Some(found.ok_or_else(|| {
                let user = scenario.boards.iter().filter(|b| b.is_user()).map(|b| b.name);
                let names: Vec<&str> = Board::names().into_iter().chain(user).collect();
                Error::Input(format!("unknown board `{name}`; known boards: {}", names.join(", ")))
            })?)
        }
    };
    let regions = board.map(|b| b.regions());
    let image = ElfImage::read(&a.elf)?;
    let report = MemoryReport::analyze(&image, regions.as_ref().map(|r| &r[..]), a.top);
    match a.format {
        TextFormat::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
        TextFormat::Table => args::print(&memory_table(&a.elf.display().to_string(), &report)),
    }
    // After the report, which shows where the sections are: sizes that leave sections out are
    // not a result.
    if let Some(b) = board {
        crate::analyze::check_fits(&image, b).map_err(|e| Error::Input(format!("{}: {e}", a.elf.display())))?;
    }
    Ok(Exit::Pass)
}
