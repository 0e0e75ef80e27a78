#include "cli/options.h"
#include "traces/trace.h"
