#pragma once
#include "core/ghost.h"  // including itself does not count
