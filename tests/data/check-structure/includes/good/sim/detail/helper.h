#pragma once
namespace fx { inline int helper() { return 1; } }
