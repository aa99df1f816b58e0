//! C types to CFA types: scalars, pointers and flattened structs (ILP32 layout as
//! computed by clang for `-m32`).

#![allow(non_upper_case_globals)]

use super::clang::{Cursor, Type};
use super::intrusive::{record_key, Place, Split};
use super::lower::{unsup, Ctx, R};
use crate::cfa::{FieldDef, StructDef, StructId, Ty};
use clang_sys::*;

/// The CFA view of a C type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CTy {
    /// An integer or pointer (can be a variable or a field).
    Scalar(Ty),
    /// A struct value (lives in memory).
    Struct(StructId),
    /// `void`.
    Void,
}

/// `_Bool`.
pub const BOOL: Ty = Ty::Int {
    bits: 1,
    signed: false,
};

/// The CFA type of a function pointer: an integer function id, 0 for NULL and
/// `1 + FuncId` for the address of a function (see `lower/mod.rs`).
pub const FN_PTR: Ty = Ty::INT;

/// True for a pointer to a function type (with or without prototype).
pub fn is_fn_ptr(t: Type<'_>) -> bool {
    let c = t.canonical();
    c.kind() == CXType_Pointer
        && matches!(
            c.pointee().canonical().kind(),
            CXType_FunctionProto | CXType_FunctionNoProto
        )
}

/// True for a function type (a function designator before its decay to a pointer).
pub fn is_fn_type(t: Type<'_>) -> bool {
    matches!(
        t.canonical().kind(),
        CXType_FunctionProto | CXType_FunctionNoProto
    )
}

/// The most elements (over all dimensions) an array may have: every element is a
/// field, a variable or an object of its own (`lower::array`).
pub const MAX_ARRAY_ELEMS: u64 = 256;

/// The element type and length of a constant-size array type (`T[N]`, N > 0).
pub fn const_array(t: Type<'_>) -> Option<(Type<'_>, u64)> {
    let c = t.canonical();
    if c.kind() != CXType_ConstantArray {
        return None;
    }
    let n = c.array_size()?;
    (n > 0).then(|| (c.array_element(), n))
}

/// The element type and length of the array type `t`, refused (at `at`) when its
/// length is unknown or variable or it has more than [`MAX_ARRAY_ELEMS`] elements.
pub fn check_len<'t>(t: Type<'t>, at: Cursor<'t>) -> R<(Type<'t>, u64)> {
    let Some((elem, n)) = const_array(t) else {
        return unsup(at, "array of unknown or variable length");
    };
    if array_elems(t) > MAX_ARRAY_ELEMS {
        return unsup(
            at,
            &format!("array of more than {MAX_ARRAY_ELEMS} elements"),
        );
    }
    Ok((elem, n))
}

/// True for array types, of constant size or not.
pub fn is_array(t: Type<'_>) -> bool {
    matches!(
        t.canonical().kind(),
        CXType_ConstantArray
            | CXType_IncompleteArray
            | CXType_VariableArray
            | CXType_DependentSizedArray
    )
}

/// The element count of an array type over all its dimensions (1 for a non-array).
pub fn array_elems(t: Type<'_>) -> u64 {
    match const_array(t) {
        Some((e, n)) => n.saturating_mul(array_elems(e)),
        None => 1,
    }
}

/// The integer promotion of a type (`char`/`short`/`_Bool` become `int`).
pub fn promote(t: &Ty) -> Ty {
    match t {
        Ty::Int { bits, .. } if *bits < 32 => Ty::INT,
        t => t.clone(),
    }
}

/// True if every value of `from` is a value of `to`.
pub fn range_includes(to: &Ty, from: &Ty) -> bool {
    match (to.int_range(), from.int_range()) {
        (Some((tl, th)), Some((fl, fh))) => tl <= fl && fh <= th,
        _ => false,
    }
}

/// Wraps a constant into the value range of an integer type (two's complement).
pub fn wrap_const(n: i64, t: &Ty) -> i64 {
    match *t {
        Ty::Int { bits: 1, .. } => (n != 0) as i64,
        Ty::Int { bits, signed } if bits < 64 => {
            let m = 1i128 << bits;
            let mut v = (n as i128).rem_euclid(m);
            if signed && v >= m / 2 {
                v -= m;
            }
            v as i64
        }
        _ => n,
    }
}

