// A unit of the fixture tree.
#pragma once

int units();
