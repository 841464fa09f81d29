//! JUnit XML for CI servers (GitLab, Jenkins, CircleCI): one `<testsuite>` per board × profile,
//! one `<testcase>` per KAT, plus a `run` case when the run itself did not pass (fault, timeout,
//! no verdict, setup error) and one case per budget. No timestamps or durations: the file is a
//! pure function of the report, like every other format.

use std::fmt::Write as _;

use crate::gate::BudgetStatus;
use crate::judge::protocol::KatResult;
use crate::judge::verdict::Outcome;
use crate::report::RunReport;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters even when escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// One JUnit test case; a failed one carries its element (`failure` or `error`), its `type`
/// (what failed: the KAT, the run's outcome, or `budget`) and the message.
struct Case {
    name: String,
    failure: Option<Failure>,
}

struct Failure {
    element: &'static str,
    kind: &'static str,
    message: String,
}

pub fn to_junit(report: &RunReport) -> String {
    let mut suites = String::new();
    let (mut total, mut failures, mut errors) = (0usize, 0usize, 0usize);
    for cell in &report.cells {
        let mut cases = Vec::new();
        for k in &cell.kats {
            let failure = (k.result == KatResult::Fail).then(|| Failure {
                element: "failure",
                kind: "fail",
                message: format!("{} {}: KAT failed (see the run message: expected vs got)", k.alg, k.op),
            });
            cases.push(Case { name: k.id.clone(), failure });
        }
        if cell.verdict.outcome != Outcome::Pass {
            // A KAT failure is already reported per KAT; anything else is an error of the run.
            let element = if cell.verdict.outcome == Outcome::Fail { "failure" } else { "error" };
            cases.push(Case {
                name: "run".into(),
                failure: Some(Failure {
                    element,
                    kind: cell.verdict.outcome.label(),
                    message: format!("{}: {}", cell.verdict.outcome.label(), cell.verdict.message),
                }),
            });
        }
        for b in &cell.budgets {
            // A crossed budget is a failure of its own kind, whatever the run's outcome was.
            let failure = (b.status != BudgetStatus::Ok).then(|| Failure {
                element: "failure",
                kind: "budget",
                message: b.describe(),
            });
            cases.push(Case { name: format!("budget.{}", b.name()), failure });
        }
        let count =
            |element: &str| cases.iter().filter(|c| c.failure.as_ref().is_some_and(|f| f.element == element)).count();
        let (suite_failures, suite_errors) = (count("failure"), count("error"));
        total += cases.len();
        failures += suite_failures;
        errors += suite_errors;
        let classname = escape(&format!("{}.{}.{}", report.scenario, cell.board, cell.profile));
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{suite_failures}\" errors=\"{suite_errors}\" skipped=\"0\">",
            escape(&format!("{}/{}/{}", report.scenario, cell.board, cell.profile)),
            cases.len()
        );
        for case in cases {
            match case.failure {
                None => {
                    let _ =
                        writeln!(suites, "    <testcase classname=\"{classname}\" name=\"{}\"/>", escape(&case.name));
                }
                Some(Failure { element, kind, message }) => {
                    let _ =
                        writeln!(suites, "    <testcase classname=\"{classname}\" name=\"{}\">", escape(&case.name));
                    let first_line = message.lines().next().unwrap_or_default();
                    let _ = writeln!(
                        suites,
                        "      <{element} message=\"{}\" type=\"{kind}\">{}</{element}>",
                        escape(first_line),
                        escape(&message)
                    );
                    let _ = writeln!(suites, "    </testcase>");
                }
            }
        }
        if !cell.console.is_empty() {
            // The firmware's console, each stream under its name, as CI systems show test output.
            let text: String =
                cell.console.iter().map(|s| format!("[{}]\n{}", s.source, s.text)).collect::<Vec<_>>().join("\n");
            let _ = writeln!(suites, "    <system-out>{}</system-out>", escape(&text));
        }
        let _ = writeln!(suites, "  </testsuite>");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcubench {}\" tests=\"{total}\" failures=\"{failures}\" errors=\"{errors}\">\n{suites}</testsuites>\n",
        escape(&report.scenario)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(escape("a<b>&\"'\u{1}"), "a&lt;b&gt;&amp;&quot;&apos;\u{fffd}");
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use crate::gate::{BudgetCheck, Metric};
    use crate::judge::verdict::Verdict;
    use crate::report::{CellReport, SCHEMA};

    fn one_cell_report(cell: CellReport) -> RunReport {
        RunReport {
            schema: SCHEMA.into(),
            tool_version: "0".into(),
            scenario: "s".into(),
            table: None,
            cells: vec![cell],
        }
    }

    /// A budget crossed in a run that passed is a failure of type `budget`, not of type `pass`.
    #[test]
    fn a_budget_overrun_in_a_passing_run_has_type_budget() {
        let board = crate::Board::find("mps2-an386").expect("built-in board");
        let mut cell = CellReport::unrun(0, board, "speed");
        cell.verdict = Verdict { outcome: Outcome::Pass, message: String::new() };
        cell.budgets.push(BudgetCheck {
            metric: Metric::Flash,
            subject: None,
            limit: 10,
            actual: Some(20),
            status: BudgetStatus::Exceeded,
            hint: None,
        });
        let report = one_cell_report(cell);
        let xml = to_junit(&report);
        assert!(xml.contains("type=\"budget\""), "{xml}");
        assert!(!xml.contains("type=\"pass\""), "{xml}");
        assert!(xml.contains("failures=\"1\" errors=\"0\""), "{xml}");
    }

    /// The firmware's console reaches CI as the suite's `system-out`, each stream named.
    #[test]
    fn the_console_is_the_suites_system_out() {
        let board = crate::Board::find("mps2-an386").expect("built-in board");
        let mut cell = CellReport::unrun(0, board, "speed");
        cell.console.push(crate::report::ConsoleStream {
            source: "uart0".into(),
            text: "self-test <ok>\n".into(),
            dropped_bytes: 0,
        });
        let report = one_cell_report(cell);
        let xml = to_junit(&report);
        assert!(xml.contains("<system-out>[uart0]\nself-test &lt;ok&gt;\n</system-out>"), "{xml}");
    }
}
