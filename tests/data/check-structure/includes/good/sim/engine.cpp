#include "engine.h"  // a folder includes itself, here by a path relative to the file
#include "sim/models/ssd.h"  // and the rooms under it
