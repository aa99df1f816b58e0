//! Scoreboard rows, SV-COMP scoring, the text table, JSON/CSV files, and `--compare`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use super::exec::{Answer, Outcome};

/// How a task's answer is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Judgement {
    /// The answer matches the expected verdict.
    Correct,
    /// The answer contradicts the expected verdict.
    Wrong,
    /// UNKNOWN, unsupported, timeout, or out of memory.
    Unknown,
    /// Not run (unsupported property, ...).
    Skipped,
    /// Not run (broken task) or the verifier failed (exit 2, crash, ...).
    Error,
}

impl Judgement {
    /// The lowercase label used in the table, JSON and CSV.
    pub fn label(self) -> &'static str {
        match self {
            Judgement::Correct => "correct",
            Judgement::Wrong => "wrong",
            Judgement::Unknown => "unknown",
            Judgement::Skipped => "skipped",
            Judgement::Error => "error",
        }
    }

    /// Order used by `--compare` when scores are equal (higher is better).
    fn rank(self) -> u8 {
        match self {
            Judgement::Correct => 4,
            Judgement::Unknown => 3,
            Judgement::Skipped => 2,
            Judgement::Error => 1,
            Judgement::Wrong => 0,
        }
    }
}

/// SV-COMP scoring of an answer against the expected verdict: +2 correct true, +1 correct
/// false, -32 wrong true (answered true, expected false), -16 wrong false, 0 otherwise.
pub fn judge(expected: bool, answer: Answer) -> (Judgement, i64) {
    match (answer, expected) {
        (Answer::True, true) => (Judgement::Correct, 2),
        (Answer::False, false) => (Judgement::Correct, 1),
        (Answer::True, false) => (Judgement::Wrong, -32),
        (Answer::False, true) => (Judgement::Wrong, -16),
        (Answer::Unknown | Answer::Timeout | Answer::MemOut, _) => (Judgement::Unknown, 0),
        (Answer::Error, _) => (Judgement::Error, 0),
    }
}

/// SV-COMP's rule for properties with subproperties: a correct `false` answer must
/// name the violated subproperty the task expects (`UNSAFE (valid-memtrack)`, read from
/// the verdict line in `row.reason`); naming another one, or none, is a wrong `false`
/// (−16). Rows without an expected subproperty are left as they are.
pub fn judge_subproperty(row: &mut Row, expected: Option<&str>) {
    let Some(want) = expected else {
        return;
    };
    if row.result != Judgement::Correct || row.got.as_deref() != Some("false") {
        return;
    }
    let named = row
        .reason
        .strip_prefix("UNSAFE (")
        .and_then(|r| r.split_once(')'))
        .map(|(s, _)| s.trim());
    if named != Some(want) {
        row.result = Judgement::Wrong;
        row.score = -16;
        row.reason = format!(
            "expected subproperty {want}, answered {}: {}",
            named.unwrap_or("none"),
            row.reason
        );
    }
}

/// One task's line on the scoreboard (also one JSON object / CSV line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Stable task name (root folder name / path below it, no `.yml`).
    pub task: String,
    /// The task file.
    pub file: String,
    /// All properties of the task file.
    pub properties: Vec<String>,
    /// Expected unreach-call verdict (`None` when skipped or broken).
    pub expected: Option<bool>,
    /// `true`, `false`, `unknown`, `timeout`, `memout`, `error`; `None` when not run.
    pub got: Option<String>,
    /// The judgement.
    pub result: Judgement,
    /// SV-COMP points for this task.
    pub score: i64,
    /// Wall-clock seconds of the `verify` run (`None` when not run).
    pub seconds: Option<f64>,
    /// Exit code of `verify`, if it exited normally.
    pub exit_code: Option<i32>,
    /// `refinements_td` from the verifier's stats, if reported.
    pub refinements_td: Option<u64>,
    /// `refinements_scg` from the verifier's stats, if reported.
    pub refinements_scg: Option<u64>,
    /// The final SCG per struct type from the verifier's stats (Table 1's "final SCG").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub final_scg: BTreeMap<String, String>,
    /// Why (skip reason, unknown reason, error message); may be empty.
    pub reason: String,
}

