//! Tolerance for gcc-only input (e.g. a gcc-preprocessed `.i` of glibc headers): the
//! repairs `parse_file` applies when clang rejects what gcc accepts.
//!
//! - An error located inside an `__attribute__((...))` specifier (gcc-only forms such
//!   as `__malloc__ (free, 1)`) is fixed by blanking that attribute (the item of the
//!   list, or the whole specifier when it is the only item) in an in-memory copy of
//!   the file: bytes become spaces, newlines stay, so every later position is that of
//!   the file on disk. Attributes that change the layout or meaning of the program
//!   (`aligned`, `mode`, `cleanup`, ...) are never blanked: their error stays.
//! - gcc's `_FloatN`/`_FloatNx` types (unknown to clang, or unsupported on i386) are
//!   defined as a C floating type of the same kind (`-D_Float32=float`); every use of
//!   floating point is refused later anyway.
//! - gcc builtins unknown to clang (`__builtin_va_arg_pack` in glibc's fortify
//!   wrappers) are declared as external functions in a forced include, so a call
//!   reached from `main` is refused as a call to an external function.

use std::ops::Range;

/// Attributes whose removal could change the program's layout or behaviour.
const SEMANTIC_ATTRIBUTES: &[&str] = &[
    "aligned",
    "packed",
    "mode",
    "vector_size",
    "ext_vector_type",
    "cleanup",
    "transparent_union",
    "may_alias",
    "scalar_storage_order",
    "constructor",
    "destructor",
    "alias",
    "ifunc",
];

/// One attribute of an `__attribute__((...))` specifier found around a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrItem {
    /// The attribute's name as written (`__malloc__`).
    pub name: String,
    /// The bytes to blank: the item and one separating comma, or the whole specifier
    /// when the item is its only attribute.
    pub blank: Range<usize>,
}