fn int_kind(kind: CXTypeKind) -> Option<bool> {
    // Some(signed) for the integer kinds.
    match kind {
        CXType_Char_U | CXType_UChar | CXType_UShort | CXType_UInt | CXType_ULong
        | CXType_ULongLong | CXType_Char16 | CXType_Char32 => Some(false),
        CXType_Char_S | CXType_SChar | CXType_Short | CXType_Int | CXType_Long
        | CXType_LongLong | CXType_WChar => Some(true),
        _ => None,
    }
}

impl<'t> Ctx<'t> {
    /// Converts a C type; `at` is the cursor blamed for unsupported types.
    pub fn conv(&mut self, t: Type<'t>, at: Cursor<'t>) -> R<CTy> {
        let c = t.canonical();
        let kind = c.kind();
        if kind == CXType_Bool {
            return Ok(CTy::Scalar(BOOL));
        }
        if let Some(signed) = int_kind(kind) {
            let bits = c.size_of().unwrap_or(4) * 8;
            if bits > 64 {
                return unsup(at, "integer type wider than 64 bits");
            }
            return Ok(CTy::Scalar(Ty::Int {
                bits: bits as u8,
                signed,
            }));
        }
        match kind {
            CXType_Void => Ok(CTy::Void),
            CXType_Enum => {
                let it = c.declaration().enum_int_type();
                if it.kind() == CXType_Enum || it.kind() == CXType_Invalid {
                    return unsup(at, "enum type");
                }
                self.conv(it, at)
            }
            CXType_Pointer => {
                let pt = c.pointee().canonical();
                match pt.kind() {
                    CXType_FunctionProto | CXType_FunctionNoProto => Ok(CTy::Scalar(FN_PTR)),
                    _ => Ok(CTy::Scalar(Ty::Ptr(Box::new(match self.conv(pt, at)? {
                        CTy::Scalar(t) => t,
                        CTy::Struct(s) => Ty::Struct(s),
                        CTy::Void => Ty::Void,
                    })))),
                }
            }
            CXType_Record => {
                let decl = c.declaration();
                if decl.kind() == CXCursor_UnionDecl {
                    return unsup(at, "union");
                }
                // a link struct identified with its container (`super::intrusive`)
                let decl = match self.intrusive.aliases.get(&record_key(decl)) {
                    Some(a) => a.container,
                    None => decl,
                };
                Ok(CTy::Struct(self.struct_id(decl, at)?))
            }
            CXType_Float | CXType_Double | CXType_LongDouble | CXType_Float128 | CXType_Half
            | CXType_Float16 | CXType_Complex => unsup(at, "floating point"),
            CXType_ConstantArray
            | CXType_IncompleteArray
            | CXType_VariableArray
            | CXType_DependentSizedArray => unsup(at, "array"),
            // a function-typed value is its address (a designator decays, a parameter
            // declared as a function is a pointer, C11 6.3.2.1p4, 6.7.6.3p8)
            CXType_FunctionProto | CXType_FunctionNoProto => Ok(CTy::Scalar(FN_PTR)),
            _ => unsup(at, &format!("type `{}`", t.spelling())),
        }
    }

    /// Converts a type that must be scalar (variables, fields, expression values).
    pub fn scalar(&mut self, t: Type<'t>, at: Cursor<'t>) -> R<Ty> {
        match self.conv(t, at)? {
            CTy::Scalar(t) => Ok(t),
            CTy::Struct(_) => unsup(at, "struct value (copy/pass/return by value)"),
            CTy::Void => unsup(at, "void value"),
        }
    }

    /// The struct id of a struct declaration, registering (and flattening) it on first use.
    pub fn struct_id(&mut self, decl: Cursor<'t>, at: Cursor<'t>) -> R<StructId> {
        let key = record_key(decl);
        if let Some(&id) = self.struct_ids.get(&key) {
            if let Some(e) = self.struct_errors.get(&id) {
                return Err(e.clone());
            }
            return Ok(id);
        }
        let id = self.prog.structs.len();
        let mut name = decl.spelling();
        if name.is_empty() || name.contains(' ') || name.contains('(') {
            name = format!("__anon{id}");
        }
        self.prog.structs.push(StructDef {
            name,
            fields: Vec::new(),
            size: 0,
        });
        self.struct_ids.insert(key, id);
        let Some(def) = decl.definition() else {
            // opaque struct: only pointers to it can be used
            self.struct_defs.push(None);
            return Ok(id);
        };
        self.struct_defs.push(Some(def));
        match self.flatten(id, def) {
            Ok(()) => Ok(id),
            Err(e) => {
                self.struct_errors.insert(id, e.clone());
                let _ = at;
                Err(e)
            }
        }
    }

