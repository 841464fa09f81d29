//! The `table:` key of a scenario: which published table the run's report renders (today the
//! secure-boot table), at which clock its time column is given, and which rows and columns it
//! shows. The table is a view of report fields (see `report/tables.rs` and
//! `docs/src/guide/secure-boot.md`); this is only what the user asked for.

use serde::{Deserialize, Serialize};

use crate::config::units::Hertz;

/// The kinds of table a scenario can declare. Throughput (cycles per byte) and profile tables
/// will be further kinds over the same facility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// Per verify algorithm: code size, stack, header and signature size, hash/verify/boot
    /// cycles and boot time (firmware naming convention in `analyze/table.rs`).
    SecureBoot,
}

/// A column of the secure-boot table (`table.columns`), in the order given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Column {
    /// The whole firmware's flash use (every algorithm is in one image).
    FirmwareFlash,
    /// Bytes of the functions the row's boot path reaches through direct calls.
    VerifyCode,
    StackStatic,
    StackMeasured,
    Header,
    Signature,
    PublicKey,
    HashCycles,
    VerifyCycles,
    BootCycles,
    BootTime,
    Kats,
}

impl Column {
    pub const ALL: [Column; 12] = [
        Column::FirmwareFlash,
        Column::VerifyCode,
        Column::StackStatic,
        Column::StackMeasured,
        Column::Header,
        Column::Signature,
        Column::PublicKey,
        Column::HashCycles,
        Column::VerifyCycles,
        Column::BootCycles,
        Column::BootTime,
        Column::Kats,
    ];
}

/// A scenario's `table:`, as the report carries it (so a report renders its table alone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpec {
    pub kind: TableKind,
    /// The clock the time column is given at, Hz. Stated by the user, with 0 wait states (the
    /// cycle model's default); a board timing profile's clock will take its place.
    pub clock_hz: u64,
    /// The row keys to show, in order (`sha256`, `ed25519`, ...); empty: every row the firmware has.
    pub rows: Vec<String>,
    /// The columns to show after board, profile and algorithm; empty: all.
    pub columns: Vec<Column>,
}

impl TableSpec {
    pub fn columns(&self) -> Vec<Column> {
        if self.columns.is_empty() { Column::ALL.to_vec() } else { self.columns.clone() }
    }
}

/// `table:` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTable {
    kind: TableKind,
    clock: Hertz,
    #[serde(default)]
    rows: Vec<String>,
    #[serde(default)]
    columns: Vec<Column>,
}

impl RawTable {
    pub(crate) fn spec(&self) -> Result<TableSpec, String> {
        for (i, r) in self.rows.iter().enumerate() {
            if self.rows[..i].contains(r) {
                return Err(format!("table.rows: `{r}` is listed twice"));
            }
        }
        for (i, c) in self.columns.iter().enumerate() {
            if self.columns[..i].contains(c) {
                return Err(format!(
                    "table.columns: `{}` is listed twice",
                    serde_yaml_ng::to_string(c).unwrap_or_default().trim()
                ));
            }
        }
        Ok(TableSpec {
            kind: self.kind,
            clock_hz: self.clock.0,
            rows: self.rows.clone(),
            columns: self.columns.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::scenario::Scenario;

    fn load(extra: &str) -> Result<Scenario, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.elf"), b"\x7fELF").unwrap();
        let yaml = format!("name: s\nfirmware: {{ elf: a.elf }}\nboards: [mps2-an505]\n{extra}");
        Scenario::from_yaml(&dir.path().join("s.yaml"), &yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_is_parsed_strictly() {
        let s = load("table: { kind: secure-boot, clock: 320 MHz, rows: [ed25519], columns: [boot-time] }\n").unwrap();
        let t = s.table.unwrap();
        assert_eq!((t.clock_hz, t.rows.len(), t.columns.len()), (320_000_000, 1, 1));
        assert!(
            load("table: { kind: throughput, clock: 1 MHz }\n").unwrap_err().contains("unknown variant `throughput`")
        );
        assert!(load("table: { kind: secure-boot }\n").unwrap_err().contains("missing field `clock`"));
        assert!(load("table: { kind: secure-boot, clock: 320 }\n").unwrap_err().contains("give a unit"));
        assert!(
            load("table: { kind: secure-boot, clock: 1 MHz, rows: [a, a] }\n")
                .unwrap_err()
                .contains("`a` is listed twice")
        );
        assert!(
            load("table: { kind: secure-boot, clock: 1 MHz, columns: [boot-ms] }\n")
                .unwrap_err()
                .contains("unknown variant `boot-ms`")
        );
    }

    #[test]
    fn a_time_budget_needs_a_clock_the_boards_or_the_tables() {
        let err = load("budgets: { time: { ed25519/boot: 12 ms } }\n").unwrap_err();
        assert!(err.contains("budgets.time: `ed25519/boot` needs a clock"), "{err}");
        let ok =
            load("budgets: { time: { ed25519/boot: 12 ms } }\ntable: { kind: secure-boot, clock: 320 MHz }\n").unwrap();
        assert_eq!(ok.measure("prebuilt").region_budgets.time["ed25519/boot"].0, 12_000);
        // A board timing profile's clock is enough on its own.
        let ok = load("budgets: { time: { ed25519/boot: 12 ms } }\ntiming: stm32h563\n").unwrap();
        assert_eq!(ok.measure("prebuilt").region_budgets.time["ed25519/boot"].0, 12_000);
    }
}
