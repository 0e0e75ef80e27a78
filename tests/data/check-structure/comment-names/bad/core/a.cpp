#include "core/a.h"

// Registered with MOESIM_REGISTER_FIXTURE_* macros, read from MOESIM_FIXTURE_MISSING; neither exists.
int a() { return 0; }
