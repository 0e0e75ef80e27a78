#include "core/a.h"
#include "c.h"  // relative to this file
