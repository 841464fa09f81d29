//! The host's own copy of the KAT vectors: a firmware's `kat` records are checked against it, so
//! a firmware cannot pass by claiming `result=pass` with a wrong output, by reporting a KAT the
//! vectors do not have, or by leaving vectors out.
//!
//! The files are those the firmware's build script reads (`firmware/kat/vectors/*.txt`): one
//! vector per line, fields separated by single spaces, `#` starts a comment line:
//!
//! ```text
//! <id> <alg> [<op>] <key>=<hex> ... out=<hex>
//! ```
//!
//! `<op>` (e.g. `encrypt`) is optional; the other `key=value` fields are inputs the host does not
//! need, but they must be well-formed hex (`<hex>*<n>` repeats the bytes `n` times). Only `out`,
//! the expected output, is compared. A scenario names a file or a directory
//! (`firmware: { vectors: ... }`); a directory means every `*.txt` file in it, in name order.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::judge::protocol::{KatResult, Transcript};

/// Longest expanded `out` value accepted (the protocol's records carry at most 200 bytes).
pub const MAX_OUT_BYTES: usize = 4096;

/// One expected answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector {
    pub id: String,
    pub alg: String,
    pub op: Option<String>,
    /// Expected output, lowercase hex (repetitions expanded).
    pub out: String,
    /// `file:line` it came from.
    pub place: String,
}

/// Every vector of a scenario, by id, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vectors {
    /// The file or directory the scenario named.
    pub source: PathBuf,
    pub vectors: Vec<Vector>,
    index: BTreeMap<String, usize>,
}

/// Why a vector file could not be read; names the file and, where there is one, the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct VectorError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for VectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b))
}

/// `<hex>` or `<hex>*<n>`, expanded, as lowercase hex; `None` if malformed or too long.
fn expand_hex(value: &str) -> Result<String, String> {
    let (hex, times) = match value.split_once('*') {
        Some((h, n)) => {
            let n: usize = n.parse().map_err(|_| format!("`{value}`: `*{n}` is not a repeat count"))?;
            (h, n)
        }
        None => (value, 1),
    };
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!("`{value}` is not lowercase hex bytes"));
    }
    match (hex.len() / 2).checked_mul(times) {
        Some(n) if n <= MAX_OUT_BYTES => Ok(hex.repeat(times)),
        _ => Err(format!("`{value}` is longer than {MAX_OUT_BYTES} bytes")),
    }
}

