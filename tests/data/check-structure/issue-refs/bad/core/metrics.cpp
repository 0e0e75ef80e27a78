#include "core/metrics.h"
/* Asked for by
   Issue #4. */
int f();  // see issues 7 and 8
long kBig = 10'000;  // issue 9: a digit separator does not start a character literal
