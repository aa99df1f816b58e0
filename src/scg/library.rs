//! The SCG library: data-structure entries loaded from DSL files, checked, and
//! their instantiation into shape classes (the paper's SCG application m(D)).
//!
//! Rules checked at load time (errors are `file:line:col: message`):
//! - roles are distinct names other than `sm`, `pt`, `fd`; every role occurs in a
//!   `requires` clause (recognition binds roles only through invariants);
//! - family names are distinct; pointer placeholders are not roles; predicate names
//!   are distinct within a structure and differ from roles, placeholders and core names;
//! - a predicate is unary `(v)` or binary `(v1, v2)`, its parameters are placeholders
//!   or roles, every placeholder its formula mentions is among its parameters, its
//!   formula's free variables are its head variables; formulas only use `sm`,
//!   `pt[<placeholder>]`, role fields (binary) and predicates of the same family;
//! - constraints are closed and obey the same reference rules, and each holds on every
//!   concrete heap up to a small bound ([`super::justify`]): coerce trusts them;
//! - `refines c (...)`: `c` exists, the role map covers exactly the roles of `c`
//!   injectively, every family of `c` exists here with a superset of its (renamed)
//!   predicates, abstraction predicates and constraints; the refinement graph is acyclic.

use super::dsl::{FamilyDef, Pos, StructureDef};
use super::instance::{instantiate, placeholders_in, RoleBinding};
use super::parse::{parse_dsl, ParseError};
use super::TrackingDef;
use crate::tvla::formula::{Formula, PredSym};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The most families a structure may have (it contributes 2^k SCGs per binding).
pub const MAX_FAMILIES: usize = 24;

/// Names the DSL reserves for core predicates (and the built-in `ptd`).
pub const RESERVED: [&str; 4] = ["sm", "pt", "fd", "ptd"];

/// A load or check error in a DSL file, printed `file:line:col: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryError {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl fmt::Display for LibraryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.col,
            self.msg
        )
    }
}

impl std::error::Error for LibraryError {}

impl LibraryError {
    fn at(file: &Path, pos: Pos, msg: impl Into<String>) -> LibraryError {
        LibraryError {
            file: file.to_path_buf(),
            line: pos.line,
            col: pos.col,
            msg: msg.into(),
        }
    }
    fn parse(file: &Path, e: ParseError) -> LibraryError {
        LibraryError {
            file: file.to_path_buf(),
            line: e.line,
            col: e.col,
            msg: e.msg,
        }
    }
}

/// A map from the roles of a coarser structure to roles of a finer one.
pub type RoleMap = BTreeMap<String, String>;

/// A checked set of data structures with the reflexive-transitive closure of their
/// declared refinement relation.
#[derive(Clone, Debug, Default)]
pub struct Library {
    /// Structures sorted by name, with the file each came from.
    structures: BTreeMap<String, (PathBuf, StructureDef)>,
    /// (finer, coarser) -> role maps along refinement paths (coarser role -> finer role),
    /// for finer != coarser.
    maps: BTreeMap<String, BTreeMap<String, Vec<RoleMap>>>,
    /// SHA-256 (hex) of the sources the library was read from, file names (without
    /// directories) and contents in load order; certificates record it.
    hash: String,
    /// Where it was read from ([`Library::load`]; empty for other constructors).
    origin: String,
}

