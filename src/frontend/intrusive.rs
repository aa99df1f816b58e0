//! Intrusive structures (`container_of`): a link struct embedded in its container.
//!
//! The Linux kernel's lists (and many libraries after them) embed a link struct `L`
//! (`struct list_head { next, prev }`) in the objects they link, `struct T { int data;
//! struct list_head m; }`, pass `&t->m` around as an `L *`, and get the object back with
//! `container_of(p, T, m)` = `(T *)((char *)p - offsetof(T, m))`. A list head is an `L`
//! of its own (`LIST_HEAD(h)`), never an element, but `list_for_each_entry` still
//! computes `container_of(&h, T, m)` and compares `&pos->m` with `&h`.
//!
//! When `L` is embedded in exactly one place in the whole translation unit (one struct
//! `T`, one member `m`, directly) and the program takes the address of an embedded `L`
//! or applies `container_of` to an `L *`, the front end identifies every `L` object with
//! a `T` object: an embedded `L` with its container, a stand-alone `L` (a list head, on
//! the stack, static or allocated) with a `T` object of its own whose other fields the
//! program never uses. Then
//!
//! | C | CFA |
//! |---|---|
//! | type `L *` | `T *` |
//! | `p->next` (`p : L *`) | `p->m.next` |
//! | `&t->m` | `t` |
//! | `container_of(p, T, m)` | `p` |
//! | `struct list_head h;`, `malloc(sizeof(L))` | a `T` object |
//!
//! This is a bijection between the `L` objects of a run and the `T` objects of the
//! rewritten run that commutes with every operation above, pointer equality included
//! (distinct `L` objects have distinct containers), so both programs have the same runs.
//! Two exceptions keep it exact:
//! - When `m` is not at offset 0, an `L *` and the `T *` of its container are different
//!   addresses, so any other conversion between `L *` and another pointer type (`void *`,
//!   `char *`, `T *`) is refused (`file:line:col: unsupported: ...`); with `m` at offset 0
//!   both are the same address and every conversion is exact.
//! - `container_of` of a stand-alone head gives, in C, an address outside any object; the
//!   program may only compare it or take `&pos->m` of it (anything else is an
//!   out-of-bounds access, undefined behaviour). The rewritten program reads the fields
//!   of the head's own `T` object there instead.
//!
//! A link struct embedded in several places (a node on two lists, lists of lists with
//! one link type) is split instead ([`Split`], lowered in `lower::links`): every
//! embedded `L` is an object of its own, allocated and freed with its container, which
//! points to it through a hidden field per place (`&t->m` is `t->$m`); the `L` points
//! back through an owner field per place (`container_of(p, T, m)` is `p->$own_T_m`, a
//! memoised dummy `T` whose `$m` is `p` when NULL, as for a head). Distinct embedded
//! links stay distinct objects, so pointer equality is kept. Conversions between such
//! pointers and other pointer types are refused but for allocations, NULL and
//! comparisons ([`Intrusive::compared`]); see ARCHITECTURE.md for why this is exact.
//! A link struct whose places do not allow that (a container embedded by value
//! elsewhere) stays unsupported (exit 3), with the places named.

#![allow(non_upper_case_globals)]

use super::clang::{Cursor, Type};
use clang_sys::*;
use std::collections::{HashMap, HashSet};

/// One link struct identified with its container.
#[derive(Clone, Debug)]
pub struct Alias<'t> {
    /// The container's definition (`struct T`).
    pub container: Cursor<'t>,
    /// The member of `T` that is the link (`m`).
    pub member: String,
    /// `offsetof(T, m)` in bytes.
    pub offset: u64,
    /// The link struct's definition (`struct L`).
    pub link: Cursor<'t>,
    /// `sizeof(L)` in bytes.
    pub link_size: u64,
}

/// One place a link struct embedded in several places is embedded at: member `m` of
/// struct `T`.
#[derive(Clone, Debug)]
pub struct Place<'t> {
    /// The container's definition (`struct T`).
    pub container: Cursor<'t>,
    /// The member of `T` that is the link (`m`).
    pub member: String,
    /// `offsetof(T, m)` in bytes.
    pub offset: u64,
}

impl Place<'_> {
    /// The hidden field of the container that points to its link object (`$m`).
    pub fn link_field(&self) -> String {
        format!("${}", self.member)
    }

    /// The owner field of the link object that points back to its container
    /// (`$own_T_m`).
    pub fn owner_field(&self) -> String {
        format!("$own_{}_{}", self.container.spelling(), self.member)
    }
}

