//! `mcubench boards`: the boards mcubench can run on (with a scenario, its own boards too), or
//! the `memory.x` of one.

use std::path::PathBuf;

use clap::Args;

use super::{Error, Exit};
use crate::config::board::Board;
use crate::config::scenario::Scenario;

#[derive(Args)]
pub struct BoardsArgs {
    /// Also list the boards this scenario defines.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Print this board's `memory.x` (the linker's MEMORY block mcubench builds cargo firmware
    /// with; C linker scripts can `INCLUDE` it) instead of the list.
    #[arg(long, value_name = "BOARD")]
    memory_x: Option<String>,
}

pub fn run(a: BoardsArgs) -> Result<Exit, Error> {
    let mut boards: Vec<&'static Board> = crate::BOARDS.iter().collect();
    if let Some(path) = &a.scenario {
        let scenario = Scenario::load(path).map_err(|e| Error::Input(e.to_string()))?;
        boards.extend(scenario.boards.iter().filter(|b| b.is_user()));
    }
    if let Some(name) = &a.memory_x {
        let board = boards.iter().find(|b| b.name == name.as_str()).ok_or_else(|| {
            let names: Vec<&str> = boards.iter().map(|b| b.name).collect();
            let hint = if a.scenario.is_none() { "; a scenario's own board needs --scenario FILE" } else { "" };
            Error::Input(format!("--memory-x {name}: no such board; known boards: {}{hint}", names.join(", ")))
        })?;
        print!("{}", board.layout.memory_x());
        return Ok(Exit::Pass);
    }
    let width = boards.iter().map(|b| b.name.len()).max().unwrap_or(0);
    for b in boards {
        println!(
            "{:<width$} {:<10} {:<26} -machine {:<16} -cpu {:<10} FLASH 0x{:08x} {:>5}  RAM 0x{:08x} {:>5}  SysTick {} Hz{}",
            b.name,
            b.core.label(),
            b.rust_target,
            b.qemu_machine,
            b.qemu_cpu,
            b.layout.flash.origin,
            crate::config::board::linker_size(b.layout.flash.length),
            b.layout.ram.origin,
            crate::config::board::linker_size(b.layout.ram.length),
            b.systick_hz,
            if b.is_user() { "  (scenario)" } else { "" }
        );
    }
    println!("\nboard timing profiles (scenario `timing: <name>`; docs/src/guide/boards.md):");
    for p in crate::config::timing::TimingProfile::all() {
        let m = crate::config::timing::CycleModel::resolve(
            Board::find(&p.boards[0]).expect("a profile's boards are built in"),
            Some(p),
            &Default::default(),
        )
        .expect("built-in profiles resolve on their boards");
        let flash = match m.memory.flash.first() {
            Some(f) => {
                format!("flash {} WS/{} B{}", f.wait_states, f.line, if m.memory.prefetch { " +prefetch" } else { "" })
            }
            None => "no wait states".to_string(),
        };
        let cache = |key: &str, c: Option<mcubench_wire::CacheGeometry>| {
            c.map(|c| format!(" {key} {} B {}-way", c.size, c.ways)).unwrap_or_default()
        };
        // Core parameters a profile sets (a calibrated profile's fitted refill, say).
        let params: String = p.model.params.iter().map(|(k, v)| format!(" {k} {v}")).collect();
        println!(
            "{:<12} {:<11} {:>8}  {flash}{}{}{params}  runs on: {}\n             {}",
            p.name,
            p.core.label(),
            m.clock_hz.map(crate::config::timing::clock_text).unwrap_or_default(),
            cache("icache", m.memory.icache),
            cache("dcache", m.memory.dcache),
            p.boards.join(", "),
            p.part
        );
    }
    Ok(Exit::Pass)
}
