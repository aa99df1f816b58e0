//! SV-COMP task definitions (`X.yml`, format 2.0): parsing and discovery.
//!
//! Task files are read with a YAML parser (`serde_yaml_ng`): `input_files` as a string
//! or a list, `properties` as a list of mappings (`property_file`, `expected_verdict`,
//! `subproperty`), `options` (`language`, `data_model`); other keys are ignored.

use crate::spec::{DataModel, Property};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};

/// The kind of a property file, recognised from its text (or, failing that, its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyKind {
    /// A property `verify --property` checks ([`crate::spec::Property`]).
    Known(Property),
    /// Any other property, by name (e.g. `no-overflow`).
    Other(String),
}

impl PropertyKind {
    /// `G ! call(reach_error())`.
    pub const UNREACH_CALL: PropertyKind = PropertyKind::Known(Property::UnreachCall);

    /// The SV-COMP short name (`unreach-call`, `valid-memsafety`, ...).
    pub fn name(&self) -> &str {
        match self {
            PropertyKind::Known(p) => p.name(),
            PropertyKind::Other(n) => n,
        }
    }
}

/// One `properties:` entry of a task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertySpec {
    /// The property file as written (relative to the task file's folder).
    pub file: String,
    /// `expected_verdict`, if present and `true`/`false`.
    pub expected: Option<bool>,
    /// `subproperty`, if present.
    pub subproperty: Option<String>,
}

/// A parsed task file (no file-system checks yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFile {
    /// `input_files`, as written.
    pub input_files: Vec<String>,
    /// `properties`, in order.
    pub properties: Vec<PropertySpec>,
    /// `options.data_model` (`ILP32`, `LP64`), if given.
    pub data_model: Option<String>,
    /// `options.language` (`C`), if given.
    pub language: Option<String>,
}

/// `input_files`: one file or a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum InputFiles {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct RawProperty {
    property_file: Option<String>,
    expected_verdict: Option<serde_yaml_ng::Value>,
    subproperty: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawOptions {
    language: Option<String>,
    data_model: Option<String>,
}

#[derive(Deserialize)]
struct RawTask {
    input_files: Option<InputFiles>,
    #[serde(default)]
    properties: Option<Vec<RawProperty>>,
    #[serde(default)]
    options: Option<RawOptions>,
}

/// Parses the text of an SV-COMP task file. Errors say what is missing or malformed
/// (with the YAML parser's line and column for syntax errors).
pub fn parse_task_file(text: &str) -> Result<TaskFile, String> {
    let raw: RawTask = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let input_files: Vec<String> = match raw.input_files {
        Some(InputFiles::One(f)) => vec![f],
        Some(InputFiles::Many(v)) => v,
        None => Vec::new(),
    };
    if input_files.iter().all(|f| f.is_empty()) {
        return Err("no input_files".to_string());
    }
    let mut properties = Vec::new();
    for p in raw.properties.unwrap_or_default() {
        let Some(file) = p.property_file.filter(|f| !f.is_empty()) else {
            return Err("property entry without property_file".to_string());
        };
        let expected = match p.expected_verdict {
            Some(serde_yaml_ng::Value::Bool(b)) => Some(b),
            Some(serde_yaml_ng::Value::String(s)) if s == "true" => Some(true),
            Some(serde_yaml_ng::Value::String(s)) if s == "false" => Some(false),
            _ => None,
        };
        properties.push(PropertySpec {
            file,
            expected,
            subproperty: p.subproperty,
        });
    }
    let options = raw.options.unwrap_or_default();
    Ok(TaskFile {
        input_files,
        properties,
        data_model: options.data_model,
        language: options.language,
    })
}

/// Recognises a property file by its text ([`Property::from_prp_text`]); a file that
/// cannot be read or states no property shapemc checks is named by its file stem (the
/// SV-COMP naming convention: `valid-memsafety.prp`).
pub fn classify_property(path: &Path) -> PropertyKind {
    let by_text = fs::read_to_string(path)
        .ok()
        .and_then(|t| Property::from_prp_text(&t));
    if let Some(p) = by_text {
        return PropertyKind::Known(p);
    }
    match path.file_stem().and_then(|s| s.to_str()) {
        Some("unreach-call") => PropertyKind::UNREACH_CALL,
        Some(s) => PropertyKind::Other(s.to_string()),
        None => PropertyKind::Other(path.display().to_string()),
    }
}

