// Compiled into a library whose folder has no sources yet, so that the target exists (CMake refuses a
// library without sources).
