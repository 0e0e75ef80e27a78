#pragma once
#include <vector>

#include "core/units.h"
