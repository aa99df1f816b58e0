//! Atoms of interpolants, mapped from SSA symbols back to program variables, for the
//! refinement of tracking definitions (Algorithm 3, step 1 of the paper): which pointers
//! an atom mentions, which are dereferenced (index of a field array), and the field
//! assertion it corresponds to (`l1->succ == p`, `p->data == 0`), rendered like the paper.
//!
//! Atoms are the relations (`=`, `<=`, ...) of the interpolant after resolving
//! `select(store(..))` and lifting `ite` out of atoms (`P(ite(c,a,b))` contributes the atoms
//! of `c`, `P(a)` and `P(b)`). Polarity is dropped: `p != NULL` gives the atom `p == NULL`.

use super::encode::{Live, SymKind, SymbolTable, STRIDE};
use super::term::{Fun, SymId, Term};
use crate::cfa::{FieldRef, Program, VarId};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// A comparison relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    /// C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            Rel::Eq => "==",
            Rel::Ne => "!=",
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
        }
    }
    /// The relation with its operands swapped.
    pub fn flip(self) -> Rel {
        match self {
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
            r => r,
        }
    }
}

/// The right-hand side of a field assertion.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operand {
    Null,
    Int(i128),
    Var(VarId),
    Field {
        ptr: VarId,
        field: FieldRef,
    },
    /// The object allocated by the k-th allocation of the path (k from 1).
    Object(i64),
    /// Anything else, rendered.
    Other(String),
}

/// A field assertion `ptr->field rel rhs`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldAssertion {
    pub ptr: VarId,
    pub field: FieldRef,
    pub rel: Rel,
    pub rhs: Operand,
}

impl FieldAssertion {
    /// Renders the assertion over the field only, as in the paper's tracking definitions
    /// (`succ == p`, `data == 0`).
    pub fn field_text(&self, prog: &Program) -> String {
        format!(
            "{} {} {}",
            prog.field(self.field).name,
            self.rel.symbol(),
            operand_str(prog, &self.rhs)
        )
    }
}

/// What an atom talks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomKind {
    /// (Dis)equality between pointer variables or with NULL.
    Pointer,
    /// An assertion over a field of a dereferenced pointer.
    Field,
    /// Memory validity ghost state (`valid(p)`, `heap(p)`).
    Validity,
    /// Integer arithmetic over variables.
    Arith,
}

/// One atom of an interpolant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// Rendering over program variables, e.g. `l1->succ == p`.
    pub text: String,
    pub kind: AtomKind,
    /// Program variables the atom mentions.
    pub vars: BTreeSet<VarId>,
    /// The pointer-typed ones.
    pub pointers: BTreeSet<VarId>,
    /// Pointers occurring in the index of a field array (dereferenced).
    pub dereferenced: BTreeSet<VarId>,
    /// Fields the atom reads.
    pub fields: BTreeSet<FieldRef>,
    pub field_assertion: Option<FieldAssertion>,
    /// True if the atom mentions a variable version of a suspended (caller) activation.
    pub outer_frame: bool,
}

/// Atoms of one interpolant (see [`crate::smt::Interpolant`]).
#[derive(Clone, Debug, Default)]
pub struct PositionAtoms {
    pub atoms: Vec<Atom>,
    pub aliases: BTreeSet<(VarId, VarId)>,
}

/// Extracts the atoms of `term` (an interpolant at a position with state `live`), at most
/// `max_atoms` of them (extra ones are dropped with a log message; fewer atoms only make
/// refinement coarser, never unsound). Returns the atoms and alias candidates.
pub fn extract_atoms(
    prog: &Program,
    syms: &SymbolTable,
    live: &Live,
    term: &Arc<Term>,
    max_atoms: usize,
) -> (Vec<Atom>, BTreeSet<(VarId, VarId)>) {
    let cx = Cx {
        prog,
        syms,
        live,
        max: max_atoms,
        memo: Default::default(),
        vmemo: Default::default(),
    };
    let mut raw: Vec<Arc<Term>> = Vec::new();
    let mut seen = rustc_hash::FxHashMap::default();
    cx.collect_bool(term, &mut raw, &mut seen);
    let mut atoms: Vec<Atom> = Vec::new();
    let mut texts = BTreeSet::new();
    let mut aliases = BTreeSet::new();
    for r in raw {
        if let Some(a) = cx.atom(&r) {
            if let Some((x, y)) = cx.alias(&r) {
                aliases.insert((x.min(y), x.max(y)));
            }
            if texts.insert(a.text.clone()) {
                atoms.push(a);
            }
        }
    }
    (atoms, aliases)
}

