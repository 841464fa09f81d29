//! The validation table (`docs/src/explain/validation/rows.csv`: published real-board cycle counts
//! of public code beside our estimates) is consistent, and the book page's tables are generated
//! from it.
//!
//! Checks every row (set, core, positive published figure, error columns equal to
//! `(estimate - published) / published` in percent), recomputes the per-core summary (median and
//! maximum |error|, for the baseline model and the current one) and the per-row table, and
//! compares them with the blocks between the `<!-- validation-…:start -->` and `…:end -->`
//! markers of `docs/src/explain/validation.md`. After re-measuring the rows (see that page),
//! regenerate the blocks with:
//!
//! ```sh
//! MCUBENCH_UPDATE_VALIDATION=1 cargo test -p mcubench-timing --test validation
//! ```
//!
//! Needs no tools: it reads two files of the repository.

use std::collections::BTreeMap;
use std::path::PathBuf;

const HEADER: [&str; 15] = [
    "id",
    "set",
    "core",
    "ws",
    "code",
    "published_cycles",
    "instructions",
    "baseline_cycles",
    "baseline_error_pct",
    "estimated_cycles",
    "error_pct",
    "model",
    "source",
    "file",
    "conditions",
];
const SETS: [&str; 2] = ["fit", "held-back"];
/// What was measured: hand-written assembly, assembly kernels with C around them, compiled C.
const CODES: [&str; 3] = ["asm", "asm+C", "C"];
const CORES: [&str; 6] = ["cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m33", "cortex-m7"];
const UPDATE: &str = "MCUBENCH_UPDATE_VALIDATION=1 cargo test -p mcubench-timing --test validation";

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/explain")
}

/// One CSV record per line (RFC 4180 quoting: fields in double quotes may hold commas and `""`);
/// the rows file has no line breaks inside fields.
fn parse_line(line: &str, lineno: usize) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    assert!(!quoted, "rows.csv line {lineno}: unterminated quoted field");
    fields.push(field);
    fields
}

struct Row {
    id: String,
    set: String,
    core: String,
    ws: String,
    code: String,
    published: u64,
    instructions: Option<u64>,
    baseline: Option<(u64, f64)>,
    current: Option<(u64, f64)>,
}

fn number(text: &str, what: &str, lineno: usize) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    Some(text.parse().unwrap_or_else(|_| panic!("rows.csv line {lineno}: {what} `{text}` is not a whole number")))
}

/// The estimate and its error column, which must equal the error recomputed from the figures.
fn estimate(cycles: &str, error: &str, published: u64, what: &str, lineno: usize) -> Option<(u64, f64)> {
    let cycles = number(cycles, what, lineno)?;
    let expect = (cycles as f64 - published as f64) / published as f64 * 100.0;
    assert_eq!(
        error,
        format!("{expect:.2}"),
        "rows.csv line {lineno}: the {what} error column does not match (estimate {cycles}, published {published})"
    );
    Some((cycles, expect))
}

