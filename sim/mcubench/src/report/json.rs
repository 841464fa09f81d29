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
