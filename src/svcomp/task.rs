//! `shapemc verify TASK.yml`: an SV-COMP task definition instead of a C file. The
//! input file, the data model and the properties come from the task file; the program
//! is verified under SV-COMP's conventions ([`crate::bench::SVCOMP_VERIFY_ARGS`]), and
//! one answer line per property follows `verify`'s usual output:
//!
//! ```text
//! unreach-call: SAFE
//! valid-memsafety: UNSAFE (valid-memtrack)
//! ```
//!
//! The exit code is UNSAFE (10) when some property is violated, SAFE (0) when all
//! hold, UNKNOWN (20) otherwise; 2 for an unreadable or malformed task, 3 for a task
//! outside what the front end can read (several input files, another language, the
//! LP64 data model).

use super::conventions::{with_svcomp_args, DataModel};
use crate::bench::task::{
    check_options, classify_property, parse_task_file, OptionsProblem, PropertyKind, TaskFile,
};
use crate::cegar::cli::{run_verify_with, VerifyArgs};
use crate::diag::exit;
use crate::spec::Property;
use std::path::{Path, PathBuf};

/// The answer for one property of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertyAnswer {
    /// `verify` ran: its exit code and verdict line (`SAFE`, `UNSAFE`, `UNKNOWN: ...`).
    Verified { code: i32, line: String },
    /// Not checked, with the reason.
    Unknown(String),
}

impl PropertyAnswer {
    /// The answer line's text after `<property>: `.
    pub fn text(&self) -> String {
        match self {
            PropertyAnswer::Verified { line, .. } if line.is_empty() => {
                "UNKNOWN (the program could not be analysed, see above)".to_string()
            }
            PropertyAnswer::Verified { line, .. } => line.clone(),
            PropertyAnswer::Unknown(why) => format!("UNKNOWN ({why})"),
        }
    }
}

/// What to do with one property of a task: the property `verify --property` checks
/// (unreach-call, valid-memsafety, valid-memcleanup), or the reason it is not checked.
/// The one place that maps task properties to analyses.
pub fn property_plan(kind: &PropertyKind) -> Result<Property, String> {
    match kind {
        PropertyKind::Known(p) => Ok(*p),
        PropertyKind::Other(name) => Err(format!("unsupported property: {name}")),
    }
}

/// A task file checked for what `verify` needs: the C file, the data model and the
/// properties (classified from their files).
#[derive(Clone, Debug)]
pub struct LoadedTask {
    /// The one input file, relative to the current directory.
    pub input: PathBuf,
    /// `options.data_model`.
    pub data_model: DataModel,
    /// Each property: its kind and its file.
    pub properties: Vec<(PropertyKind, PathBuf)>,
}

/// Reads and checks `yml`. Errors carry the exit code (2 unreadable or malformed, 3
/// unsupported) and the message.
pub fn load(yml: &Path) -> Result<LoadedTask, (i32, String)> {
    let bad = |m: String| {
        (
            exit::USAGE_OR_PARSE,
            format!("{}: error: {m}", yml.display()),
        )
    };
    let unsup = |m: String| {
        (
            exit::UNSUPPORTED,
            format!("{}: unsupported: {m}", yml.display()),
        )
    };
    let text = std::fs::read_to_string(yml).map_err(|e| bad(format!("cannot read: {e}")))?;
    let tf: TaskFile = parse_task_file(&text).map_err(|e| bad(format!("bad task file: {e}")))?;
    let data_model = check_options(&tf).map_err(|p| match p {
        OptionsProblem::Malformed(m) => bad(m),
        OptionsProblem::Unsupported(m) => unsup(m),
    })?;
    let [input] = tf.input_files.as_slice() else {
        return Err(unsup(format!(
            "{} input files (only one)",
            tf.input_files.len()
        )));
    };
    let dir = yml.parent().unwrap_or(Path::new("."));
    let input = dir.join(input);
    if !input.is_file() {
        return Err(bad(format!("input file {} not found", input.display())));
    }
    if tf.properties.is_empty() {
        return Err(bad("no properties".to_string()));
    }
    let mut properties = Vec::new();
    for p in &tf.properties {
        let file = dir.join(&p.file);
        if !file.is_file() {
            return Err(bad(format!("property file {} not found", file.display())));
        }
        properties.push((classify_property(&file), file));
    }
    Ok(LoadedTask {
        input,
        data_model,
        properties,
    })
}

/// The exit code of a task from its answers: UNSAFE if one is UNSAFE, SAFE if all are
/// SAFE, else UNKNOWN (a front-end error code of a verified property passes through).
pub fn task_exit_code(answers: &[PropertyAnswer]) -> i32 {
    let codes: Vec<i32> = answers
        .iter()
        .map(|a| match a {
            PropertyAnswer::Verified { code, .. } => *code,
            PropertyAnswer::Unknown(_) => exit::UNKNOWN,
        })
        .collect();
    if codes.contains(&exit::UNSAFE) {
        exit::UNSAFE
    } else if let Some(c) = codes
        .iter()
        .find(|c| **c == exit::USAGE_OR_PARSE || **c == exit::UNSUPPORTED)
    {
        *c
    } else if !codes.is_empty() && codes.iter().all(|c| *c == exit::SAFE) {
        exit::SAFE
    } else {
        exit::UNKNOWN
    }
}

