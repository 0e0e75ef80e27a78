#include "core/units.h"
#include "sim/engine.h"  // a room reaches its parent's top level where its row names the parent