impl Row {
    /// A row for a task that was not run.
    pub fn not_run(
        task: &str,
        file: &str,
        properties: Vec<String>,
        result: Judgement,
        reason: String,
    ) -> Row {
        Row {
            task: task.to_string(),
            file: file.to_string(),
            properties,
            expected: None,
            got: None,
            result,
            score: 0,
            seconds: None,
            exit_code: None,
            refinements_td: None,
            refinements_scg: None,
            final_scg: BTreeMap::new(),
            reason,
        }
    }

    /// A row for a task that was run.
    pub fn from_outcome(
        task: &str,
        file: &str,
        properties: Vec<String>,
        expected: bool,
        o: &Outcome,
    ) -> Row {
        let (result, score) = judge(expected, o.answer);
        Row {
            task: task.to_string(),
            file: file.to_string(),
            properties,
            expected: Some(expected),
            got: Some(o.answer.label().to_string()),
            result,
            score,
            seconds: Some(o.seconds),
            exit_code: o.exit_code,
            refinements_td: o.refinements_td,
            refinements_scg: o.refinements_scg,
            final_scg: o.final_scg.clone(),
            reason: o.reason.clone(),
        }
    }

    /// The final SCGs, `type: scg` joined by `; `, blank when none were reported.
    pub fn final_scgs(&self) -> String {
        self.final_scg
            .iter()
            .map(|(t, c)| format!("{t}: {c}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `td/scg` refinement counts, blank when the verifier reported none.
    pub fn refinements(&self) -> String {
        match (self.refinements_td, self.refinements_scg) {
            (None, None) => String::new(),
            (td, scg) => format!(
                "{}/{}",
                td.map_or("-".to_string(), |n| n.to_string()),
                scg.map_or("-".to_string(), |n| n.to_string())
            ),
        }
    }
}

fn opt_bool(b: Option<bool>) -> String {
    b.map_or("-".to_string(), |b| b.to_string())
}

fn opt_secs(s: Option<f64>) -> String {
    s.map_or(String::new(), |s| format!("{s:.2}"))
}

/// Totals over a set of rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of tasks (all rows).
    pub tasks: usize,
    /// Correct answers.
    pub correct: usize,
    /// Correct `true` answers.
    pub correct_true: usize,
    /// Correct `false` answers.
    pub correct_false: usize,
    /// Wrong answers.
    pub wrong: usize,
    /// Wrong `true` answers (expected false).
    pub wrong_true: usize,
    /// Wrong `false` answers (expected true).
    pub wrong_false: usize,
    /// Unknown (incl. timeouts and unsupported constructs).
    pub unknown: usize,
    /// Timeouts (included in `unknown`).
    pub timeouts: usize,
    /// Errors (verifier failures and broken task files).
    pub errors: usize,
    /// Skipped (unsupported property).
    pub skipped: usize,
    /// SV-COMP score.
    pub score: i64,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Sum of the tasks' seconds.
    pub task_seconds: f64,
}

impl Summary {
    /// Sums up `rows`; `wall` is the run's wall-clock time.
    pub fn of(rows: &[Row], wall: f64) -> Summary {
        let mut s = Summary {
            tasks: rows.len(),
            seconds: wall,
            ..Summary::default()
        };
        for r in rows {
            s.score += r.score;
            s.task_seconds += r.seconds.unwrap_or(0.0);
            let said_true = r.got.as_deref() == Some("true");
            match r.result {
                Judgement::Correct => {
                    s.correct += 1;
                    if said_true {
                        s.correct_true += 1
                    } else {
                        s.correct_false += 1
                    }
                }
                Judgement::Wrong => {
                    s.wrong += 1;
                    if said_true {
                        s.wrong_true += 1
                    } else {
                        s.wrong_false += 1
                    }
                }
                Judgement::Unknown => {
                    s.unknown += 1;
                    if r.got.as_deref() == Some("timeout") {
                        s.timeouts += 1
                    }
                }
                Judgement::Skipped => s.skipped += 1,
                Judgement::Error => s.errors += 1,
            }
        }
        s
    }
}

impl fmt::Display for Summary {
    /// `summary: 40 tasks, 12 correct (8 true, 4 false), 0 wrong, 26 unknown, 0 errors,
    /// 2 skipped, score 20, 183.2 s`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "summary: {} tasks, {} correct ({} true, {} false), {} wrong, {} unknown, {} errors, {} skipped, score {}, {:.1} s",
            self.tasks,
            self.correct,
            self.correct_true,
            self.correct_false,
            self.wrong,
            self.unknown,
            self.errors,
            self.skipped,
            self.score,
            self.seconds
        )
    }
}