/// A link struct embedded in several places, each embedded copy an object of its own
/// (see the module documentation).
#[derive(Clone, Debug)]
pub struct Split<'t> {
    /// The link struct's definition (`struct L`).
    pub link: Cursor<'t>,
    /// Where it is embedded (direct members only, in declaration order).
    pub places: Vec<Place<'t>>,
}

/// The link structs of a translation unit: which are identified with their container,
/// which become objects of their own, and why the others are neither.
#[derive(Clone, Debug, Default)]
pub struct Intrusive<'t> {
    /// By the link struct's key ([`record_key`]).
    pub aliases: HashMap<String, Alias<'t>>,
    /// Link structs embedded in several places, by the link struct's key.
    pub splits: HashMap<String, Split<'t>>,
    /// The conversions (implicit or cast, under parentheses) that are a direct operand of
    /// `==` or `!=`: the only conversions between a split link struct's pointer (or its
    /// container's) and another pointer type the front end accepts.
    pub compared: HashSet<Cursor<'t>>,
    /// Link structs the program uses intrusively but that are embedded in several
    /// places, with those places (`node.linkage, node.nested`).
    pub refused: HashMap<String, String>,
}

/// A key that identifies a struct declaration across the translation unit (its USR, or
/// its position for anonymous ones).
pub fn record_key(decl: Cursor<'_>) -> String {
    let canon = decl.canonical();
    let key = canon.usr();
    if key.is_empty() {
        format!("{:?}@{}", canon.position(), canon.spelling())
    } else {
        key
    }
}

/// The record (struct) a type names after typedefs, if any.
fn record_of(t: Type<'_>) -> Option<Cursor<'_>> {
    let c = t.canonical();
    (c.kind() == CXType_Record).then(|| c.declaration())
}

/// The record an expression of pointer type points to.
fn pointee_record(t: Type<'_>) -> Option<Cursor<'_>> {
    let c = t.canonical();
    (c.kind() == CXType_Pointer)
        .then(|| record_of(c.pointee()))
        .flatten()
}

fn strip_parens(mut c: Cursor<'_>) -> Cursor<'_> {
    while c.kind() == CXCursor_ParenExpr {
        match c.expr_children().first() {
            Some(&i) => c = i,
            None => break,
        }
    }
    c
}

/// Strips parentheses and implicit conversions (`UnexposedExpr`), not explicit casts.
fn strip_implicit(mut c: Cursor<'_>) -> Cursor<'_> {
    loop {
        let k = c.kind();
        if k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr {
            let ch = c.expr_children();
            if ch.len() == 1 {
                c = ch[0];
                continue;
            }
        }
        return c;
    }
}

/// `container_of(p, T, m)` as the kernel spells it: a cast to `T *` of
/// `(char *)p - k` with `k` a constant (`offsetof(T, m)` or `&((T *)0)->m`). Returns
/// `p` (the `L *` expression), the record `T` and `k`.
pub fn container_of<'t>(c: Cursor<'t>) -> Option<(Cursor<'t>, Cursor<'t>, i64)> {
    if c.kind() != CXCursor_CStyleCastExpr {
        return None;
    }
    let target = pointee_record(c.ty())?;
    // the operand is the last child (`__typeof__(*pos)` in the type adds one before it)
    let inner = strip_implicit(*c.expr_children().last()?);
    if inner.kind() != CXCursor_BinaryOperator || inner.binary_op() != CXBinaryOperator_Sub {
        return None;
    }
    let ch = inner.expr_children();
    let [lhs, rhs] = ch.as_slice() else {
        return None;
    };
    let lhs = strip_parens(*lhs);
    if lhs.kind() != CXCursor_CStyleCastExpr {
        return None;
    }
    let byte_ptr = lhs.ty().canonical();
    let byte = byte_ptr.pointee().canonical().kind();
    if byte_ptr.kind() != CXType_Pointer
        || !matches!(
            byte,
            CXType_Char_S | CXType_Char_U | CXType_SChar | CXType_UChar | CXType_Void
        )
    {
        return None;
    }
    let ptr = strip_implicit(*lhs.expr_children().last()?);
    pointee_record(ptr.ty())?;
    let k = rhs.eval_int()?;
    Some((ptr, target, k))
}

/// Scans the translation unit under `root`: the link structs the program uses
/// intrusively (`&x->m` of an embedded struct, `container_of`) and where each is
/// embedded.
pub fn scan<'t>(root: Cursor<'t>) -> Intrusive<'t> {
    let mut embeddings: HashMap<String, Vec<(Cursor<'t>, Cursor<'t>)>> = HashMap::new();
    let mut used: Vec<String> = Vec::new();
    let mut out = Intrusive::default();
    visit(root, &mut embeddings, &mut used, &mut out.compared);
    for key in used {
        if out.aliases.contains_key(&key) || out.refused.contains_key(&key) {
            continue;
        }
        let places = embeddings.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        match places {
            [(container, field)] => {
                let (Some(link), Some(container)) = (
                    record_of(field.ty()).and_then(|d| d.definition()),
                    container.definition(),
                ) else {
                    continue;
                };
                let off = field.offset_of_field();
                if off < 0 || off % 8 != 0 || record_key(container) == key {
                    continue;
                }
                out.aliases.insert(
                    key,
                    Alias {
                        container,
                        member: field.spelling(),
                        offset: off as u64 / 8,
                        link,
                        link_size: link.ty().size_of().unwrap_or(0),
                    },
                );
            }
            [] => {}
            many => {
                if let Some(split) = split_of(&key, many, &embeddings) {
                    out.splits.insert(key, split);
                    continue;
                }
                let names: Vec<String> = many
                    .iter()
                    .map(|(c, f)| format!("{}.{}", c.spelling(), f.spelling()))
                    .collect();
                out.refused.insert(key, names.join(", "));
            }
        }
    }
    out
}

/// The split model of link struct `key` embedded at `places`, when every place is a
/// direct member at a known offset of a struct that is itself embedded nowhere by value
/// (its hidden link fields would need their own owners) and is not the link struct.
fn split_of<'t>(
    key: &str,
    places: &[(Cursor<'t>, Cursor<'t>)],
    embeddings: &HashMap<String, Vec<(Cursor<'t>, Cursor<'t>)>>,
) -> Option<Split<'t>> {
    let link = record_of(places.first()?.1.ty()).and_then(|d| d.definition())?;
    let mut out = Vec::new();
    for (container, field) in places {
        let container = container.definition()?;
        let ckey = record_key(container);
        let off = field.offset_of_field();
        let nested = embeddings.get(&ckey).is_some_and(|v| !v.is_empty());
        if off < 0 || off % 8 != 0 || ckey == key || nested || container.spelling().is_empty() {
            return None;
        }
        out.push(Place {
            container,
            member: field.spelling(),
            offset: off as u64 / 8,
        });
    }
    Some(Split { link, places: out })
}

