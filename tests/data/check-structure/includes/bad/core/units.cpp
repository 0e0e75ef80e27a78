#include "core/units.h"
#include "cli/options.h"
#include "fx_cli_version.h"
