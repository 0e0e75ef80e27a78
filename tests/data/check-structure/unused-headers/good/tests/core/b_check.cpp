#include "core/b.h"  // a test is an includer too