impl AttrItem {
    /// True unless removing the attribute could change the program's meaning.
    pub fn removable(&self) -> bool {
        let n = self.name.trim_start_matches('_').trim_end_matches('_');
        !SEMANTIC_ATTRIBUTES.contains(&n)
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Offset of the parenthesis matching the `(` at `open`, skipping string and character
/// literals.
fn matching_paren(src: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < src.len() {
        match src[i] {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < src.len() && src[i] != q {
                    if src[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_space(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && src[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The attribute of an `__attribute__((a, b(x), ...))` specifier whose text contains
/// byte `offset` (the nearest specifier starting before it), if any.
pub fn attribute_at(src: &[u8], offset: usize) -> Option<AttrItem> {
    const KW: &[u8] = b"__attribute";
    // the nearest keyword starting at or before `offset`
    let mut end = (offset + KW.len()).min(src.len());
    let kw = loop {
        let cand = src[..end].windows(KW.len()).rposition(|w| w == KW)?;
        if cand == 0 || !is_ident(src[cand - 1]) {
            break cand;
        }
        end = cand + KW.len() - 1;
    };
    let mut i = kw + KW.len();
    if src[i..].starts_with(b"__") {
        i += 2;
    }
    if i < src.len() && is_ident(src[i]) {
        return None;
    }
    let outer = skip_space(src, i);
    if src.get(outer) != Some(&b'(') {
        return None;
    }
    let inner = skip_space(src, outer + 1);
    if src.get(inner) != Some(&b'(') {
        return None;
    }
    let inner_end = matching_paren(src, inner)?;
    let outer_end = matching_paren(src, outer)?;
    if !(kw <= offset && offset <= outer_end) {
        return None;
    }
    // items of the list, split at top-level commas
    let mut items: Vec<Range<usize>> = Vec::new();
    let mut from = inner + 1;
    let mut i = inner + 1;
    while i < inner_end {
        match src[i] {
            b'(' => i = matching_paren(src, i)?,
            b',' => {
                items.push(from..i);
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(from..inner_end);
    let nonempty: Vec<usize> = (0..items.len())
        .filter(|&k| {
            src[items[k].clone()]
                .iter()
                .any(|b| !b.is_ascii_whitespace())
        })
        .collect();
    // the item holding the offset (an offset on a separator or outside the list blames
    // the whole specifier)
    let k = (0..items.len()).find(|&k| items[k].start <= offset && offset < items[k].end);
    let (name_of, blank) = match k {
        Some(k) if nonempty.len() > 1 && nonempty.contains(&k) => {
            let r = &items[k];
            // the item with the comma after it (before it, for the last item)
            let blank = if k + 1 < items.len() {
                r.start..items[k + 1].start
            } else {
                items[k - 1].end..r.end
            };
            (r.clone(), blank)
        }
        Some(k) => (items[k].clone(), kw..outer_end + 1),
        None => (items[0].clone(), kw..outer_end + 1),
    };
    let s = skip_space(src, name_of.start);
    let e = (s..name_of.end)
        .find(|&j| !is_ident(src[j]))
        .unwrap_or(name_of.end);
    let name = String::from_utf8_lossy(&src[s..e]).into_owned();
    Some(AttrItem { name, blank })
}

/// Replaces the bytes of `r` by spaces, keeping line breaks (so later positions stay).
pub fn blank(src: &mut [u8], r: Range<usize>) {
    for b in &mut src[r] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// For a gcc floating type clang does not know (or not on i386), the C type to
/// define it as.
pub fn float_type_stand_in(name: &str) -> Option<&'static str> {
    Some(match name {
        "_Float16" | "_Float32" => "float",
        "_Float64" | "_Float32x" => "double",
        "_Float64x" | "_Float128" | "_Float128x" | "__float128" | "__ibm128" => "long double",
        _ => return None,
    })
}

/// The type name of `unknown type name 'T'` / `T is not supported on this target` if
/// it is a gcc floating type ([`float_type_stand_in`]).
pub fn unknown_float_type(message: &str) -> Option<&str> {
    let name = if let Some(rest) = message.strip_prefix("unknown type name '") {
        rest.strip_suffix('\'')?
    } else {
        message.strip_suffix(" is not supported on this target")?
    };
    float_type_stand_in(name).map(|_| name)
}

/// The builtin of `use of unknown builtin '__builtin_X'`.
pub fn unknown_builtin(message: &str) -> Option<&str> {
    let name = message
        .strip_prefix("use of unknown builtin '")?
        .strip_suffix('\'')?;
    (name.starts_with("__builtin_") && name.bytes().all(is_ident)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, needle: &str) -> Option<AttrItem> {
        attribute_at(src.as_bytes(), src.find(needle).expect("needle"))
    }

    /// `src` with the attribute at `needle` blanked, whitespace runs collapsed (the
    /// length is checked to stay).
    fn blanked(src: &str, needle: &str) -> String {
        let a = at(src, needle).expect("attribute");
        let mut b = src.as_bytes().to_vec();
        blank(&mut b, a.blank);
        let out = String::from_utf8(b).expect("utf8");
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn an_only_attribute_blanks_its_specifier() {
        let src = "void *f(void) __attribute__ ((__malloc__ (free, 1)));";
        let a = at(src, "free").expect("found");
        assert_eq!(a.name, "__malloc__");
        assert!(a.removable());
        assert_eq!(blanked(src, "__malloc__"), "void *f(void) ;");
        // a position on the keyword itself
        assert_eq!(blanked(src, "__attribute__"), "void *f(void) ;");
    }

    #[test]
    fn one_item_of_a_list_is_blanked_with_its_comma() {
        let src = "int f(void) __attribute__((__nothrow__, __malloc__(g, 1), __leaf__));";
        assert_eq!(
            blanked(src, "__malloc__"),
            "int f(void) __attribute__((__nothrow__, __leaf__));"
        );
        let last = "int f(void) __attribute__((__nothrow__, __malloc__(g, 1)));";
        assert_eq!(
            blanked(last, "g, 1"),
            "int f(void) __attribute__((__nothrow__ ));"
        );
    }

    #[test]
    fn line_breaks_stay_and_positions_outside_attributes_are_ignored() {
        let src = "int f(void)\n __attribute__ ((__malloc__ (a,\n b)));\nint x;";
        assert_eq!(blanked(src, "b)"), "int f(void) ; int x;");
        assert_eq!(at(src, "int x"), None);
        assert_eq!(at("int x; /* __attribute__ */ int y;", "int y"), None);
        assert_eq!(at("__attribute__ x; int y;", "int y"), None);
        assert_eq!(at("my__attribute__((a)) int y;", "int y"), None);
    }

    #[test]
    fn semantic_attributes_are_not_removable() {
        let a = at("int x __attribute__((__aligned__(3)));", "3").expect("found");
        assert_eq!(a.name, "__aligned__");
        assert!(!a.removable());
        let m = at(
            "typedef int t __attribute__ ((__mode__ (__XX__)));",
            "__XX__",
        )
        .expect("m");
        assert!(!m.removable());
    }

    #[test]
    fn float_types_and_builtins_from_messages() {
        assert_eq!(
            unknown_float_type("unknown type name '_Float32'"),
            Some("_Float32")
        );
        assert_eq!(
            unknown_float_type("_Float16 is not supported on this target"),
            Some("_Float16")
        );
        assert_eq!(unknown_float_type("unknown type name 'foo'"), None);
        assert_eq!(float_type_stand_in("_Float128"), Some("long double"));
        assert_eq!(
            unknown_builtin("use of unknown builtin '__builtin_va_arg_pack'"),
            Some("__builtin_va_arg_pack")
        );
        assert_eq!(unknown_builtin("use of unknown builtin 'x;y'"), None);
    }
}