/// Formats rows as an aligned text table (header + one line per row).
pub fn format_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len().saturating_sub(1);
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.clone()));
        out.push('\n');
    }
    out
}

/// Column names of the scoreboard table and CSV.
pub const COLUMNS: [&str; 7] = [
    "task",
    "expected",
    "got",
    "result",
    "seconds",
    "refinements",
    "reason",
];

fn cells(r: &Row) -> Vec<String> {
    vec![
        r.task.clone(),
        opt_bool(r.expected),
        r.got.clone().unwrap_or_else(|| "-".to_string()),
        r.result.label().to_string(),
        opt_secs(r.seconds),
        r.refinements(),
        r.reason.clone(),
    ]
}

/// The scoreboard table: task, expected, got, result, seconds, refinements, reason.
pub fn table(rows: &[Row]) -> String {
    format_table(&COLUMNS, &rows.iter().map(cells).collect::<Vec<_>>())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders a CSV file (RFC 4180 quoting) from a header and records.
pub fn to_csv(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        out.push_str(&r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// The scoreboard as CSV (same columns as the table, plus score).
pub fn csv(rows: &[Row]) -> String {
    let mut header = COLUMNS.to_vec();
    header.push("score");
    let recs: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut c = cells(r);
            c.push(r.score.to_string());
            c
        })
        .collect();
    to_csv(&header, &recs)
}

/// Settings of a run, recorded in the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `shapemc` version that produced the file.
    pub version: String,
    /// UTC start time, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started: String,
    /// The folders given on the command line.
    pub folders: Vec<String>,
    /// Parallel jobs.
    pub jobs: usize,
    /// Per-task time limit in seconds.
    pub timeout_s: f64,
    /// Per-task memory limit in MiB.
    pub memory_limit_mb: u64,
}

/// The JSON results file of a normal run (`results/latest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always `"scoreboard"`.
    pub kind: String,
    /// Settings.
    pub run: RunInfo,
    /// One row per task, sorted by name.
    pub tasks: Vec<Row>,
    /// Totals.
    pub summary: Summary,
}

/// Seconds since the epoch as a UTC timestamp: (`2026-11-23T10:50:00Z`, `20261123T105000Z`).
pub fn utc_stamp(secs: u64) -> (String, String) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // civil_from_days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z"),
        format!("{y:04}{mo:02}{d:02}T{h:02}{m:02}{s:02}Z"),
    )
}

/// Writes `<prefix>-<stamp>.json`, `<prefix>-<stamp>.csv` and `latest<suffix>.json` into
/// `dir` (created if missing). Returns the timestamped JSON path.
pub fn save(
    dir: &Path,
    prefix: &str,
    stamp: &str,
    json: &str,
    csv: &str,
    latest: &str,
) -> std::io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let j = dir.join(format!("{prefix}-{stamp}.json"));
    fs::write(&j, json)?;
    fs::write(dir.join(format!("{prefix}-{stamp}.csv")), csv)?;
    fs::write(dir.join(latest), json)?;
    Ok(j)
}

