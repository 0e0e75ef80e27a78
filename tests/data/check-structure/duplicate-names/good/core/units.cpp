#include "core/units.h"  // a header and its source share a stem, not a file name
