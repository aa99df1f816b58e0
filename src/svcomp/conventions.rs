//! SV-COMP's conventions for `verify`: the data model of a task and the options the
//! scoreboard runs with ([`crate::bench::SVCOMP_VERIFY_ARGS`]).

use crate::cegar::cli::VerifyArgs;

/// The data model of a task (`options.data_model`): the sizes of `long` and of
/// pointers, and so the wrap-around of `long` arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataModel {
    /// 32-bit `int`, `long` and pointers: what the front end parses (`-m32`).
    Ilp32,
    /// 64-bit `long` and pointers. Not supported: the front end fixes ILP32.
    Lp64,
}

impl DataModel {
    /// The name task files and witnesses use (`ILP32`, `LP64`).
    pub fn name(self) -> &'static str {
        match self {
            DataModel::Ilp32 => "ILP32",
            DataModel::Lp64 => "LP64",
        }
    }

    /// Reads `options.data_model`; an absent one is SV-COMP's ILP32 (the heap
    /// categories' model). Errors for a name that is neither.
    pub fn from_task(name: Option<&str>) -> Result<DataModel, String> {
        match name.map(str::trim) {
            None | Some("ILP32") => Ok(DataModel::Ilp32),
            Some("LP64") => Ok(DataModel::Lp64),
            Some(other) => Err(format!("unknown data model `{other}` (ILP32 or LP64)")),
        }
    }

    /// Whether the front end translates programs of this model exactly. Only ILP32:
    /// clang parses every file with `-m32`, and reading an LP64 task that way would
    /// silently change the sizes of `long` and pointers (and so wrap-around).
    pub fn supported(self) -> bool {
        self == DataModel::Ilp32
    }
}

/// `verify`'s options under SV-COMP's conventions: every flag of
/// [`crate::bench::SVCOMP_VERIFY_ARGS`] set in `args`. Errors for a flag this
/// function does not know (a test keeps the two lists in step).
pub fn with_svcomp_args(mut args: VerifyArgs) -> Result<VerifyArgs, String> {
    for a in crate::bench::SVCOMP_VERIFY_ARGS {
        match *a {
            "--malloc-never-fails" => args.malloc_never_fails = true,
            other => return Err(format!("SV-COMP verify option {other} is not applied")),
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_svcomp_verify_arg_is_applied() {
        let a = with_svcomp_args(VerifyArgs::default()).unwrap();
        assert!(a.malloc_never_fails);
    }

    #[test]
    fn data_models() {
        assert_eq!(DataModel::from_task(None), Ok(DataModel::Ilp32));
        assert_eq!(DataModel::from_task(Some("LP64")), Ok(DataModel::Lp64));
        assert!(DataModel::from_task(Some("ILP64")).is_err());
        assert!(DataModel::Ilp32.supported());
        assert!(!DataModel::Lp64.supported());
    }
}
