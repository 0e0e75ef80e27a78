#define MOESIM_REGISTER(registry, name) static const char* registered_##registry = name;
MOESIM_REGISTER(EvictionRegistry, "lru")
// Its own file may name it: a registration that checks a spec of its own policy.
bool is_lru(const char* s) { return s == "lru"; }
