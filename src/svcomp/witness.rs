//! SV-COMP witnesses, format 2.0 (YAML): the file types, read and written with
//! `serde_yaml_ng`.
//!
//! A witness file is a list of entries; shapemc writes one: a `violation_sequence`
//! (segments of waypoints, the last a `target`) or an `invariant_set` (loop
//! invariants as C expressions). Both carry `metadata`: format version "2.0", a UUID,
//! the creation time, the producer, and the task (input files with their SHA-256,
//! the specification, the data model, the language). Columns are 1-based, as in the
//! format's examples and other tools' witnesses.

use super::conventions::DataModel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The `format_version` shapemc writes and reads.
pub const FORMAT_VERSION: &str = "2.0";

/// One entry of a witness file (the kinds shapemc understands).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry_type", rename_all = "snake_case")]
pub enum Entry {
    /// A violation witness: the segments, in order.
    ViolationSequence {
        metadata: Metadata,
        content: Vec<Segment>,
    },
    /// A correctness witness: the invariants.
    InvariantSet {
        metadata: Metadata,
        content: Vec<InvariantItem>,
    },
}

/// `metadata` of an entry. Reading is lenient about `uuid` and `creation_time` (some
/// tools leave them empty); shapemc always writes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub format_version: String,
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub creation_time: Option<String>,
    pub producer: Producer,
    pub task: WitnessTask,
}

/// `metadata.producer`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Producer {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<String>,
}

/// `metadata.task`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessTask {
    pub input_files: Vec<String>,
    /// Input file → SHA-256 (lower-case hex).
    #[serde(default)]
    pub input_file_hashes: BTreeMap<String, String>,
    pub specification: String,
    pub data_model: String,
    pub language: String,
}

/// `- segment: [...]`: waypoints `avoid`ed, then one `follow`ed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub segment: Vec<WaypointItem>,
}

/// `- waypoint: {...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaypointItem {
    pub waypoint: Waypoint,
}

/// A waypoint: `assumption`, `branching`, `function_enter`, `function_return` or
/// `target`, to `follow` or `avoid`, at a source location, with a constraint (the
/// `\result == v` of a `function_return`, the `true`/`false` of a `branching`, the C
/// expression of an `assumption`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waypoint {
    #[serde(rename = "type")]
    pub kind: String,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
    pub location: Location,
}

/// A waypoint's `constraint`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Constraint {
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

/// A source location: file, 1-based line and column, function.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub file_name: String,
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// `- invariant: {...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InvariantItem {
    pub invariant: Invariant,
}

/// An invariant: `loop_invariant` (holds whenever the loop head at `location` is
/// reached) as a C expression (`format: c_expression`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Invariant {
    #[serde(rename = "type")]
    pub kind: String,
    pub location: Location,
    pub value: String,
    pub format: String,
}

/// The metadata of a witness shapemc writes for `input` (named as given) under
/// `data_model`: a fresh UUID (v4), the creation time (UTC, RFC 3339), the producer
/// (`shapemc` and its version) and the input's SHA-256.
pub fn metadata(input: &Path, data_model: DataModel) -> Result<Metadata, String> {
    let name = input.display().to_string();
    let hash = crate::cert::sha256_file(input)?;
    Ok(Metadata {
        format_version: FORMAT_VERSION.to_string(),
        uuid: Some(uuid::Uuid::new_v4().to_string()),
        creation_time: Some(
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        ),
        producer: Producer {
            name: "shapemc".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            configuration: None,
        },
        task: WitnessTask {
            input_files: vec![name.clone()],
            input_file_hashes: BTreeMap::from([(name, hash)]),
            specification: super::UNREACH_CALL_SPEC.to_string(),
            data_model: data_model.name().to_string(),
            language: "C".to_string(),
        },
    })
}

/// The YAML text of a witness file with these entries.
pub fn to_yaml(entries: &[Entry]) -> Result<String, String> {
    serde_yaml_ng::to_string(entries).map_err(|e| format!("cannot write YAML: {e}"))
}

