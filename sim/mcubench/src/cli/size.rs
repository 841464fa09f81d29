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
    #[arg(long, value_parser = args::board)]
    board: Option<&'static Board>,
    /// How many of the largest symbols to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[arg(long, value_enum, default_value = "table")]
    format: TextFormat,
}

pub fn run(a: SizeArgs) -> Result<Exit, Error> {
    let regions = a.board.map(|b| b.regions());
    let image = ElfImage::read(&a.elf)?;
    let report = MemoryReport::analyze(&image, regions.as_ref().map(|r| &r[..]), a.top);
    match a.format {
        TextFormat::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
        TextFormat::Table => args::print(&memory_table(&a.elf.display().to_string(), &report)),
    }
    // After the report, which shows where the sections are: sizes that leave sections out are
    // not a result.
    if let Some(b) = a.board {
        crate::analyze::check_fits(&image, b).map_err(|e| Error::Input(format!("{}: {e}", a.elf.display())))?;
    }
    Ok(Exit::Pass)
}
