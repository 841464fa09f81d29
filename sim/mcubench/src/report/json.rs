//! The JSON report: the schema-checked reading and the writing of `mcubench-run/1` documents
//! (documented field by field in the report schema reference of the docs book).

use super::{RunReport, SCHEMA};

impl RunReport {
    /// Reads a report written by [`RunReport::to_json`]; the message says what is wrong.
    pub fn from_json(text: &str) -> Result<RunReport, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "schema `{other}`; this mcubench reads `{SCHEMA}` (use the mcubench that wrote it)"
                ));
            }
            None => return Err("no `schema` field: not an mcubench run report".into()),
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report types serialize");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{BudgetCheck, BudgetStatus, Metric};
    use crate::report::CellReport;

    fn report() -> RunReport {
        let board = crate::Board::find("mps2-an386").expect("built-in board");
        let mut cell = CellReport::unrun(0, board, "speed");
        cell.budgets.push(BudgetCheck {
            metric: Metric::Flash,
            subject: None,
            limit: 10,
            actual: Some(5),
            status: BudgetStatus::Ok,
            hint: None,
        });
        RunReport {
            schema: SCHEMA.into(),
            tool_version: "0.1.0".into(),
            scenario: "s".into(),
            table: None,
            cells: vec![cell],
        }
    }

    /// Fields may be added within `mcubench-run/1` (the schema reference says so): a report
    /// written by a newer mcubench, with fields this one does not know at every level, must
    /// still be read (e.g. a newer main's baseline diffed by an older pull request).
    #[test]
    fn a_report_with_fields_added_at_every_level_is_read() {
        let mut value: serde_json::Value = serde_json::from_str(&report().to_json()).expect("json");
        value["added_top"] = 1.into();
        let cell = &mut value["cells"][0];
        cell["added_cell"] = "x".into();
        cell["verdict"]["added_verdict"] = true.into();
        cell["budgets"][0]["added_budget"] = 2.into();
        let read = RunReport::from_json(&value.to_string()).expect("fields added within the schema are accepted");
        assert_eq!(read.to_json(), report().to_json());
    }

    #[test]
    fn another_schema_is_refused_by_name() {
        let text = report().to_json().replace(SCHEMA, "mcubench-run/2");
        let e = RunReport::from_json(&text).unwrap_err();
        assert!(e.contains("schema `mcubench-run/2`"), "{e}");
    }
}
