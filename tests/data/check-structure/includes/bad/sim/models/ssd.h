#pragma once
#include "core/units.h"
#include "traces/trace.h"
