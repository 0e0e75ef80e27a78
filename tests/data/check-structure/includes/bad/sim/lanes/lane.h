#pragma once
#include "sim/engine.h"
#include "sim/models/ssd.h"