impl Vectors {
    /// Reads a vector file, or every `*.txt` file of a directory.
    pub fn load(path: &Path) -> Result<Vectors, VectorError> {
        let err = |message: String| VectorError { path: path.to_owned(), line: None, message };
        let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read the KAT vectors: {e}")))?;
        let files = if meta.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| err(format!("cannot list the KAT vector directory: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "txt") && p.is_file())
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(err("the directory holds no `*.txt` vector files".into()));
            }
            files
        } else {
            vec![path.to_owned()]
        };
        let mut vectors = Vectors { source: path.to_owned(), vectors: Vec::new(), index: BTreeMap::new() };
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| VectorError {
                path: file.clone(),
                line: None,
                message: format!("cannot read the KAT vectors: {e}"),
            })?;
            vectors.add_text(&file, &text)?;
        }
        if vectors.vectors.is_empty() {
            return Err(err("no vectors: every line is empty or a comment".into()));
        }
        Ok(vectors)
    }

    /// Vectors from text; `path` names the file in errors and places.
    pub fn parse(path: &Path, text: &str) -> Result<Vectors, VectorError> {
        let mut v = Vectors { source: path.to_owned(), vectors: Vec::new(), index: BTreeMap::new() };
        v.add_text(path, text)?;
        Ok(v)
    }

    fn add_text(&mut self, path: &Path, text: &str) -> Result<(), VectorError> {
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |message: String| VectorError { path: path.to_owned(), line: Some(line), message };
            let l = raw.strip_suffix('\r').unwrap_or(raw);
            if l.trim().is_empty() || l.starts_with('#') {
                continue;
            }
            let mut v = parse_line(l).map_err(err)?;
            v.place = format!("{name}:{line}");
            if let Some(&first) = self.index.get(&v.id) {
                return Err(err(format!(
                    "vector `{}` is defined twice (first at {})",
                    v.id, self.vectors[first].place
                )));
            }
            self.index.insert(v.id.clone(), self.vectors.len());
            self.vectors.push(v);
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Option<&Vector> {
        self.index.get(id).map(|&i| &self.vectors[i])
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// What is wrong with the firmware's `kat` records against these vectors, in record order,
    /// then the vectors that never ran. Empty: every record agrees and every vector ran.
    pub fn check(&self, transcript: &Transcript) -> Vec<String> {
        let mut problems = self.mismatches(transcript);
        problems.extend(self.missing(transcript));
        problems
    }

    /// Records that disagree with the vectors (wrong output, unknown id, wrong alg or op).
    pub fn mismatches(&self, transcript: &Transcript) -> Vec<String> {
        let mut problems = Vec::new();
        for k in transcript.kats() {
            let Some(v) = self.get(&k.id) else {
                problems.push(format!(
                    "the firmware reported KAT `{}`, which is not in the scenario's vectors ({}): a forged or stale id",
                    k.id,
                    self.source.display()
                ));
                continue;
            };
            if k.alg != v.alg {
                problems.push(format!("KAT {}: alg={} but the vector ({}) is {}", k.id, k.alg, v.place, v.alg));
            }
            if let Some(op) = &v.op
                && &k.op != op
            {
                problems.push(format!("KAT {}: op={} but the vector ({}) is {op}", k.id, k.op, v.place));
            }
            match k.result {
                KatResult::Pass if k.out != v.out => problems.push(format!(
                    "firmware reported pass but its output for {} differs from the vector ({}): expected {} got {}",
                    k.id, v.place, v.out, k.out
                )),
                KatResult::Fail => {
                    if let Some(exp) = &k.expected
                        && exp != &v.out
                    {
                        let why =
                            if k.out == v.out { ": its output is right, its copy of the vector is wrong" } else { "" };
                        problems.push(format!(
                            "KAT {}: the firmware's expected value {exp} differs from the vector ({}) {}{why}",
                            k.id, v.place, v.out
                        ));
                    }
                }
                KatResult::Pass => {}
            }
        }
        problems
    }

    /// The vectors no `kat` record reported, as one message (`None`: every vector ran).
    pub fn missing(&self, transcript: &Transcript) -> Option<String> {
        let seen: BTreeSet<&str> = transcript.kats().map(|k| k.id.as_str()).collect();
        let missing: Vec<&str> = self.vectors.iter().map(|v| v.id.as_str()).filter(|id| !seen.contains(id)).collect();
        if missing.is_empty() {
            return None;
        }
        const SHOWN: usize = 5;
        let mut list = missing.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
        if missing.len() > SHOWN {
            list.push_str(&format!(" and {} more", missing.len() - SHOWN));
        }
        Some(format!(
            "missing KAT(s): {} of {} vector(s) in {} never ran: {list}",
            missing.len(),
            self.vectors.len(),
            self.source.display()
        ))
    }
}

fn parse_line(line: &str) -> Result<Vector, String> {
    let tokens: Vec<&str> = line.split(' ').collect();
    if tokens.iter().any(|t| t.is_empty()) {
        return Err("fields are separated by single spaces (no leading, trailing or double spaces)".into());
    }
    let (id, alg) = match tokens[..] {
        [id, alg, ..] => (id, alg),
        _ => return Err("expected `<id> <alg> [<op>] <key>=<hex> ... out=<hex>`".into()),
    };
    if !is_identifier(id) {
        return Err(format!("`{id}` is not a KAT id (letters, digits, _ . / -)"));
    }
    if alg.contains('=') || !is_identifier(alg) {
        return Err(format!("`{alg}` is not an algorithm name; expected `<id> <alg> [<op>] ... out=<hex>`"));
    }
    let mut rest = &tokens[2..];
    let mut op = None;
    if let Some(first) = rest.first()
        && !first.contains('=')
    {
        if !is_identifier(first) {
            return Err(format!("`{first}` is not an operation name"));
        }
        op = Some((*first).to_owned());
        rest = &rest[1..];
    }
    let mut fields = BTreeMap::new();
    for t in rest {
        let (k, v) = t.split_once('=').ok_or_else(|| format!("`{t}` is not a key=value field"))?;
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            return Err(format!("`{k}` is not a field name"));
        }
        let hex = expand_hex(v).map_err(|e| format!("field `{k}`: {e}"))?;
        if fields.insert(k, hex).is_some() {
            return Err(format!("field `{k}` appears twice"));
        }
    }
    let out = fields.remove("out").ok_or("the vector has no `out=<hex>` field")?;
    Ok(Vector { id: id.to_owned(), alg: alg.to_owned(), op, out, place: String::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# comment\n\
        \n\
        a/1 SHA3-256 msg=cc out=0102\n\
        b/2 AES-128 encrypt key=00 in=11 out=ff\n\
        c/3 SHAKE128 msg=a3*3 out=ab*2\n";

    fn vectors() -> Vectors {
        Vectors::parse(Path::new("v.txt"), FILE).unwrap()
    }

    fn transcript(kats: &[&str]) -> Transcript {
        let mut s = String::from("@mcubench/1 begin fw=t\n");
        for k in kats {
            s.push_str("@mcubench/1 kat ");
            s.push_str(k);
            s.push('\n');
        }
        Transcript::parse(&s).unwrap()
    }

    const A: &str = "id=a/1 alg=SHA3-256 op=hash result=pass ticks=1 stack=1 out=0102";
    const B: &str = "id=b/2 alg=AES-128 op=encrypt result=pass ticks=1 stack=1 out=ff";
    const C: &str = "id=c/3 alg=SHAKE128 op=xof result=pass ticks=1 stack=1 out=abab";

    #[test]
    fn parses_both_layouts_and_expands_repeats() {
        let v = vectors();
        assert_eq!(v.len(), 3);
        assert_eq!(v.get("a/1").unwrap().op, None);
        assert_eq!(v.get("b/2").unwrap().op.as_deref(), Some("encrypt"));
        assert_eq!(v.get("c/3").unwrap().out, "abab");
        assert_eq!(v.get("b/2").unwrap().place, "v.txt:4");
    }

    #[test]
    fn agreeing_records_have_no_problems() {
        assert_eq!(vectors().check(&transcript(&[A, B, C])), Vec::<String>::new());
    }

    #[test]
    fn a_pass_with_a_wrong_output_is_caught() {
        let p = vectors().check(&transcript(&[&A.replace("out=0102", "out=0000"), B, C]));
        assert_eq!(
            p,
            ["firmware reported pass but its output for a/1 differs from the vector (v.txt:3): expected 0102 got 0000"]
        );
    }

    #[test]
    fn unknown_ids_missing_vectors_and_wrong_alg_or_op_are_caught() {
        let p = vectors().check(&transcript(&[
            &A.replace("id=a/1", "id=z/9"),
            &B.replace("op=encrypt", "op=decrypt"),
            &C.replace("alg=SHAKE128", "alg=SHAKE256"),
        ]));
        assert_eq!(p.len(), 4, "{p:#?}");
        assert!(p[0].contains("KAT `z/9`, which is not in the scenario's vectors (v.txt): a forged"), "{}", p[0]);
        assert!(p[1].contains("KAT b/2: op=decrypt but the vector (v.txt:4) is encrypt"), "{}", p[1]);
        assert!(p[2].contains("KAT c/3: alg=SHAKE256 but the vector (v.txt:5) is SHAKE128"), "{}", p[2]);
        assert_eq!(p[3], "missing KAT(s): 1 of 3 vector(s) in v.txt never ran: a/1");
    }

    #[test]
    fn a_failing_record_with_a_wrong_built_in_expected_value_says_so() {
        let wrong = B.replace("result=pass", "result=fail") + " expected=fe";
        let p = vectors().check(&transcript(&[A, &wrong, C]));
        assert_eq!(
            p,
            [
                "KAT b/2: the firmware's expected value fe differs from the vector (v.txt:4) ff: its output is right, its copy of the vector is wrong"
            ]
        );
    }

    #[rstest::rstest]
    #[case("a/1 SHA3-256 msg=cc", "no `out=<hex>` field")]
    #[case("a/1 SHA3-256 msg=cc out=0G", "field `out`: `0G` is not lowercase hex")]
    #[case("a/1 SHA3-256 msg=ccc out=00", "field `msg`: `ccc` is not lowercase hex")]
    #[case("a/1 SHA3-256 msg=cc*x out=00", "not a repeat count")]
    #[case("a/1 SHA3-256 msg=cc*99999999999999999999 out=00", "not a repeat count")]
    #[case("a/1 SHA3-256 msg=cc*4294967296 out=00", "longer than 4096 bytes")]
    #[case("a/1 SHA3-256 out=00 out=01", "appears twice")]
    #[case("a/1  SHA3-256 out=00", "single spaces")]
    #[case("a/1 SHA3-256 out=00 ", "single spaces")]
    #[case("a/1", "expected `<id> <alg>")]
    #[case("a|1 SHA3-256 out=00", "not a KAT id")]
    #[case("a/1 out=00", "not an algorithm name")]
    #[case("a/1 AES-128 enc$ out=00", "not an operation name")]
    #[case("a/1 AES-128 encrypt nokey out=00", "`nokey` is not a key=value field")]
    #[case("a/1 AES-128 encrypt Key=00 out=00", "`Key` is not a field name")]
    #[case("x/1 A out=00\nx/1 A out=01", "vector `x/1` is defined twice (first at v.txt:1)")]
    fn malformed_vector_files_name_the_line(#[case] text: &str, #[case] expected: &str) {
        let e = Vectors::parse(Path::new("dir/v.txt"), text).unwrap_err().to_string();
        assert!(e.starts_with("dir/v.txt:"), "{e}");
        assert!(e.contains(expected), "{e}");
    }

    #[test]
    fn load_reads_a_directory_of_txt_files_in_name_order_and_refuses_empty_input() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "b/1 X out=01\n").unwrap();
        std::fs::write(dir.path().join("a.txt"), "a/1 X out=00\n").unwrap();
        std::fs::write(dir.path().join("verify.py"), "not vectors").unwrap();
        let v = Vectors::load(dir.path()).unwrap();
        assert_eq!(v.vectors.iter().map(|v| v.id.as_str()).collect::<Vec<_>>(), ["a/1", "b/1"]);
        std::fs::write(dir.path().join("c.txt"), "a/1 X out=00\n").unwrap();
        let e = Vectors::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("c.txt:1: vector `a/1` is defined twice (first at a.txt:1)"), "{e}");

        let empty = tempfile::tempdir().unwrap();
        let e = Vectors::load(empty.path()).unwrap_err().to_string();
        assert!(e.contains("holds no `*.txt` vector files"), "{e}");
        std::fs::write(empty.path().join("c.txt"), "# only a comment\n").unwrap();
        let e = Vectors::load(empty.path()).unwrap_err().to_string();
        assert!(e.contains("no vectors"), "{e}");
        let e = Vectors::load(&empty.path().join("nope.txt")).unwrap_err().to_string();
        assert!(e.contains("nope.txt: cannot read the KAT vectors"), "{e}");
    }

    #[test]
    fn the_repository_vectors_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../firmware/kat/vectors");
        let v = Vectors::load(&dir).unwrap();
        assert_eq!(v.len(), 61);
        assert_eq!(v.get("aes-128/fips197-c1-enc").unwrap().out, "69c4e0d86a7b0430d8cdb78070b4c55a");
        assert_eq!(v.get("sha3-224/nist-1600").unwrap().alg, "SHA3-224");
    }
}
