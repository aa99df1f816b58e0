# BenchExec tool-info module for shapemc (https://github.com/sosy-lab/benchexec).
#
# Load it with the module name `contrib.benchexec.shapemc` and the repository root on
# PYTHONPATH, e.g. (see README.md, "Running on many machines"):
#   PYTHONPATH=. benchexec benchmarks/shapemc.xml --tool-directory target/release
#
# shapemc checks the properties unreach-call (`G ! call(reach_error())`), valid-memsafety
# (valid-free, valid-deref, valid-memtrack) and valid-memcleanup of C programs in the
# ILP32 data model; other properties and data models are reported as unsupported.

import os

import benchexec.result as result
import benchexec.tools.template


class Tool(benchexec.tools.template.BaseTool2):
    """
    Tool info for shapemc, a CEGAR model checker for heap-manipulating C programs
    (shape refinement through explicit heap analysis).

    Output: the first line is the verdict, `SAFE`, `UNSAFE`, `UNSAFE (<subproperty>)`
    under a memory property (`UNSAFE (valid-deref)`) or `UNKNOWN: <reason>`; exit codes 0 SAFE, 10 UNSAFE, 20 UNKNOWN, 2 usage or parse error, 3 unsupported.
    """

    # SV-COMP's conventions, as shapemc's scoreboard applies them
    # (src/bench/mod.rs, SVCOMP_VERIFY_ARGS)
    SVCOMP_ARGS = ["--malloc-never-fails"]
    DATA_MODELS = ["ILP32"]

    def executable(self, tool_locator):
        return tool_locator.find_executable("shapemc", subdir="target/release")

    def version(self, executable):
        return self._version_from_tool(executable, line_prefix="shapemc ")

    def name(self):
        return "shapemc"

    def project_url(self):
        return "https://github.com/shapemc/shapemc"

    PROPERTIES = ["unreach-call", "valid-memsafety", "valid-memcleanup"]

    # the verdict's subproperty -> BenchExec's result
    FALSE_RESULTS = {
        "valid-deref": result.RESULT_FALSE_DEREF,
        "valid-free": result.RESULT_FALSE_FREE,
        "valid-memtrack": result.RESULT_FALSE_MEMTRACK,
        "valid-memcleanup": result.RESULT_FALSE_MEMCLEANUP,
    }

    def _property_kind(self, property_file):
        """The property a property file states (`unreach-call`, `valid-memsafety`,
        `valid-memcleanup`), or None for another one. shapemc itself recognises the
        file again (`verify --property FILE`)."""
        try:
            with open(property_file) as f:
                text = f.read()
        except OSError:
            text = ""
        if "call(reach_error())" in text:
            return "unreach-call"
        if "valid-memcleanup" in text:
            return "valid-memcleanup"
        if any(p in text for p in ("valid-free", "valid-deref", "valid-memtrack")):
            return "valid-memsafety"
        # unreadable: by its name, SV-COMP's convention
        stem = os.path.splitext(os.path.basename(property_file))[0]
        if not text and stem in self.PROPERTIES:
            return stem
        return None

    def cmdline(self, executable, options, task, rlimits):
        kind = self._property_kind(task.property_file) if task.property_file else None
        if task.property_file and kind is None:
            raise benchexec.tools.template.UnsupportedFeatureException(
                f"unsupported property {task.property_file} "
                f"(only {', '.join(self.PROPERTIES)})"
            )
        data_model = (task.options or {}).get("data_model")
        if data_model and data_model not in self.DATA_MODELS:
            raise benchexec.tools.template.UnsupportedFeatureException(
                f"unsupported data model {data_model} (only ILP32)"
            )
        args = [executable, "verify", *self.SVCOMP_ARGS]
        if kind and kind != "unreach-call":
            args += ["--property", task.property_file]
        if rlimits.cputime and "--timeout" not in options:
            # shapemc's own limit, a little below BenchExec's: an UNKNOWN with the
            # reason instead of a kill
            args += ["--timeout", str(max(1, rlimits.cputime - 5))]
        return [*args, *options, task.single_input_file]

    def determine_result(self, run):
        for line in run.output:
            line = line.strip()
            if line == "SAFE":
                return result.RESULT_TRUE_PROP
            if line == "UNSAFE":
                return result.RESULT_FALSE_REACH
            if line.startswith("UNSAFE (") and line.endswith(")"):
                sub = line[len("UNSAFE (") : -1]
                return self.FALSE_RESULTS.get(sub, result.RESULT_FALSE_PROP)
            if line.startswith("UNKNOWN"):
                if "time limit" in line:
                    return "TIMEOUT"
                return result.RESULT_UNKNOWN
        if run.was_timeout:
            return "TIMEOUT"
        code = run.exit_code.value
        if code == 3:
            return result.RESULT_ERROR + " (unsupported)"
        if code == 2:
            return result.RESULT_ERROR + " (parse)"
        return result.RESULT_ERROR

    def get_value_from_output(self, output, identifier):
        # e.g. identifier "refinements: " gives the rest of the statistics line
        for line in output:
            if line.startswith(identifier):
                return line[len(identifier):].strip()
        return None
