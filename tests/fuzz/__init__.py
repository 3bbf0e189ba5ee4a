"""Kernel-program fuzzing for pykern: ``gen`` builds kernel source text (valid
programs from the supported grammar and mutated invalid ones), ``run`` compiles
and runs them on the cpu target and checks them against plain Python."""
