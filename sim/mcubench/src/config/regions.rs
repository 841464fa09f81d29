//! Function regions as a scenario names them (`regions:`): a function name, or an object that also
//! says how many bytes each call processes and how to split the calls.
//!
//! ```yaml
//! regions:
//!   - crc32                                   # a name: every call, per call and in total
//!   - { name: sha256_update, bytes: 1024 }    # cycles per byte: each call processes 1024 bytes
//!   - { name: crc32_update, split: caller }   # the calls split by calling function
//!   - { name: aes_ctr, bytes: arg2 }          # bytes from r2 at entry: needs QEMU 9.1 or later
//!   - { name: crypto_sign_keypair, as: ml-dsa-65/keygen }   # its entry in the tables
//! ```
//!
//! `bytes` is a constant per call (`1024`, `1 KiB`), or `arg0` .. `arg3`: the first four
//! argument registers (r0 .. r3 under the AAPCS) read at each call's entry. Reading a register
//! needs QEMU plugin API v2 or later: the plugin build for QEMU 9.1 to 10.x (API v3) reads it
//! ([`region_args`] become its `region_arg=` arguments) and fills each call's `bytes=` in its
//! results file (`mcubench_wire::Call::bytes`); on QEMU 7.2 to 8.2 (API v1) such a scenario is
//! a setup error naming the QEMU version (the pipeline checks it once the QEMU is known).
//!
//! `as: <row>/<operation>` places the region in the report's tables as that row and operation,
//! as a KAT id `<row>/<operation>` would be (the profile table's `ml-dsa-65` row, `keygen`
//! column), instead of a row of its own named after the function (operation `call`).

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::config::units::{Bytes, scalar_text};

/// One entry of `regions:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionSpec {
    /// A demangled name or a symbol name as stored in the ELF.
    pub name: String,
    /// Bytes each call processes, for cycles per byte.
    pub bytes: Option<RegionBytes>,
    /// How the report splits the calls.
    pub split: Option<Split>,
    /// Its entry in the tables, `<row>/<operation>` (`as:`).
    pub table_entry: Option<String>,
}

/// How many bytes one call processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionBytes {
    /// The same for every call (`bytes: 1024`).
    PerCall(u64),
    /// The value of argument register r`N` at the call's entry (`bytes: argN`, N = 0..3). Needs
    /// a plugin that reads registers (QEMU 9.1+); a setup error on QEMU 7.2 to 8.2.
    Argument(u8),
}

/// How the report splits a region's calls (`split:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Split {
    /// By calling function: the function that holds each call's return address.
    Caller,
}

impl RegionSpec {
    /// A region given by name alone.
    pub fn named(name: impl Into<String>) -> RegionSpec {
        RegionSpec { name: name.into(), bytes: None, split: None, table_entry: None }
    }

    /// Its table entry's row and operation (`as:`), once [`check`]ed.
    pub fn row_and_operation(&self) -> Option<(&str, &str)> {
        self.table_entry.as_deref()?.split_once('/')
    }
}

impl From<&str> for RegionSpec {
    fn from(name: &str) -> RegionSpec {
        RegionSpec::named(name)
    }
}

impl From<String> for RegionSpec {
    fn from(name: String) -> RegionSpec {
        RegionSpec::named(name)
    }
}

impl fmt::Display for RegionBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionBytes::PerCall(n) => write!(f, "{n}"),
            RegionBytes::Argument(r) => write!(f, "arg{r}"),
        }
    }
}

impl RegionBytes {
    fn parse(text: &str) -> Result<RegionBytes, String> {
        let text = text.trim();
        if let Some(n) = text.strip_prefix("arg") {
            return match n.parse::<u8>() {
                Ok(r) if r <= 3 => Ok(RegionBytes::Argument(r)),
                _ => Err(format!(
                    "`bytes: {text}`: only the register arguments arg0 .. arg3 (r0 .. r3 at entry) can be read"
                )),
            };
        }
        match Bytes::parse(text) {
            Ok(Bytes(0)) => Err("`bytes: 0`: give the bytes each call processes (at least 1)".into()),
            Ok(Bytes(n)) => Ok(RegionBytes::PerCall(n)),
            Err(e) => Err(format!(
                "`bytes: {text}` is neither a byte count (`1024`, `1 KiB`) nor an argument register (`arg0` .. `arg3`): {e}"
            )),
        }
    }
}

fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RegionBytes>, D::Error> {
    let text = scalar_text(d, "bytes per call (`1024`, `1 KiB`) or an argument register (`arg0` .. `arg3`)")?;
    RegionBytes::parse(&text).map(Some).map_err(de::Error::custom)
}

/// The object form, strictly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: String,
    #[serde(default, deserialize_with = "bytes")]
    bytes: Option<RegionBytes>,
    split: Option<Split>,
    #[serde(rename = "as")]
    table_entry: Option<String>,
}