/// The theory atoms of `term` (relations `=`, `<=`, `<`, `>=`, `>` between non-Boolean
/// terms over the SSA symbols of `syms`), after the same normalisation as
/// [`extract_atoms`]: `select(store(..))` resolved, `ite` lifted out of atoms (each
/// argument replaced by its ite-free leaf values, leaves related pairwise), `distinct`
/// split into equalities. At most `max_atoms` atoms; polarity is dropped. Atoms comparing
/// a pointer with the fixed address of an object (`l < 12288`, the bounds the
/// interpolation adds about objects allocated later on the path) are left out. Used by
/// predicate abstraction to turn interpolant atoms into predicates over program variables.
pub fn theory_atoms(
    prog: &Program,
    syms: &SymbolTable,
    term: &Arc<Term>,
    max_atoms: usize,
) -> Vec<Arc<Term>> {
    let live = Live::default();
    let cx = Cx {
        prog,
        syms,
        live: &live,
        max: max_atoms,
        memo: Default::default(),
        vmemo: Default::default(),
    };
    let mut raw: Vec<Arc<Term>> = Vec::new();
    let mut seen = rustc_hash::FxHashMap::default();
    cx.collect_bool(term, &mut raw, &mut seen);
    raw.retain(|a| !cx.mentions_object(a));
    raw
}

/// `norm` results keyed by node address; the key term is kept alive with the result.
type NormMemo = rustc_hash::FxHashMap<usize, (Arc<Term>, Arc<Term>)>;

struct Cx<'a> {
    prog: &'a Program,
    syms: &'a SymbolTable,
    live: &'a Live,
    max: usize,
    /// `norm` results by node address (terms are DAGs).
    memo: std::cell::RefCell<NormMemo>,
    vmemo: std::cell::RefCell<ValuesMemo>,
}

/// Leaf values per node (key kept alive).
type ValuesMemo = rustc_hash::FxHashMap<usize, (Arc<Term>, Vec<Arc<Term>>)>;

/// Most leaf values of one term / combinations of one atom.
const VALUES_MAX: usize = 32;

fn app(f: Fun, args: Vec<Arc<Term>>) -> Arc<Term> {
    Arc::new(Term::App(f, args))
}

