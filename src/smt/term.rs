//! Plain-data terms: a `Send`, Z3-independent copy of a (quantifier-free) formula over the
//! path's SSA symbols, used for atom extraction and for handing interpolants to other
//! threads. Built from Z3 ASTs by [`from_z3`] (DAG sharing is preserved through `Arc`).

use rustc_hash::FxHashMap;
use std::sync::Arc;
use z3::ast::{Ast, Dynamic};
use z3::AstKind;

/// Index of a symbol in [`crate::smt::encode::SymbolTable`].
pub type SymId = u32;

/// Interpreted functions that can occur in path formulas and interpolants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fun {
    Not,
    And,
    Or,
    Implies,
    Xor,
    Ite,
    Eq,
    Distinct,
    Le,
    Lt,
    Ge,
    Gt,
    Add,
    Sub,
    Neg,
    Mul,
    /// SMT-LIB integer division (floor for positive divisors).
    Div,
    Mod,
    Rem,
    Select,
    Store,
    /// A constant array `((as const (Array Int Int)) v)`.
    ConstArray,
    /// An uninterpreted function of the encoding (`$bvand`, ...).
    Uf(String),
}

/// A quantifier-free term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Bool(bool),
    Num(i128),
    /// An SSA symbol (variable version, field array version, ghost array version, choice).
    Sym(SymId),
    App(Fun, Vec<Arc<Term>>),
}

impl Term {
    /// All symbols occurring in the term.
    pub fn symbols(&self, out: &mut std::collections::BTreeSet<SymId>) {
        match self {
            Term::Sym(s) => {
                out.insert(*s);
            }
            Term::App(_, args) => args.iter().for_each(|a| a.symbols(out)),
            _ => {}
        }
    }
}

/// Converts a quantifier-free Z3 formula to a [`Term`]. `names` maps the Z3 constant
/// names of the encoding to symbol ids; an unknown constant, a quantifier or an
/// unsupported operator is an error (the formula did not come from this encoding).
pub fn from_z3(ast: &Dynamic, names: &FxHashMap<String, SymId>) -> Result<Arc<Term>, String> {
    let mut memo: FxHashMap<Dynamic, Arc<Term>> = FxHashMap::default();
    conv(ast, names, &mut memo)
}

fn conv(
    ast: &Dynamic,
    names: &FxHashMap<String, SymId>,
    memo: &mut FxHashMap<Dynamic, Arc<Term>>,
) -> Result<Arc<Term>, String> {
    if let Some(t) = memo.get(ast) {
        return Ok(t.clone());
    }
    let t = match ast.kind() {
        AstKind::Numeral => {
            let v = ast
                .as_int()
                .and_then(|i| i.as_i128())
                .ok_or_else(|| format!("non-integer numeral {ast}"))?;
            Arc::new(Term::Num(v))
        }
        AstKind::App => {
            let decl = ast.decl();
            let name = decl.name();
            let kids = ast.children();
            if kids.is_empty() {
                match name.as_str() {
                    "true" => Arc::new(Term::Bool(true)),
                    "false" => Arc::new(Term::Bool(false)),
                    _ => match names.get(&name) {
                        Some(id) => Arc::new(Term::Sym(*id)),
                        None => return Err(format!("unknown constant `{name}`")),
                    },
                }
            } else {
                let f = match name.as_str() {
                    "not" => Fun::Not,
                    "and" => Fun::And,
                    "or" => Fun::Or,
                    "=>" | "implies" => Fun::Implies,
                    "xor" => Fun::Xor,
                    "ite" | "if" => Fun::Ite,
                    "=" | "iff" => Fun::Eq,
                    "distinct" => Fun::Distinct,
                    "<=" => Fun::Le,
                    "<" => Fun::Lt,
                    ">=" => Fun::Ge,
                    ">" => Fun::Gt,
                    "+" => Fun::Add,
                    "-" if kids.len() == 1 => Fun::Neg,
                    "-" => Fun::Sub,
                    "*" => Fun::Mul,
                    "div" => Fun::Div,
                    "mod" => Fun::Mod,
                    "rem" => Fun::Rem,
                    "select" => Fun::Select,
                    "store" => Fun::Store,
                    "const" => Fun::ConstArray,
                    n if n.starts_with('$') => Fun::Uf(n.to_string()),
                    n => return Err(format!("unsupported operator `{n}`")),
                };
                let mut args = Vec::with_capacity(kids.len());
                for k in &kids {
                    args.push(conv(k, names, memo)?);
                }
                Arc::new(Term::App(f, args))
            }
        }
        k => return Err(format!("unsupported AST kind {k:?} (quantifier?)")),
    };
    memo.insert(ast.clone(), t.clone());
    Ok(t)
}

/// True if the Z3 AST contains a quantifier or a bound variable.
pub fn has_quantifier(ast: &Dynamic) -> bool {
    let mut seen: FxHashMap<Dynamic, ()> = FxHashMap::default();
    let mut stack = vec![ast.clone()];
    while let Some(a) = stack.pop() {
        if seen.insert(a.clone(), ()).is_some() {
            continue;
        }
        match a.kind() {
            AstKind::Quantifier | AstKind::Var => return true,
            AstKind::App => stack.extend(a.children()),
            _ => {}
        }
    }
    false
}

/// Names of the uninterpreted constants (0-ary applications other than true/false) in a
/// quantifier-free Z3 AST.
pub fn const_names(ast: &Dynamic) -> rustc_hash::FxHashSet<String> {
    let mut out = rustc_hash::FxHashSet::default();
    let mut seen: FxHashMap<Dynamic, ()> = FxHashMap::default();
    let mut stack = vec![ast.clone()];
    while let Some(a) = stack.pop() {
        if seen.insert(a.clone(), ()).is_some() {
            continue;
        }
        if a.kind() == AstKind::App {
            let kids = a.children();
            if kids.is_empty() {
                let n = a.decl().name();
                if n != "true" && n != "false" {
                    out.insert(n);
                }
            } else {
                stack.extend(kids);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::{Bool, Int};

    #[test]
    fn converts_arith_and_arrays() {
        let x = Int::new_const("x@0");
        let a = z3::ast::Array::new_const("S.f@0", &z3::Sort::int(), &z3::Sort::int());
        let f = a.select(&x).as_int().unwrap().eq(Int::from_i64(3)) & x.ge(Int::from_i64(0));
        let mut names = FxHashMap::default();
        names.insert("x@0".to_string(), 0);
        names.insert("S.f@0".to_string(), 1);
        let t = from_z3(&Dynamic::from_ast(&f), &names).unwrap();
        let mut syms = std::collections::BTreeSet::new();
        t.symbols(&mut syms);
        assert_eq!(syms.into_iter().collect::<Vec<_>>(), vec![0, 1]);
        let unknown = Bool::new_const("zz");
        assert!(from_z3(&Dynamic::from_ast(&unknown), &names).is_err());
        assert!(const_names(&Dynamic::from_ast(&f)).contains("S.f@0"));
        assert!(!has_quantifier(&Dynamic::from_ast(&f)));
    }
}
