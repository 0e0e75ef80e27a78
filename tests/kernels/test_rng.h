// core/rng.h uses unsigned __int128, which -Wpedantic rejects under -std=c++20 and -Werror; until core
// spells it with __extension__, the kernels tests and benchmarks include it through this header.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "core/rng.h"
#pragma GCC diagnostic pop