/// What the scoreboard will do with one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Run `shapemc verify --property P` on `input` and score against `expected`.
    Run {
        /// The C file.
        input: PathBuf,
        /// The expected verdict for the scored property.
        expected: bool,
        /// The property scored (`scripts/scoreboard --property`).
        property: Property,
        /// The violated subproperty of an expected `false` (`valid-deref`, ...), as the
        /// task file names it; a `false` answer naming another one is wrong.
        subproperty: Option<String>,
    },
    /// Not run, shown as `skipped` with the reason (unsupported property, ...).
    Skip(String),
    /// Not run, scored `unknown` with the reason: the task states a language or data
    /// model the front end cannot read exactly (running the C file would silently read
    /// an LP64 task as ILP32).
    Unsupported(String),
    /// Not run, shown as `error` with the reason (unreadable or malformed task file).
    Broken(String),
}

/// One discovered task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Stable display name: the name of the root folder, then the path below it, without `.yml`.
    pub name: String,
    /// The task file.
    pub yml: PathBuf,
    /// Names of all properties in the task file (for the report).
    pub properties: Vec<String>,
    /// What to do.
    pub plan: Plan,
}

/// Builds the plan for the task file `yml` named `name`, scoring unreach-call
/// ([`load_task_for`]).
pub fn load_task(name: String, yml: &Path) -> Task {
    load_task_for(name, yml, Property::UnreachCall)
}

/// Builds the plan for the task file `yml` named `name`, scoring `property`: a task
/// without it is skipped. Never fails: problems become [`Plan::Skip`] or
/// [`Plan::Broken`], so no task is silently dropped.
pub fn load_task_for(name: String, yml: &Path, property: Property) -> Task {
    let dir = yml.parent().unwrap_or(Path::new("."));
    let parsed = fs::read_to_string(yml)
        .map_err(|e| format!("cannot read task file: {e}"))
        .and_then(|t| parse_task_file(&t).map_err(|e| format!("bad task file: {e}")));
    let tf = match parsed {
        Ok(tf) => tf,
        Err(e) => {
            return Task {
                name,
                yml: yml.to_path_buf(),
                properties: Vec::new(),
                plan: Plan::Broken(e),
            }
        }
    };
    let kinds: Vec<(PropertyKind, &PropertySpec)> = tf
        .properties
        .iter()
        .map(|p| (classify_property(&dir.join(&p.file)), p))
        .collect();
    let properties = kinds.iter().map(|(k, _)| k.name().to_string()).collect();
    let wanted = PropertyKind::Known(property);
    let plan = match kinds.iter().find(|(k, _)| *k == wanted) {
        None if kinds.is_empty() => Plan::Skip("no properties".to_string()),
        None => Plan::Skip(format!(
            "{}: {}",
            match property {
                Property::UnreachCall => "unsupported property".to_string(),
                p => format!("no {p} property"),
            },
            kinds
                .iter()
                .map(|(k, _)| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some((_, spec)) => match spec.expected {
            None => Plan::Skip(format!("{property} without expected_verdict")),
            Some(_) if tf.input_files.len() != 1 => {
                Plan::Skip("several input files (unsupported)".to_string())
            }
            Some(expected) => {
                let input = dir.join(&tf.input_files[0]);
                if input.is_file() {
                    Plan::Run {
                        input,
                        expected,
                        property,
                        subproperty: spec.subproperty.clone(),
                    }
                } else {
                    Plan::Broken(format!("input file {} not found", input.display()))
                }
            }
        },
    };
    let plan = match (plan, check_options(&tf)) {
        (Plan::Run { .. }, Err(OptionsProblem::Unsupported(why))) => {
            Plan::Unsupported(format!("unsupported: {why}"))
        }
        (Plan::Run { .. }, Err(OptionsProblem::Malformed(why))) => {
            Plan::Broken(format!("bad task file: {why}"))
        }
        (plan, _) => plan,
    };
    Task {
        name,
        yml: yml.to_path_buf(),
        properties,
        plan,
    }
}

/// What is wrong with a task's `options` for the front end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionsProblem {
    /// Not a valid task (an unknown data model name): a usage error.
    Malformed(String),
    /// Valid, but outside what the front end reads exactly (a language other than C,
    /// the LP64 data model: reading an LP64 task as ILP32 would silently change it).
    Unsupported(String),
}

/// The task's data model when the front end reads the task exactly (language C,
/// ILP32), else the problem, worded as `verify TASK.yml` reports it. The one check of a
/// task's options, for `verify TASK.yml` and the scoreboard.
pub fn check_options(tf: &TaskFile) -> Result<DataModel, OptionsProblem> {
    if let Some(lang) = tf.language.as_deref().filter(|l| l.trim() != "C") {
        return Err(OptionsProblem::Unsupported(format!(
            "language {lang} (only C)"
        )));
    }
    let m = DataModel::from_task(tf.data_model.as_deref()).map_err(OptionsProblem::Malformed)?;
    if !m.supported() {
        return Err(OptionsProblem::Unsupported(format!(
            "data model {} (the front end reads programs as ILP32 only)",
            m.name()
        )));
    }
    Ok(m)
}

/// Finds every `*.yml` under the given folders (recursively; a `.yml` file may also be
/// given directly), sorted by name, scoring unreach-call ([`discover_for`]).
pub fn discover(roots: &[PathBuf]) -> Result<Vec<Task>, String> {
    discover_for(roots, Property::UnreachCall)
}

/// [`discover`] scoring `property`. Errors only for a path that does not exist.
pub fn discover_for(roots: &[PathBuf], property: Property) -> Result<Vec<Task>, String> {
    let mut tasks = Vec::new();
    for root in roots {
        if !root.exists() {
            return Err(format!("{}: no such file or folder", root.display()));
        }
        let label = fs::canonicalize(root)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| root.display().to_string());
        if root.is_file() {
            let stem = root.file_stem().map(|s| s.to_string_lossy().into_owned());
            tasks.push(load_task_for(stem.unwrap_or(label), root, property));
            continue;
        }
        let root_label = label.trim_end_matches(".yml").to_string();
        let mut ymls = Vec::new();
        collect_ymls(root, &mut ymls);
        for yml in ymls {
            let rel = yml.strip_prefix(root).unwrap_or(&yml).with_extension("");
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            tasks.push(load_task_for(format!("{root_label}/{rel}"), &yml, property));
        }
    }
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tasks)
}