/// `shapemc verify TASK.yml [--witness W.yml]`: verifies the task's input file for
/// each property `verify` checks (once), prints an answer line per property, and
/// returns the task's exit code ([`task_exit_code`]).
pub fn run_verify_task(yml: &Path, args: &VerifyArgs, witness: Option<&Path>) -> i32 {
    let task = match load(yml) {
        Ok(t) => t,
        Err((code, msg)) => {
            eprintln!("{msg}");
            return code;
        }
    };
    let args = match with_svcomp_args(args.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE_OR_PARSE;
        }
    };
    // one `verify` per distinct property; the witness is of unreach-call (the only
    // specification the witness writer states)
    let mut verified: Vec<(Property, PropertyAnswer)> = Vec::new();
    let mut answers = Vec::new();
    for (kind, _) in &task.properties {
        let answer = match property_plan(kind) {
            Err(why) => PropertyAnswer::Unknown(why),
            Ok(p) => match verified.iter().find(|(q, _)| *q == p) {
                Some((_, a)) => a.clone(),
                None => {
                    let writer = super::evidence::EvidenceWriter {
                        input: &task.input,
                        witness,
                        data_model: task.data_model,
                        malloc_never_fails: args.malloc_never_fails,
                        property: p,
                    };
                    let mut a = args.clone();
                    a.property = p;
                    let (code, line) = run_verify_with(&task.input, &a, &|rep| writer.write(rep));
                    let answer = PropertyAnswer::Verified { code, line };
                    verified.push((p, answer.clone()));
                    answer
                }
            },
        };
        answers.push((kind.name().to_string(), answer));
    }
    for (name, a) in &answers {
        println!("{name}: {}", a.text());
    }
    let all: Vec<PropertyAnswer> = answers.into_iter().map(|(_, a)| a).collect();
    task_exit_code(&all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_properties_verify_checks_are_verified() {
        assert_eq!(
            property_plan(&PropertyKind::UNREACH_CALL),
            Ok(Property::UnreachCall)
        );
        assert_eq!(
            property_plan(&PropertyKind::Known(Property::ValidMemsafety)),
            Ok(Property::ValidMemsafety)
        );
        let e = property_plan(&PropertyKind::Other("no-overflow".into())).unwrap_err();
        assert_eq!(e, "unsupported property: no-overflow");
    }

    #[test]
    fn task_exit_codes() {
        let v = |code: i32| PropertyAnswer::Verified {
            code,
            line: "x".into(),
        };
        let u = || PropertyAnswer::Unknown("unsupported property: p".into());
        assert_eq!(task_exit_code(&[v(0)]), exit::SAFE);
        assert_eq!(task_exit_code(&[v(0), u()]), exit::UNKNOWN);
        assert_eq!(task_exit_code(&[u(), v(10)]), exit::UNSAFE);
        assert_eq!(task_exit_code(&[v(3), u()]), exit::UNSUPPORTED);
        assert_eq!(task_exit_code(&[u()]), exit::UNKNOWN);
        assert_eq!(task_exit_code(&[]), exit::UNKNOWN);
        assert_eq!(u().text(), "UNKNOWN (unsupported property: p)");
    }

    #[test]
    fn load_checks_the_task() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("properties")).unwrap();
        std::fs::write(
            p.join("properties/unreach-call.prp"),
            "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
        )
        .unwrap();
        std::fs::write(p.join("a.c"), "int main(void) { return 0; }\n").unwrap();
        let task = |opts: &str, input: &str| {
            let y = p.join("t.yml");
            std::fs::write(
                &y,
                format!("format_version: '2.0'\ninput_files: {input}\nproperties:\n  - property_file: properties/unreach-call.prp\n    expected_verdict: true\noptions:\n{opts}"),
            )
            .unwrap();
            load(&y)
        };
        let t = task("  language: C\n  data_model: ILP32\n", "'a.c'").unwrap();
        assert_eq!(t.input, p.join("a.c"));
        assert_eq!(t.properties[0].0, PropertyKind::UNREACH_CALL);
        let e = task("  language: C\n  data_model: LP64\n", "'a.c'").unwrap_err();
        assert_eq!(e.0, exit::UNSUPPORTED);
        assert!(e.1.contains("data model LP64"), "{}", e.1);
        let e = task("  language: C\n", "['a.c', 'a.c']").unwrap_err();
        assert_eq!(e.0, exit::UNSUPPORTED);
        let e = task("  language: Java\n", "'a.c'").unwrap_err();
        assert_eq!(e.0, exit::UNSUPPORTED);
        let e = task("  language: C\n", "'missing.c'").unwrap_err();
        assert_eq!(e.0, exit::USAGE_OR_PARSE);
    }
}
