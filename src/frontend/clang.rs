//! Safe wrappers over the parts of libclang (via `clang-sys`) the front end uses.
//!
//! All `unsafe` FFI of the front end lives in this file. Cursors and types borrow the
//! translation unit they come from (lifetime `'t`), so they cannot outlive it.

#![allow(unsafe_code)]

use clang_sys::*;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_uint, c_ulong, c_void};
use std::path::Path;

/// Makes sure libclang is loaded on the current thread (`clang-sys` keeps the loaded
/// library in a thread-local slot).
pub fn ensure_loaded() -> Result<(), String> {
    if clang_sys::is_loaded() {
        return Ok(());
    }
    clang_sys::load()
}

fn take_string(s: CXString) -> String {
    // SAFETY: `s` was returned by libclang and is disposed exactly once here.
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

/// A libclang index (owns the translation units parsed through it).
pub struct Index {
    raw: CXIndex,
}

impl Index {
    /// Creates an index (diagnostics are not printed by libclang).
    pub fn new() -> Index {
        // SAFETY: plain constructor; the result is disposed in `drop`.
        let raw = unsafe { clang_createIndex(0, 0) };
        Index { raw }
    }

    /// Parses `path` with the given command-line arguments. `unsaved` maps file names to
    /// in-memory contents (they need not exist on disk). `None` if libclang failed
    /// without producing a translation unit.
    pub fn parse(
        &self,
        path: &Path,
        args: &[String],
        unsaved: &[(String, Vec<u8>)],
    ) -> Option<TranslationUnit<'_>> {
        let file = CString::new(path.to_string_lossy().as_bytes()).ok()?;
        let cargs: Vec<CString> = args
            .iter()
            .filter_map(|a| CString::new(a.as_bytes()).ok())
            .collect();
        let argv: Vec<*const c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
        let unsaved_c: Vec<(CString, CString)> = unsaved
            .iter()
            .filter_map(|(n, c)| {
                Some((
                    CString::new(n.as_bytes()).ok()?,
                    CString::new(c.as_slice()).ok()?,
                ))
            })
            .collect();
        let mut ufiles: Vec<CXUnsavedFile> = unsaved_c
            .iter()
            .map(|(n, c)| CXUnsavedFile {
                Filename: n.as_ptr(),
                Contents: c.as_ptr(),
                Length: c.as_bytes().len() as c_ulong,
            })
            .collect();
        let mut tu: CXTranslationUnit = std::ptr::null_mut();
        // SAFETY: all pointers are valid for the duration of the call; libclang copies
        // what it needs.
        let err = unsafe {
            clang_parseTranslationUnit2(
                self.raw,
                file.as_ptr(),
                argv.as_ptr(),
                argv.len() as i32,
                ufiles.as_mut_ptr(),
                ufiles.len() as c_uint,
                CXTranslationUnit_None,
                &mut tu,
            )
        };
        if err != CXError_Success || tu.is_null() {
            return None;
        }
        Some(TranslationUnit {
            raw: tu,
            _p: PhantomData,
        })
    }
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        // SAFETY: created by clang_createIndex; all TUs borrow it and are dropped first.
        unsafe { clang_disposeIndex(self.raw) }
    }
}

/// A parsed translation unit.
pub struct TranslationUnit<'i> {
    raw: CXTranslationUnit,
    _p: PhantomData<&'i Index>,
}

/// One clang diagnostic.
pub struct Diagnostic {
    /// `CXDiagnostic_*` severity.
    pub severity: i32,
    /// `file:line:col: error: message`.
    pub text: String,
    /// The message alone (`'__malloc__' attribute takes no arguments`).
    pub message: String,
    /// Where the diagnostic points, in the file as it is on disk (spelling location;
    /// `None` for diagnostics without a file position).
    pub at: Option<Position>,
}