impl Cx<'_> {
    fn is_bool(&self, t: &Term) -> bool {
        match t {
            Term::Bool(_) => true,
            Term::Num(_) => false,
            Term::Sym(s) => matches!(self.syms.get(*s).kind, SymKind::AllocNull { .. }),
            Term::App(f, args) => match f {
                Fun::Not
                | Fun::And
                | Fun::Or
                | Fun::Implies
                | Fun::Xor
                | Fun::Eq
                | Fun::Distinct
                | Fun::Le
                | Fun::Lt
                | Fun::Ge
                | Fun::Gt => true,
                Fun::Ite => args.get(1).is_some_and(|a| self.is_bool(a)),
                Fun::Select => {
                    matches!(
                        &*args[0],
                        Term::Sym(s) if matches!(self.syms.get(*s).kind, SymKind::Heap { .. })
                    ) || self.array_is_heap(&args[0])
                }
                _ => false,
            },
        }
    }

    fn array_is_heap(&self, t: &Term) -> bool {
        match t {
            Term::Sym(s) => matches!(self.syms.get(*s).kind, SymKind::Heap { .. }),
            Term::App(Fun::Store, a) => self.array_is_heap(&a[0]),
            Term::App(Fun::ConstArray, a) => matches!(&*a[0], Term::Bool(_)),
            _ => false,
        }
    }

    /// Collects the theory atoms of a Boolean term (with ite lifted), deduplicated.
    fn collect_bool(
        &self,
        t: &Arc<Term>,
        out: &mut Vec<Arc<Term>>,
        seen: &mut rustc_hash::FxHashMap<usize, Arc<Term>>,
    ) {
        if out.len() >= self.max || seen.insert(Arc::as_ptr(t) as usize, t.clone()).is_some() {
            return;
        }
        match &**t {
            Term::Bool(_) => {}
            Term::App(Fun::Not | Fun::And | Fun::Or | Fun::Implies | Fun::Xor, args) => {
                for a in args {
                    self.collect_bool(a, out, seen);
                }
            }
            Term::App(Fun::Ite, args) if self.is_bool(t) => {
                for a in args {
                    self.collect_bool(a, out, seen);
                }
            }
            Term::App(Fun::Eq, args) if args.iter().any(|a| self.is_bool(a)) => {
                for a in args {
                    self.collect_bool(a, out, seen);
                }
            }
            Term::App(Fun::Distinct, args) if args.len() > 2 => {
                for (i, a) in args.iter().enumerate() {
                    for b in &args[i + 1..] {
                        let e = app(Fun::Eq, vec![a.clone(), b.clone()]);
                        self.collect_bool(&e, out, seen);
                    }
                }
            }
            Term::App(f, args) => {
                // A theory atom: normalise its arguments, expand each into its ite-free
                // leaf values (the ite conditions are atoms of their own), and relate the
                // leaves pairwise. This over-approximates the atom set (pairs that never
                // occur together), which only adds candidate predicates.
                let f = if *f == Fun::Distinct {
                    Fun::Eq
                } else {
                    f.clone()
                };
                let args: Vec<Arc<Term>> = args.iter().map(|a| self.norm(a)).collect();
                let mut conds = Vec::new();
                let vals: Vec<Vec<Arc<Term>>> =
                    args.iter().map(|a| self.values(a, &mut conds)).collect();
                for c in conds {
                    self.collect_bool(&c, out, seen);
                }
                let mut combos: Vec<Vec<Arc<Term>>> = vec![vec![]];
                for vs in &vals {
                    let mut next = Vec::new();
                    for c in &combos {
                        for v in vs {
                            if next.len() >= VALUES_MAX {
                                break;
                            }
                            let mut c2 = c.clone();
                            c2.push(v.clone());
                            next.push(c2);
                        }
                    }
                    combos = next;
                }
                for c in combos {
                    if out.len() >= self.max {
                        tracing::debug!("atom budget exhausted");
                        break;
                    }
                    out.push(app(f.clone(), c));
                }
            }
            Term::Sym(_) | Term::Num(_) => {}
        }
    }

    /// The ite-free leaf values of a normalised non-Boolean term (at most `VALUES_MAX`);
    /// the conditions of the ites passed are pushed to `conds`.
    fn values(&self, t: &Arc<Term>, conds: &mut Vec<Arc<Term>>) -> Vec<Arc<Term>> {
        let key = Arc::as_ptr(t) as usize;
        if let Some((_, v)) = self.vmemo.borrow().get(&key) {
            return v.clone();
        }
        let vs = match &**t {
            Term::App(Fun::Ite, a) if !self.is_bool(t) => {
                conds.push(a[0].clone());
                let mut v = self.values(&a[1], conds);
                for x in self.values(&a[2], conds) {
                    if v.len() < VALUES_MAX && !v.contains(&x) {
                        v.push(x);
                    }
                }
                v
            }
            Term::App(f, args) if !self.is_bool(t) => {
                let mut combos: Vec<Vec<Arc<Term>>> = vec![vec![]];
                for a in args {
                    let vs = self.values(a, conds);
                    let mut next = Vec::new();
                    for c in &combos {
                        for v in &vs {
                            if next.len() >= VALUES_MAX {
                                break;
                            }
                            let mut c2 = c.clone();
                            c2.push(v.clone());
                            next.push(c2);
                        }
                    }
                    combos = next;
                }
                combos.into_iter().map(|c| app(f.clone(), c)).collect()
            }
            _ => vec![t.clone()],
        };
        self.vmemo.borrow_mut().insert(key, (t.clone(), vs.clone()));
        vs
    }

    /// Resolves `select(store(a, i, v), j)` and `select(const(v), j)`.
    fn norm(&self, t: &Arc<Term>) -> Arc<Term> {
        let key = Arc::as_ptr(t) as usize;
        if let Some((_, r)) = self.memo.borrow().get(&key) {
            return r.clone();
        }
        let r = self.norm_uncached(t);
        // the key term is kept alive so that its address is not reused
        self.memo.borrow_mut().insert(key, (t.clone(), r.clone()));
        r
    }

    fn norm_uncached(&self, t: &Arc<Term>) -> Arc<Term> {
        match &**t {
            Term::App(Fun::Select, args) => {
                let arr = self.norm(&args[0]);
                let idx = self.norm(&args[1]);
                match &*arr {
                    Term::App(Fun::Store, sa) => {
                        let (a, i, v) = (&sa[0], &sa[1], &sa[2]);
                        if *i == idx {
                            return v.clone();
                        }
                        let rest = self.norm(&app(Fun::Select, vec![a.clone(), idx.clone()]));
                        if let (Term::Num(x), Term::Num(y)) = (&**i, &*idx) {
                            if x != y {
                                return rest;
                            }
                        }
                        app(
                            Fun::Ite,
                            vec![app(Fun::Eq, vec![i.clone(), idx]), v.clone(), rest],
                        )
                    }
                    Term::App(Fun::ConstArray, ca) => ca[0].clone(),
                    Term::App(Fun::Ite, ia) => {
                        let x = self.norm(&app(Fun::Select, vec![ia[1].clone(), idx.clone()]));
                        let y = self.norm(&app(Fun::Select, vec![ia[2].clone(), idx]));
                        app(Fun::Ite, vec![ia[0].clone(), x, y])
                    }
                    _ => app(Fun::Select, vec![arr, idx]),
                }
            }
            Term::App(f, args) => app(f.clone(), args.iter().map(|a| self.norm(a)).collect()),
            _ => t.clone(),
        }
    }

    fn var_of(&self, t: &Term) -> Option<VarId> {
        match t {
            Term::Sym(s) => match self.syms.get(*s).kind {
                SymKind::Var { var, .. } => Some(var),
                _ => None,
            },
            _ => None,
        }
    }

    fn field_of(&self, t: &Term) -> Option<FieldRef> {
        match t {
            Term::Sym(s) => match self.syms.get(*s).kind {
                SymKind::Field { field, .. } => Some(field),
                _ => None,
            },
            _ => None,
        }
    }

    fn is_ptr_term(&self, t: &Term) -> bool {
        match t {
            Term::Sym(_) => self
                .var_of(t)
                .is_some_and(|v| self.prog.vars[v].ty.is_ptr()),
            Term::App(Fun::Select, a) => self
                .field_of(&a[0])
                .is_some_and(|f| self.prog.field(f).ty.is_ptr()),
            _ => false,
        }
    }

    /// True for a relation between a pointer term and an object address numeral, or one
    /// reading a field of an object given by its address (`&obj#2->pred`).
    fn mentions_object(&self, atom: &Term) -> bool {
        fn reads_obj(t: &Term) -> bool {
            match t {
                Term::App(Fun::Select, a) if a.len() == 2 && is_obj(&a[1]) => true,
                Term::App(_, a) => a.iter().any(|x| reads_obj(x)),
                _ => false,
            }
        }
        let Term::App(_, args) = atom else {
            return false;
        };
        (args.len() == 2
            && (self.is_ptr_term(&args[0]) || self.is_ptr_term(&args[1]))
            && args.iter().any(|a| is_obj(a)))
            || reads_obj(atom)
    }

    fn alias(&self, atom: &Term) -> Option<(VarId, VarId)> {
        if let Term::App(Fun::Eq, a) = atom {
            if a.len() == 2 && self.is_ptr_term(&a[0]) && self.is_ptr_term(&a[1]) {
                return Some((self.var_of(&a[0])?, self.var_of(&a[1])?));
            }
        }
        None
    }

    fn atom(&self, t: &Arc<Term>) -> Option<Atom> {
        let Term::App(f, args) = &**t else {
            return None;
        };
        let rel = match f {
            Fun::Eq => Rel::Eq,
            Fun::Le => Rel::Le,
            Fun::Lt => Rel::Lt,
            Fun::Ge => Rel::Ge,
            Fun::Gt => Rel::Gt,
            _ => return None,
        };
        if args.len() != 2 || args[0] == args[1] {
            return None;
        }
        let ptr_ctx = self.is_ptr_term(&args[0]) || self.is_ptr_term(&args[1]);
        // Object addresses in an interpolant belong to allocations *later* on the path
        // (earlier objects are held by state symbols): such atoms say nothing about
        // the state at this location.
        if self.mentions_object(t) {
            return None;
        }
        let text = format!(
            "{} {} {}",
            self.render(&args[0], ptr_ctx),
            rel.symbol(),
            self.render(&args[1], ptr_ctx)
        );
        let mut a = Atom {
            text,
            kind: AtomKind::Arith,
            vars: BTreeSet::new(),
            pointers: BTreeSet::new(),
            dereferenced: BTreeSet::new(),
            fields: BTreeSet::new(),
            field_assertion: None,
            outer_frame: false,
        };
        let mut validity = false;
        for x in args {
            self.scan(x, false, &mut a, &mut validity);
        }
        a.pointers = a
            .vars
            .iter()
            .copied()
            .filter(|v| self.prog.vars[*v].ty.is_ptr())
            .collect();
        // field assertion: `p->f rel rhs` with p a variable
        for (side, other, r) in [(0, 1, rel), (1, 0, rel.flip())] {
            if let Term::App(Fun::Select, s) = &*args[side] {
                if let (Some(field), Some(ptr)) = (self.field_of(&s[0]), self.var_of(&s[1])) {
                    let rhs = self.operand(&args[other], ptr_ctx);
                    a.field_assertion = Some(FieldAssertion {
                        ptr,
                        field,
                        rel: r,
                        rhs,
                    });
                    break;
                }
            }
        }
        a.kind = if !a.fields.is_empty() {
            AtomKind::Field
        } else if validity {
            AtomKind::Validity
        } else if ptr_ctx {
            AtomKind::Pointer
        } else {
            AtomKind::Arith
        };
        if a.vars.is_empty() && a.fields.is_empty() && !validity {
            return None; // a ground atom (between constants) carries nothing
        }
        Some(a)
    }

    fn scan(&self, t: &Term, in_index: bool, a: &mut Atom, validity: &mut bool) {
        match t {
            Term::Sym(s) => {
                if self.live.saved.contains(s) {
                    a.outer_frame = true;
                }
                match self.syms.get(*s).kind {
                    SymKind::Var { var, .. } => {
                        a.vars.insert(var);
                        if in_index && self.prog.vars[var].ty.is_ptr() {
                            a.dereferenced.insert(var);
                        }
                    }
                    SymKind::Field { field, .. } => {
                        a.fields.insert(field);
                    }
                    SymKind::Valid { .. } | SymKind::Heap { .. } => *validity = true,
                    _ => {}
                }
            }
            Term::App(Fun::Select, args) => {
                let is_field = self.field_of(&args[0]).is_some();
                self.scan(&args[0], in_index, a, validity);
                self.scan(&args[1], in_index || is_field, a, validity);
            }
            Term::App(_, args) => {
                for x in args {
                    self.scan(x, in_index, a, validity);
                }
            }
            _ => {}
        }
    }

    fn operand(&self, t: &Term, ptr_ctx: bool) -> Operand {
        match t {
            Term::Num(0) if ptr_ctx => Operand::Null,
            Term::Num(n) if ptr_ctx && *n >= STRIDE as i128 && *n % STRIDE as i128 == 0 => {
                Operand::Object((*n / STRIDE as i128) as i64)
            }
            Term::Num(n) => Operand::Int(*n),
            // the guard checked it
            #[allow(clippy::expect_used)]
            Term::Sym(_) if self.var_of(t).is_some() => {
                Operand::Var(self.var_of(t).expect("checked"))
            }
            Term::App(Fun::Select, s) => match (self.field_of(&s[0]), self.var_of(&s[1])) {
                (Some(field), Some(ptr)) => Operand::Field { ptr, field },
                _ => Operand::Other(self.render(t, ptr_ctx)),
            },
            _ => Operand::Other(self.render(t, ptr_ctx)),
        }
    }

    fn sym_name(&self, s: SymId) -> String {
        match self.syms.get(s).kind {
            SymKind::Var { var, .. } => self.prog.vars[var].name.clone(),
            _ => self.syms.get(s).name.clone(),
        }
    }

    fn render(&self, t: &Term, ptr_ctx: bool) -> String {
        RenderT {
            cx: self,
            t,
            ptr_ctx,
        }
        .to_string()
    }
}

