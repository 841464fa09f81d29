//! `mcubench stack`: worst-case stack bounds of an ELF or of every cell of a scenario.

use std::path::PathBuf;

use clap::Args;
use mcubench_elf::ElfImage;

use super::args::{self, TextFormat};
use super::{Error, Exit};
use crate::analyze::stack;

#[derive(Args)]
pub struct StackArgs {
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
}

pub fn run(a: StackArgs) -> Result<Exit, Error> {
    let names: Vec<&str> = a.functions.iter().map(String::as_str).collect();
    if stack::is_scenario_path(&a.elf) {
        let whole_matrix = a.board.is_none() && a.profile.is_none();
        let cells = stack::analyze_scenario(
            &a.elf,
            &a.board.into_iter().collect::<Vec<_>>(),
            &a.profile.into_iter().collect::<Vec<_>>(),
            a.annotations.as_deref(),
        )?;
        let per_build: Vec<_> = cells.iter().map(|c| (c.annotations.as_deref(), c.ignored.as_slice())).collect();
        args::check_annotation_names(&per_build, whole_matrix)?;
        match a.format {
            TextFormat::Json => {
                println!("{}", serde_json::to_string_pretty(&stack::cells_json(&cells, &names)).expect("serializable"))
            }
            TextFormat::Table => args::print(&stack::cells_text(&cells, &names)),
        }
        return Ok(Exit::Pass);
    }
    if a.profile.is_some() {
        return Err(Error::Input("--profile needs a scenario file, not an ELF".into()));
    }
    let board_name = a.board.ok_or_else(|| Error::Input(format!("{}: an ELF needs --board", a.elf.display())))?;
    let board = args::board(&board_name).map_err(Error::Input)?;
    let image = ElfImage::read(&a.elf)?;
    let (report, ignored) = stack::analyze(&image, board, a.annotations.as_deref()).map_err(Error::Input)?;
    if !ignored.is_empty() {
        return Err(args::unknown_annotations(&ignored, 1));
    }
    let view = report.view(&names);
    if let Some(missing) = view.not_found.first() {
        return Err(Error::Input(format!(
            "{}: no function `{missing}` (give a symbol or a demangled name without its hash)",
            a.elf.display()
        )));
    }
    match a.format {
        TextFormat::Json => println!("{}", serde_json::to_string_pretty(&view).expect("serializable")),
        TextFormat::Table => args::print(&report.to_text(&names)),
    }
    Ok(Exit::Pass)
}