/// Per-task differences between two reports (`shapemc bench --compare OLD NEW`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Human-readable lines, one per changed task.
    pub lines: Vec<String>,
    /// Tasks whose score or judgement improved.
    pub better: usize,
    /// Tasks whose score or judgement got worse.
    pub worse: usize,
    /// Tasks present in both with the same judgement and score.
    pub unchanged: usize,
    /// Tasks only in NEW.
    pub added: usize,
    /// Tasks only in OLD.
    pub removed: usize,
    /// Total scores (old, new).
    pub scores: (i64, i64),
}

fn describe(r: &Row) -> String {
    match &r.got {
        Some(g) => format!("{} ({g})", r.result.label()),
        None => r.result.label().to_string(),
    }
}

/// Compares two sets of rows by task name. A task is better when its score rose, or when
/// the score is equal and its judgement ranks higher (correct > unknown > skipped > error >
/// wrong); timing changes of tasks correct in both (> 1.5x and > 1 s) are listed too.
pub fn compare(old: &[Row], new: &[Row]) -> Comparison {
    let mut c = Comparison {
        scores: (
            old.iter().map(|r| r.score).sum(),
            new.iter().map(|r| r.score).sum(),
        ),
        ..Comparison::default()
    };
    let mut names: Vec<&str> = old.iter().chain(new).map(|r| r.task.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let o = old.iter().find(|r| r.task == name);
        let n = new.iter().find(|r| r.task == name);
        match (o, n) {
            (Some(o), Some(n)) => {
                let key = |r: &Row| (r.score, r.result.rank());
                let verdict = if key(n) > key(o) {
                    c.better += 1;
                    "better"
                } else if key(n) < key(o) {
                    c.worse += 1;
                    "worse"
                } else {
                    c.unchanged += 1;
                    ""
                };
                if !verdict.is_empty() {
                    c.lines.push(format!(
                        "{verdict:<7} {name}: {} -> {}, score {} -> {}",
                        describe(o),
                        describe(n),
                        o.score,
                        n.score
                    ));
                } else if let (Judgement::Correct, Some(ts), Some(tn)) =
                    (n.result, o.seconds, n.seconds)
                {
                    if (tn > 1.5 * ts || ts > 1.5 * tn) && (tn - ts).abs() > 1.0 {
                        let w = if tn > ts { "slower" } else { "faster" };
                        c.lines
                            .push(format!("{w:<7} {name}: {ts:.2} s -> {tn:.2} s"));
                    }
                }
            }
            (None, Some(n)) => {
                c.added += 1;
                c.lines.push(format!("new     {name}: {}", describe(n)));
            }
            (Some(o), None) => {
                c.removed += 1;
                c.lines.push(format!("gone    {name}: was {}", describe(o)));
            }
            (None, None) => {}
        }
    }
    c
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for l in &self.lines {
            writeln!(f, "{l}")?;
        }
        write!(
            f,
            "compare: {} better, {} worse, {} unchanged, {} new, {} gone; score {} -> {}",
            self.better,
            self.worse,
            self.unchanged,
            self.added,
            self.removed,
            self.scores.0,
            self.scores.1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(task: &str, expected: bool, answer: Answer, secs: f64) -> Row {
        let o = Outcome {
            answer,
            exit_code: None,
            seconds: secs,
            refinements_td: None,
            refinements_scg: None,
            final_scg: BTreeMap::new(),
            reason: String::new(),
        };
        Row::from_outcome(task, "t.yml", vec!["unreach-call".into()], expected, &o)
    }

    #[test]
    fn a_false_answer_must_name_the_expected_subproperty() {
        let mut r = row("t", false, Answer::False, 1.0);
        r.reason = "UNSAFE (valid-deref)".into();
        let mut same = r.clone();
        judge_subproperty(&mut same, Some("valid-deref"));
        assert_eq!((same.result, same.score), (Judgement::Correct, 1));
        let mut other = r.clone();
        judge_subproperty(&mut other, Some("valid-memtrack"));
        assert_eq!((other.result, other.score), (Judgement::Wrong, -16));
        let mut none = row("t", false, Answer::False, 1.0);
        none.reason = "UNSAFE".into();
        judge_subproperty(&mut none, Some("valid-free"));
        assert_eq!(none.result, Judgement::Wrong);
        let mut unchecked = r.clone();
        judge_subproperty(&mut unchecked, None);
        assert_eq!(unchecked, r);
        let mut t = row("t", true, Answer::True, 1.0);
        judge_subproperty(&mut t, Some("valid-free"));
        assert_eq!(t.result, Judgement::Correct);
    }

    #[test]
    fn svcomp_scores() {
        assert_eq!(judge(true, Answer::True), (Judgement::Correct, 2));
        assert_eq!(judge(false, Answer::False), (Judgement::Correct, 1));
        assert_eq!(judge(false, Answer::True), (Judgement::Wrong, -32));
        assert_eq!(judge(true, Answer::False), (Judgement::Wrong, -16));
        assert_eq!(judge(true, Answer::Timeout), (Judgement::Unknown, 0));
        assert_eq!(judge(false, Answer::Error), (Judgement::Error, 0));
    }

    #[test]
    fn summary_counts_and_line() {
        let mut rows = vec![
            row("a", true, Answer::True, 1.0),
            row("b", false, Answer::False, 1.0),
            row("c", false, Answer::True, 1.0),
            row("d", true, Answer::Timeout, 60.0),
        ];
        rows.push(Row::not_run(
            "e",
            "e.yml",
            vec![],
            Judgement::Skipped,
            "x".into(),
        ));
        let s = Summary::of(&rows, 12.34);
        assert_eq!((s.correct, s.correct_true, s.correct_false), (2, 1, 1));
        assert_eq!(
            (s.wrong, s.wrong_true, s.unknown, s.timeouts, s.skipped),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(s.score, 2 + 1 - 32);
        assert_eq!(
            s.to_string(),
            "summary: 5 tasks, 2 correct (1 true, 1 false), 1 wrong, 1 unknown, 0 errors, 1 skipped, score -29, 12.3 s"
        );
    }

    #[test]
    fn table_and_csv() {
        let rows = vec![row("a", true, Answer::Unknown, 0.5)];
        let t = table(&rows);
        assert_eq!(t.lines().count(), 2);
        assert!(t
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("a     true      unknown  unknown"));
        let c = to_csv(&["x", "y"], &[vec!["a,b".into(), "q\"".into()]]);
        assert_eq!(c, "x,y\n\"a,b\",\"q\"\"\"\n");
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(utc_stamp(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(utc_stamp(1_795_430_000).1, "20261123T103320Z");
    }

    #[test]
    fn comparison_finds_better_and_worse() {
        let old = vec![
            row("a", true, Answer::Unknown, 1.0),
            row("b", true, Answer::True, 1.0),
            row("c", true, Answer::True, 1.0),
            row("gone", true, Answer::True, 1.0),
        ];
        let new = vec![
            row("a", true, Answer::True, 1.0),
            row("b", true, Answer::Error, 1.0),
            row("c", true, Answer::True, 9.0),
            row("fresh", true, Answer::True, 1.0),
        ];
        let c = compare(&old, &new);
        assert_eq!(
            (c.better, c.worse, c.unchanged, c.added, c.removed),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(c.scores, (6, 6));
        assert!(c
            .lines
            .iter()
            .any(|l| l.starts_with("better  a: unknown (unknown) -> correct (true)")));
        assert!(c.lines.iter().any(|l| l.starts_with("slower  c")));
        assert!(c.to_string().ends_with("score 6 -> 6"));
    }
}