struct RenderT<'a, 'b> {
    cx: &'a Cx<'b>,
    t: &'a Term,
    ptr_ctx: bool,
}

impl fmt::Display for RenderT<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cx = self.cx;
        let sub = |t: &'_ Arc<Term>, p: bool| cx.render(t, p);
        match self.t {
            Term::Bool(b) => write!(f, "{b}"),
            Term::Num(0) if self.ptr_ctx => write!(f, "NULL"),
            Term::Num(n) if self.ptr_ctx && *n >= STRIDE as i128 && *n % STRIDE as i128 == 0 => {
                write!(f, "&obj#{}", *n / STRIDE as i128)
            }
            Term::Num(n) => write!(f, "{n}"),
            Term::Sym(s) => write!(f, "{}", cx.sym_name(*s)),
            Term::App(Fun::Select, a) => {
                let arr = &a[0];
                match &**arr {
                    Term::Sym(s) => match cx.syms.get(*s).kind {
                        SymKind::Field { field, .. } => {
                            write!(f, "{}->{}", sub(&a[1], true), cx.prog.field(field).name)
                        }
                        SymKind::Valid { .. } => write!(f, "valid({})", sub(&a[1], true)),
                        SymKind::Heap { .. } => write!(f, "heap({})", sub(&a[1], true)),
                        SymKind::Cell { .. } => write!(f, "*{}", sub(&a[1], true)),
                        _ => write!(f, "{}[{}]", sub(arr, false), sub(&a[1], false)),
                    },
                    _ => write!(f, "{}[{}]", sub(arr, false), sub(&a[1], false)),
                }
            }
            Term::App(op, a) => {
                let infix = match op {
                    Fun::Eq => Some("=="),
                    Fun::Le => Some("<="),
                    Fun::Lt => Some("<"),
                    Fun::Ge => Some(">="),
                    Fun::Gt => Some(">"),
                    Fun::Add => Some("+"),
                    Fun::Sub => Some("-"),
                    Fun::Mul => Some("*"),
                    Fun::Div => Some("div"),
                    Fun::Mod => Some("mod"),
                    Fun::Rem => Some("rem"),
                    Fun::And => Some("&&"),
                    Fun::Or => Some("||"),
                    _ => None,
                };
                match (infix, a.len()) {
                    (Some(s), n) if n >= 2 => {
                        write!(f, "(")?;
                        for (i, x) in a.iter().enumerate() {
                            if i > 0 {
                                write!(f, " {s} ")?;
                            }
                            write!(f, "{}", sub(x, self.ptr_ctx))?;
                        }
                        write!(f, ")")
                    }
                    _ => {
                        let name = match op {
                            Fun::Not => "!".to_string(),
                            Fun::Neg => "-".to_string(),
                            Fun::Uf(n) => n.trim_start_matches('$').to_string(),
                            o => format!("{o:?}").to_lowercase(),
                        };
                        write!(f, "{name}(")?;
                        for (i, x) in a.iter().enumerate() {
                            if i > 0 {
                                write!(f, ", ")?;
                            }
                            write!(f, "{}", sub(x, false))?;
                        }
                        write!(f, ")")
                    }
                }
            }
        }
    }
}

/// The fixed address of an object of the path (see the memory model in `smt`).
fn is_obj(t: &Term) -> bool {
    matches!(t, Term::Num(n) if *n >= STRIDE as i128 && *n % STRIDE as i128 == 0)
}

fn operand_str(prog: &Program, o: &Operand) -> String {
    match o {
        Operand::Null => "NULL".into(),
        Operand::Int(n) => n.to_string(),
        Operand::Var(v) => prog.vars[*v].name.clone(),
        Operand::Field { ptr, field } => {
            format!("{}->{}", prog.vars[*ptr].name, prog.field(*field).name)
        }
        Operand::Object(k) => format!("&obj#{k}"),
        Operand::Other(s) => s.clone(),
    }
}
