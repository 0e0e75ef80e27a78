#include "core/metrics.h"
