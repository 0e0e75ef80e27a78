#pragma once
#include <Eigen/Dense>

#include "core/units.h"
#include "traces/trace.h"