/// Reads a witness file: the entries shapemc understands, in order (entries of other
/// types are skipped, their `entry_type`s returned). Errors for text that is not a
/// YAML list, or an entry of a known type that is malformed.
pub fn parse(text: &str) -> Result<(Vec<Entry>, Vec<String>), String> {
    let values: Vec<serde_yaml_ng::Value> =
        serde_yaml_ng::from_str(text).map_err(|e| format!("not a witness (a YAML list): {e}"))?;
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    for v in values {
        let ty = v
            .get("entry_type")
            .and_then(|t| t.as_str())
            .unwrap_or("(none)")
            .to_string();
        if ty == "violation_sequence" || ty == "invariant_set" {
            let e: Entry =
                serde_yaml_ng::from_value(v).map_err(|e| format!("malformed {ty} entry: {e}"))?;
            entries.push(e);
        } else {
            skipped.push(ty);
        }
    }
    Ok((entries, skipped))
}

/// Checks that `metadata` is of the file `input`: a hash in `input_file_hashes` (of
/// the entry named like `input`, or the only one) equal to its SHA-256, and format
/// version 2.x. Errors name the mismatch.
pub fn check_input(metadata: &Metadata, input: &Path) -> Result<(), String> {
    if !metadata.format_version.starts_with("2.") {
        return Err(format!(
            "format_version {} (only 2.x is read)",
            metadata.format_version
        ));
    }
    let actual = crate::cert::sha256_file(input)?;
    let hashes = &metadata.task.input_file_hashes;
    let base = |p: &str| {
        Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    let mine = base(&input.display().to_string());
    let named: Vec<&String> = hashes
        .iter()
        .filter(|(k, _)| base(k) == mine)
        .map(|(_, v)| v)
        .collect();
    let candidates: Vec<&String> = if named.is_empty() && hashes.len() == 1 {
        hashes.values().collect()
    } else {
        named
    };
    if candidates.is_empty() {
        return Err(format!(
            "the witness has no input_file_hashes entry for {}",
            input.display()
        ));
    }
    if candidates.iter().any(|h| h.eq_ignore_ascii_case(&actual)) {
        return Ok(());
    }
    Err(format!(
        "the witness is of another file: {} has SHA-256 {actual}, the witness names {}",
        input.display(),
        candidates
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_another_tools_violation_witness() {
        let text = r#"- entry_type: "violation_sequence"
  metadata:
    format_version: "2.0"
    uuid:
    creation_time:
    producer:
      name: "Other"
      version: "1"
    task:
      input_files:
      - "f.c"
      input_file_hashes:
        f.c: 2dc9cde827db914367d2e6304c8935a81dbb218d50448125781346c65452a2e3
      specification: "G ! call(reach_error())"
      data_model: "LP64"
      language: "C"
  content:
  - segment:
    - waypoint:
        type: "function_return"
        action: "follow"
        constraint:
          value: "\\result == 10"
          format: "acsl_expression"
        location:
          file_name: "f.c"
          line: 41
          column: 35
  - segment:
    - waypoint:
        type: "target"
        action: "follow"
        location:
          file_name: "f.c"
          line: 36
          column: 9
- entry_type: loop_invariant_certificate
"#;
        let (entries, skipped) = parse(text).unwrap();
        assert_eq!(skipped, ["loop_invariant_certificate"]);
        let Entry::ViolationSequence { metadata, content } = &entries[0] else {
            panic!("not a violation sequence");
        };
        assert_eq!(metadata.uuid, None);
        assert_eq!(metadata.task.data_model, "LP64");
        assert_eq!(content.len(), 2);
        let w = &content[0].segment[0].waypoint;
        assert_eq!(w.kind, "function_return");
        assert_eq!(w.constraint.as_ref().unwrap().value, "\\result == 10");
        assert_eq!(w.location.column, Some(35));
        assert_eq!(w.location.function, None);
        assert!(parse("just: a mapping\n").is_err());
        assert!(parse("- entry_type: violation_sequence\n  content: []\n").is_err());
    }

    #[test]
    fn input_hashes_are_checked() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("prog.c");
        std::fs::write(&f, "int main(void) { return 0; }\n").unwrap();
        let mut m = metadata(&f, DataModel::Ilp32).unwrap();
        assert!(check_input(&m, &f).is_ok());
        // the same file under another folder is still the file
        let renamed: BTreeMap<String, String> = m
            .task
            .input_file_hashes
            .values()
            .map(|h| ("elsewhere/prog.c".to_string(), h.clone()))
            .collect();
        m.task.input_file_hashes = renamed;
        assert!(check_input(&m, &f).is_ok());
        std::fs::write(&f, "int main(void) { return 1; }\n").unwrap();
        let e = check_input(&m, &f).unwrap_err();
        assert!(e.contains("another file"), "{e}");
        m.task.input_file_hashes.clear();
        assert!(check_input(&m, &f).is_err());
    }
}
