#include "core/a.h"

#ifdef MOESIM_FIXTURE_FLAG
int a() { return 1; }
#else
int a() { return 0; }
#endif