impl<'de> Deserialize<'de> for RegionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Spec;
        impl<'de> Visitor<'de> for Spec {
            type Value = RegionSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a function name, or `{ name: ..., bytes: ..., split: caller, as: <row>/<operation> }`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RegionSpec, E> {
                Ok(RegionSpec::named(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RegionSpec, A::Error> {
                let raw = RawSpec::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(RegionSpec { name: raw.name, bytes: raw.bytes, split: raw.split, table_entry: raw.table_entry })
            }
        }
        d.deserialize_any(Spec)
    }
}

/// The regions whose bytes come from an argument register: (index in `specs`, register), the
/// plugin's `region_arg=` arguments.
pub fn region_args(specs: &[RegionSpec]) -> Vec<(u32, u8)> {
    (0..)
        .zip(specs)
        .filter_map(|(i, s)| match s.bytes {
            Some(RegionBytes::Argument(r)) => Some((i, r)),
            _ => None,
        })
        .collect()
}

/// What a scenario's `regions` may not be: an empty name or a name listed twice, a table entry
/// that is not `<row>/<operation>` or that two regions give.
pub fn check(specs: &[RegionSpec]) -> Result<(), String> {
    for (i, spec) in specs.iter().enumerate() {
        let name = &spec.name;
        if name.trim().is_empty() {
            return Err("regions: an empty function name".into());
        }
        if specs[..i].iter().any(|s| s.name == *name) {
            return Err(format!("regions: `{name}` is listed twice"));
        }
        let Some(entry) = &spec.table_entry else { continue };
        let well_formed = entry
            .split_once('/')
            .is_some_and(|(row, op)| !row.trim().is_empty() && !op.trim().is_empty() && !op.contains('/'));
        if !well_formed {
            return Err(format!(
                "regions: `{name}`: `as: {entry}` is not `<row>/<operation>` (for example `as: ml-dsa-65/keygen`)"
            ));
        }
        if let Some(other) = specs[..i].iter().find(|s| s.table_entry.as_ref() == Some(entry)) {
            return Err(format!(
                "regions: `{name}` and `{}` both give `as: {entry}`; one table entry per region",
                other.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Vec<RegionSpec>, String> {
        serde_yaml_ng::from_str::<Vec<RegionSpec>>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_objects() {
        let specs = parse(
            "[crc32, { name: sha256_update, bytes: 1024 }, { name: \"kat::block\", bytes: 1 KiB, split: caller }, \
             { name: aes_ctr, bytes: arg2 }, { name: f, split: caller }]",
        )
        .unwrap();
        assert_eq!(
            specs,
            [
                RegionSpec::named("crc32"),
                RegionSpec { bytes: Some(RegionBytes::PerCall(1024)), ..RegionSpec::named("sha256_update") },
                RegionSpec {
                    bytes: Some(RegionBytes::PerCall(1024)),
                    split: Some(Split::Caller),
                    ..RegionSpec::named("kat::block")
                },
                RegionSpec { bytes: Some(RegionBytes::Argument(2)), ..RegionSpec::named("aes_ctr") },
                RegionSpec { split: Some(Split::Caller), ..RegionSpec::named("f") },
            ]
        );
        assert_eq!(RegionBytes::Argument(2).to_string(), "arg2");
        assert_eq!(RegionBytes::PerCall(64).to_string(), "64");
    }

    #[test]
    fn bad_entries_say_what_is_expected() {
        for (yaml, expected) in [
            ("[{ name: f, bytes: 0 }]", "`bytes: 0`: give the bytes each call processes"),
            ("[{ name: f, bytes: arg4 }]", "only the register arguments arg0 .. arg3"),
            ("[{ name: f, bytes: argx }]", "only the register arguments arg0 .. arg3"),
            ("[{ name: f, bytes: lots }]", "neither a byte count (`1024`, `1 KiB`) nor an argument register"),
            ("[{ name: f, bytes: -4 }]", "neither a byte count"),
            ("[{ name: f, split: callee }]", "unknown variant `callee`, expected `caller`"),
            ("[{ name: f, byts: 4 }]", "unknown field `byts`, expected one of `name`, `bytes`, `split`, `as`"),
            ("[{ bytes: 4 }]", "missing field `name`"),
            ("[[f]]", "expected a function name, or `{ name: ..., bytes: ..., split: caller, as: <row>/<operation> }`"),
        ] {
            let e = parse(yaml).unwrap_err();
            assert!(e.contains(expected), "{yaml}: {e}");
        }
    }

    #[test]
    fn argument_registers_become_plugin_arguments_and_names_are_checked() {
        let specs =
            parse("[crc32, { name: aes_ctr, bytes: arg2 }, { name: f, bytes: 4 }, { name: g, bytes: arg0 }]").unwrap();
        assert!(check(&specs).is_ok());
        assert_eq!(region_args(&specs), vec![(1, 2), (3, 0)]);
        assert!(check(&parse("[crc32, { name: f, bytes: 64, split: caller }]").unwrap()).is_ok());
        assert!(check(&parse("[crc32, { name: crc32 }]").unwrap()).unwrap_err().contains("`crc32` is listed twice"));
        assert!(check(&parse("[\" \"]").unwrap()).unwrap_err().contains("empty function name"));
    }

    #[test]
    fn table_entries_are_row_and_operation_once_each() {
        let specs = parse("[{ name: kp, as: ml-dsa-65/keygen }, { name: sig, as: ml-dsa-65/sign }, crc32]").unwrap();
        assert!(check(&specs).is_ok());
        assert_eq!(specs[0].row_and_operation(), Some(("ml-dsa-65", "keygen")));
        assert_eq!(specs[2].row_and_operation(), None);
        for (yaml, expected) in [
            ("[{ name: kp, as: keygen }]", "`kp`: `as: keygen` is not `<row>/<operation>`"),
            ("[{ name: kp, as: ml-dsa/65/keygen }]", "is not `<row>/<operation>`"),
            ("[{ name: kp, as: /keygen }]", "is not `<row>/<operation>`"),
            ("[{ name: kp, as: ml-dsa-65/ }]", "is not `<row>/<operation>`"),
            ("[{ name: a, as: x/y }, { name: b, as: x/y }]", "`b` and `a` both give `as: x/y`"),
        ] {
            let e = check(&parse(yaml).unwrap()).unwrap_err();
            assert!(e.contains(expected), "{yaml}: {e}");
        }
    }
}
