#include "sim/engine.h"
#include "sim/lanes/lane.h"
#include "sim/models/ssd.h"