fn visit<'t>(
    c: Cursor<'t>,
    embeddings: &mut HashMap<String, Vec<(Cursor<'t>, Cursor<'t>)>>,
    used: &mut Vec<String>,
    compared: &mut HashSet<Cursor<'t>>,
) {
    for ch in c.children() {
        match ch.kind() {
            CXCursor_BinaryOperator
                if matches!(ch.binary_op(), CXBinaryOperator_EQ | CXBinaryOperator_NE) =>
            {
                for mut op in ch.expr_children() {
                    while matches!(
                        op.kind(),
                        CXCursor_ParenExpr | CXCursor_UnexposedExpr | CXCursor_CStyleCastExpr
                    ) {
                        compared.insert(op);
                        match op.expr_children().as_slice() {
                            [inner] if op.kind() != CXCursor_CStyleCastExpr => op = *inner,
                            _ => break,
                        }
                    }
                }
            }
            CXCursor_StructDecl if ch.is_definition() => {
                for f in ch.children() {
                    if f.kind() != CXCursor_FieldDecl {
                        continue;
                    }
                    if let Some(r) = record_of(f.ty()) {
                        let list = embeddings.entry(record_key(r)).or_default();
                        if !list.iter().any(|(c0, f0)| *c0 == ch && *f0 == f) {
                            list.push((ch, f));
                        }
                    }
                }
            }
            CXCursor_UnaryOperator if ch.unary_op() == CXUnaryOperator_AddrOf => {
                if let Some(&inner) = ch.expr_children().first() {
                    let inner = strip_parens(inner);
                    if inner.kind() == CXCursor_MemberRefExpr {
                        if let Some(r) = record_of(inner.ty()) {
                            used.push(record_key(r));
                        }
                    }
                }
            }
            CXCursor_CStyleCastExpr => {
                if let Some((p, _, _)) = container_of(ch) {
                    if let Some(r) = pointee_record(p.ty()) {
                        used.push(record_key(r));
                    }
                }
            }
            _ => {}
        }
        visit(ch, embeddings, used, compared);
    }
}
