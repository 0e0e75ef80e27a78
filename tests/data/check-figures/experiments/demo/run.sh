#!/usr/bin/env bash
# The self-test's fixture experiment (tests/scripts/check-figures-selftest): never run, only its lines read.
# Results: results.csv summary.json notes.md
# Measured: notes.md
exit 0
