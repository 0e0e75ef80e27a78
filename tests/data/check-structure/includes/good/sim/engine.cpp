#include "engine.h"  // a folder includes itself, here by a path relative to the file
#include "sim/detail/helper.h"  // and its sub-folders without a row of their own
#include "sim/models/ssd.h"  // and a room its row names
