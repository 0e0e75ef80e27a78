#pragma once
// Pools (ARCHITECTURE.md §3).
// The pipeline (docs/architecture.md §1, §9).
// The engine (docs/architecture.md
// §7).
