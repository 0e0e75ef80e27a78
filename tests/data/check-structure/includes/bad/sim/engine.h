#pragma once
#include "core/units.h"
