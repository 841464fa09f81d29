//! Markdown for `$GITHUB_STEP_SUMMARY` and pull-request comments: one summary line, then only what
//! needs a reader's attention (problems, changes against the baseline), with the full table folded
//! away in `<details>`. Plain CommonMark + GitHub tables; no images, no links to fetch.

use std::fmt::Write as _;

use crate::diff::{Diff, DiffStatus};
use crate::gate::BudgetStatus;
use crate::judge::verdict::Outcome;
use crate::report::RunReport;

/// Text from firmware and ELFs must not break the table (`|`, newlines) or become HTML (`<`).
fn cell(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Inside a code span nothing is HTML; only the span's own delimiter and table pipes matter.
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'").replace('|', "\\|").replace(['\n', '\r'], " "))
}

/// How many changed metrics the comment lists before folding the rest away.
const SHOWN_CHANGES: usize = 15;

pub fn to_markdown(report: &RunReport, diff: Option<&Diff>) -> String {
    let runs = report.cells.len();
    let passed = report.cells.iter().filter(|c| c.verdict.outcome == Outcome::Pass).count();
    let kats: usize = report.cells.iter().map(|c| c.kats.len()).sum();
    let kats_passed: usize = report.cells.iter().map(|c| c.kats_passed()).sum();
    let budgets_hold = report.cells.iter().all(|c| c.budgets_hold());
    let regressions = diff.map_or(0, |d| d.deltas.iter().filter(|d| d.regression.is_some()).count());
    let ok = passed == runs && budgets_hold && regressions == 0;

    let mut out = String::new();
    // Firmware without the result protocol has no KATs: no `0/0 KATs` in its headline.
    let kats_text = if kats == 0 { String::new() } else { format!("{kats_passed}/{kats} KATs · ") };
    let _ = write!(
        out,
        "### {} mcubench `{}`: {passed}/{runs} runs pass · {kats_text}{}",
        if ok { "✅" } else { "❌" },
        report.scenario,
        if budgets_hold { "budgets hold" } else { "budget exceeded" }
    );
    match diff {
        Some(d) => {
            let changed = d.deltas.len();
            let _ = writeln!(
                out,
                " · {} vs base ({changed} of {} metrics changed)\n",
                if regressions == 0 {
                    "no regressions".to_string()
                } else {
                    format!("**{regressions} regression(s)**")
                },
                d.compared
            );
        }
        None => out.push_str("\n\n"),
    }

    let problems: Vec<String> = report
        .cells
        .iter()
        .flat_map(|c| {
            let mut p = Vec::new();
            if c.verdict.outcome != Outcome::Pass {
                p.push(format!(
                    "{} / {}: **{}**: {}",
                    code(&c.board),
                    code(&c.profile),
                    c.verdict.outcome.label(),
                    cell(&c.verdict.message)
                ));
            }
            for b in c.budgets.iter().filter(|b| b.status != BudgetStatus::Ok) {
                p.push(format!("{} / {}: budget: {}", code(&c.board), code(&c.profile), cell(&b.describe())));
            }
            p
        })
        .collect();
    for p in &problems {
        let _ = writeln!(out, "- {p}");
    }
    if !problems.is_empty() {
        out.push('\n');
    }
    // The scenario's declared table (e.g. the secure-boot table), shown in full: it is the point.
    if let Some(table) = crate::report::tables::to_markdown(report) {
        out.push_str(&table);
        out.push('\n');
    }

    if let Some(d) = diff {
        if !d.deltas.is_empty() {
            out.push_str("| board | profile | metric | base | head | change | |\n|---|---|---|--:|--:|--:|---|\n");
            for delta in d.deltas.iter().take(SHOWN_CHANGES) {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:+} ({}) | {} |",
                    cell(&delta.board),
                    cell(&delta.profile),
                    cell(&delta.metric),
                    delta.base,
                    delta.head,
                    delta.change,
                    delta.percent.map_or("new".into(), |p| format!("{p:+.2} %")),
                    delta.regression.as_deref().map_or(String::new(), |r| format!("⚠️ {}", cell(r)))
                );
            }
            if d.deltas.len() > SHOWN_CHANGES {
                let _ = writeln!(out, "\n… and {} smaller change(s) in the full diff.", d.deltas.len() - SHOWN_CHANGES);
            }
            out.push('\n');
        }
        if !d.symbols.is_empty() {
            out.push_str("<details><summary>Symbols behind the largest flash/RAM changes</summary>\n\n");
            out.push_str("| board | profile | symbol | base B | head B |\n|---|---|---|--:|--:|\n");
            for s in &d.symbols {
                let size = |v: Option<u64>| v.map_or("–".into(), |v| v.to_string());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    cell(&s.board),
                    cell(&s.profile),
                    code(&s.symbol),
                    size(s.base),
                    size(s.head)
                );
            }
            out.push_str("\n</details>\n\n");
        }
        if d.status == DiffStatus::Pass && d.deltas.is_empty() {
            out.push_str("Nothing changed against the baseline.\n\n");
        }
    }

    let _ = writeln!(out, "<details><summary>All results ({runs} runs)</summary>\n");
    // A heap column only when some firmware reported its heap: other summaries stay as they were.
    let heap = report.cells.iter().any(|c| c.heap_peak.is_some());
    out.push_str("| board | core | profile | verdict | KATs | flash B | RAM B | stack B |");
    out.push_str(if heap { " heap B | budget |\n" } else { " budget |\n" });
    out.push_str(if heap {
        "|---|---|---|---|--:|--:|--:|--:|--:|---|\n"
    } else {
        "|---|---|---|---|--:|--:|--:|--:|---|\n"
    });
    for c in &report.cells {
        let opt = |v: Option<u64>| v.map_or("–".to_string(), |v| v.to_string());
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {}/{} | {} | {} | {} |",
            cell(&c.board),
            c.core.label(),
            cell(&c.profile),
            c.verdict.outcome.label(),
            c.kats_passed(),
            c.kats.len(),
            opt(c.flash_bytes()),
            opt(c.ram_bytes()),
            opt(c.stack_high_water.map(u64::from)),
        );
        if heap {
            let _ = write!(out, " {} |", opt(c.heap_peak.map(u64::from)));
        }
        let budget = if c.budgets.is_empty() {
            "–"
        } else if c.budgets_hold() {
            "ok"
        } else {
            "exceeded"
        };
        let _ = writeln!(out, " {budget} |");
    }
    out.push_str(&spans(report));
    // Every cell's cycle model with its effective parameters, and the estimate at its clock.
    let models: Vec<&crate::report::CellReport> = report.cells.iter().filter(|c| c.cycle_model.is_some()).collect();
    if !models.is_empty() {
        out.push_str("\nEstimated cycles (model and its effective parameters):\n\n");
        for c in models {
            let total = match (c.cycles_total, c.time_total_us, c.clock_hz) {
                (Some(n), Some(t), Some(hz)) => format!(
                    "{n} est. cycles, {} at {}; ",
                    crate::report::format_time(t),
                    crate::config::timing::clock_text(hz)
                ),
                (Some(n), _, _) => format!("{n} est. cycles; "),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "- {} / {}: {total}{} ({})",
                code(&c.board),
                code(&c.profile),
                cell(c.cycle_model.as_deref().unwrap_or_default()),
                cell(&crate::report::params_text(c))
            );
        }
    }
    out.push_str("\n</details>\n");
    out
}