fn collect_ymls(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_ymls(&p, out);
        } else if p.extension().is_some_and(|e| e == "yml") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_svcomp_task_file() {
        let t = "format_version: '2.0'\n\n# comment\ninput_files: 'a.c' # trailing\n\nproperties:\n  - property_file: ../properties/unreach-call.prp\n    expected_verdict: false\n  - property_file: ../properties/valid-memsafety.prp\n    expected_verdict: true\n    subproperty: valid-free\n\noptions:\n  language: C\n  data_model: ILP32\n";
        let tf = parse_task_file(t).unwrap();
        assert_eq!(tf.input_files, vec!["a.c".to_string()]);
        assert_eq!(tf.properties.len(), 2);
        assert_eq!(tf.properties[0].file, "../properties/unreach-call.prp");
        assert_eq!(tf.properties[0].expected, Some(false));
        assert_eq!(tf.properties[1].subproperty.as_deref(), Some("valid-free"));
        assert_eq!(tf.data_model.as_deref(), Some("ILP32"));
        assert_eq!(tf.language.as_deref(), Some("C"));
    }

    #[test]
    fn parses_input_file_lists() {
        let tf = parse_task_file("input_files:\n  - 'a.c'\n  - b.c\nproperties: []\n").unwrap();
        assert_eq!(tf.input_files, vec!["a.c", "b.c"]);
        let tf = parse_task_file("input_files: ['a.c', \"b.c\"]\n").unwrap();
        assert_eq!(tf.input_files, vec!["a.c", "b.c"]);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_task_file("properties:\n  - expected_verdict: true\n").is_err());
        assert!(parse_task_file("just words\n").is_err());
        assert!(
            parse_task_file("input_files: a.c\nproperties:\n  - expected_verdict: true\n").is_err()
        );
    }

    #[test]
    fn discovery_never_drops_a_task() {
        let root = std::env::temp_dir().join(format!("shapemc-discover-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let sub = root.join("suite").join("nested");
        fs::create_dir_all(&sub).unwrap();
        fs::create_dir_all(root.join("properties")).unwrap();
        fs::write(
            root.join("properties/unreach-call.prp"),
            "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
        )
        .unwrap();
        fs::write(
            root.join("properties/valid-memsafety.prp"),
            "CHECK( init(main()), LTL(G valid-free) )\n",
        )
        .unwrap();
        let suite = root.join("suite");
        fs::write(suite.join("a.c"), "int main(void) { return 0; }\n").unwrap();
        let y = |p: &str, v: &str| {
            format!("  - property_file: ../properties/{p}.prp\n    expected_verdict: {v}\n")
        };
        fs::write(
            suite.join("both.yml"),
            format!(
                "input_files: 'a.c'\nproperties:\n{}{}",
                y("valid-memsafety", "false"),
                y("unreach-call", "true")
            ),
        )
        .unwrap();
        fs::write(
            suite.join("mem.yml"),
            format!(
                "input_files: 'a.c'\nproperties:\n{}",
                y("valid-memsafety", "true")
            ),
        )
        .unwrap();
        fs::write(
            suite.join("missing.yml"),
            format!(
                "input_files: 'nope.c'\nproperties:\n{}",
                y("unreach-call", "false")
            ),
        )
        .unwrap();
        fs::write(sub.join("bad.yml"), "this is: not\n  - a task\n").unwrap();
        let tasks = discover(std::slice::from_ref(&suite)).unwrap();
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "suite/both",
                "suite/mem",
                "suite/missing",
                "suite/nested/bad"
            ]
        );
        assert_eq!(
            tasks[0].plan,
            Plan::Run {
                input: suite.join("a.c"),
                expected: true,
                property: Property::UnreachCall,
                subproperty: None,
            }
        );
        assert_eq!(tasks[0].properties, ["valid-memsafety", "unreach-call"]);
        assert_eq!(
            tasks[1].plan,
            Plan::Skip("unsupported property: valid-memsafety".to_string())
        );
        let mem = discover_for(std::slice::from_ref(&suite), Property::ValidMemsafety).unwrap();
        assert_eq!(
            mem[0].plan,
            Plan::Run {
                input: suite.join("a.c"),
                expected: false,
                property: Property::ValidMemsafety,
                subproperty: None,
            }
        );
        assert!(matches!(&mem[1].plan, Plan::Run { expected: true, .. }));
        assert!(matches!(&mem[2].plan, Plan::Skip(_)));
        assert!(matches!(&tasks[2].plan, Plan::Broken(m) if m.contains("not found")));
        assert!(matches!(&tasks[3].plan, Plan::Broken(m) if m.contains("bad task file")));
        assert!(discover(&[root.join("does-not-exist")]).is_err());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_task_the_front_end_cannot_read_exactly_is_unknown_not_run() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("properties")).unwrap();
        fs::write(
            d.path().join("properties/unreach-call.prp"),
            "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
        )
        .unwrap();
        fs::write(d.path().join("a.c"), "int main(void) { return 0; }\n").unwrap();
        let plan = |options: &str| {
            let y = d.path().join("t.yml");
            fs::write(
                &y,
                format!("input_files: 'a.c'\nproperties:\n  - property_file: properties/unreach-call.prp\n    expected_verdict: true\noptions:\n{options}"),
            )
            .unwrap();
            load_task("t".to_string(), &y).plan
        };
        assert!(matches!(plan("  data_model: ILP32\n"), Plan::Run { .. }));
        assert!(
            matches!(plan("  data_model: LP64\n"), Plan::Unsupported(m) if m.contains("data model LP64"))
        );
        assert!(
            matches!(plan("  language: Java\n"), Plan::Unsupported(m) if m.contains("language Java"))
        );
        assert!(
            matches!(plan("  data_model: ILP64\n"), Plan::Broken(m) if m.contains("unknown data model"))
        );
    }
}