impl<'i> TranslationUnit<'i> {
    /// All diagnostics of the translation unit.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        // SAFETY: indices are in range; every diagnostic is disposed after use.
        unsafe {
            let n = clang_getNumDiagnostics(self.raw);
            for i in 0..n {
                let d = clang_getDiagnostic(self.raw, i);
                let severity = clang_getDiagnosticSeverity(d);
                let text = take_string(clang_formatDiagnostic(
                    d,
                    CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn,
                ));
                let message = take_string(clang_getDiagnosticSpelling(d));
                let at = spelling_position(clang_getDiagnosticLocation(d));
                clang_disposeDiagnostic(d);
                out.push(Diagnostic {
                    severity,
                    text,
                    message,
                    at,
                });
            }
        }
        out
    }

    /// The translation-unit cursor.
    pub fn cursor(&self) -> Cursor<'_> {
        // SAFETY: the TU is alive for the returned lifetime.
        Cursor::wrap(unsafe { clang_getTranslationUnitCursor(self.raw) })
    }

    /// Tokens of the source range of `c`: (spelling, byte offset in its file).
    pub fn tokens(&self, c: Cursor<'_>) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        // SAFETY: the token array is disposed after copying its contents.
        unsafe {
            let range = clang_getCursorExtent(c.raw);
            let mut toks: *mut CXToken = std::ptr::null_mut();
            let mut n: c_uint = 0;
            clang_tokenize(self.raw, range, &mut toks, &mut n);
            if toks.is_null() {
                return out;
            }
            for i in 0..n as usize {
                let t = *toks.add(i);
                let sp = take_string(clang_getTokenSpelling(self.raw, t));
                let loc = clang_getTokenLocation(self.raw, t);
                out.push((sp, file_offset(loc)));
            }
            clang_disposeTokens(self.raw, toks, n);
        }
        out
    }
}

impl Drop for TranslationUnit<'_> {
    fn drop(&mut self) {
        // SAFETY: created by clang_parseTranslationUnit2, disposed once.
        unsafe { clang_disposeTranslationUnit(self.raw) }
    }
}

fn file_offset(loc: CXSourceLocation) -> u32 {
    let mut off: c_uint = 0;
    // SAFETY: out-pointers are valid or null.
    unsafe {
        clang_getFileLocation(
            loc,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut off,
        )
    };
    off
}

/// The spelling position of a location (where its characters are in the file on
/// disk), `None` without a file.
fn spelling_position(loc: CXSourceLocation) -> Option<Position> {
    let mut file: CXFile = std::ptr::null_mut();
    let (mut line, mut col, mut off): (c_uint, c_uint, c_uint) = (0, 0, 0);
    // SAFETY: out-pointers are valid; the file name is an owned CXString.
    unsafe {
        clang_getSpellingLocation(loc, &mut file, &mut line, &mut col, &mut off);
        if file.is_null() {
            return None;
        }
        Some(Position {
            file: take_string(clang_getFileName(file)),
            line,
            col,
            offset: off,
        })
    }
}

/// A source position: file name, line, column (expansion location).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub offset: u32,
}

/// A cursor (AST node) of a translation unit.
#[derive(Clone, Copy)]
pub struct Cursor<'t> {
    raw: CXCursor,
    _p: PhantomData<&'t ()>,
}

impl std::fmt::Debug for Cursor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cursor({}, {:?})", self.kind(), self.spelling())
    }
}

impl PartialEq for Cursor<'_> {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: pure comparison.
        unsafe { clang_equalCursors(self.raw, other.raw) != 0 }
    }
}
impl Eq for Cursor<'_> {}

impl std::hash::Hash for Cursor<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // SAFETY: pure function.
        unsafe { clang_hashCursor(self.raw) }.hash(state)
    }
}

extern "C" fn collect_children(
    c: CXCursor,
    _parent: CXCursor,
    data: CXClientData,
) -> CXChildVisitResult {
    // SAFETY: `data` is the `&mut Vec<CXCursor>` passed by `Cursor::children`.
    let v = unsafe { &mut *(data as *mut Vec<CXCursor>) };
    v.push(c);
    CXChildVisit_Continue
}

