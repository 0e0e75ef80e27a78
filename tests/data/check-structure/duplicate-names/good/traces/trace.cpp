#include "traces/trace.h"
