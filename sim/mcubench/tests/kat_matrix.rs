//! The bundled KAT firmware on every board × profile of `scenarios/kat.yaml`, built with cargo and
//! run under QEMU. Snapshots in `snapshots/` pin the KAT results, the memory report (sizes per
//! section and region), the stack high-water marks and the instruction counts: any change to the
//! firmware, the toolchain or the runner that moves a number shows up as a snapshot diff.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::Scenario;
use mcubench::judge::verdict::Outcome;
use mcubench::report::CellReport;
use rstest::rstest;
use serde::Serialize;

/// What the snapshot pins: everything deterministic about one board × profile.
#[derive(Serialize)]
struct Pinned<'a> {
    board: &'a str,
    profile: &'a str,
    verdict: &'a str,
    cycle_model: Option<&'a str>,
    kats: Vec<String>,
    stack_high_water: Option<u32>,
    /// Static bound (kind, reset path, main stack with handlers) with scenarios/kat.stack.yaml.
    stack_static: Option<String>,
    flash: u64,
    ram: u64,
    flash_breakdown: &'a mcubench_elf::Breakdown,
    ram_breakdown: &'a mcubench_elf::Breakdown,
    sections: Vec<String>,
    budgets: Vec<String>,
}

fn pinned(cell: &CellReport) -> Pinned<'_> {
    let memory = cell.memory.as_ref().expect("memory report");
    Pinned {
        board: &cell.board,
        profile: &cell.profile,
        verdict: cell.verdict.outcome.label(),
        cycle_model: cell.cycle_model.as_deref(),
        // One line per KAT keeps snapshot diffs readable.
        kats: cell
            .kats
            .iter()
            .map(|k| {
                let cycles = k.cycles.map_or("-".to_string(), |c| c.to_string());
                format!(
                    "{} {:?} insns={} cycles={cycles} ticks={} stack={}",
                    k.id, k.result, k.instructions, k.ticks, k.stack
                )
            })
            .collect(),
        stack_high_water: cell.stack_high_water,
        stack_static: cell.stack_static.as_ref().map(|s| format!("{} reset={:?} msp={:?}", s.kind, s.reset, s.msp)),
        flash: memory.flash.used,
        ram: memory.ram.used,
        flash_breakdown: &memory.flash.breakdown,
        ram_breakdown: &memory.ram.breakdown,
        sections: memory
            .sections
            .iter()
            .map(|s| format!("{} {} B in {}", s.name, s.size, s.region.as_deref().unwrap_or("-")))
            .collect(),
        budgets: cell.budgets.iter().map(|b| b.describe()).collect(),
    }
}

#[rstest]
fn kat_passes_and_matches_snapshot(
    #[values("mps2-an386", "mps2-an385", "mps2-an500", "mps2-an505", "microbit")] board: &str,
    #[values("speed", "balanced", "size")] profile: &str,
) {
    let mut scenario = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == board);
    scenario.profiles.retain(|p| p.name == profile);
    let cell = common::only_cell(common::run(&scenario));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{board}/{profile}: {}", cell.verdict.message);
    assert!(cell.kats.len() >= 50, "every vector ran: {}", cell.kats.len());
    assert!(cell.kats.iter().all(|k| k.instructions > 0), "every operation was counted");
    assert!(cell.budgets_hold(), "{:?}", cell.budgets);
    insta::with_settings!({
        snapshot_path => "../../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_yaml_snapshot!(format!("kat-{board}-{profile}"), pinned(&cell));
    });
}

/// Profiles must show a trade-off: `size` is smaller in flash than `speed` on every board.
#[rstest]
fn size_profile_is_smaller_than_speed(#[values("mps2-an386", "mps2-an385", "mps2-an505", "microbit")] board: &str) {
    let mut scenario = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    scenario.boards.retain(|b| b.name == board);
    scenario.profiles.retain(|p| p.name == "speed" || p.name == "size");
    let report = common::run(&scenario);
    let flash = |profile: &str| {
        report.cells.iter().find(|c| c.profile == profile).and_then(|c| c.flash_bytes()).expect("flash measured")
    };
    assert!(flash("size") < flash("speed"), "{board}: size {} B vs speed {} B", flash("size"), flash("speed"));
}

/// The profile's `cfg` flags reach rustc on every target, including thumbv8m.main, whose dotted
/// triple cargo's `--config` only finds in dotted form: the AES compact backend must shrink flash
/// against the same opt-level without it.
#[rstest]
fn a_profile_cfg_reaches_rustc_on_every_target(
    #[values("mps2-an386", "mps2-an385", "mps2-an505", "microbit")] board: &str,
) {
    let scenario = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    let board = mcubench::Board::find(board).unwrap();
    let size = scenario.profiles.iter().find(|p| p.name == "size").unwrap();
    assert!(!size.cfg.is_empty(), "kat.yaml's size profile sets the compact cfg");
    let without = mcubench::config::scenario::Profile { name: "size-no-cfg".into(), cfg: vec![], ..size.clone() };
    let mcubench::config::scenario::Firmware::Cargo { package_dir, bin, features } = &scenario.firmware else {
        unreachable!()
    };
    let fw = mcubench::build::CargoFirmware { package_dir, bin, features };
    let root = mcubench::build::target_directory(package_dir).unwrap();
    let flash = |p: &mcubench::config::scenario::Profile| {
        let elf = mcubench::build::build(&fw, &root, board, p).unwrap();
        let image = mcubench_elf::ElfImage::read(&elf).unwrap();
        mcubench_elf::MemoryReport::analyze(&image, None, 0).flash.used
    };
    let (with_cfg, without_cfg) = (flash(size), flash(&without));
    assert!(with_cfg < without_cfg, "{}: compact {with_cfg} B vs plain {without_cfg} B", board.name);
}
