//! SV-COMP's conventions for `verify`: the data model of a task ([`DataModel`], in
//! `spec`, re-exported) and the options the
//! scoreboard runs with ([`crate::bench::SVCOMP_VERIFY_ARGS`]).

use crate::cegar::cli::VerifyArgs;
pub use crate::spec::DataModel;

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
