#pragma once
#include "core/units.h"
#include "sim/engine.h"