fn rows() -> Vec<Row> {
    let path = docs().join("validation/rows.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().expect("rows.csv is empty");
    assert_eq!(parse_line(header, 1), HEADER, "rows.csv: header");
    let mut out = Vec::new();
    for (i, line) in lines {
        let lineno = i + 1;
        let f = parse_line(line, lineno);
        assert_eq!(f.len(), HEADER.len(), "rows.csv line {lineno}: {} fields, expected {}", f.len(), HEADER.len());
        assert!(SETS.contains(&f[1].as_str()), "rows.csv line {lineno}: set `{}` is not one of {SETS:?}", f[1]);
        assert!(CORES.contains(&f[2].as_str()), "rows.csv line {lineno}: core `{}` is not one of {CORES:?}", f[2]);
        assert!(["0", "1", "?"].contains(&f[3].as_str()), "rows.csv line {lineno}: ws `{}`", f[3]);
        assert!(CODES.contains(&f[4].as_str()), "rows.csv line {lineno}: code `{}` is not one of {CODES:?}", f[4]);
        let published = number(&f[5], "published_cycles", lineno).expect("published_cycles is required");
        assert!(published > 0, "rows.csv line {lineno}: published_cycles is 0");
        for (k, name) in [(12, "source"), (13, "file"), (14, "conditions")] {
            assert!(
                !f[k].is_empty(),
                "rows.csv line {lineno}: {name} is empty: every row names where its figure came from"
            );
        }
        assert!(f[12].contains('@'), "rows.csv line {lineno}: source `{}` is not repository@commit", f[12]);
        out.push(Row {
            id: f[0].clone(),
            set: f[1].clone(),
            core: f[2].clone(),
            ws: f[3].clone(),
            code: f[4].clone(),
            published,
            instructions: number(&f[6], "instructions", lineno),
            baseline: estimate(&f[7], &f[8], published, "baseline", lineno),
            current: estimate(&f[9], &f[10], published, "current", lineno),
        });
    }
    let mut ids: Vec<&str> = out.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "rows.csv: an id appears twice");
    out
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// `median / max` of |error| over the rows that have an estimate, or `-`.
fn stats(errors: impl Iterator<Item = f64>) -> String {
    let mut abs: Vec<f64> = errors.map(f64::abs).collect();
    if abs.is_empty() {
        return "-".into();
    }
    abs.sort_by(f64::total_cmp);
    format!("{:.2} / {:.2}", median(&abs), abs[abs.len() - 1])
}

/// One line per core and set over all its rows, then, where they differ from it, the same rows at
/// 0 WS only and per kind of code.
fn summary(rows: &[Row]) -> String {
    let mut groups: BTreeMap<(usize, &str), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        let core = CORES.iter().position(|c| *c == r.core).expect("checked");
        groups.entry((core, r.set.as_str())).or_default().push(r);
    }
    let mut s = String::from(
        "| core | set | rows | baseline median / max \\|error\\| % | current median / max \\|error\\| % |\n|---|---|---|---|---|\n",
    );
    let mut line = |core: usize, label: &str, rs: &[&Row]| {
        s += &format!(
            "| {} | {label} | {} | {} | {} |\n",
            CORES[core],
            rs.len(),
            stats(rs.iter().filter_map(|r| r.baseline.map(|b| b.1))),
            stats(rs.iter().filter_map(|r| r.current.map(|c| c.1))),
        );
    };
    for ((core, set), rs) in groups {
        line(core, &format!("**{set}**"), &rs);
        let ws0: Vec<&Row> = rs.iter().copied().filter(|r| r.ws == "0").collect();
        if ws0.len() != rs.len() && !ws0.is_empty() {
            line(core, &format!("{set}, 0 WS"), &ws0);
        }
        for code in CODES {
            let part: Vec<&Row> = ws0.iter().copied().filter(|r| r.code == code).collect();
            if !part.is_empty() && part.len() != ws0.len() {
                line(core, &format!("{set}, 0 WS, {code}"), &part);
            }
        }
    }
    s
}

fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| row | set | WS | code | published | instructions | baseline | error % | current | error % |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let est = |v: Option<(u64, f64)>| {
        v.map_or(("-".to_string(), "-".to_string()), |(c, e)| (c.to_string(), format!("{e:+.2}")))
    };
    for r in rows {
        let (b, be) = est(r.baseline);
        let (c, ce) = est(r.current);
        s += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {b} | {be} | {c} | {ce} |\n",
            r.id,
            r.set,
            r.ws,
            r.code,
            r.published,
            opt(r.instructions)
        );
    }
    s
}

/// Replaces (with the update variable set) or checks the block between the named markers.
fn block(page: &mut String, name: &str, want: &str) -> bool {
    let start = format!("<!-- validation-{name}:start -->\n");
    let end = format!("<!-- validation-{name}:end -->");
    let a = page.find(&start).unwrap_or_else(|| panic!("validation.md: no `{}` marker", start.trim())) + start.len();
    let b = a + page[a..].find(&end).unwrap_or_else(|| panic!("validation.md: no `{end}` marker"));
    if &page[a..b] == want {
        return true;
    }
    page.replace_range(a..b, want);
    false
}

#[test]
fn validation_rows_and_book_tables_agree() {
    let rows = rows();
    assert!(!rows.is_empty(), "rows.csv has no rows");
    let path = docs().join("validation.md");
    let mut page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let summary_ok = block(&mut page, "summary", &summary(&rows));
    let table_ok = block(&mut page, "rows", &table(&rows));
    if summary_ok && table_ok {
        return;
    }
    if std::env::var_os("MCUBENCH_UPDATE_VALIDATION").is_some() {
        std::fs::write(&path, page).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    } else {
        panic!("docs/src/explain/validation.md: its tables are not those of rows.csv; regenerate them with `{UPDATE}`");
    }
}

#[test]
fn csv_fields_in_quotes_may_hold_commas_and_quotes() {
    assert_eq!(parse_line(r#"a,"b, c","say ""hi""",,d"#, 1), ["a", "b, c", r#"say "hi""#, "", "d"]);
}

#[test]
fn median_of_even_and_odd_counts() {
    assert_eq!(median(&[1.0, 2.0, 3.0]), 2.0);
    assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), 2.5);
    assert_eq!(stats([-3.0, 1.0, 2.0].into_iter()), "2.00 / 3.00");
}
