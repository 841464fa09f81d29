//! OpenMetrics text for metric dashboards and GitLab's merge-request metrics widget
//! (`artifacts: reports: metrics: metrics.txt`, which compares each `name{labels}` with the
//! target branch). Every figure of the report that has a number becomes a gauge labelled with its
//! scenario, board and profile (and KAT, region or pair of DWT cycle-counter accesses); families are written whole, in a fixed order, and the
//! file ends with `# EOF`. Like every format, a pure function of the report.

use std::fmt::Write as _;

use crate::judge::verdict::Outcome;
use crate::report::RunReport;

/// A label value with `\`, `"` and newlines escaped, as the format requires.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// One gauge family: its samples as (labels, value).
struct Family {
    name: &'static str,
    unit: Option<&'static str>,
    help: &'static str,
    samples: Vec<(String, u64)>,
}

pub fn to_openmetrics(report: &RunReport) -> String {
    let family = |name, unit, help| Family { name, unit, help, samples: Vec::new() };
    let mut passed = family("mcubench_run_passed", None, "1 when the run passed, else 0");
    let mut kats_passed = family("mcubench_kats_passed", None, "KATs that passed");
    let mut kats_failed = family("mcubench_kats_failed", None, "KATs that failed");
    let mut flash = family("mcubench_flash_bytes", Some("bytes"), "flash: code, read-only data, .data image");
    let mut ram = family("mcubench_ram_bytes", Some("bytes"), "static RAM: .data, .bss, .uninit");
    let mut stack = family("mcubench_stack_high_water_bytes", Some("bytes"), "measured stack high-water mark");
    let mut heap = family("mcubench_heap_peak_bytes", Some("bytes"), "whole-run heap peak the firmware reported");
    let mut stack_static =
        family("mcubench_stack_static_bytes", Some("bytes"), "static main-stack bound with nested handlers");
    let mut kat_insns = family("mcubench_kat_instructions", None, "instructions of one KAT operation");
    let mut kat_cycles = family("mcubench_kat_cycles", None, "estimated cycles of one KAT operation");
    let mut kat_stack = family("mcubench_kat_stack_bytes", Some("bytes"), "stack one KAT operation used");
    let mut kat_heap = family("mcubench_kat_heap_bytes", Some("bytes"), "heap one KAT operation took");
    let mut region_calls = family("mcubench_region_calls", None, "completed calls of a function region");
    let mut region_insns = family("mcubench_region_instructions", None, "instructions over all calls of a region");
    let mut region_cycles = family("mcubench_region_cycles", None, "estimated cycles over all calls of a region");
    let mut reads_count =
        family("mcubench_cycle_counter_intervals", None, "times a pair of DWT cycle-counter accesses ran in turn");
    let mut reads_insns =
        family("mcubench_cycle_counter_instructions", None, "instructions over all intervals of a pair of accesses");
    let mut reads_cycles =
        family("mcubench_cycle_counter_cycles", None, "estimated cycles over all intervals of a pair of accesses");

    for cell in &report.cells {
        let labels = format!(
            "scenario=\"{}\",board=\"{}\",profile=\"{}\"",
            escape(&report.scenario),
            escape(&cell.board),
            escape(&cell.profile)
        );
        passed.samples.push((labels.clone(), u64::from(cell.verdict.outcome == Outcome::Pass)));
        let failed = cell.kats.len() - cell.kats_passed();
        kats_passed.samples.push((labels.clone(), cell.kats_passed() as u64));
        kats_failed.samples.push((labels.clone(), failed as u64));
        if let Some(v) = cell.flash_bytes() {
            flash.samples.push((labels.clone(), v));
        }
        if let Some(v) = cell.ram_bytes() {
            ram.samples.push((labels.clone(), v));
        }
        if let Some(v) = cell.stack_high_water {
            stack.samples.push((labels.clone(), u64::from(v)));
        }
        if let Some(v) = cell.heap_peak {
            heap.samples.push((labels.clone(), u64::from(v)));
        }
        if let Some(v) = cell.stack_static.as_ref().and_then(|s| s.msp) {
            stack_static.samples.push((labels.clone(), u64::from(v)));
        }
        for kat in &cell.kats {
            let labels = format!("{labels},kat=\"{}\"", escape(&kat.id));
            kat_insns.samples.push((labels.clone(), kat.instructions));
            if let Some(c) = kat.cycles {
                kat_cycles.samples.push((labels.clone(), c));
            }
            if let Some(h) = kat.heap {
                kat_heap.samples.push((labels.clone(), u64::from(h)));
            }
            kat_stack.samples.push((labels, u64::from(kat.stack)));
        }
        for region in &cell.regions {
            let labels = format!("{labels},region=\"{}\"", escape(&region.name));
            region_calls.samples.push((labels.clone(), region.calls));
            region_insns.samples.push((labels.clone(), region.instructions.total));
            if let Some(c) = &region.cycles {
                region_cycles.samples.push((labels, c.total));
            }
        }
        for pair in cell.cycle_counter.iter().filter(|i| !i.from_name.is_empty()) {
            let labels = format!("{labels},accesses=\"{}\"", escape(&pair.name()));
            reads_count.samples.push((labels.clone(), pair.count));
            reads_insns.samples.push((labels.clone(), pair.instructions.total));
            if cell.cycle_model.is_some() {
                reads_cycles.samples.push((labels, pair.cycles.total));
            }
        }
    }

    let mut out = String::new();
    for f in [
        passed,
        kats_passed,
        kats_failed,
        flash,
        ram,
        stack,
        stack_static,
        heap,
        kat_insns,
        kat_cycles,
        kat_stack,
        kat_heap,
        region_calls,
        region_insns,
        region_cycles,
        reads_count,
        reads_insns,
        reads_cycles,
    ] {
        if f.samples.is_empty() {
            continue;
        }
        writeln!(out, "# TYPE {} gauge", f.name).expect("string");
        if let Some(unit) = f.unit {
            writeln!(out, "# UNIT {} {unit}", f.name).expect("string");
        }
        writeln!(out, "# HELP {} {}", f.name, f.help).expect("string");
        for (labels, value) in &f.samples {
            writeln!(out, "{}{{{labels}}} {value}", f.name).expect("string");
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn an_empty_report_is_just_the_end_marker() {
        let report = RunReport {
            schema: "mcubench-run/1".into(),
            tool_version: "0".into(),
            scenario: "s".into(),
            table: None,
            cells: vec![],
        };
        assert_eq!(to_openmetrics(&report), "# EOF\n");
    }
}