impl<'t> Cursor<'t> {
    fn wrap(raw: CXCursor) -> Cursor<'t> {
        Cursor {
            raw,
            _p: PhantomData,
        }
    }

    /// The `CXCursor_*` kind.
    pub fn kind(&self) -> CXCursorKind {
        self.raw.kind
    }

    /// Human-readable name of the cursor kind (`IfStmt`, `ArraySubscriptExpr`, ...).
    pub fn kind_name(&self) -> String {
        // SAFETY: returns an owned CXString.
        take_string(unsafe { clang_getCursorKindSpelling(self.raw.kind) })
    }

    /// The semantic parent (enclosing function or translation unit of a declaration).
    pub fn semantic_parent(&self) -> Option<Cursor<'t>> {
        // SAFETY: pure function.
        let c = Cursor::wrap(unsafe { clang_getCursorSemanticParent(self.raw) });
        (!c.is_null()).then_some(c)
    }

    /// True for the null cursor (and invalid cursors).
    pub fn is_null(&self) -> bool {
        // SAFETY: pure functions.
        unsafe { clang_Cursor_isNull(self.raw) != 0 || clang_isInvalid(self.raw.kind) != 0 }
    }

    /// True if the cursor is an expression.
    pub fn is_expression(&self) -> bool {
        // SAFETY: pure function.
        unsafe { clang_isExpression(self.raw.kind) != 0 }
    }

    /// Direct children, in source order.
    pub fn children(&self) -> Vec<Cursor<'t>> {
        let mut v: Vec<CXCursor> = Vec::new();
        // SAFETY: the callback only pushes into `v`, which outlives the call.
        unsafe {
            clang_visitChildren(
                self.raw,
                collect_children,
                &mut v as *mut Vec<CXCursor> as *mut c_void,
            )
        };
        v.into_iter().map(Cursor::wrap).collect()
    }

    /// Direct children that are expressions (skips type references etc.).
    pub fn expr_children(&self) -> Vec<Cursor<'t>> {
        self.children()
            .into_iter()
            .filter(|c| c.is_expression())
            .collect()
    }

    /// The spelling (name of a declaration/reference; empty for most expressions).
    pub fn spelling(&self) -> String {
        // SAFETY: returns an owned CXString.
        take_string(unsafe { clang_getCursorSpelling(self.raw) })
    }

    /// The Unified Symbol Resolution string of a declaration.
    pub fn usr(&self) -> String {
        // SAFETY: returns an owned CXString.
        take_string(unsafe { clang_getCursorUSR(self.raw) })
    }

    /// Expansion position of the start of the cursor.
    pub fn position(&self) -> Position {
        let mut file: CXFile = std::ptr::null_mut();
        let (mut line, mut col, mut off): (c_uint, c_uint, c_uint) = (0, 0, 0);
        // SAFETY: out-pointers are valid.
        let name = unsafe {
            let loc = clang_getCursorLocation(self.raw);
            clang_getExpansionLocation(loc, &mut file, &mut line, &mut col, &mut off);
            if file.is_null() {
                String::new()
            } else {
                take_string(clang_getFileName(file))
            }
        };
        Position {
            file: name,
            line,
            col,
            offset: off,
        }
    }

    /// File offsets (start, end) of the cursor's extent.
    pub fn extent_offsets(&self) -> (u32, u32) {
        // SAFETY: pure functions.
        unsafe {
            let r = clang_getCursorExtent(self.raw);
            (
                file_offset(clang_getRangeStart(r)),
                file_offset(clang_getRangeEnd(r)),
            )
        }
    }

    /// True if the cursor's start is a macro expansion (spelling and expansion differ).
    pub fn in_macro(&self) -> bool {
        let mut f1: CXFile = std::ptr::null_mut();
        let mut f2: CXFile = std::ptr::null_mut();
        let (mut o1, mut o2): (c_uint, c_uint) = (0, 0);
        // SAFETY: out-pointers are valid.
        unsafe {
            let loc = clang_getCursorLocation(self.raw);
            clang_getExpansionLocation(
                loc,
                &mut f1,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut o1,
            );
            clang_getSpellingLocation(
                loc,
                &mut f2,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut o2,
            );
        }
        f1 != f2 || o1 != o2
    }

    /// True if the cursor is in the main file (not in an included header).
    pub fn in_main_file(&self) -> bool {
        // SAFETY: pure functions.
        unsafe { clang_Location_isFromMainFile(clang_getCursorLocation(self.raw)) != 0 }
    }

    /// The type of the cursor (expression type, declared type).
    pub fn ty(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getCursorType(self.raw) })
    }

    /// The result type of a function declaration.
    pub fn result_type(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getCursorResultType(self.raw) })
    }

    /// The declaration a reference/expression refers to.
    pub fn referenced(&self) -> Option<Cursor<'t>> {
        // SAFETY: pure function.
        let c = Cursor::wrap(unsafe { clang_getCursorReferenced(self.raw) });
        (!c.is_null()).then_some(c)
    }

    /// The defining declaration of the entity, if the TU has one.
    pub fn definition(&self) -> Option<Cursor<'t>> {
        // SAFETY: pure function.
        let c = Cursor::wrap(unsafe { clang_getCursorDefinition(self.raw) });
        (!c.is_null()).then_some(c)
    }

    /// The canonical declaration (identical for all redeclarations).
    pub fn canonical(&self) -> Cursor<'t> {
        // SAFETY: pure function.
        Cursor::wrap(unsafe { clang_getCanonicalCursor(self.raw) })
    }

    /// True if this declaration is a definition.
    pub fn is_definition(&self) -> bool {
        // SAFETY: pure function.
        unsafe { clang_isCursorDefinition(self.raw) != 0 }
    }

    /// Operator kind of a (compound-assign) binary operator (`CXBinaryOperator_*`).
    pub fn binary_op(&self) -> CXBinaryOperatorKind {
        // SAFETY: pure function.
        unsafe { clang_getCursorBinaryOperatorKind(self.raw) }
    }

    /// Operator kind of a unary operator (`CXUnaryOperator_*`).
    pub fn unary_op(&self) -> CXUnaryOperatorKind {
        // SAFETY: pure function.
        unsafe { clang_getCursorUnaryOperatorKind(self.raw) }
    }

    /// Evaluates a constant integer expression.
    pub fn eval_int(&self) -> Option<i64> {
        // SAFETY: the result is disposed before returning.
        unsafe {
            let r = clang_Cursor_Evaluate(self.raw);
            if r.is_null() {
                return None;
            }
            let out = if clang_EvalResult_getKind(r) == CXEval_Int {
                if clang_EvalResult_isUnsignedInt(r) != 0 {
                    i64::try_from(clang_EvalResult_getAsUnsigned(r)).ok()
                } else {
                    Some(clang_EvalResult_getAsLongLong(r))
                }
            } else {
                None
            };
            clang_EvalResult_dispose(r);
            out
        }
    }

    /// The initialiser of a variable declaration.
    pub fn var_init(&self) -> Option<Cursor<'t>> {
        // SAFETY: pure function.
        let c = Cursor::wrap(unsafe { clang_Cursor_getVarDeclInitializer(self.raw) });
        (!c.is_null()).then_some(c)
    }

    /// Number of arguments of a call expression or function declaration (-1 otherwise).
    pub fn num_args(&self) -> i32 {
        // SAFETY: pure function.
        unsafe { clang_Cursor_getNumArguments(self.raw) }
    }

    /// The i-th argument of a call expression / parameter of a function declaration.
    pub fn arg(&self, i: u32) -> Option<Cursor<'t>> {
        // SAFETY: pure function.
        let c = Cursor::wrap(unsafe { clang_Cursor_getArgument(self.raw, i) });
        (!c.is_null()).then_some(c)
    }

    /// `CX_SC_*` storage class of a declaration.
    pub fn storage_class(&self) -> CX_StorageClass {
        // SAFETY: pure function.
        unsafe { clang_Cursor_getStorageClass(self.raw) }
    }

    /// True for bit-field declarations.
    pub fn is_bitfield(&self) -> bool {
        // SAFETY: pure function.
        unsafe { clang_Cursor_isBitField(self.raw) != 0 }
    }

    /// Offset of a field declaration in bits (negative on error).
    pub fn offset_of_field(&self) -> i64 {
        // SAFETY: pure function.
        unsafe { clang_Cursor_getOffsetOfField(self.raw) }
    }

    /// True for a variadic function declaration.
    pub fn is_variadic(&self) -> bool {
        // SAFETY: pure function.
        unsafe { clang_Cursor_isVariadic(self.raw) != 0 }
    }

    /// The integer type underlying an enum declaration.
    pub fn enum_int_type(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getEnumDeclIntegerType(self.raw) })
    }
}

