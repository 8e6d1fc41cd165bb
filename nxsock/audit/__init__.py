"""The audit built on the core: doctor's checks, the plan doctor --fix carries out, sandbox allowlists, binding-cache
verdicts and --explain. Values in, frozen findings and plans out; the disk is changed only through act/."""
