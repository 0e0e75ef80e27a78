// Declared here, defined in core/a.cpp; the build sets MOESIM_FIXTURE_FLAG, and every MOESIM_FIXTURE_* name
// shares that prefix. A placeholder such as core/<name>.cpp or data/NAME.json is no path of the tree.
#pragma once
int a();