/// A clang type.
#[derive(Clone, Copy)]
pub struct Type<'t> {
    raw: CXType,
    _p: PhantomData<&'t ()>,
}

impl<'t> Type<'t> {
    fn wrap(raw: CXType) -> Type<'t> {
        Type {
            raw,
            _p: PhantomData,
        }
    }

    /// The `CXType_*` kind.
    pub fn kind(&self) -> CXTypeKind {
        self.raw.kind
    }

    /// The canonical type (typedefs and elaboration removed).
    pub fn canonical(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getCanonicalType(self.raw) })
    }

    /// The pointee of a pointer type.
    pub fn pointee(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getPointeeType(self.raw) })
    }

    /// The declaration of a record/enum/typedef type.
    pub fn declaration(&self) -> Cursor<'t> {
        // SAFETY: pure function.
        Cursor::wrap(unsafe { clang_getTypeDeclaration(self.raw) })
    }

    /// `sizeof` in bytes (None for incomplete/dependent types).
    pub fn size_of(&self) -> Option<u64> {
        // SAFETY: pure function.
        let s = unsafe { clang_Type_getSizeOf(self.raw) };
        u64::try_from(s).ok()
    }

    /// The element type of an array type.
    pub fn array_element(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getArrayElementType(self.raw) })
    }

    /// The length of a constant-size array type (None for other types).
    pub fn array_size(&self) -> Option<u64> {
        // SAFETY: pure function.
        let n = unsafe { clang_getArraySize(self.raw) };
        u64::try_from(n).ok()
    }

    /// True if the two types are the same type (compare canonical types to see
    /// through typedefs).
    pub fn equals(&self, other: &Type<'_>) -> bool {
        // SAFETY: pure function.
        unsafe { clang_equalTypes(self.raw, other.raw) != 0 }
    }

    /// The result type of a function type.
    pub fn result(&self) -> Type<'t> {
        // SAFETY: pure function.
        Type::wrap(unsafe { clang_getResultType(self.raw) })
    }

    /// The parameter types of a function type with a prototype (`None` otherwise).
    pub fn arg_types(&self) -> Option<Vec<Type<'t>>> {
        // SAFETY: pure functions; indices are in range.
        unsafe {
            let n = u32::try_from(clang_getNumArgTypes(self.raw)).ok()?;
            Some(
                (0..n)
                    .map(|i| Type::wrap(clang_getArgType(self.raw, i)))
                    .collect(),
            )
        }
    }

    /// True for a variadic function type.
    pub fn is_variadic(&self) -> bool {
        // SAFETY: pure function.
        unsafe { clang_isFunctionTypeVariadic(self.raw) != 0 }
    }

    /// The spelling of the type (`struct node *`).
    pub fn spelling(&self) -> String {
        // SAFETY: returns an owned CXString.
        take_string(unsafe { clang_getTypeSpelling(self.raw) })
    }
}
