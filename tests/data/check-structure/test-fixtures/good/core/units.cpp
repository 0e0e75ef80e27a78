#include "core/units.h"

int units() { return 1; }