    /// The link struct's definition when field `f` is the one member a link struct is
    /// identified with (`super::intrusive`).
    fn link_member(&self, f: Cursor<'t>) -> Option<Cursor<'t>> {
        let t = f.ty().canonical();
        if t.kind() != CXType_Record {
            return None;
        }
        let a = self.intrusive.aliases.get(&record_key(t.declaration()))?;
        let parent = f.semantic_parent()?;
        (a.member == f.spelling() && record_key(parent) == record_key(a.container))
            .then_some(a.link)
    }

    /// The field-name prefix of an object of C type `t`: `m.` for a link struct
    /// identified with its container's member `m`, else empty.
    pub fn obj_prefix(&self, t: Type<'t>) -> String {
        let c = t.canonical();
        if c.kind() != CXType_Record {
            return String::new();
        }
        match self.intrusive.aliases.get(&record_key(c.declaration())) {
            Some(a) => format!("{}.", a.member),
            None => String::new(),
        }
    }

    /// The split link struct (`super::intrusive`) C type `t` names, if it is one.
    pub fn split_of(&self, t: Type<'t>) -> Option<&Split<'t>> {
        let c = t.canonical();
        if c.kind() != CXType_Record {
            return None;
        }
        self.intrusive.splits.get(&record_key(c.declaration()))
    }

    /// The place of a split link struct that member `f` is, if it is one.
    pub fn split_place(&self, f: Cursor<'t>) -> Option<Place<'t>> {
        let split = self.split_of(f.ty())?;
        let parent = record_key(f.semantic_parent()?);
        let name = f.spelling();
        split
            .places
            .iter()
            .find(|p| p.member == name && record_key(p.container) == parent)
            .cloned()
    }

    /// The places of split link structs in struct `s` (its hidden link fields), each
    /// with the link struct's definition.
    pub fn hosted_places(&self, s: StructId) -> Vec<(Cursor<'t>, Place<'t>)> {
        let mut out = Vec::new();
        for split in self.intrusive.splits.values() {
            for p in &split.places {
                if self.struct_ids.get(&record_key(p.container)) == Some(&s) {
                    out.push((split.link, p.clone()));
                }
            }
        }
        out.sort_by_key(|(_, p)| p.offset);
        out
    }

    /// Appends the fields of an array member `name` of C type `t` at byte offset `off`
    /// of struct `id`: `name[k]` for a scalar element, `name[k].g` for the fields `g` of
    /// a struct element, nested arrays likewise. Refused (exit 3): arrays of unknown or
    /// variable length, more than [`MAX_ARRAY_ELEMS`] elements, intrusive link structs
    /// or structs hosting them as elements (their objects are not fields).
    pub fn array_fields(
        &mut self,
        out: &mut Vec<FieldDef>,
        name: &str,
        t: Type<'t>,
        off: u64,
        at: Cursor<'t>,
        id: StructId,
    ) -> R<()> {
        let (elem, n) = check_len(t, at)?;
        let Some(esize) = elem.size_of() else {
            return unsup(at, "array of elements of unknown size");
        };
        for k in 0..n {
            let ename = format!("{name}[{k}]");
            let eoff = off + k * esize;
            if is_array(elem) {
                self.array_fields(out, &ename, elem, eoff, at, id)?;
                continue;
            }
            if elem.canonical().kind() == CXType_Record {
                let key = record_key(elem.canonical().declaration());
                if self.intrusive.aliases.contains_key(&key)
                    || self.intrusive.splits.contains_key(&key)
                {
                    return unsup(at, "array of intrusive link structs inside a struct");
                }
            }
            match self.conv(elem, at)? {
                CTy::Scalar(ty) => out.push(FieldDef {
                    name: ename,
                    ty,
                    offset: eoff,
                }),
                CTy::Struct(inner) => {
                    let fields = self.prog.structs[inner].fields.clone();
                    if inner == id || fields.is_empty() {
                        return unsup(at, "array of structs of incomplete type");
                    }
                    if fields.iter().any(|g| g.name.contains('$')) {
                        return unsup(at, "array of structs that host intrusive links");
                    }
                    for g in fields {
                        out.push(FieldDef {
                            name: format!("{ename}.{}", g.name),
                            ty: g.ty,
                            offset: eoff + g.offset,
                        });
                    }
                }
                CTy::Void => return unsup(at, "array of void"),
            }
        }
        Ok(())
    }

    /// Computes the flattened fields and size of struct `id` from its definition.
    fn flatten(&mut self, id: StructId, def: Cursor<'t>) -> R<()> {
        let mut fields = Vec::new();
        for f in def.children() {
            if f.kind() != CXCursor_FieldDecl {
                continue;
            }
            let fname = f.spelling();
            if fname.is_empty() {
                return unsup(f, "anonymous struct member");
            }
            if f.is_bitfield() {
                return unsup(f, "bit-field");
            }
            let off = f.offset_of_field();
            if off < 0 || off % 8 != 0 {
                return unsup(f, "field offset unknown");
            }
            let off = off as u64 / 8;
            if self.split_place(f).is_some() {
                // a split link struct: a hidden pointer to its own object (`$m`)
                let CTy::Struct(l) = self.conv(f.ty(), f)? else {
                    return unsup(f, "internal: link struct");
                };
                fields.push(FieldDef {
                    name: format!("${fname}"),
                    ty: Ty::Ptr(Box::new(Ty::Struct(l))),
                    offset: off,
                });
                continue;
            }
            if let Some(link) = self.link_member(f) {
                // the link struct's own fields, at the member (`m.next`, `m.prev`)
                for g in link.children() {
                    if g.kind() != CXCursor_FieldDecl {
                        continue;
                    }
                    let goff = g.offset_of_field();
                    if goff < 0 || goff % 8 != 0 || g.is_bitfield() {
                        return unsup(g, "field offset unknown");
                    }
                    let CTy::Scalar(ty) = self.conv(g.ty(), g)? else {
                        return unsup(g, "a struct or void member inside an intrusive link struct");
                    };
                    fields.push(FieldDef {
                        name: format!("{fname}.{}", g.spelling()),
                        ty,
                        offset: off + goff as u64 / 8,
                    });
                }
                continue;
            }
            if is_array(f.ty()) {
                // `T m[N]`: fields `m[0]` … `m[N-1]` (`m[k].g` for a struct `T`)
                self.array_fields(&mut fields, &fname, f.ty(), off, f, id)?;
                continue;
            }
            match self.conv(f.ty(), f)? {
                CTy::Scalar(ty) => fields.push(FieldDef {
                    name: fname,
                    ty,
                    offset: off,
                }),
                CTy::Struct(inner) => {
                    if inner == id || self.prog.structs[inner].fields.is_empty() {
                        return unsup(f, "embedded struct of incomplete type");
                    }
                    for g in self.prog.structs[inner].fields.clone() {
                        fields.push(FieldDef {
                            name: format!("{fname}.{}", g.name),
                            ty: g.ty,
                            offset: off + g.offset,
                        });
                    }
                }
                CTy::Void => return unsup(f, "void field"),
            }
        }
        let mut size = def.ty().size_of().unwrap_or(0);
        if let Some(split) = self.split_of(def.ty()).cloned() {
            // a split link struct: an owner field per place, after its own fields
            for p in &split.places {
                let t = self.struct_id(p.container, def)?;
                fields.push(FieldDef {
                    name: p.owner_field(),
                    ty: Ty::Ptr(Box::new(Ty::Struct(t))),
                    offset: size,
                });
                size += 8;
            }
        }
        self.prog.structs[id].fields = fields;
        self.prog.structs[id].size = size;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_const_wraps() {
        let u8t = Ty::Int {
            bits: 8,
            signed: false,
        };
        let s8t = Ty::Int {
            bits: 8,
            signed: true,
        };
        assert_eq!(wrap_const(256, &u8t), 0);
        assert_eq!(wrap_const(-1, &u8t), 255);
        assert_eq!(wrap_const(200, &s8t), -56);
        assert_eq!(wrap_const(5, &BOOL), 1);
        assert_eq!(wrap_const(-1, &Ty::INT), -1);
    }

    #[test]
    fn promotion_and_ranges() {
        assert_eq!(promote(&BOOL), Ty::INT);
        assert!(range_includes(&Ty::INT, &BOOL));
        assert!(!range_includes(&BOOL, &Ty::INT));
    }
}
