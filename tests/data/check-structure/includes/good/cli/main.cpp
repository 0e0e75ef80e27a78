#include "sim/engine.h"  // cli/ may depend on everything
