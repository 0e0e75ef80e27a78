#define MOESIM_REGISTER(registry, name) static const char* registered_##registry = name;
MOESIM_REGISTER(EvictionRegistry, "fifo")
