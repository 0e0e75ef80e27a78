#define MOESIM_REGISTER(registry, name) static const char* registered_##registry = name;
// An eviction policy registered without its line in the document's table.
MOESIM_REGISTER(EvictionRegistry, "arc")