impl Library {
    /// Loads every `*.scg` file of `dir` (sorted by file name) and checks the result.
    pub fn load_dir(dir: &Path) -> Result<Library, Vec<LibraryError>> {
        let io_err = |e: std::io::Error| {
            vec![LibraryError {
                file: dir.to_path_buf(),
                line: 0,
                col: 0,
                msg: format!("cannot read the SCG library directory: {e}"),
            }]
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "scg") && p.is_file())
            .collect();
        files.sort();
        let mut sources = Vec::new();
        for f in files {
            match std::fs::read_to_string(&f) {
                Ok(s) => sources.push((f, s)),
                Err(e) => {
                    return Err(vec![LibraryError {
                        file: f,
                        line: 0,
                        col: 0,
                        msg: format!("cannot read: {e}"),
                    }])
                }
            }
        }
        let lib = Library::from_sources(sources)?;
        tracing::info!(
            dir = %dir.display(),
            structures = lib.structures.len(),
            "loaded the SCG library"
        );
        Ok(lib)
    }

    /// Builds a library from (file name, DSL text) pairs; structures must have distinct names.
    pub fn from_sources(
        sources: impl IntoIterator<Item = (PathBuf, String)>,
    ) -> Result<Library, Vec<LibraryError>> {
        let mut entries = Vec::new();
        let mut errs = Vec::new();
        let mut hasher = Sha256::new();
        for (file, src) in sources {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
            hash_source(&mut hasher, name.as_deref().unwrap_or(""), &src);
            match parse_dsl(&src) {
                Ok(ss) => entries.extend(ss.into_iter().map(|s| (file.clone(), s))),
                Err(e) => errs.push(LibraryError::parse(&file, e)),
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut lib = Library::build(entries)?;
        lib.hash = hex(&hasher.finalize());
        Ok(lib)
    }

    /// SHA-256 (hex) of the library's sources (see [`Library::from_sources`]): two
    /// libraries with the same hash generate the same shape classes.
    pub fn sha256(&self) -> &str {
        &self.hash
    }

    /// Where the library was read from, for reports (a directory and how it was found,
    /// or `embedded`; see [`super::location`]); empty when it was not [`Library::load`]ed.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// This library, recorded as read from `origin`.
    pub fn with_origin(mut self, origin: String) -> Library {
        self.origin = origin;
        self
    }

    /// This library plus the structures of one more file, which replace same-named
    /// library structures (used by `shapemc scg check`).
    pub fn with_file(&self, file: &Path, src: &str) -> Result<Library, Vec<LibraryError>> {
        let new = parse_dsl(src).map_err(|e| vec![LibraryError::parse(file, e)])?;
        let mut entries: Vec<(PathBuf, StructureDef)> = Vec::new();
        let names: BTreeSet<&str> = new.iter().map(|s| s.name.as_str()).collect();
        for (n, (f, s)) in &self.structures {
            if !names.contains(n.as_str()) {
                entries.push((f.clone(), s.clone()));
            }
        }
        entries.extend(new.into_iter().map(|s| (file.to_path_buf(), s)));
        let mut lib = Library::build(entries)?;
        let mut hasher = Sha256::new();
        hasher.update(self.hash.as_bytes());
        hash_source(&mut hasher, &file.display().to_string(), src);
        lib.hash = hex(&hasher.finalize());
        Ok(lib)
    }

    fn build(entries: Vec<(PathBuf, StructureDef)>) -> Result<Library, Vec<LibraryError>> {
        let mut errs = Vec::new();
        let mut structures: BTreeMap<String, (PathBuf, StructureDef)> = BTreeMap::new();
        for (file, s) in entries {
            let before = errs.len();
            check_structure(&file, &s, &mut errs);
            if errs.len() == before {
                justify_constraints(&file, &s, &mut errs);
            }
            if let Some((f0, s0)) = structures.get(&s.name) {
                errs.push(LibraryError::at(
                    &file,
                    s.pos,
                    format!(
                        "structure `{}` is already defined at {}:{}",
                        s.name,
                        f0.display(),
                        s0.pos
                    ),
                ));
                continue;
            }
            structures.insert(s.name.clone(), (file, s));
        }
        let mut lib = Library {
            structures,
            maps: BTreeMap::new(),
            hash: String::new(),
            origin: String::new(),
        };
        if errs.is_empty() {
            lib.check_refinements(&mut errs);
        }
        if errs.is_empty() {
            lib.close_refinements(&mut errs);
        }
        if errs.is_empty() {
            Ok(lib)
        } else {
            Err(errs)
        }
    }

    /// All structures, sorted by name.
    pub fn structures(&self) -> impl Iterator<Item = &StructureDef> {
        self.structures.values().map(|(_, s)| s)
    }
    /// The structure with the given name.
    pub fn structure(&self, name: &str) -> Option<&StructureDef> {
        self.structures.get(name).map(|(_, s)| s)
    }
    /// The file a structure was loaded from.
    pub fn source_file(&self, name: &str) -> Option<&Path> {
        self.structures.get(name).map(|(f, _)| f.as_path())
    }
    /// Role maps (coarser role -> finer role) of all refinement paths from `finer` to
    /// `coarser`; the identity map when they are equal; empty when unrelated.
    pub fn role_maps(&self, finer: &str, coarser: &str) -> Vec<RoleMap> {
        if finer == coarser {
            return match self.structure(finer) {
                Some(s) => vec![s.roles.iter().map(|r| (r.clone(), r.clone())).collect()],
                None => Vec::new(),
            };
        }
        self.strict_role_maps(finer, coarser).to_vec()
    }
    /// Role maps of refinement paths of length >= 1 from `finer` to `coarser`.
    pub fn strict_role_maps(&self, finer: &str, coarser: &str) -> &[RoleMap] {
        self.maps
            .get(finer)
            .and_then(|m| m.get(coarser))
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    fn check_refinements(&self, errs: &mut Vec<LibraryError>) {
        for (file, s) in self.structures.values() {
            for r in &s.refines {
                let Some(c) = self.structure(&r.coarser) else {
                    errs.push(LibraryError::at(
                        file,
                        r.pos,
                        format!("refines unknown structure `{}`", r.coarser),
                    ));
                    continue;
                };
                if c.name == s.name {
                    errs.push(LibraryError::at(
                        file,
                        r.pos,
                        "a structure cannot refine itself",
                    ));
                    continue;
                }
                let mut map = RoleMap::new();
                let mut ok = true;
                for (cr, fr) in &r.role_map {
                    if !c.roles.contains(cr) {
                        errs.push(LibraryError::at(
                            file,
                            r.pos,
                            format!("`{cr}` is not a role of `{}`", c.name),
                        ));
                        ok = false;
                    } else if !s.roles.contains(fr) {
                        errs.push(LibraryError::at(
                            file,
                            r.pos,
                            format!("`{fr}` is not a role of `{}`", s.name),
                        ));
                        ok = false;
                    } else if map.insert(cr.clone(), fr.clone()).is_some() {
                        errs.push(LibraryError::at(
                            file,
                            r.pos,
                            format!("role `{cr}` is mapped twice"),
                        ));
                        ok = false;
                    }
                }
                let missing: Vec<&String> =
                    c.roles.iter().filter(|x| !map.contains_key(*x)).collect();
                if ok && !missing.is_empty() {
                    errs.push(LibraryError::at(
                        file,
                        r.pos,
                        format!(
                            "the role map must bind every role of `{}`; missing: {}",
                            c.name,
                            missing
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                    ok = false;
                }
                let targets: BTreeSet<&String> = map.values().collect();
                if ok && targets.len() != map.len() {
                    errs.push(LibraryError::at(
                        file,
                        r.pos,
                        "the role map must be injective (distinct roles of this structure)",
                    ));
                    ok = false;
                }
                if ok {
                    self.check_family_inclusion(file, s, c, &map, r.pos, errs);
                }
            }
        }
    }

    /// Every family of `c` must exist in `s` and generate a subset of its predicates.
    fn check_family_inclusion(
        &self,
        file: &Path,
        s: &StructureDef,
        c: &StructureDef,
        map: &RoleMap,
        pos: Pos,
        errs: &mut Vec<LibraryError>,
    ) {
        let fine_b: RoleBinding = s
            .roles
            .iter()
            .map(|r| (r.clone(), format!("@{r}")))
            .collect();
        let coarse_b: RoleBinding = map
            .iter()
            .map(|(cr, fr)| (cr.clone(), format!("@{fr}")))
            .collect();
        let d = TrackingDef::new(["@p", "@q"], ["@p"], ["@phi"]);
        let mut fail = |msg: String| errs.push(LibraryError::at(file, pos, msg));
        for fam in &c.families {
            let Some(mine) = s.family(&fam.name) else {
                fail(format!(
                    "`{}` refines `{}` but has no family `{}`",
                    s.name, c.name, fam.name
                ));
                continue;
            };
            if fam.always && !mine.always {
                fail(format!(
                    "family `{}` is `always` in `{}`, so it must be `always` in `{}` too",
                    fam.name, c.name, s.name
                ));
            }
            let one: BTreeSet<String> = [fam.name.clone()].into();
            let fine = instantiate(s, &one, &fine_b, &d);
            let coarse = instantiate(c, &one, &coarse_b, &d);
            for p in &coarse.instr {
                if !fine.instr.contains(p) {
                    let shown = p.def.as_ref().map(|f| f.to_string()).unwrap_or_default();
                    fail(format!(
                        "family `{}` of `{}` lacks predicate `{}` of `{}` (defined as `{}` after renaming roles)",
                        fam.name, s.name, p.sym, c.name, shown
                    ));
                }
            }
            if !coarse.abs.is_subset(&fine.abs) {
                fail(format!(
                    "family `{}`: abstraction predicates of `{}` are not included in `{}`",
                    fam.name, c.name, s.name
                ));
            }
            if coarse
                .constraints
                .iter()
                .any(|k| !fine.constraints.contains(k))
            {
                fail(format!(
                    "family `{}`: constraints of `{}` are not included in `{}`",
                    fam.name, c.name, s.name
                ));
            }
        }
    }

    /// Computes role maps along all refinement paths and rejects cycles.
    fn close_refinements(&mut self, errs: &mut Vec<LibraryError>) {
        fn dfs(
            lib: &Library,
            cur: &str,
            acc: &RoleMap,
            stack: &mut Vec<String>,
            out: &mut Vec<(String, RoleMap)>,
        ) -> Result<(), (String, Vec<String>)> {
            let Some(s) = lib.structure(cur) else {
                return Ok(());
            };
            for r in &s.refines {
                if stack.contains(&r.coarser) {
                    let mut cyc = stack.clone();
                    cyc.push(r.coarser.clone());
                    return Err((cur.to_string(), cyc));
                }
                // composed: coarser role -> role of `cur` -> role of the start
                let m: RoleMap = r
                    .role_map
                    .iter()
                    .map(|(cr, fr)| (cr.clone(), acc.get(fr).cloned().unwrap_or(fr.clone())))
                    .collect();
                out.push((r.coarser.clone(), m.clone()));
                stack.push(r.coarser.clone());
                dfs(lib, &r.coarser, &m, stack, out)?;
                stack.pop();
            }
            Ok(())
        }
        let names: Vec<String> = self.structures.keys().cloned().collect();
        for n in names {
            let s = &self.structures[&n];
            let id: RoleMap = s.1.roles.iter().map(|r| (r.clone(), r.clone())).collect();
            let mut out = Vec::new();
            if let Err((_, cyc)) = dfs(self, &n, &id, &mut vec![n.clone()], &mut out) {
                let (file, s) = &self.structures[&n];
                errs.push(LibraryError::at(
                    file,
                    s.pos,
                    format!("cyclic refinement: {}", cyc.join(" refines ")),
                ));
                return;
            }
            for (c, m) in out {
                let v = self
                    .maps
                    .entry(n.clone())
                    .or_default()
                    .entry(c)
                    .or_default();
                if !v.contains(&m) {
                    v.push(m);
                }
            }
        }
    }
}

/// Checks one structure in isolation.
fn check_structure(file: &Path, s: &StructureDef, errs: &mut Vec<LibraryError>) {
    let mut err = |p: Pos, m: String| errs.push(LibraryError::at(file, p, m));
    let mut seen = BTreeSet::new();
    for r in &s.roles {
        if RESERVED.contains(&r.as_str()) {
            err(s.pos, format!("role name `{r}` is reserved"));
        }
        if !seen.insert(r.as_str()) {
            err(s.pos, format!("duplicate role `{r}`"));
        }
    }
    let mut required = BTreeSet::new();
    for q in &s.requires {
        for r in &q.roles {
            if !s.roles.contains(r) {
                err(q.pos, format!("`{r}` is not a role of `{}`", s.name));
            }
            required.insert(r.as_str());
        }
    }
    for r in &s.roles {
        if !required.contains(r.as_str()) {
            err(
                s.pos,
                format!("role `{r}` occurs in no `requires` clause, so recognition cannot bind it"),
            );
        }
    }
    let optional = s.optional_families().count();
    if optional > MAX_FAMILIES {
        err(
            s.pos,
            format!(
                "`{}` has {optional} families; at most {MAX_FAMILIES} are supported (2^k SCGs per binding)",
                s.name,
            ),
        );
    }
    let mut fams = BTreeSet::new();
    let mut pred_names: Vec<(PredSym, Pos)> = Vec::new();
    for fam in &s.families {
        if !fams.insert(fam.name.as_str()) {
            err(fam.pos, format!("duplicate family `{}`", fam.name));
        }
        let mut ph = BTreeSet::new();
        for x in &fam.pointers {
            if s.roles.contains(x) || RESERVED.contains(&x.as_str()) {
                err(
                    fam.pos,
                    format!("pointer placeholder `{x}` clashes with a role or core name"),
                );
            }
            if !ph.insert(x.as_str()) {
                err(fam.pos, format!("duplicate pointer placeholder `{x}`"));
            }
        }
        for p in &fam.preds {
            let n = p.sym.name.as_str();
            if RESERVED.contains(&n)
                || s.roles.iter().any(|r| r == n)
                || fam.pointers.iter().any(|x| x == n)
            {
                err(
                    p.pos,
                    format!("predicate name `{n}` clashes with a core name, role or placeholder"),
                );
            }
            // Same name is fine only with a different number of parameters, or if the
            // parameters differ in two distinct roles at the same position (then
            // instances differ under every injective binding).
            for (other, prev) in pred_names.iter().filter(|(o, _)| o.name == n) {
                let distinct = other.params.len() != p.sym.params.len()
                    || other
                        .params
                        .iter()
                        .zip(&p.sym.params)
                        .any(|(a, b)| a != b && s.roles.contains(a) && s.roles.contains(b));
                if !distinct {
                    err(
                        p.pos,
                        format!(
                            "predicate `{}` clashes with `{other}` defined at {prev}",
                            p.sym
                        ),
                    );
                }
            }
            pred_names.push((p.sym.clone(), p.pos));
            let vars: Vec<&str> = p.vars.iter().map(|v| v.as_str()).collect();
            if vars != ["v"] && vars != ["v1", "v2"] {
                err(
                    p.pos,
                    format!(
                        "predicate `{}` must be unary `(v)` or binary `(v1, v2)`",
                        p.sym
                    ),
                );
            }
            for par in &p.sym.params {
                if !fam.pointers.contains(par) && !s.roles.contains(par) {
                    err(
                        p.pos,
                        format!(
                            "parameter `{par}` of `{}` is neither a role nor a pointer placeholder of family `{}`",
                            p.sym, fam.name
                        ),
                    );
                }
            }
            let free = p.def.free_vars();
            if let Some(v) = free.iter().find(|v| !p.vars.contains(v)) {
                err(
                    p.pos,
                    format!("free variable `{v}` in the definition of `{}`", p.sym),
                );
            }
            for x in placeholders_in(&p.def, fam) {
                if !p.sym.params.contains(&x) {
                    err(
                        p.pos,
                        format!(
                            "the definition of `{}` mentions pointer placeholder `{x}`, which must be a parameter of the predicate",
                            p.sym
                        ),
                    );
                }
            }
            if let Err(m) = check_refs(&p.def, s, fam) {
                err(p.pos, m);
            }
        }
        for k in &fam.constraints {
            let free = k.formula.free_vars();
            if !free.is_empty() {
                err(
                    k.pos,
                    format!("constraint has free variables: {}", free.join(", ")),
                );
            }
            if let Err(m) = check_refs(&k.formula, s, fam) {
                err(k.pos, m);
            }
        }
    }
}

/// Rejects every constraint of `s` that some small concrete heap falsifies
/// ([`super::justify`]); `s` passed [`check_structure`].
fn justify_constraints(file: &Path, s: &StructureDef, errs: &mut Vec<LibraryError>) {
    for fam in &s.families {
        for k in &fam.constraints {
            match super::justify::justify(s, fam, k) {
                Ok(j) => tracing::debug!(
                    structure = %s.name,
                    family = %fam.name,
                    heaps = j.heaps,
                    max_cells = j.max_cells,
                    "constraint justified"
                ),
                Err(m) => errs.push(LibraryError::at(file, k.pos, m)),
            }
        }
    }
}

/// Checks that `f` only uses `sm`, `pt[<placeholder>]`, role fields and predicates of `fam`.
fn check_refs(f: &Formula, s: &StructureDef, fam: &FamilyDef) -> Result<(), String> {
    let mut res = Ok(());
    f.visit(&mut |g| {
        if res.is_err() {
            return;
        }
        let Formula::Pred(p, args) = g else { return };
        let n = p.name.as_str();
        let ar = args.len();
        res = if n == "sm" {
            if p.params.is_empty() && ar == 1 {
                Ok(())
            } else {
                Err("`sm` takes no parameters and one argument".to_string())
            }
        } else if n == "ptd" {
            if p.params.is_empty() && ar == 1 {
                Ok(())
            } else {
                Err("`ptd` (some tracked pointer points to the cell) takes no parameters and one argument".to_string())
            }
        } else if n == "pt" {
            if p.params.len() == 1 && fam.pointers.contains(&p.params[0]) && ar == 1 {
                Ok(())
            } else {
                Err(format!(
                    "`{p}` must be `pt[x](v)` with `x` a pointer placeholder of family `{}`",
                    fam.name
                ))
            }
        } else if s.roles.iter().any(|r| r == n) {
            if p.params.is_empty() && ar == 2 {
                Ok(())
            } else {
                Err(format!("role field `{n}` is binary and takes no parameters"))
            }
        } else if let Some(t) = fam.preds.iter().find(|t| t.sym.name == n) {
            if t.vars.len() != ar {
                Err(format!("`{n}` has arity {}, used with {ar} arguments", t.vars.len()))
            } else if p.params.iter().any(|x| !fam.pointers.contains(x) && !s.roles.contains(x)) {
                Err(format!("parameters of `{p}` must be roles or placeholders"))
            } else {
                Ok(())
            }
        } else {
            Err(format!(
                "unknown predicate `{p}`: a definition may use `sm`, `pt[x]`, `ptd`, the role fields ({}) and predicates of family `{}`",
                s.roles.join(", "),
                fam.name
            ))
        };
    });
    res
}

/// Feeds one source file (name and text, each length-prefixed) into `h`.
fn hash_source(h: &mut Sha256, name: &str, src: &str) {
    for part in [name, src] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
}

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLL: &str = "structure sll {\n  roles next;\n  requires acyclic_list(next);\n  family reach for x {\n    pred r[x, next](v) := E u. pt[x](u) & TC(a, b: next(a, b))(u, v);\n  }\n}\n";

    fn load(files: &[(&str, &str)]) -> Result<Library, Vec<String>> {
        Library::from_sources(files.iter().map(|(f, s)| (PathBuf::from(f), s.to_string())))
            .map_err(|es| es.iter().map(|e| e.to_string()).collect())
    }

    fn first_err(files: &[(&str, &str)]) -> String {
        match load(files) {
            Ok(_) => panic!("expected an error"),
            Err(es) => es[0].clone(),
        }
    }

    fn with_family(body: &str) -> String {
        format!("structure s {{\n  roles next, prev;\n  requires doubly_linked(next, prev);\n  family f for x {{\n    {body}\n  }}\n}}\n")
    }

    #[test]
    fn local_checks_point_at_the_declaration() {
        let cases = [
            (
                "pred p[next](v) := nxt(v, v);",
                "s.scg:5:5: unknown predicate `nxt`",
            ),
            (
                "pred p[next](v) := next(v, w);",
                "s.scg:5:5: free variable `w`",
            ),
            (
                "pred p[next](u) := next(u, u);",
                "s.scg:5:5: predicate `p[next]` must be unary",
            ),
            (
                "pred p[next](v) := pt[x](v);",
                "s.scg:5:5: the definition of `p[next]` mentions pointer placeholder `x`",
            ),
            (
                "pred p[x](v) := pt[next](v);",
                "s.scg:5:5: `pt[next]` must be `pt[x](v)`",
            ),
            (
                "pred p[y](v) := sm(v);",
                "s.scg:5:5: parameter `y` of `p[y]`",
            ),
            (
                "pred next(v) := sm(v);",
                "s.scg:5:5: predicate name `next` clashes",
            ),
            (
                "pred p[next](v) := next(v);",
                "s.scg:5:5: role field `next` is binary",
            ),
            (
                "pred p[next](v) := sm(v);\n    pred p[x](v) := pt[x](v);",
                "s.scg:6:5: predicate `p[x]` clashes with `p[next]`",
            ),
            (
                "constraint A v. sm(v) & next(v, w);",
                "s.scg:5:5: constraint has free variables: w",
            ),
            (
                "pred p[next](v) := sm(v);\n    pred q[next](v) := p[next](v, v);",
                "s.scg:6:5: `p` has arity 1",
            ),
        ];
        for (body, want) in cases {
            let src = with_family(body);
            let e = first_err(&[("s.scg", &src)]);
            assert!(e.starts_with(want), "{body}\n got: {e}\nwant: {want}");
        }
        // same name with distinct role parameters is fine (cancel[next, prev], cancel[prev, next])
        let ok = with_family(
            "pred c[next, prev](v) := A w. next(v, w) -> prev(w, v);\n    pred c[prev, next](v) := A w. prev(v, w) -> next(w, v);",
        );
        assert!(load(&[("s.scg", &ok)]).is_ok());
        // and so is the same name with a different number of parameters (r[x, next, prev]
        // and r[x, next] never denote the same predicate)
        let ok = with_family(
            "pred r[x, next, prev](v) := pt[x](v);\n    pred r[x, next](v) := pt[x](v);",
        );
        assert!(
            load(&[("s.scg", &ok)]).is_ok(),
            "{:?}",
            load(&[("s.scg", &ok)]).err()
        );
        let unbound = "structure s {\n  roles next, prev;\n  requires acyclic_list(next);\n}\n";
        assert!(first_err(&[("s.scg", unbound)])
            .starts_with("s.scg:1:1: role `prev` occurs in no `requires` clause"));
    }

    #[test]
    fn constraints_must_hold_on_every_heap() {
        let want = "s.scg:5:5: constraint does not hold on every heap: ";
        // false everywhere, even on the empty heap
        let e = first_err(&[("s.scg", &with_family("constraint 0;"))]);
        assert_eq!(e, format!("{want}heap {{}}"));
        // acyclicity is not a property of every heap (recognition checks it on the
        // samples; it is no integrity constraint)
        let e = first_err(&[(
            "s.scg",
            &with_family("constraint A v. !TC(a, b: next(a, b))(v, v);"),
        )]);
        assert_eq!(e, format!("{want}heap {{c0.next = c0}}"));
        // a wrong claim about an instrumentation predicate, with its instance
        let e = first_err(&[(
            "s.scg",
            &with_family(
                "pred r[x, next](v) := E u. pt[x](u) & TC(a, b: next(a, b))(u, v);\n    constraint A v. r[x, next](v) -> !pt[x](v);",
            ),
        )]);
        assert_eq!(
            e,
            "s.scg:6:5: constraint does not hold on every heap: heap {c0.next = c0; p1 = c0, p2 = NULL} (with x = p1)"
        );
        // valid ones load: sharing needs an incoming edge; fields are functions
        let ok = with_family(
            "pred is[next](v) := E a. E b. next(a, v) & next(b, v) & !(a == b);\n    constraint A v. is[next](v) -> (E a. next(a, v));\n    constraint A v. A w. A z. prev(v, w) & prev(v, z) -> w == z;",
        );
        assert!(
            load(&[("s.scg", &ok)]).is_ok(),
            "{:?}",
            load(&[("s.scg", &ok)]).err()
        );
    }

    #[test]
    fn refinement_checks() {
        let dll = |refines: &str, fam: &str| {
            format!("structure dll {{\n  roles n, p;\n  requires doubly_linked(n, p);\n  {refines}\n{fam}}}\n")
        };
        let reach_ok = "  family reach for y {\n    pred r[y, n](v) := E u. pt[y](u) & TC(a, b: n(a, b))(u, v);\n  }\n";
        let reach_bad = "  family reach for y {\n    pred r[y, n](v) := E u. pt[y](u) & TC(a, b: p(a, b))(u, v);\n  }\n";
        assert!(load(&[
            ("sll.scg", SLL),
            ("dll.scg", &dll("refines sll (next = n);", reach_ok))
        ])
        .is_ok());
        let cases = [
            (
                dll("refines sll (next = n);", ""),
                "dll.scg:4:3: `dll` refines `sll` but has no family `reach`",
            ),
            (
                dll("refines sll (next = n);", reach_bad),
                "dll.scg:4:3: family `reach` of `dll` lacks predicate `r[@p, @n]`",
            ),
            (
                dll("refines lst (next = n);", reach_ok),
                "dll.scg:4:3: refines unknown structure `lst`",
            ),
            (
                dll("refines sll ();", reach_ok),
                "dll.scg:4:3: the role map must bind every role of `sll`; missing: next",
            ),
            (
                dll("refines sll (next = q);", reach_ok),
                "dll.scg:4:3: `q` is not a role of `dll`",
            ),
            (
                dll("refines dll (n = n, p = p);", reach_ok),
                "dll.scg:4:3: a structure cannot refine itself",
            ),
        ];
        for (src, want) in cases {
            let e = first_err(&[("sll.scg", SLL), ("dll.scg", &src)]);
            assert!(e.starts_with(want), "got: {e}\nwant: {want}");
        }
        let e = first_err(&[("a.scg", SLL), ("b.scg", SLL)]);
        assert!(
            e.starts_with("b.scg:1:1: structure `sll` is already defined at a.scg:1:1"),
            "{e}"
        );
        let a = "structure a {\n  roles n;\n  requires i(n);\n  refines b (n = n);\n}\n";
        let b = "structure b {\n  roles n;\n  requires i(n);\n  refines a (n = n);\n}\n";
        let e = first_err(&[("a.scg", a), ("b.scg", b)]);
        assert!(
            e.contains("cyclic refinement: a refines b refines a"),
            "{e}"
        );
    }

    #[test]
    fn transitive_role_maps_compose() {
        let a = "structure a {\n  roles n;\n  requires i(n);\n}\n";
        let b = "structure b {\n  roles m, k;\n  requires j(m, k);\n  refines a (n = k);\n}\n";
        let c = "structure c {\n  roles z, y, w;\n  requires l(z, y, w);\n  refines b (m = w, k = z);\n}\n";
        let lib = load(&[("a.scg", a), ("b.scg", b), ("c.scg", c)]).unwrap();
        let maps = lib.role_maps("c", "a");
        assert_eq!(maps.len(), 1);
        assert_eq!(maps[0].get("n").map(|s| s.as_str()), Some("z"));
        assert!(lib.role_maps("a", "c").is_empty());
        assert_eq!(lib.role_maps("b", "b").len(), 1);
    }

    #[test]
    fn ptd_expands_to_every_tracked_pointer_and_segments_are_recognised() {
        let src = "structure s {\n  roles next;\n  requires cyclic_list(next);\n  family seg for x {\n    pred rs[x, next](v) := E u. pt[x](u) & (u == v | TC(a, b: next(a, b) & !ptd(b))(u, v));\n  }\n}\n";
        let lib = load(&[("s.scg", src)]).unwrap();
        let st = lib.structure("s").unwrap();
        let binding: RoleBinding = [("next".to_string(), "succ".to_string())].into();
        let d = TrackingDef::new(["h", "p"], ["h", "p"], Vec::<&str>::new());
        let fams: BTreeSet<String> = ["seg".to_string()].into();
        let c = instantiate(st, &fams, &binding, &d);
        let rs = c
            .instr
            .iter()
            .find(|p| p.sym == PredSym::with("rs", &["p", "succ"]))
            .expect("rs[p, succ]");
        let want = crate::tvla::families::segment("p", &["succ"], &["h", "p"]);
        assert!(
            crate::tvla::families::alpha_eq(
                want.def.as_ref().unwrap(),
                rs.def.as_ref().unwrap(),
                &mut Vec::new()
            ),
            "{}",
            rs.def.as_ref().unwrap()
        );
        assert_eq!(
            crate::tvla::families::recognize(rs),
            Some(crate::tvla::families::Family::Seg(
                "p".into(),
                vec!["succ".into()]
            ))
        );
        // `ptd` takes no parameters
        let bad = src.replace("!ptd(b)", "!ptd[x](b)");
        assert!(first_err(&[("s.scg", &bad)]).contains("`ptd`"));
    }
}