/// Each cell's function regions and pairs of DWT cycle-counter accesses at their most expensive
/// call or interval: what budgets bound and `mcubench diff` compares.
fn spans(report: &RunReport) -> String {
    let mut rows = String::new();
    for c in &report.cells {
        let time = |cycles: Option<u64>| {
            crate::report::time_us(cycles, c.clock_hz).map_or("–".to_string(), crate::report::format_time)
        };
        let cycles = |v: Option<u64>| v.map_or("–".to_string(), |v| v.to_string());
        let mut row = |what: String, times: u64, insns: u64, est: Option<u64>| {
            let _ = writeln!(
                rows,
                "| {} | {} | {what} | {times} | {insns} | {} | {} |",
                cell(&c.board),
                cell(&c.profile),
                cycles(est),
                time(est)
            );
        };
        for r in c.regions.iter().filter(|r| r.calls > 0) {
            row(format!("region {}", code(&r.name)), r.calls, r.instructions.max, r.cycles.map(|c| c.max));
        }
        for i in c.cycle_counter.iter().filter(|i| !i.from_name.is_empty()) {
            let est = c.cycle_model.as_ref().map(|_| i.cycles.max);
            row(format!("DWT {}", code(&i.name())), i.count, i.instructions.max, est);
        }
    }
    if rows.is_empty() {
        return rows;
    }
    format!(
        "\nFunction regions and pairs of DWT cycle-counter accesses (the most expensive call or interval):\n\n\
         | board | profile | what | times | insns | est. cycles | time |\n|---|---|---|--:|--:|--:|--:|\n{rows}"
    )
}
